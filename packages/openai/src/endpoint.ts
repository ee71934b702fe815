import type { ServerResponse } from 'node:http';
import type { Tokenizer, TritonLlm } from '@trtllm/sdk';
import { inRequestTerms } from './api-error.js';
import { streamChoices } from './choice-stream.js';
import {
  type ChoiceEvent,
  type ChoiceOutcome,
  generateChoices,
  type PromptInput,
  planJobs,
} from './choices.js';
import { sendJson } from './http-io.js';
import type { RequestMeter } from './metrics/gateway-metrics.js';
import type { CommonParams } from './params.js';
import { SseWriter } from './sse.js';
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
 * chunks come as SSE text (`data: <json>\n\n` blocks, '' for none), so an endpoint can splice a
 * token into a serialized chunk instead of serializing a chunk object per token.
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
  opening(): string;
  /** The chunks for one piece of generated text (none while a tool-call parser holds it back). */
  delta(event: Extract<ChoiceEvent, { type: 'delta' }>): string;
  /** The chunks that end a choice: whatever a parser still held, then the finish reason. */
  finish(choice: number, reason: OpenAiFinishReason): string;
  /** The closing chunk of `stream_options.include_usage`. */
  usage(usage: OpenAiUsage): string;
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
  const events = streamChoices(choiceCtx, jobs);
  try {
    let next = await events.next();
    throwIfShutDown(ctx);
    if (ctx.signal.aborted) return;
    const sse = new SseWriter(res, headers);
    try {
      await sse.send(format.opening());
      while (!next.done && !sse.closed) {
        const event = next.value;
        let full: Promise<void> | undefined;
        if (event.type === 'delta') {
          ctx.meter?.delta(event.choice);
          full = sse.send(format.delta(event));
        } else if (event.type === 'finish') full = sse.send(format.finish(event.choice, event.finishReason));
        else {
          ctx.meter?.usage(event.usage);
          if (params.includeUsage) full = sse.send(format.usage(event.usage));
        }
        // Most writes fit the socket: awaiting only a full one saves a microtask per chunk.
        if (full !== undefined) await full;
        next = await events.next();
      }
      // A stream the shutdown cut short may end quietly upstream: it still ends with the error.
      throwIfShutDown(ctx);
      if (!sse.closed) await sse.done();
    } catch (err) {
      if (sse.closed) return;
      const ending = endingError(err, ctx);
      ctx.meter?.error(ending);
      await sse.fail(ending);
    }
  } finally {
    // Cancels whatever is still running upstream when the client left or an error ended the stream.
    await events.return();
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
  let events = format.opening();
  for (const c of result.choices) {
    if (c.text.length > 0 || c.logProbs !== undefined) {
      events += format.delta({
        type: 'delta',
        choice: c.index,
        text: c.text,
        ...(c.logProbs !== undefined ? { logProbs: c.logProbs } : {}),
      });
    }
    events += format.finish(c.index, c.finishReason);
  }
  if (format.params.includeUsage) events += format.usage(result.usage);
  await sse.send(events);
  if (!sse.closed) await sse.done();
}
