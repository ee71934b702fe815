import type {
  BaseChatModelCallOptions,
  BaseChatModelParams,
} from '@langchain/core/language_models/chat_models';
import type { GenerationEvent, RetryOptions, TelemetryOptions, Tokenizer } from '@trtllm/sdk';
import { invalidArgument, unknownOption } from '@trtllm/sdk/transport';
import {
  CHAT_TEMPLATE_CHOICES,
  ChatTemplate,
  type ChatTemplateChoice,
  type ChatTool,
  TOOL_CALL_PARSERS,
  type ToolCallParserChoice,
} from '@trtllm/tokenizers';
import type { TritonConnection } from './connection.js';
import { SETTING_KEYS, type TritonGenerationSettings } from './settings.js';

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

/** The model, chat template, tokenizer directory and tool-call parser of a {@link ChatTritonInput}, checked. */
export interface CheckedChatOptions {
  readonly model: string;
  readonly chatTemplate: ChatTemplateChoice | ChatTemplate;
  readonly tokenizerDir: string | undefined;
  readonly toolCallParser: ToolCallParserChoice;
}

/** Every option of {@link ChatTritonOptions} and the connection: a record, so the compiler finds one left out. */
const OWN_OPTIONS: Record<keyof ChatTritonOptions | 'grpcUrl' | 'httpUrl' | 'transport', true> = {
  grpcUrl: true,
  httpUrl: true,
  transport: true,
  model: true,
  modelVersion: true,
  tokenizer: true,
  tokenizerDir: true,
  chatTemplate: true,
  toolCallParser: true,
  timeoutMs: true,
  idleTimeoutMs: true,
  headers: true,
  retry: true,
  logger: true,
  onEvent: true,
  telemetry: true,
};

/** LangChain's own constructor parameters (BaseChatModelParams in @langchain/core 1.x). */
const LANGCHAIN_PARAMS = [
  'callbacks',
  'callbackManager',
  'tags',
  'metadata',
  'verbose',
  'cache',
  'maxConcurrency',
  'maxRetries',
  'onFailedAttempt',
  'disableStreaming',
  'outputVersion',
];

const KNOWN = new Set<string>([...Object.keys(OWN_OPTIONS), ...SETTING_KEYS, ...LANGCHAIN_PARAMS]);

/**
 * Refuses a misspelt option with the closest one (`modle`: did you mean model?), as the SDK's
 * request options do. LangChain's base class takes parameters of its own, and newer versions add
 * some, so an unknown name is refused only when it is close to a known one: that is a typo.
 */
function checkOptionNames(fields: object): void {
  for (const [key, value] of Object.entries(fields)) {
    if (KNOWN.has(key)) continue;
    const err = unknownOption(key, value, KNOWN);
    if (err.message.includes('did you mean')) throw err;
  }
}

/** Checks the model, prompt and tool-call options; an error names the field and value. */
export function checkChatOptions(fields: ChatTritonInput): CheckedChatOptions {
  checkOptionNames(fields);
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
  return { model, chatTemplate: choice, tokenizerDir, toolCallParser: parser };
}
