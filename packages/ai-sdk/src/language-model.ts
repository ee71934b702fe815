import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4GenerateResult,
  LanguageModelV4StreamPart,
  LanguageModelV4StreamResult,
  SharedV4Warning,
} from '@ai-sdk/provider';
import type { GenerateOptions, GenerateRequest, ModelSchema, Tokenizer, TritonLlm } from '@trtllm/sdk';
import { callerError } from '@trtllm/sdk/transport';
import type { ChatTemplate, ToolCallParserChoice, ToolCallPlan } from '@trtllm/tokenizers';
import { prepareCall } from './call-settings.js';
import { lossyTextWarning, streamsLossyText } from './lossy-text.js';
import { chatMessages } from './prompt.js';
import {
  checkRequest,
  parseTritonOptions,
  type TritonCallSettings,
  type TritonRequestOptions,
} from './provider-options.js';
import { requireTokenizer } from './raw-model.js';
import { finishReason, PROVIDER_KEY, providerMetadata, usageOf } from './result.js';
import { StreamParts, toolCallContent, toolUse } from './tools.js';
import { failureParts, wholeStream } from './whole-stream.js';

/** What a model needs from its provider. */
export interface TritonModelConfig {
  readonly provider: string;
  /**
   * The SDK client of this model and its tokenizer, if any (made on first use, so that a provider
   * can exist before its server and a tokenizer directory is read only when needed).
   */
  readonly client: () => Promise<{ readonly llm: TritonLlm; readonly tokenizer: Tokenizer | undefined }>;
  readonly template: () => Promise<ChatTemplate>;
  readonly defaults: { readonly request: TritonRequestOptions; readonly call: TritonCallSettings };
  readonly defaultMaxTokens: number;
  readonly headers: Readonly<Record<string, string>>;
  /** The format tool calls are read in; `auto` recognises it from the chat template. */
  readonly toolCallParser: ToolCallParserChoice;
  /** Where model output that looked like a call but was not one is reported. */
  readonly warn: (message: string) => void;
  /** Whether the server was given as `grpcUrl` / `httpUrl` (error hints name those settings). */
  readonly byUrl: boolean;
}

/** One call, ready to send: the client, the request and what the result mapping needs. */
export interface Prepared {
  readonly llm: TritonLlm;
  readonly schema: ModelSchema;
  readonly tokenizer: Tokenizer | undefined;
  readonly prompt: string;
  readonly request: GenerateRequest;
  readonly options: GenerateOptions;
  readonly warnings: SharedV4Warning[];
  readonly tools: ToolCallPlan | undefined;
}

/**
 * An AI SDK language model (specification v4) for one model served by Triton: the AI SDK's
 * messages go through the model's chat template and the request through `TritonLlm`, which maps it
 * to whatever inputs the deployed model declares, streams exact text deltas and reports how an
 * early end reached the server. Made by a {@link TritonProvider}: `triton('ensemble')`.
 */
export class TritonLanguageModel implements LanguageModelV4 {
  readonly specificationVersion = 'v4';
  /**
   * Image URLs (http, https) go to Triton as they are, for the model to fetch (the LLM API's
   * `image_url`, the multimodal preprocessing's `image_url_input`); the AI SDK downloads any other.
   */
  readonly supportedUrls: Record<string, RegExp[]> = { 'image/*': [/^https?:\/\/.+$/i] };

  constructor(
    readonly modelId: string,
    private readonly config: TritonModelConfig,
  ) {}

  /** The provider's name, as the AI SDK logs it. */
  get provider(): string {
    return this.config.provider;
  }

  async doGenerate(options: LanguageModelV4CallOptions): Promise<LanguageModelV4GenerateResult> {
    try {
      return await this.generate(options);
    } catch (err) {
      throw this.callerError(err, 'generateText');
    }
  }

  async doStream(options: LanguageModelV4CallOptions): Promise<LanguageModelV4StreamResult> {
    let call: Prepared;
    try {
      call = await this.prepare(options);
    } catch (err) {
      throw this.callerError(err, 'streamText');
    }
    // Tool calls and JSON read from lossy streamed text would carry U+FFFD into a tool's
    // arguments; such a model's exact text comes only from a whole generation.
    const exact = call.tools !== undefined || call.request.guidedDecoding !== undefined;
    if (exact && streamsLossyText(call.schema)) {
      return wholeStream(call, {
        modelId: this.modelId,
        abortSignal: options.abortSignal,
        warn: this.config.warn,
        failure: (err, requestId) => this.failure(err, requestId, call),
      });
    }
    return this.streamDeltas(call, options);
  }

  /** The error as the caller meets it: led by their call, hints in their settings. */
  private callerError(err: unknown, call: 'generateText' | 'streamText'): unknown {
    return callerError(err, call, this.modelId, this.config.byUrl);
  }

  private async generate(options: LanguageModelV4CallOptions): Promise<LanguageModelV4GenerateResult> {
    const call = await this.prepare(options);
    const result = await call.llm.generate(call.request, call.options);
    const warnings = [...call.warnings];
    let content: LanguageModelV4Content[] =
      result.text.length > 0 ? [{ type: 'text', text: result.text }] : [];
    if (call.tools !== undefined) {
      content = toolCallContent(call.tools, result.text, (message) => {
        warnings.push({ type: 'other', message });
        this.config.warn(`${result.requestId}: ${message}`);
      });
    }
    const first = result.sequences.find((s) => s.index === 0);
    const called = content.some((part) => part.type === 'tool-call');
    return {
      content,
      finishReason: finishReason(first?.finishReason ?? result.finishReason, called),
      usage: usageOf(result, call.prompt, call.tokenizer),
      providerMetadata: providerMetadata(result),
      request: { body: call.request },
      response: { id: result.requestId, modelId: result.model, timestamp: new Date() },
      warnings,
    };
  }

  /** Streams the SDK's chunks as they come, with a warning once the text is lossy. */
  private streamDeltas(call: Prepared, options: LanguageModelV4CallOptions): LanguageModelV4StreamResult {
    // Our own controller, so that a consumer that stops reading cancels the request as an abort
    // does, and the final chunk (with its early-stop report) still arrives to be drained.
    const controller = new AbortController();
    const outer = options.abortSignal;
    const onAbort = (): void => controller.abort(outer?.reason);
    if (outer?.aborted) controller.abort(outer.reason);
    else outer?.addEventListener('abort', onAbort, { once: true });
    const release = (): void => outer?.removeEventListener('abort', onAbort);
    let generation: ReturnType<TritonLlm['stream']>;
    try {
      generation = call.llm.stream(call.request, { ...call.options, signal: controller.signal });
    } catch (err) {
      release();
      throw this.callerError(err, 'streamText');
    }
    const chunks = serialized(generation[Symbol.asyncIterator]());
    const parts = new StreamParts(generation.requestId, call.tools, (message) =>
      this.config.warn(`${generation.requestId}: ${message}`),
    );
    const raw = options.includeRawChunks === true;
    const { prompt } = call;
    const { tokenizer } = call;
    let cancelled = false;
    // The AI SDK reports the stream-start warnings as the step's when the step ends, so a lossy
    // chunk found later still reaches `warnings` (and the AI SDK's warning log) through this array.
    const warnings = [...call.warnings];
    let lossy = false;
    const stream = new ReadableStream<LanguageModelV4StreamPart>({
      start: (out) => {
        out.enqueue({ type: 'stream-start', warnings });
        out.enqueue({
          type: 'response-metadata',
          id: generation.requestId,
          modelId: this.modelId,
          timestamp: new Date(),
        });
      },
      // Pulls until it has something to give: the SDK's chunks may carry no text (held-back
      // characters, other sequences), and a pull that enqueues nothing is not called again.
      pull: async (out) => {
        try {
          for (;;) {
            const next = await chunks.next();
            if (cancelled) return;
            if (next.done) {
              release();
              out.close();
              return;
            }
            const chunk = next.value;
            if (raw) out.enqueue({ type: 'raw', rawValue: chunk });
            if (!chunk.done) {
              if (chunk.lossy && !lossy) {
                lossy = true;
                warnings.push({ type: 'other', message: lossyTextWarning(this.modelId) });
              }
              if (chunk.sequenceIndex !== 0 || chunk.text.length === 0) {
                if (raw) return;
                continue;
              }
              const pieces = parts.push(chunk.text);
              for (const part of pieces) out.enqueue(part);
              // The parser may hold text back (a possible call); then there is nothing to give yet.
              if (pieces.length > 0 || raw) return;
              continue;
            }
            for (const part of parts.end()) out.enqueue(part);
            const first = chunk.result.sequences.find((s) => s.index === 0);
            out.enqueue({
              type: 'finish',
              finishReason: finishReason(first?.finishReason ?? chunk.finishReason, parts.called),
              usage: usageOf(chunk.result, prompt, tokenizer),
              providerMetadata: providerMetadata(chunk.result),
            });
            release();
            out.close();
            return;
          }
        } catch (err) {
          release();
          if (cancelled) return;
          // A server error after some text: the text stays delivered, then the error and the end.
          for (const part of parts.abandon()) out.enqueue(part);
          for (const part of this.failure(err, generation.requestId, call)) out.enqueue(part);
          out.close();
        }
      },
      cancel: async (reason) => {
        cancelled = true;
        controller.abort(reason);
        release();
        // The abort ends the request on the server as the SDK's early-stop table says; reading on
        // to the final chunk completes the SDK's report (its `end` event and warning) without
        // holding up the consumer that left.
        void drain(chunks);
      },
    });
    return { stream, request: { body: call.request } };
  }

  /** The parts that end a streamed call that failed: the error in the caller's words, then the end. */
  private failure(err: unknown, requestId: string | undefined, call: Prepared): LanguageModelV4StreamPart[] {
    return failureParts(
      this.callerError(err, 'streamText'),
      requestId,
      usageOf(undefined, call.prompt, call.tokenizer),
    );
  }

  private async prepare(options: LanguageModelV4CallOptions): Promise<Prepared> {
    const { config } = this;
    const perCall = parseTritonOptions(
      options.providerOptions?.[PROVIDER_KEY],
      `providerOptions.${PROVIDER_KEY}`,
    );
    const trtllm = {
      request: { ...config.defaults.request, ...perCall.request },
      call: { ...config.defaults.call, ...perCall.call },
    };
    const maxTokens = options.maxOutputTokens ?? config.defaultMaxTokens;
    // The AI SDK's settings are checked before any I/O, as the SDK checks its own.
    checkRequest({
      prompt: '-',
      maxTokens,
      ...pick(options, ['temperature', 'topP', 'topK', 'presencePenalty', 'frequencyPenalty', 'seed']),
      ...(options.stopSequences !== undefined ? { stopWords: options.stopSequences } : {}),
    });
    const headers = { ...config.headers, ...definedHeaders(options.headers) };
    const signal = options.abortSignal;
    const { messages, images, warnings: promptWarnings } = chatMessages(options.prompt);
    // One after the other, so a bad tokenizerDir always fails with the directory check's message
    // (what is missing), never with whichever of the two reads lost a race; both load once.
    const { llm, tokenizer } = await config.client();
    const template = await config.template();
    const schema = await llm.schema({
      ...(signal !== undefined ? { signal } : {}),
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
    });
    requireTokenizer(schema, tokenizer);
    const tools = toolUse(options, schema, template, config.toolCallParser);
    const prompt = template.render(messages, tools.plan !== undefined ? { tools: tools.plan.tools } : {});
    const prepared = prepareCall(options, schema, trtllm, config.defaultMaxTokens, tools.plan?.guided);
    const request: GenerateRequest = {
      ...prepared.request,
      prompt,
      ...(images.length > 0 ? { images } : {}),
    };
    checkRequest(request);
    const { timeoutMs, idleTimeoutMs } = prepared.call;
    return {
      llm,
      schema,
      tokenizer,
      prompt,
      request,
      options: {
        ...(signal !== undefined ? { signal } : {}),
        ...(Object.keys(headers).length > 0 ? { headers } : {}),
        ...(timeoutMs !== undefined ? { timeoutMs } : {}),
        ...(idleTimeoutMs !== undefined ? { idleTimeoutMs } : {}),
      },
      warnings: [...promptWarnings, ...tools.warnings, ...prepared.warnings],
      tools: tools.plan,
    };
  }
}

function pick<T extends object, K extends keyof T>(source: T, keys: readonly K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  for (const key of keys) if (source[key] !== undefined) out[key] = source[key];
  return out;
}

function definedHeaders(headers: Record<string, string | undefined> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) if (value !== undefined) out[name] = value;
  return out;
}

/**
 * An iterator whose `next()` calls wait for each other: the drain after a cancel may start while a
 * pull still waits for its chunk, and the SDK's stream must not be read twice at once.
 */
function serialized<T>(inner: AsyncIterator<T>): { next(): Promise<IteratorResult<T>> } {
  let last: Promise<unknown> = Promise.resolve();
  return {
    next: () => {
      const result = last.then(() => inner.next());
      last = result.catch(() => undefined);
      return result;
    },
  };
}

async function drain(chunks: { next(): Promise<IteratorResult<unknown>> }): Promise<void> {
  try {
    for (;;) if ((await chunks.next()).done) return;
  } catch {
    // The consumer is gone; the SDK has already reported the error through its hooks.
  }
}
