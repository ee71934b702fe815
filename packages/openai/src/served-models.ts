import { type LoraOptions, type Matrix, type Tokenizer, type TritonLlm, TritonLlmError } from '@trtllm/sdk';
import { invalidArgument } from '@trtllm/sdk/transport';
import { type ChatTemplate, type ChatTemplateChoice, loadChatTemplate } from '@trtllm/tokenizers';
import type { TokenizerSetting } from './raw-model.js';

/**
 * A LoRA adapter served as a model name of its own (vLLM's `--lora-modules`): a request naming it
 * runs on its base model with these LoRA inputs. The TensorRT-LLM C++ model (ensemble, BLS, raw)
 * takes `taskId` (`lora_task_id`) and finds the adapter in its LoRA cache; the LLM-API model takes
 * `taskId`, `loraName` and `path` (`lora_id`, `lora_name`, `lora_path`); Triton's vLLM backend
 * takes `loraName` (`lora_name`, an adapter of its `multi_lora.json`).
 */
export interface LoraAdapterOptions {
  /** The model name clients send for this adapter, listed in `/v1/models` with its base model as `parent`. */
  readonly name: string;
  /** `lora_task_id` of the C++ model, `lora_id` of the LLM-API model: a non-negative integer. */
  readonly taskId?: number;
  /** LLM-API model and vLLM backend: `lora_name`. Default: none sent. */
  readonly loraName?: string;
  /** LLM-API model: `lora_path`, the adapter's checkpoint directory on the Triton host. */
  readonly path?: string;
  /** LLM-API model: `lora_ckpt_source`, the format of the checkpoint at `path`: `hf` (the model's default) or `nemo`. */
  readonly ckptSource?: 'hf' | 'nemo';
  /**
   * C++ model: `lora_weights` (float16 `[rows, columns]`), sent with the adapter's first request;
   * Triton's LoRA cache then holds it by `taskId`. The CLI reads it from `dir=` (the
   * `model.lora_weights.npy` of TensorRT-LLM's `hf_lora_convert.py`).
   */
  readonly weights?: Matrix;
  /** C++ model: `lora_config`, rows of `[module_id, layer_idx, adapter_size]`, sent with `weights`. */
  readonly config?: readonly (readonly [number, number, number])[];
}

/** One Triton model this server serves, with its own name, chat template, tokenizer and adapters. */
export interface ServedModelOptions {
  /** The Triton model to call. */
  readonly model: string;
  /** The name clients send and see; default: the Triton model's name. */
  readonly name?: string;
  /** This model's tokenizer (prompt token counts, log-prob text; required by the raw `tensorrt_llm` model). */
  readonly tokenizer?: Tokenizer;
  /** A Hugging Face tokenizer directory: its tokenizer_config.json gives this model's chat template. */
  readonly tokenizerDir?: string;
  /** `auto` (default): the template of `tokenizerDir`, else ChatML; or a built-in one. */
  readonly chatTemplate?: ChatTemplateChoice;
  /** LoRA adapters of this model, each served under its own name. */
  readonly adapters?: readonly LoraAdapterOptions[];
}

/** A base model as this server drives it: its client, tokenizer and chat template. */
export interface BaseModel {
  /** The served name of the base model. */
  readonly id: string;
  readonly llm: TritonLlm;
  readonly tokenizer: Tokenizer | undefined;
  /** Loads once; awaited by `listen()` and by chat requests. */
  readonly template: Promise<ChatTemplate>;
  /** How this server's user gives the raw model a tokenizer, for its refusal. */
  readonly tokenizerSetting: TokenizerSetting;
}

/** A name a request may send: a base model, or an adapter on one. */
export interface ServedModel {
  readonly id: string;
  readonly base: BaseModel;
  /** The base model's name, for an adapter. */
  readonly parent: string | undefined;
  /** The LoRA inputs of every request (the task id, name, path), for an adapter. */
  readonly lora: LoraOptions | undefined;
  /** An adapter's weights and config, while the next request is to carry them (see {@link loraOfRequest}). */
  readonly upload?: { readonly lora: LoraOptions; pending: boolean };
}

/**
 * The LoRA inputs of a model's next request: with the adapter's weights and config on its first
 * request (and the first after Triton said its cache no longer holds the task), else task id only.
 */
export function loraOfRequest(model: ServedModel): LoraOptions | undefined {
  if (model.upload?.pending === true) {
    model.upload.pending = false;
    return model.upload.lora;
  }
  return model.lora;
}

/**
 * After an error, whether Triton no longer holds the adapter's weights (TensorRT-LLM: "LoRA task
 * ... not found in cache. Please send LoRA weights with request"): then the next request sends them.
 */
export function loraMissedCache(model: ServedModel | undefined, err: unknown): void {
  if (model?.upload === undefined) return;
  const text =
    err instanceof Error ? `${err.message} ${(err as TritonLlmError).serverMessage ?? ''}` : String(err);
  if (/not found in (?:the )?(?:lora )?cache/i.test(text)) model.upload.pending = true;
}

/** What {@link modelTable} needs of each base model. */
export interface BaseModelInput {
  readonly id: string;
  readonly llm: TritonLlm;
  readonly tokenizer: Tokenizer | undefined;
  readonly tokenizerDir: string | undefined;
  readonly chatTemplate: ChatTemplateChoice | undefined;
  readonly tokenizerSetting: TokenizerSetting;
  readonly adapters: readonly LoraAdapterOptions[] | undefined;
  /** The option path of `adapters`, for error fields (`models[1].adapters`). */
  readonly field: string;
}

/** The models of one server by the name requests send, in the order `/v1/models` lists them. */
export class ModelTable {
  private readonly byId = new Map<string, ServedModel>();

  constructor(bases: readonly BaseModelInput[]) {
    for (const input of bases) {
      const template = loadChatTemplate({
        ...(input.chatTemplate !== undefined ? { choice: input.chatTemplate } : {}),
        ...(input.tokenizerDir !== undefined ? { tokenizerDir: input.tokenizerDir } : {}),
      });
      // Awaited by listen() and by chat requests; this keeps an early failure from going unhandled.
      template.catch(() => undefined);
      const base: BaseModel = {
        id: input.id,
        llm: input.llm,
        tokenizer: input.tokenizer,
        template,
        tokenizerSetting: input.tokenizerSetting,
      };
      this.add({ id: input.id, base, parent: undefined, lora: undefined }, `${input.field}.name`);
      (input.adapters ?? []).forEach((adapter, i) => {
        const field = `${input.field}.adapters[${i}]`;
        const lora = loraOf(adapter, field);
        const upload = uploadOf(adapter, lora, field);
        this.add(
          { id: adapter.name, base, parent: input.id, lora, ...(upload !== undefined ? { upload } : {}) },
          `${field}.name`,
        );
      });
    }
  }

  /** Every served name, bases and adapters. */
  get ids(): string[] {
    return [...this.byId.keys()];
  }

  /** Every model, in listing order. */
  get models(): ServedModel[] {
    return [...this.byId.values()];
  }

  /** The distinct base models. */
  get bases(): BaseModel[] {
    return [...new Set(this.models.map((m) => m.base))];
  }

  /**
   * The model a request names. A `model` that is not a string goes to the first model, whose
   * endpoint refuses it naming the field; an unknown name is OpenAI's 404 naming the served ones.
   */
  route(requested: unknown): ServedModel {
    if (typeof requested !== 'string') return this.models[0]!;
    const found = this.byId.get(requested);
    if (found === undefined) throw unknownModelOf(requested, this.ids);
    return found;
  }

  /** The model of `GET /v1/models/{id}`. */
  get(id: string): ServedModel {
    const found = this.byId.get(id);
    if (found === undefined) throw unknownModelOf(id, this.ids);
    return found;
  }

  private add(model: ServedModel, field: string): void {
    if (typeof model.id !== 'string' || model.id.length === 0)
      throw invalidArgument(field, model.id, 'must be a non-empty string');
    if (this.byId.has(model.id))
      throw invalidArgument(field, model.id, 'is served twice; every model and adapter needs its own name');
    this.byId.set(model.id, model);
  }
}

/** The 404 of a model this server does not serve (`field: 'model'` makes it `model_not_found`). */
export function unknownModelOf(requested: string, served: readonly string[]): TritonLlmError {
  const list = served.map((s) => `'${s}'`).join(', ');
  return new TritonLlmError(
    'not_found',
    `The model '${requested}' does not exist; this server serves ${list} (GET /v1/models lists them)`,
    { field: 'model' },
  );
}

function uploadOf(
  adapter: LoraAdapterOptions,
  lora: LoraOptions,
  field: string,
): { lora: LoraOptions; pending: boolean } | undefined {
  const { weights, config } = adapter;
  if (weights === undefined && config === undefined) return undefined;
  if (weights === undefined || config === undefined)
    throw invalidArgument(
      `${field}.${weights === undefined ? 'weights' : 'config'}`,
      undefined,
      'must be given with the other (lora_weights and lora_config travel together)',
    );
  if (lora.taskId === undefined)
    throw invalidArgument(
      `${field}.taskId`,
      undefined,
      'must be given with weights (the cache holds them by task id)',
    );
  return { lora: { ...lora, weights, config }, pending: true };
}

function loraOf(adapter: LoraAdapterOptions, field: string): LoraOptions {
  if (adapter === null || typeof adapter !== 'object')
    throw invalidArgument(field, adapter, 'must be an object with a name and the LoRA inputs');
  const { taskId, loraName, path, ckptSource } = adapter;
  if (taskId !== undefined && (!Number.isSafeInteger(taskId) || taskId < 0))
    throw invalidArgument(`${field}.taskId`, taskId, 'must be a non-negative integer');
  if (loraName !== undefined && (typeof loraName !== 'string' || loraName.length === 0))
    throw invalidArgument(`${field}.loraName`, loraName, 'must be a non-empty string');
  if (path !== undefined && (typeof path !== 'string' || path.length === 0))
    throw invalidArgument(`${field}.path`, path, 'must be a non-empty string');
  if (ckptSource !== undefined && ckptSource !== 'hf' && ckptSource !== 'nemo')
    throw invalidArgument(`${field}.ckptSource`, ckptSource, "must be 'hf' or 'nemo'");
  if (ckptSource !== undefined && path === undefined)
    throw invalidArgument(
      `${field}.ckptSource`,
      ckptSource,
      'is the format of the checkpoint at path: give path',
    );
  if (taskId === undefined && path === undefined && loraName === undefined)
    throw invalidArgument(
      field,
      adapter.name,
      "needs its model's LoRA inputs: taskId (the C++ model), taskId, loraName and path (the LLM-API model), or loraName (the vLLM backend)",
    );
  return {
    ...(taskId !== undefined ? { taskId } : {}),
    ...(loraName !== undefined ? { name: loraName } : {}),
    ...(path !== undefined ? { path } : {}),
    ...(ckptSource !== undefined ? { ckptSource } : {}),
  };
}
