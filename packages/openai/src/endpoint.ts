import type { ServerResponse } from 'node:http';
import type { Tokenizer, TritonLlm } from '@trtllm/sdk';
import { inRequestTerms } from './api-error.js';
import { type ChoiceSink, type DeltaEvent, streamChoices } from './choice-stream.js';
import { type ChoiceOutcome, generateChoices, type PromptInput, planJobs } from './choices.js';
import { sendJson } from './http-io.js';
import type { RequestMeter } from './metrics/gateway-metrics.js';
import type { CommonParams } from './params.js';
import { joinSse, type SseText, SseWriter } from './sse.js';
import type { OpenAiFinishReason, OpenAiUsage } from './wire.js';

/** What a handler knows about the server it runs in. */
export interface EndpointContext {
  readonly llm: TritonLlm;
  readonly tokenizer: Tokenizer | undefined;
  /** The model name clients send and see. */
  readonly modelName: string;
  /** Aborted when the client goes away. */
  readonly signal: AbortSignal;
  /** The request as its sender wrote it (`POST /v1/chat/completions`), which error messages lead with. */
  readonly request: string;
  /** Told of streamed text and usage, for `/metrics`. */
  readonly meter?: RequestMeter;
  /** Aborted when the server's drain timeout passes: the reason is the error the response ends with. */
  readonly shutdown?: AbortSignal;
}

/** Ends the request with the shutdown's error once the server's drain timeout cut it short. */
function throwIfShutDown(ctx: EndpointContext): void {
  if (ctx.shutdown?.aborted === true) throw ctx.shutdown.reason;
}

/** The error a request ends with: the server's shutdown, once it cut the request short. */
function endingError(err: unknown, ctx: EndpointContext): unknown {
  return ctx.shutdown?.aborted === true ? ctx.shutdown.reason : inRequestTerms(err, ctx.request);
}

/**
 * How one OpenAI endpoint shapes the choices into its response and its stream chunks. Stream
 * chunks come as SSE text (`data: <json>\n\n` blocks, '' for none, as UTF-8 bytes: see
 * {@link SseText}), so an endpoint can splice a token into a serialized chunk instead of
 * serializing a chunk object per token.
 */
export interface EndpointFormat {
  readonly prompts: readonly PromptInput[];
  readonly params: CommonParams;
  /**
   * A stream is generated whole and then sent as SSE chunks: the model's streamed text is lossy
   * and the output is structured (tool calls, a response format), which one U+FFFD would corrupt.
   */
  readonly streamWhole?: boolean;
  /** The whole response of a non-streaming call. */
  complete(choices: readonly ChoiceOutcome[], usage: OpenAiUsage): unknown;
  /** Chunks sent before any generated text (chat: the role of each choice; completions: the echoed prompt). */
  opening(): SseText;
  /** The chunks for one piece of generated text (none while a tool-call parser holds it back). */
  delta(event: DeltaEvent): SseText;
  /** The chunks that end a choice: whatever a parser still held, then the finish reason. */
  finish(choice: number, reason: OpenAiFinishReason): SseText;
  /** The closing chunk of `stream_options.include_usage`. */
  usage(usage: OpenAiUsage): SseText;
}

/**
 * Runs an endpoint's choices upstream and answers: one JSON body, or SSE chunks ending with
 * `[DONE]`. Headers of a stream wait for the first upstream event, so an error the backend
 * reports at once still gets its own HTTP status; later errors arrive as an error event.
 */
export async function respond(
  res: ServerResponse,
  ctx: EndpointContext,
  format: EndpointFormat,
): Promise<void> {
  const { params } = format;
  const jobs = await planJobs(ctx.llm, format.prompts, params.n, params.sampling, ctx.signal);
  // Operators find the upstream requests in Triton's logs (and the fake's event log) by these ids.
  const headers = { 'x-request-id': jobs.map((j) => j.request.requestId).join(',') };
  const choiceCtx = { llm: ctx.llm, tokenizer: ctx.tokenizer, signal: ctx.signal };
  if (!params.stream) {
    const { choices, usage } = await generateChoices(choiceCtx, jobs);
    throwIfShutDown(ctx);
    if (ctx.signal.aborted) return;
    ctx.meter?.usage(usage);
    sendJson(res, 200, format.complete(choices, usage), headers);
    return;
  }
  if (format.streamWhole === true) {
    await streamWhole(res, ctx, format, await generateChoices(choiceCtx, jobs), headers);
    return;
  }
  const choices = streamChoices(choiceCtx, jobs);
  const sink = new SseSink(res, ctx, format, headers);
  try {
    await choices.run(sink);
    // A stream the shutdown cut short may end quietly upstream: it still ends with the error.
    throwIfShutDown(ctx);
    if (sink.sse !== undefined && !sink.sse.closed) await sink.sse.done();
  } catch (err) {
    // Before the first event the headers are not sent: the error gets its own HTTP status.
    if (sink.sse === undefined) throw err;
    if (sink.sse.closed) return;
    const ending = endingError(err, ctx);
    ctx.meter?.error(ending);
    await sink.sse.fail(ending);
  } finally {
    // Cancels whatever is still running upstream when the client left or an error ended the stream.
    choices.cancel();
  }
}

/**
 * The SSE response of a stream: opened by the first event, so an error the backend reports at
 * once still gets its own HTTP status, and shaped by the endpoint's format.
 */
class SseSink implements ChoiceSink {
  /** Set by the first event. */
  sse: SseWriter | undefined;

  constructor(
    private readonly res: ServerResponse,
    private readonly ctx: EndpointContext,
    private readonly format: EndpointFormat,
    private readonly headers: Readonly<Record<string, string>>,
  ) {}

  get stopped(): boolean {
    return this.sse === undefined ? this.ctx.signal.aborted : this.sse.closed;
  }

  delta(event: DeltaEvent): Promise<void> | undefined {
    const sse = this.sse ?? this.open();
    this.ctx.meter?.delta(event.choice);
    return sse.send(this.format.delta(event));
  }

  finish(choice: number, reason: OpenAiFinishReason): Promise<void> | undefined {
    return (this.sse ?? this.open()).send(this.format.finish(choice, reason));
  }

  usage(usage: OpenAiUsage): Promise<void> | undefined {
    const sse = this.sse ?? this.open();
    this.ctx.meter?.usage(usage);
    return this.format.params.includeUsage ? sse.send(this.format.usage(usage)) : undefined;
  }

  private open(): SseWriter {
    throwIfShutDown(this.ctx);
    const sse = new SseWriter(this.res, this.headers);
    this.sse = sse;
    // The first send of a writer never waits: nothing has filled the socket yet.
    void sse.send(this.format.opening());
    return sse;
  }
}

/**
 * The SSE of a result generated whole: the chunks a stream would have sent, each choice's text in
 * one delta (the tool-call reader then splits it into calls as it does a stream's pieces).
 */
async function streamWhole(
  res: ServerResponse,
  ctx: EndpointContext,
  format: EndpointFormat,
  result: { choices: readonly ChoiceOutcome[]; usage: OpenAiUsage },
  headers: Readonly<Record<string, string>>,
): Promise<void> {
  throwIfShutDown(ctx);
  if (ctx.signal.aborted) return;
  ctx.meter?.usage(result.usage);
  const sse = new SseWriter(res, headers);
  const events: SseText[] = [format.opening()];
  for (const c of result.choices) {
    if (c.text.length > 0 || c.logProbs !== undefined) {
      events.push(
        format.delta({
          type: 'delta',
          choice: c.index,
          text: c.text,
          ...(c.logProbs !== undefined ? { logProbs: c.logProbs } : {}),
        }),
      );
    }
    events.push(format.finish(c.index, c.finishReason));
  }
  if (format.params.includeUsage) events.push(format.usage(result.usage));
  await sse.send(joinSse(events));
  if (!sse.closed) await sse.done();
}
