import type { CallbackManagerForLLMRun } from '@langchain/core/callbacks/manager';
import type {
  BaseLanguageModelInput,
  StructuredOutputMethodOptions,
} from '@langchain/core/language_models/base';
import {
  BaseChatModel,
  type BindToolsInput,
  type LangSmithParams,
} from '@langchain/core/language_models/chat_models';
import type { AIMessageChunk, BaseMessage } from '@langchain/core/messages';
import type { ChatGenerationChunk, ChatResult } from '@langchain/core/outputs';
import type { Runnable } from '@langchain/core/runnables';
import type { SerializableSchema } from '@langchain/core/utils/standard_schema';
import type { ZodV3Like, ZodV4Like } from '@langchain/core/utils/types';
import { type GenerateOptions, type Tokenizer, TritonLlm } from '@trtllm/sdk';
import { callerError, invalidArgument } from '@trtllm/sdk/transport';
import {
  ChatTemplate,
  loadChatTemplate,
  loadTokenizerDir,
  type ToolCallParserChoice,
} from '@trtllm/tokenizers';
import { type ChatTritonCallOptions, type ChatTritonInput, checkChatOptions } from './chat-options.js';
import { type Prepared, streamReply, wholeReply } from './chat-run.js';
import { transportOf } from './connection.js';
import { chatMessagesOf } from './messages.js';
import { requireTokenizer } from './raw-model.js';
import { mergeSettings, pickSettings, requestFor, type TritonGenerationSettings } from './settings.js';
import { structuredOutput } from './structured-output.js';
import { chatToolsOf, planFor } from './tools.js';

/** What a call needs once the lazily loaded parts are ready. */
interface Ready {
  readonly llm: TritonLlm;
  readonly template: ChatTemplate;
  readonly tokenizer: Tokenizer | undefined;
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
    const { model, chatTemplate: choice, tokenizerDir, toolCallParser: parser } = checkChatOptions(fields);
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
      // The directory is checked first, so a bad tokenizerDir always fails with that check's message
      // (what is missing), never with whichever of the two reads lost a race.
      const tokenizer = loadsTokenizer ? await loadTokenizerDir(tokenizerDir) : fields.tokenizer;
      const template =
        choice instanceof ChatTemplate
          ? choice
          : await loadChatTemplate({ choice, ...(tokenizerDir !== undefined ? { tokenizerDir } : {}) });
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
    try {
      yield* streamReply(await this.prepare(messages, options), this.warn, runManager);
    } catch (err) {
      throw callerError(err, 'ChatTriton.stream', this.model, this.owned);
    }
  }

  /** The whole reply: one generation per returned sequence (beams, `numReturnSequences`). */
  override async _generate(
    messages: BaseMessage[],
    options: this['ParsedCallOptions'],
    runManager?: CallbackManagerForLLMRun,
  ): Promise<ChatResult> {
    try {
      return await wholeReply(await this.prepare(messages, options), this.warn, runManager);
    } catch (err) {
      throw callerError(err, 'ChatTriton.invoke', this.model, this.owned);
    }
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
    const schema = await llm.schema(options.signal !== undefined ? { signal: options.signal } : {});
    requireTokenizer(schema, tokenizer);
    const tools = planFor({
      tools: options.tools,
      toolChoice: options.tool_choice,
      parallel: options.parallel_tool_calls,
      template,
      parser: this.toolCallParser,
      schema,
    });
    if (tools?.guided !== undefined && settings.guidedDecoding !== undefined) {
      throw invalidArgument(
        'tool_choice',
        options.tool_choice,
        'constrains the output to tool calls with guided decoding; it cannot be combined with guidedDecoding (withStructuredOutput)',
      );
    }
    const prompt = template.render(chat.messages, tools !== undefined ? { tools: tools.tools } : {});
    const requestId = options.requestId;
    const request = {
      ...requestFor(prompt, settings),
      ...(chat.images.length > 0 ? { images: chat.images } : {}),
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
}
