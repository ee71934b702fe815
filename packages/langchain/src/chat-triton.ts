import type { CallbackManagerForLLMRun } from '@langchain/core/callbacks/manager';
import type {
  BaseLanguageModelInput,
  StructuredOutputMethodOptions,
} from '@langchain/core/language_models/base';
import {
  BaseChatModel,
  type BaseChatModelCallOptions,
  type BaseChatModelParams,
  type BindToolsInput,
  type LangSmithParams,
} from '@langchain/core/language_models/chat_models';
import { AIMessage, type AIMessageChunk, type BaseMessage } from '@langchain/core/messages';
import type { ChatGenerationChunk, ChatResult } from '@langchain/core/outputs';
import type { Runnable } from '@langchain/core/runnables';
import type { SerializableSchema } from '@langchain/core/utils/standard_schema';
import type { ZodV3Like, ZodV4Like } from '@langchain/core/utils/types';
import {
  type GenerateOptions,
  type GenerateRequest,
  type GenerateResult,
  type GenerationEvent,
  invalidArgument,
  type RetryOptions,
  type TelemetryOptions,
  type Tokenizer,
  TritonLlm,
  TritonLlmError,
} from '@trtllm/sdk';
import {
  CHAT_TEMPLATE_CHOICES,
  ChatTemplate,
  type ChatTemplateChoice,
  type ChatTool,
  loadChatTemplate,
  loadTokenizerDir,
  TOOL_CALL_PARSERS,
  type ToolCallParserChoice,
  type ToolCallPlan,
} from '@trtllm/tokenizers';
import { closeRun, drainAborted, type Run, throwIfAborted } from './abort.js';
import { deltaChunk, finalChunk, messageFields, tokenCallback } from './chunks.js';
import { type TritonConnection, transportOf } from './connection.js';
import { chatMessagesOf } from './messages.js';
import { responseMetadata, usageMetadata } from './metadata.js';
import { mergeSettings, pickSettings, requestFor, type TritonGenerationSettings } from './settings.js';
import { structuredOutput } from './structured-output.js';
import { chatToolsOf, planFor, ToolChunks, toolMessageParts } from './tools.js';

/** Per-call transport options of {@link ChatTriton} (model-wide defaults go in the constructor). */
export interface TritonCallTransportOptions {
  /** Total deadline in milliseconds, sent as the gRPC deadline. LangChain's `timeout` aborts instead. */
  readonly timeoutMs?: number;
  /** Longest wait for the next response in milliseconds. */
  readonly idleTimeoutMs?: number;
  /** Extra headers (gRPC metadata) for the request. */
  readonly headers?: Readonly<Record<string, string>>;
  /** The request id sent to Triton (generated when absent), to find the request in server logs. */
  readonly requestId?: string;
}

/**
 * Call options of {@link ChatTriton}: LangChain's (`signal`, `stop`, `callbacks`, `timeout`, ...)
 * plus every generation setting and the transport options, each overriding the model's default for
 * this call.
 */
export interface ChatTritonCallOptions
  extends BaseChatModelCallOptions,
    Omit<TritonGenerationSettings, 'stop'>,
    TritonCallTransportOptions {
  /** Functions offered to the model, as {@link ChatTriton.bindTools} binds them. */
  readonly tools?: readonly ChatTool[];
  /** Whether a required `tool_choice` may make several calls (default true). */
  readonly parallel_tool_calls?: boolean;
}

/** Options of {@link ChatTriton} that are not generation settings. */
export interface ChatTritonOptions {
  /** The deployed model: `ensemble` (default), `tensorrt_llm_bls`, `tensorrt_llm` (needs a tokenizer), an LLM-API model. */
  readonly model?: string;
  /** Pin a model version; the server picks when absent. */
  readonly modelVersion?: string;
  /** Turns text into ids for the raw `tensorrt_llm` model, and counts prompt tokens where the server does not. */
  readonly tokenizer?: Tokenizer;
  /**
   * A Hugging Face tokenizer directory: its `tokenizer.json` when it has one (unless `tokenizer` is
   * given) and its chat template, read by `loadTokenizerDir` of `@trtllm/tokenizers` before the first request.
   */
  readonly tokenizerDir?: string;
  /**
   * How messages become the prompt: `auto` (default: the chat template of `tokenizerDir`, else
   * ChatML), a built-in template name, or a `ChatTemplate` you loaded (`loadChatTemplate()` of `@trtllm/tokenizers`).
   */
  readonly chatTemplate?: ChatTemplateChoice | ChatTemplate;
  /**
   * How tool calls are read from the model's text: `hermes` (`<tool_call>` blocks, Qwen and
   * Hermes), `llama3_json` (Llama 3.1+ JSON calls), or `auto` (default), the format the chat
   * template teaches.
   */
  readonly toolCallParser?: ToolCallParserChoice;
  /** Default transport options of every call (`timeoutMs`, `idleTimeoutMs`, `headers`). */
  readonly timeoutMs?: number;
  /** Longest wait for the next response in milliseconds, for every call. */
  readonly idleTimeoutMs?: number;
  /** Headers (gRPC metadata) sent with every call. */
  readonly headers?: Readonly<Record<string, string>>;
  /** The SDK's retries of requests that fail before the server answered (on by default). */
  readonly retry?: RetryOptions;
  /** Where the SDK's warnings go (default console.warn). */
  readonly logger?: {
    /** Receives one human-readable warning; must not throw. */
    warn(message: string): void;
  };
  /** Observes every request's lifecycle (the SDK's hook for logging, metrics and tracing). */
  readonly onEvent?: (event: GenerationEvent) => void;
  /**
   * OpenTelemetry spans and GenAI metrics of the SDK (off until a tracer or meter is given). The
   * operation is reported as `chat` unless `operationName` says otherwise: the prompt is a
   * rendered conversation.
   */
  readonly telemetry?: TelemetryOptions;
}

/**
 * Constructor input of {@link ChatTriton}: where the server is ({@link TritonConnection}), which model
 * and how to prompt it ({@link ChatTritonOptions}), default generation settings
 * ({@link TritonGenerationSettings}), and LangChain's own model parameters (callbacks, tags, ...).
 */
export type ChatTritonInput = BaseChatModelParams &
  TritonConnection &
  ChatTritonOptions &
  TritonGenerationSettings;

/** What a call needs once the lazily loaded parts are ready. */
interface Ready {
  readonly llm: TritonLlm;
  readonly template: ChatTemplate;
  readonly tokenizer: Tokenizer | undefined;
}

/** A request about to be sent, with what the response metadata needs to know of it. */
interface Prepared {
  readonly llm: TritonLlm;
  readonly tools: ToolCallPlan | undefined;
  readonly request: GenerateRequest;
  readonly options: GenerateOptions;
  readonly countPrompt: () => number | undefined;
}

/**
 * A LangChain.js chat model for a TensorRT-LLM model served by NVIDIA Triton, built on `@trtllm/sdk`:
 * messages are rendered with the model's chat template, sent over gRPC or HTTP, and streamed back
 * token by token (`stream`, `handleLLMNewToken`). LangChain's `signal` reaches the server as the SDK
 * does it (the raw and LLM-API models stop generating; for `ensemble` and BLS, `response_metadata.early_stop`
 * says the server keeps going). Messages carry `usage_metadata` and `response_metadata.finish_reason`.
 *
 * ```ts
 * const model = new ChatTriton({ grpcUrl: 'http://localhost:8001', model: 'ensemble', maxTokens: 128 });
 * const chain = ChatPromptTemplate.fromMessages([['human', 'Explain {topic}']]).pipe(model);
 * for await (const chunk of await chain.stream({ topic: 'ML' })) process.stdout.write(chunk.text);
 * ```
 */
export class ChatTriton extends BaseChatModel<ChatTritonCallOptions, AIMessageChunk> {
  /** The deployed model's name. */
  readonly model: string;
  /** Default generation settings of every call. */
  readonly settings: TritonGenerationSettings;
  private readonly owned: boolean;
  private readonly closeTransport: () => Promise<void>;
  private readonly init: () => Promise<Ready>;
  private ready: Promise<Ready> | undefined;
  private readonly toolCallParser: ToolCallParserChoice;
  private readonly warn: (message: string) => void;

  /** LangChain's name for the class (serialization, tracing). */
  static override lc_name(): string {
    return 'ChatTriton';
  }

  /** Checks every option (an error names the field and value) and connects lazily, on the first call. */
  constructor(fields: ChatTritonInput) {
    if (fields === null || typeof fields !== 'object') {
      throw invalidArgument('fields', fields, 'must be an object with grpcUrl, httpUrl or transport');
    }
    super(fields);
    const model = fields.model ?? 'ensemble';
    if (typeof model !== 'string' || model.length === 0) {
      throw invalidArgument('model', model, 'must be a non-empty string');
    }
    const choice = fields.chatTemplate ?? 'auto';
    if (!(choice instanceof ChatTemplate) && !CHAT_TEMPLATE_CHOICES.includes(choice)) {
      throw invalidArgument(
        'chatTemplate',
        choice,
        `must be a ChatTemplate or one of ${CHAT_TEMPLATE_CHOICES.join(', ')}`,
      );
    }
    const { tokenizerDir } = fields;
    if (tokenizerDir !== undefined && (typeof tokenizerDir !== 'string' || tokenizerDir.length === 0)) {
      throw invalidArgument('tokenizerDir', tokenizerDir, 'must be a directory path');
    }
    const parser = fields.toolCallParser ?? 'auto';
    if (!TOOL_CALL_PARSERS.includes(parser)) {
      throw invalidArgument('toolCallParser', parser, `must be one of ${TOOL_CALL_PARSERS.join(', ')}`);
    }
    this.toolCallParser = parser;
    const logger = fields.logger ?? console;
    this.warn = (message) => logger.warn(message);
    this.model = model;
    this.settings = pickSettings(fields);
    // A placeholder prompt: the defaults are checked as a request would be, before any call.
    requestFor(' ', this.settings);
    const { transport, owned } = transportOf(fields);
    this.owned = owned;
    this.closeTransport = () => transport.close();
    const defaults = {
      ...(fields.timeoutMs !== undefined ? { timeoutMs: fields.timeoutMs } : {}),
      ...(fields.idleTimeoutMs !== undefined ? { idleTimeoutMs: fields.idleTimeoutMs } : {}),
      ...(fields.headers !== undefined ? { headers: fields.headers } : {}),
    };
    const llmOptions = (tokenizer: Tokenizer | undefined) => ({
      transport,
      model,
      defaults,
      ...(fields.modelVersion !== undefined ? { modelVersion: fields.modelVersion } : {}),
      ...(tokenizer !== undefined ? { tokenizer } : {}),
      ...(fields.retry !== undefined ? { retry: fields.retry } : {}),
      ...(fields.logger !== undefined ? { logger: fields.logger } : {}),
      ...(fields.onEvent !== undefined ? { onEvent: fields.onEvent } : {}),
      ...(fields.telemetry !== undefined
        ? { telemetry: { operationName: 'chat' as const, ...fields.telemetry } }
        : {}),
    });
    // Made now so its options are checked now; replaced once a tokenizer from tokenizerDir is loaded.
    const llm = new TritonLlm(llmOptions(fields.tokenizer));
    const loadsTokenizer = fields.tokenizer === undefined && tokenizerDir !== undefined;
    this.init = async () => {
      const [tokenizer, template] = await Promise.all([
        loadsTokenizer ? loadTokenizerDir(tokenizerDir) : fields.tokenizer,
        choice instanceof ChatTemplate
          ? choice
          : loadChatTemplate({ choice, ...(tokenizerDir !== undefined ? { tokenizerDir } : {}) }),
      ]);
      return { llm: loadsTokenizer ? new TritonLlm(llmOptions(tokenizer)) : llm, template, tokenizer };
    };
  }

  /** LangChain's identifier of this kind of model. */
  _llmType(): string {
    return 'triton';
  }

  /** The settings a call with `options` uses, as LangChain's tracing shows them. */
  override invocationParams(options?: this['ParsedCallOptions']): Record<string, unknown> {
    const merged = mergeSettings(this.settings, pickSettings(options));
    return Object.fromEntries(
      Object.entries({ model: this.model, ...merged }).map(([k, v]) => [
        k,
        typeof v === 'bigint' ? v.toString() : v,
      ]),
    );
  }

  /** Tracing metadata in LangSmith's names. */
  override getLsParams(options: this['ParsedCallOptions']): LangSmithParams {
    const merged = mergeSettings(this.settings, pickSettings(options));
    return {
      ls_provider: 'triton',
      ls_model_name: this.model,
      ls_model_type: 'chat',
      ...(merged.temperature !== undefined ? { ls_temperature: merged.temperature } : {}),
      ...(merged.maxTokens !== undefined ? { ls_max_tokens: merged.maxTokens } : {}),
      ...(merged.stop !== undefined ? { ls_stop: [...merged.stop] } : {}),
    };
  }

  /**
   * The model with `tools` offered on every call: LangChain tools, zod-described functions or
   * OpenAI tool definitions. Replies carry `tool_calls` (streamed: `tool_call_chunks`), read from
   * the text in the format the chat template teaches; `ToolMessage`s with the results go back
   * through the template. `tool_choice` `any` / `required` or a tool's name constrain the output
   * to calls with the model's guided decoding. `createAgent` of `langchain` calls this.
   */
  override bindTools(
    tools: BindToolsInput[],
    kwargs?: Partial<ChatTritonCallOptions>,
  ): Runnable<BaseLanguageModelInput, AIMessageChunk, ChatTritonCallOptions> {
    return this.withConfig({ ...kwargs, tools: chatToolsOf(tools) });
  }

  /**
   * A runnable that answers with an object of `outputSchema` (zod, a Standard Schema, or a JSON
   * schema), produced by the deployed model's guided decoding (`guidedDecoding` `json_schema`, or
   * `json` with `method: 'jsonMode'`) and parsed by LangChain's parser for that schema. The model has
   * no tool calling: `method: 'functionCalling'` is refused, and so is a model whose config lacks
   * the guided-decoding inputs.
   */
  override withStructuredOutput<RunOutput extends Record<string, unknown> = Record<string, unknown>>(
    outputSchema: SerializableSchema<RunOutput>,
    config?: StructuredOutputMethodOptions<false>,
  ): Runnable<BaseLanguageModelInput, RunOutput>;
  override withStructuredOutput<RunOutput extends Record<string, unknown> = Record<string, unknown>>(
    outputSchema: SerializableSchema<RunOutput>,
    config?: StructuredOutputMethodOptions<true>,
  ): Runnable<BaseLanguageModelInput, { raw: BaseMessage; parsed: RunOutput }>;
  override withStructuredOutput<RunOutput extends Record<string, unknown> = Record<string, unknown>>(
    outputSchema: ZodV4Like<RunOutput> | Record<string, unknown>,
    config?: StructuredOutputMethodOptions<false>,
  ): Runnable<BaseLanguageModelInput, RunOutput>;
  override withStructuredOutput<RunOutput extends Record<string, unknown> = Record<string, unknown>>(
    outputSchema: ZodV4Like<RunOutput> | Record<string, unknown>,
    config?: StructuredOutputMethodOptions<true>,
  ): Runnable<BaseLanguageModelInput, { raw: BaseMessage; parsed: RunOutput }>;
  override withStructuredOutput<RunOutput extends Record<string, unknown> = Record<string, unknown>>(
    outputSchema: ZodV3Like<RunOutput> | Record<string, unknown>,
    config?: StructuredOutputMethodOptions<false>,
  ): Runnable<BaseLanguageModelInput, RunOutput>;
  override withStructuredOutput<RunOutput extends Record<string, unknown> = Record<string, unknown>>(
    outputSchema: ZodV3Like<RunOutput> | Record<string, unknown>,
    config?: StructuredOutputMethodOptions<true>,
  ): Runnable<BaseLanguageModelInput, { raw: BaseMessage; parsed: RunOutput }>;
  override withStructuredOutput(
    outputSchema: unknown,
    config?: StructuredOutputMethodOptions<boolean>,
  ): Runnable<BaseLanguageModelInput> {
    return structuredOutput(this, outputSchema, config) as Runnable<BaseLanguageModelInput>;
  }

  /**
   * Closes the connection this model opened from `grpcUrl` / `httpUrl`. A transport passed in is
   * left open: its owner closes it.
   */
  async close(): Promise<void> {
    if (this.owned) await this.closeTransport();
  }

  /** Streams the reply: one chunk per text delta, then a last chunk with usage and response metadata. */
  override async *_streamResponseChunks(
    messages: BaseMessage[],
    options: this['ParsedCallOptions'],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    const prepared = await this.prepare(messages, options);
    const run = this.run(prepared);
    const { signal } = prepared.options;
    // LangChain's stream() answers an abort at once with its own AbortError and never resumes this
    // generator. The request then still has to end (the SDK tells the server) and its report
    // reach the callbacks: whoever holds the generator when the signal fires finishes the run.
    let parked = false;
    let drained = false;
    const onAbort = () => {
      if (!parked) return;
      drained = true;
      void drainAborted(run, prepared.countPrompt, runManager);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    const pieces = new ToolChunks(prepared.tools, this.warn);
    try {
      let streamed = false;
      for (;;) {
        const step = await run.next();
        if (step.done) {
          const result = step.value;
          throwIfAborted(result, prepared.countPrompt);
          // A model that is not decoupled answers once: its whole text is the only delta.
          const rest = !streamed && result.text !== '' ? pieces.push(result.text) : [];
          for (const chunk of [...rest, ...pieces.end()]) {
            yield chunk;
            await tokenCallback(runManager, chunk);
          }
          yield finalChunk(result, prepared.countPrompt);
          return;
        }
        streamed = true;
        // Text that arrives after the abort is not yielded: LangChain would answer it with its own
        // AbortError, and the SDK's report (the final result, due at once) would be lost.
        if (signal?.aborted) continue;
        for (const chunk of pieces.push(step.value)) {
          parked = true;
          yield chunk;
          parked = false;
          if (drained) return;
          await tokenCallback(runManager, chunk);
        }
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      // Left early (the consumer broke out of the stream): end the request, which tells the server.
      if (!drained) await closeRun(run);
    }
  }

  /** The whole reply: one generation per returned sequence (beams, `numReturnSequences`). */
  override async _generate(
    messages: BaseMessage[],
    options: this['ParsedCallOptions'],
    runManager?: CallbackManagerForLLMRun,
  ): Promise<ChatResult> {
    const prepared = await this.prepare(messages, options);
    const run = this.run(prepared);
    let step: IteratorResult<string, GenerateResult>;
    try {
      step = await run.next();
      while (step.done !== true) {
        await tokenCallback(runManager, deltaChunk(step.value));
        step = await run.next();
      }
    } finally {
      // A callback that threw leaves the request running: end it.
      await closeRun(run);
    }
    const result = step.value;
    throwIfAborted(result, prepared.countPrompt);
    const usage = usageMetadata(result, prepared.countPrompt);
    const sequences = result.sequences.length > 0 ? result.sequences : [undefined];
    return {
      generations: sequences.map((sequence, i) => {
        const output = sequence?.text ?? result.text;
        const metadata = responseMetadata(result, sequence);
        const { content: text, toolCalls } =
          prepared.tools !== undefined
            ? toolMessageParts(prepared.tools, output, (m) => this.warn(`${result.requestId}: ${m}`))
            : { content: output, toolCalls: [] };
        const fields = messageFields(text, metadata, i === 0 ? usage : undefined);
        return {
          text,
          // The request's tokens, counted once: on the first sequence.
          message: new AIMessage(toolCalls.length > 0 ? { ...fields, tool_calls: toolCalls } : fields),
          generationInfo: { finish_reason: metadata.finish_reason },
        };
      }),
      llmOutput: {
        tokenUsage: {
          promptTokens: usage.input_tokens,
          completionTokens: usage.output_tokens,
          totalTokens: usage.total_tokens,
        },
      },
    };
  }

  private loaded(): Promise<Ready> {
    this.ready ??= this.init().catch((err: unknown) => {
      this.ready = undefined;
      throw err;
    });
    return this.ready;
  }

  /** Renders and checks the request before anything is sent. */
  private async prepare(messages: BaseMessage[], options: this['ParsedCallOptions']): Promise<Prepared> {
    const chat = chatMessagesOf(messages);
    const call = pickSettings(options);
    const settings = mergeSettings(this.settings, call);
    // Checked before the template and tokenizer load, so a bad value fails without touching the server.
    requestFor(' ', settings);
    const { llm, template, tokenizer } = await this.loaded();
    const tools = planFor({
      tools: options.tools,
      toolChoice: options.tool_choice,
      parallel: options.parallel_tool_calls,
      template,
      parser: this.toolCallParser,
      schema: await llm.schema(options.signal !== undefined ? { signal: options.signal } : {}),
    });
    if (tools?.guided !== undefined && settings.guidedDecoding !== undefined) {
      throw invalidArgument(
        'tool_choice',
        options.tool_choice,
        'constrains the output to tool calls with guided decoding; it cannot be combined with guidedDecoding (withStructuredOutput)',
      );
    }
    const prompt = template.render(chat, tools !== undefined ? { tools: tools.tools } : {});
    const requestId = options.requestId;
    const request = {
      ...requestFor(prompt, settings),
      ...(tools?.guided !== undefined ? { guidedDecoding: tools.guided } : {}),
      ...(requestId !== undefined ? { requestId } : {}),
    };
    const generateOptions: GenerateOptions = {
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      ...(options.idleTimeoutMs !== undefined ? { idleTimeoutMs: options.idleTimeoutMs } : {}),
      ...(options.headers !== undefined ? { headers: options.headers } : {}),
    };
    return {
      llm,
      tools,
      request,
      options: generateOptions,
      countPrompt: () => tokenizer?.encode(prompt).length,
    };
  }

  /**
   * Yields the first sequence's text deltas and returns the whole result. Models that are not
   * decoupled, and requests for several sequences, are generated whole (`generate()`); the rest are
   * streamed, so callbacks see tokens as they arrive even under `invoke`.
   */
  private async *run(prepared: Prepared): Run {
    const { llm, request, options } = prepared;
    const schema = await llm.schema(options.signal !== undefined ? { signal: options.signal } : {});
    const several = (request.beamWidth ?? 1) > 1 || (request.numReturnSequences ?? 1) > 1;
    if (!schema.decoupled || several) return await llm.generate(request, options);
    for await (const chunk of llm.stream(request, options)) {
      if (chunk.done) return chunk.result;
      if (chunk.sequenceIndex === 0 && chunk.text !== '') yield chunk.text;
    }
    throw new TritonLlmError('protocol', `the stream of model '${llm.model}' ended without a final chunk`, {
      model: llm.model,
    });
  }
}
