import { type LanguageModelV4, NoSuchModelError, type ProviderV4 } from '@ai-sdk/provider';
import { loadOptionalSetting } from '@ai-sdk/provider-utils';
import { transportFromUrl } from '@trtllm/connect';
import {
  type GenerationEvent,
  type RetryOptions,
  type TelemetryOptions,
  type Tokenizer,
  type Transport,
  TritonLlm,
  TritonLlmError,
} from '@trtllm/sdk';
import { invalidArgument, unknownOption } from '@trtllm/sdk/transport';
import {
  ChatTemplate,
  type ChatTemplateChoice,
  loadChatTemplate,
  loadTokenizerDir,
  TOOL_CALL_PARSERS,
  type ToolCallParserChoice,
} from '@trtllm/tokenizers';
import { TritonLanguageModel } from './language-model.js';
import { parseTritonOptions, type TritonProviderOptions } from './provider-options.js';
import { PROVIDER_KEY } from './result.js';

/**
 * Model names of the TensorRT-LLM model repository (`inflight_batcher_llm`); any deployed model
 * name works.
 */
export type TritonModelId =
  | 'ensemble'
  | 'tensorrt_llm_bls'
  | 'tensorrt_llm'
  | 'ensemble_unary'
  | 'tensorrt_llm_unary'
  | (string & {});

/** How a model turns the AI SDK's messages into its prompt, and how the raw model tokenizes it. */
export interface TritonModelSettings {
  /**
   * Tokenizer for the raw `tensorrt_llm` model, which takes token ids (`loadTokenizer(dir)` from
   * `@trtllm/tokenizers`, or any `Tokenizer`); it also counts prompt tokens for models that do not
   * report them. Loaded from `tokenizerDir` when not given.
   */
  readonly tokenizer?: Tokenizer;
  /**
   * The chat template: `auto` (default: the model's own from `tokenizerDir`, else ChatML), a
   * built-in one (`chatml`, `llama2`, `llama3`), or a `ChatTemplate` loaded with `loadChatTemplate()` of `@trtllm/tokenizers`.
   */
  readonly chatTemplate?: ChatTemplateChoice | ChatTemplate;
  /**
   * The model's Hugging Face tokenizer directory: its `tokenizer.json` when it has one (unless
   * `tokenizer` is given) and the chat template `auto` finds in its `tokenizer_config.json`; read by
   * `loadTokenizerDir` of `@trtllm/tokenizers` before the first request.
   */
  readonly tokenizerDir?: string;
  /** TensorRT-LLM options of every call, under each call's own `providerOptions.trtllm`. */
  readonly defaults?: TritonProviderOptions;
  /** `max_tokens` when a call gives no `maxOutputTokens` (TensorRT-LLM needs one). Default 1024. */
  readonly defaultMaxTokens?: number;
  /**
   * How tool calls are read from the model's text: `hermes` (`<tool_call>` blocks, Qwen and
   * Hermes), `llama3_json` (Llama 3.1+ JSON calls), or `auto` (default), the format the chat
   * template teaches.
   */
  readonly toolCallParser?: ToolCallParserChoice;
}

/** Options of {@link createTriton}. */
export interface TritonProviderSettings extends TritonModelSettings {
  /**
   * Triton's gRPC endpoint: `http://localhost:8001` or `grpc://localhost:8001` (`https://` or
   * `grpcs://` for TLS), or `dns:host:8001` for every address of a name; no path. When no server is
   * given at all, the `TRITON_GRPC_URL` environment variable is read, then `TRITON_HTTP_URL`. Both
   * settings follow `transportFromUrl` of `@trtllm/connect`.
   */
  readonly grpcUrl?: string;
  /** Triton's HTTP endpoint, e.g. `http://localhost:8000`; a path is kept (`https://gateway/triton`). */
  readonly httpUrl?: string;
  /**
   * A transport you made (`grpcTransport(...)`, `httpTransport(...)`, replicas, TLS): the provider
   * uses it and leaves closing it to you.
   */
  readonly transport?: Transport;
  /** Headers (gRPC metadata) sent with every request; a call's own `headers` win. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Retries of requests that fail before their first response (the SDK's policy; on by default). */
  readonly retry?: RetryOptions;
  /**
   * Where the SDK's warnings go, among them the one logged when an early end cannot stop the
   * server (ensemble, BLS), and model output that looked like a tool call but did not parse.
   * Default: `console.warn`.
   */
  readonly logger?: {
    /** Receives one human-readable warning; must not throw. */
    warn(message: string): void;
  };
  /**
   * The SDK's request lifecycle events (`request`, `response`, `end` with the whole result and its
   * early-stop report, `error`), for logging and metrics.
   */
  readonly onEvent?: (event: GenerationEvent) => void;
  /**
   * OpenTelemetry GenAI spans and metrics of every request (`{ tracer, meter }` from
   * `@opentelemetry/api`; operation `chat`); off when absent.
   */
  readonly telemetry?: TelemetryOptions;
  /** The provider name the AI SDK reports. Default `trtllm`. */
  readonly name?: string;
}

/**
 * An AI SDK provider for Triton: call it with a model name for a language model. Built by
 * {@link createTriton}; {@link triton} is the instance configured from the environment.
 */
export interface TritonProvider extends ProviderV4 {
  (modelId: TritonModelId, settings?: TritonModelSettings): LanguageModelV4;
  /** The language model for a deployed model name. */
  languageModel(modelId: TritonModelId, settings?: TritonModelSettings): LanguageModelV4;
  /** Closes the connection the provider opened (not a `transport` you gave it). */
  close(): Promise<void>;
}

const DEFAULT_MAX_TOKENS = 1024;

/** Every option of a model's settings: a record, so the compiler finds one left out. */
const MODEL_SETTINGS: Record<keyof TritonModelSettings, true> = {
  tokenizer: true,
  chatTemplate: true,
  tokenizerDir: true,
  defaults: true,
  defaultMaxTokens: true,
  toolCallParser: true,
};

/** Every option of {@link createTriton}. */
const PROVIDER_SETTINGS: Record<keyof TritonProviderSettings, true> = {
  ...MODEL_SETTINGS,
  grpcUrl: true,
  httpUrl: true,
  transport: true,
  headers: true,
  retry: true,
  logger: true,
  onEvent: true,
  telemetry: true,
  name: true,
};

/**
 * Refuses an option `known` lacks, naming the closest (`grpcURL`: did you mean grpcUrl?), as the
 * SDK's request options do: a misspelt setting silently ignored would connect or generate otherwise.
 */
function checkOptionNames(settings: object, known: Record<string, true>): void {
  if (settings === null || typeof settings !== 'object') return;
  for (const [key, value] of Object.entries(settings)) {
    if (!Object.hasOwn(known, key)) throw unknownOption(key, value, Object.keys(known));
  }
}

/**
 * Creates an AI SDK provider for the Triton server at `grpcUrl` or `httpUrl` (or on a `transport`
 * you made). All its models share one connection, opened on first use.
 *
 * ```ts
 * import { createTriton } from '@trtllm/ai-sdk';
 * import { streamText } from 'ai';
 *
 * const triton = createTriton({ grpcUrl: 'http://localhost:8001' });
 * const result = streamText({ model: triton('ensemble'), prompt: 'What is ML?' });
 * for await (const text of result.textStream) process.stdout.write(text);
 * ```
 */
export function createTriton(settings: TritonProviderSettings = {}): TritonProvider {
  checkOptionNames(settings, PROVIDER_SETTINGS);
  const given = (['grpcUrl', 'httpUrl', 'transport'] as const).filter((k) => settings[k] !== undefined);
  if (given.length > 1) {
    throw new TritonLlmError(
      'invalid_argument',
      `createTriton: give one of grpcUrl, httpUrl or transport (got ${given.join(' and ')})`,
    );
  }
  const providerName = settings.name ?? PROVIDER_KEY;
  const providerDefaults = checkModelSettings(settings, 'createTriton');
  let transport: Transport | undefined = settings.transport;
  let ownsTransport = false;
  const openTransport = (): Transport => {
    if (transport !== undefined) return transport;
    transport = connect(settings);
    ownsTransport = true;
    return transport;
  };
  const clients = new Map<string, TritonLlm>();
  const client = (modelId: string, tokenizer: Tokenizer | undefined, shared: boolean): TritonLlm => {
    const cached = shared ? clients.get(modelId) : undefined;
    if (cached !== undefined) return cached;
    const llm = new TritonLlm({
      transport: openTransport(),
      model: modelId,
      ...(tokenizer !== undefined ? { tokenizer } : {}),
      ...(settings.retry !== undefined ? { retry: settings.retry } : {}),
      ...(settings.logger !== undefined ? { logger: settings.logger } : {}),
      ...(settings.onEvent !== undefined ? { onEvent: settings.onEvent } : {}),
      // Messages go through a chat template: the GenAI operation is `chat` unless the caller says otherwise.
      ...(settings.telemetry !== undefined
        ? { telemetry: { operationName: 'chat' as const, ...settings.telemetry } }
        : {}),
    });
    if (shared) clients.set(modelId, llm);
    return llm;
  };
  const tokenizers = new Map<string, Promise<Tokenizer | undefined>>();
  const tokenizerOf = (dir: string): Promise<Tokenizer | undefined> => {
    let loading = tokenizers.get(dir);
    if (loading === undefined) {
      loading = loadTokenizerDir(dir);
      // A failed load (unreadable file) is tried again on the next call.
      loading.catch(() => tokenizers.delete(dir));
      tokenizers.set(dir, loading);
    }
    return loading;
  };
  const templates = new Map<string, Promise<ChatTemplate>>();
  const template = (
    choice: ChatTemplateChoice | ChatTemplate | undefined,
    tokenizerDir: string | undefined,
  ): (() => Promise<ChatTemplate>) => {
    if (choice instanceof ChatTemplate) return () => Promise.resolve(choice);
    const key = `${choice ?? 'auto'}\u0000${tokenizerDir ?? ''}`;
    return () => {
      let loading = templates.get(key);
      if (loading === undefined) {
        loading = loadChatTemplate({
          ...(choice !== undefined ? { choice } : {}),
          ...(tokenizerDir !== undefined ? { tokenizerDir } : {}),
        });
        // A failed load (missing directory) is tried again on the next call.
        loading.catch(() => templates.delete(key));
        templates.set(key, loading);
      }
      return loading;
    };
  };

  const languageModel = (
    modelId: TritonModelId,
    modelSettings: TritonModelSettings = {},
  ): LanguageModelV4 => {
    if (typeof modelId !== 'string' || modelId.length === 0) {
      throw invalidArgument('modelId', modelId, 'must be the name of a model deployed on Triton');
    }
    checkOptionNames(modelSettings, MODEL_SETTINGS);
    const own = checkModelSettings(modelSettings, `triton('${modelId}')`);
    const given = modelSettings.tokenizer ?? settings.tokenizer;
    const tokenizerDir = modelSettings.tokenizerDir ?? settings.tokenizerDir;
    // Models with their own tokenizer get their own client; the others share one per name, so the
    // model config is read once however many model objects an app makes.
    const shared = modelSettings.tokenizer === undefined && modelSettings.tokenizerDir === undefined;
    let made: Promise<{ llm: TritonLlm; tokenizer: Tokenizer | undefined }> | undefined;
    const makeClient = async (): Promise<{ llm: TritonLlm; tokenizer: Tokenizer | undefined }> => {
      const tokenizer = given ?? (tokenizerDir !== undefined ? await tokenizerOf(tokenizerDir) : undefined);
      return { llm: client(modelId, tokenizer, shared), tokenizer };
    };
    return new TritonLanguageModel(modelId, {
      provider: providerName,
      client: () => {
        made ??= makeClient().catch((err: unknown) => {
          made = undefined;
          throw err;
        });
        return made;
      },
      template: template(modelSettings.chatTemplate ?? settings.chatTemplate, tokenizerDir),
      defaults: {
        request: { ...providerDefaults.request, ...own.request },
        call: { ...providerDefaults.call, ...own.call },
      },
      defaultMaxTokens: modelSettings.defaultMaxTokens ?? settings.defaultMaxTokens ?? DEFAULT_MAX_TOKENS,
      headers: settings.headers ?? {},
      toolCallParser: modelSettings.toolCallParser ?? settings.toolCallParser ?? 'auto',
      warn: (message) => (settings.logger ?? console).warn(message),
      byUrl: settings.transport === undefined,
    });
  };

  const provider = (modelId: TritonModelId, modelSettings?: TritonModelSettings): LanguageModelV4 =>
    languageModel(modelId, modelSettings);
  const noSuchModel =
    (modelType: 'embeddingModel' | 'imageModel') =>
    (modelId: string): never => {
      throw new NoSuchModelError({
        modelId,
        modelType,
        message: `the Triton provider serves TensorRT-LLM language models only (no ${modelType} '${modelId}')`,
      });
    };
  return Object.assign(provider, {
    specificationVersion: 'v4' as const,
    languageModel,
    embeddingModel: noSuchModel('embeddingModel'),
    imageModel: noSuchModel('imageModel'),
    close: async () => {
      const t = transport;
      if (t === undefined || !ownsTransport) return;
      transport = undefined;
      clients.clear();
      await t.close();
    },
  });
}

function checkModelSettings(settings: TritonModelSettings, where: string) {
  const max = settings.defaultMaxTokens;
  if (max !== undefined && (!Number.isInteger(max) || max < 1)) {
    throw invalidArgument(`${where}: defaultMaxTokens`, max, 'must be a positive integer');
  }
  const parser = settings.toolCallParser;
  if (parser !== undefined && !TOOL_CALL_PARSERS.includes(parser)) {
    throw invalidArgument(
      `${where}: toolCallParser`,
      parser,
      `must be one of ${TOOL_CALL_PARSERS.join(', ')}`,
    );
  }
  return parseTritonOptions(settings.defaults, `${where}: defaults`);
}

/**
 * The transport for the URL the settings, or else the environment, name; the setting names the
 * protocol (`grpcUrl: 'http://host:8001'` is gRPC), `transportFromUrl` the rest of the rules.
 */
function connect(settings: TritonProviderSettings): Transport {
  const open = (url: string, protocol: 'grpc' | 'http', field: string): Transport =>
    transportFromUrl(url, { protocol, field });
  if (settings.grpcUrl !== undefined) return open(settings.grpcUrl, 'grpc', 'grpcUrl');
  if (settings.httpUrl !== undefined) return open(settings.httpUrl, 'http', 'httpUrl');
  const grpcUrl = loadOptionalSetting({
    settingValue: undefined,
    environmentVariableName: 'TRITON_GRPC_URL',
  });
  if (grpcUrl !== undefined && grpcUrl !== '') return open(grpcUrl, 'grpc', 'TRITON_GRPC_URL');
  const httpUrl = loadOptionalSetting({
    settingValue: undefined,
    environmentVariableName: 'TRITON_HTTP_URL',
  });
  if (httpUrl !== undefined && httpUrl !== '') return open(httpUrl, 'http', 'TRITON_HTTP_URL');
  throw new TritonLlmError(
    'invalid_argument',
    'no Triton server: give createTriton({ grpcUrl }), ({ httpUrl }) or ({ transport }), or set TRITON_GRPC_URL or TRITON_HTTP_URL',
  );
}

/**
 * The default provider: its server comes from `TRITON_GRPC_URL` (or `TRITON_HTTP_URL`), read when
 * the first request is made.
 *
 * ```ts
 * import { triton } from '@trtllm/ai-sdk';
 * const { text } = await generateText({ model: triton('ensemble'), prompt: 'What is ML?' });
 * ```
 */
export const triton: TritonProvider = createTriton();
