import { IncrementalDetokenizer } from './detokenizer.js';
import { TritonLlmError } from './errors.js';
import { type DecodedResponse, decodeResponse } from './models/decode-response.js';
import { type EncodedRequest, encodeStopRequest } from './models/encode-request.js';
import type { GenerateRequest } from './request.js';
import type {
  DeltaChunk,
  EarlyStopReport,
  FinalChunk,
  FinishReason,
  GenerateResult,
  Logits,
  PerfMetrics,
  SequenceResult,
  StopMeans,
  StreamChunk,
} from './result.js';
import { backoff, exhausted, type RetryOptions, type RetryPolicy, RetrySchedule } from './retry.js';
import type { ModelSchema } from './schema.js';
import { StopSequenceMatcher } from './stop-sequences.js';
import { TextDeltaDecoder } from './text-delta.js';
import type { Tokenizer } from './tokenizer.js';
import type { CallOptions, InferResponse, InferStream, Transport } from './transport.js';

/** Per-call options of `generate()` and `stream()`. */
export interface GenerateOptions {
  /** Aborting cancels the request; the result (or final chunk) reports `cancelled` and how the server was told. */
  readonly signal?: AbortSignal;
  /** Total deadline in milliseconds, shared by all attempts (each sent as a gRPC deadline). */
  readonly timeoutMs?: number;
  /** Longest wait for the next response in milliseconds before the request is ended with `deadline_exceeded`. */
  readonly idleTimeoutMs?: number;
  /** Extra headers (gRPC metadata) for this call. */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * Retries of a request that failed before its first response (field by field over the client's
   * `retry`). Once a response has arrived the request is never retried: its error is thrown
   * after the chunks already delivered.
   */
  readonly retry?: RetryOptions;
}

/** What a generation needs from its client. */
export interface GenerationContext {
  readonly transport: Transport;
  readonly schema: ModelSchema;
  readonly request: GenerateRequest;
  readonly encoded: EncodedRequest;
  readonly streaming: boolean;
  readonly tokenizer: Tokenizer | undefined;
  readonly options: GenerateOptions;
  /** The resolved retry policy of this request. */
  readonly retry: RetryPolicy;
  /** Called once per client when an early end cannot stop the server's generation. */
  readonly warnServerKeepsGenerating: (model: string) => void;
  readonly observe?: (event: GenerationEvent) => void;
  /**
   * Where a non-decoupled request gets its one response, instead of its own `infer` call: a
   * member of a batched request reads its row of the shared answer.
   */
  readonly unary?: (options: CallOptions) => Promise<InferResponse>;
}

/** Lifecycle events for logging, metrics and tracing hooks. */
export type GenerationEvent =
  | {
      readonly type: 'request';
      readonly requestId: string;
      readonly model: string;
      readonly streaming: boolean;
    }
  | {
      /** An attempt failed before any response and another starts after `delayMs`. */
      readonly type: 'retry';
      readonly requestId: string;
      readonly model: string;
      /** The attempt about to start, from 2. */
      readonly attempt: number;
      readonly delayMs: number;
      readonly error: TritonLlmError;
    }
  | {
      readonly type: 'response';
      readonly requestId: string;
      readonly model: string;
      readonly elapsedMs: number;
    }
  | {
      readonly type: 'end';
      readonly requestId: string;
      readonly model: string;
      readonly result: GenerateResult;
    }
  | {
      readonly type: 'error';
      readonly requestId: string;
      readonly model: string;
      readonly error: TritonLlmError;
    };

class SequenceState {
  readonly ids: number[] = [];
  text = '';
  tokenCount = 0;
  countKnown = false;
  lossy = false;
  logProbs: number[] | undefined;
  cumLogProb: number | undefined;
  serverFinish: string | undefined;
  stopReason: string | undefined;
  generationLogits: Logits | undefined;
  matchedStop = false;
  /** `num_output_tokens` as the server reported it for this sequence (non-streaming text models). */
  reportedTokens: number | undefined;
  constructor(
    readonly index: number,
    readonly detokenizer: IncrementalDetokenizer | undefined,
    readonly textDecoder: TextDeltaDecoder | undefined,
    readonly stops: StopSequenceMatcher | undefined,
  ) {}
}

const now = (): number => performance.now();

// How long an early end waits for the in-band stop to be answered before it cancels instead: a
// server that accepted the connection but stopped answering (frozen, overloaded) must not hold
// an abort, a stop() or an idle timeout forever.
const STOP_GRACE_MS = 2000;

/** `pending`, or a rejection once `ms` have passed without it settling. */
function withinGrace<T>(pending: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([pending, expired]).finally(() => clearTimeout(timer));
}

/**
 * One running request. Iterating it yields the chunks; `stop()` asks the backend for a graceful
 * early stop. The policy of the SDK lives here, once for every transport: text deltas, held-back
 * incomplete characters, client-side stop sequences, finish reasons, timings, early-stop reports.
 */
export class Generation implements AsyncIterable<StreamChunk> {
  readonly requestId: string;
  private readonly controller = new AbortController();
  private readonly states = new Map<number, SequenceState>();
  private transportStream: InferStream | undefined;
  private early: { trigger: EarlyStopReport['trigger']; via: StopMeans[] } | undefined;
  private started = false;
  private finished = false;
  private stopGrace: ReturnType<typeof setTimeout> | undefined;
  private numInputTokens: number | undefined;
  private contextLogits: Logits | undefined;
  private perfMetrics: PerfMetrics | undefined;

  constructor(private readonly ctx: GenerationContext) {
    this.requestId = ctx.encoded.request.id;
  }

  /**
   * Ends the request early but gracefully: models with the in-band `stop` input (raw and LLM-API)
   * finish with what they generated and finish reason `stopped`; for ensemble and BLS, which have no
   * such input, the call is cancelled and the result says the server keeps generating.
   */
  async stop(): Promise<void> {
    if (this.finished || this.early !== undefined) return;
    await this.endEarly('stop');
  }

  [Symbol.asyncIterator](): AsyncIterator<StreamChunk> {
    if (this.started)
      throw new TritonLlmError('failed_precondition', 'a generation can be iterated only once');
    this.started = true;
    return this.run();
  }

  private async *run(): AsyncGenerator<StreamChunk, void, undefined> {
    const { ctx } = this;
    const { transport, schema, options } = ctx;
    const started = now();
    let firstAt: number | undefined;
    let lastAt: number | undefined;
    const gaps: number[] = [];
    const onAbort = (): void => void this.endEarly('abort');
    if (options.signal?.aborted) {
      throw new TritonLlmError('cancelled', 'the request was aborted before it was sent', {
        requestId: this.requestId,
        model: schema.model,
      });
    }
    options.signal?.addEventListener('abort', onAbort, { once: true });
    ctx.observe?.({
      type: 'request',
      requestId: this.requestId,
      model: schema.model,
      streaming: ctx.streaming,
    });
    // Generation is idempotent until something was delivered: only failures before the first
    // response are retried.
    const schedule = new RetrySchedule(ctx.retry, { idempotent: true, timeoutMs: options.timeoutMs });
    let responded = false;
    let source = this.open(transport, schedule.remainingMs());
    let idleTimer: ReturnType<typeof setTimeout> | undefined;
    try {
      for (;;) {
        let next: IteratorResult<InferResponse>;
        try {
          next = await this.withIdleTimeout(source.next(), (t) => {
            idleTimer = t;
          });
        } catch (err) {
          if (idleTimer !== undefined) clearTimeout(idleTimer);
          if (responded) throw err;
          const delay = this.early === undefined ? schedule.nextDelay(err) : undefined;
          if (delay === undefined) {
            throw err instanceof TritonLlmError ? exhausted(err, schedule.attempts) : err;
          }
          ctx.observe?.({
            type: 'retry',
            requestId: this.requestId,
            model: schema.model,
            attempt: schedule.attempts,
            delayMs: delay,
            error: TritonLlmError.from(err).withContext({ requestId: this.requestId, model: schema.model }),
          });
          // The failed call has ended; a stop() or abort during the wait has nothing to tell it.
          this.transportStream = undefined;
          await backoff(delay, this.controller.signal);
          if (this.early !== undefined) {
            throw new TritonLlmError('cancelled', 'the request was ended while waiting to retry', {
              requestId: this.requestId,
              model: schema.model,
            });
          }
          source = this.open(transport, schedule.remainingMs());
          continue;
        }
        if (idleTimer !== undefined) clearTimeout(idleTimer);
        if (next.done) break;
        responded = true;
        const at = now();
        ctx.observe?.({
          type: 'response',
          requestId: this.requestId,
          model: schema.model,
          elapsedMs: at - started,
        });
        const chunks = this.absorb(next.value);
        if (chunks.length > 0) {
          if (firstAt === undefined) firstAt = at;
          else if (lastAt !== undefined) gaps.push(at - lastAt);
          lastAt = at;
        }
        for (const chunk of chunks) yield chunk;
        if (this.allSequencesMatchedStop() && this.early === undefined) {
          await this.endEarly('stop_sequence');
          // With an in-band stop the stream still delivers its final response; without one the call is gone.
          if (!this.stoppedInBand()) break;
        }
      }
      yield* this.ending(started, firstAt, gaps);
    } catch (err) {
      if (idleTimer !== undefined) clearTimeout(idleTimer);
      const error = TritonLlmError.from(err, 'unknown');
      // Our own cancellation (abort, stop without an in-band path, stop sequence) ends the
      // request normally: what was delivered stays delivered and the final chunk says why it ended.
      if (this.early !== undefined && error.code === 'cancelled' && this.early.trigger !== 'idle_timeout') {
        yield* this.ending(started, firstAt, gaps);
        return;
      }
      if (error.code === 'deadline_exceeded' && this.early === undefined) {
        this.early = { trigger: 'deadline', via: [this.cancelMeans()] };
      }
      const report = this.report();
      const wrapped = error.withContext({
        requestId: this.requestId,
        model: schema.model,
        ...(report !== undefined ? { earlyStop: report } : {}),
      });
      ctx.observe?.({ type: 'error', requestId: this.requestId, model: schema.model, error: wrapped });
      throw wrapped;
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
      if (this.stopGrace !== undefined) clearTimeout(this.stopGrace);
      if (!this.finished) {
        // The consumer left the loop early (break / return / throw): cancel on the wire.
        if (this.early === undefined) await this.endEarly('break');
        this.finished = true;
      }
      this.controller.abort();
    }
  }

  /** Starts one attempt of the request on the wire, with what is left of the deadline. */
  private open(transport: Transport, timeoutMs: number | undefined): AsyncIterator<InferResponse> {
    const { ctx } = this;
    const callOptions: CallOptions = {
      signal: this.controller.signal,
      ...(timeoutMs !== undefined ? { timeoutMs: Math.max(1, timeoutMs) } : {}),
      ...(ctx.options.headers !== undefined ? { headers: ctx.options.headers } : {}),
    };
    if (!ctx.schema.decoupled) {
      const { unary } = ctx;
      return once(() =>
        unary !== undefined ? unary(callOptions) : transport.infer(ctx.encoded.request, callOptions),
      );
    }
    this.transportStream = transport.stream(ctx.encoded.request, callOptions);
    return this.transportStream[Symbol.asyncIterator]();
  }

  /** The held-back text, then the final chunk with the whole result. */
  private *ending(started: number, firstAt: number | undefined, gaps: number[]): Generator<StreamChunk> {
    yield* this.flush();
    this.finished = true;
    const result = this.result(started, firstAt, gaps);
    this.ctx.observe?.({ type: 'end', requestId: this.requestId, model: this.ctx.schema.model, result });
    const final: FinalChunk = {
      done: true,
      requestId: this.requestId,
      text: '',
      finishReason: result.finishReason,
      usage: result.usage,
      timings: result.timings,
      result,
    };
    yield final;
  }

  private async withIdleTimeout<T>(
    pending: Promise<T>,
    setTimer: (t: ReturnType<typeof setTimeout>) => void,
  ): Promise<T> {
    const idle = this.ctx.options.idleTimeoutMs;
    if (idle === undefined) return pending;
    return new Promise<T>((resolve, reject) => {
      let expired = false;
      const timer = setTimeout(() => {
        // From here the idle timeout is the answer: the cancellation it causes may end the pending
        // read first, and must not be reported instead.
        expired = true;
        void this.endEarly('idle_timeout').finally(() =>
          reject(
            new TritonLlmError(
              'deadline_exceeded',
              `no response from the server for ${idle} ms (idle timeout)`,
              {
                requestId: this.requestId,
                model: this.ctx.schema.model,
              },
            ),
          ),
        );
      }, idle);
      setTimer(timer);
      pending.then(
        (v) => {
          clearTimeout(timer);
          if (!expired) resolve(v);
        },
        (e: unknown) => {
          clearTimeout(timer);
          if (!expired) reject(e);
        },
      );
    });
  }

  private stoppedInBand(): boolean {
    return this.early?.via.includes('in_band_stop') === true;
  }

  private cancelMeans(): StopMeans {
    if (this.transportStream?.cancelsOnServer === false) return 'none';
    return this.ctx.transport.protocol === 'grpc' ? 'grpc_cancel' : 'http_disconnect';
  }

  /** Ends the request early by the best means the model and transport offer. */
  private async endEarly(trigger: EarlyStopReport['trigger']): Promise<void> {
    if (this.early !== undefined || this.finished) return;
    const { schema, transport } = this.ctx;
    const via: StopMeans[] = [];
    this.early = { trigger, via };
    const stream = this.transportStream;
    const graceful = trigger === 'stop' || trigger === 'stop_sequence';
    // The in-band stop is the only way to end a raw/LLM-API request gracefully, and over HTTP it is
    // also the only reliable cancel: Triton notices a closed connection only at its next write.
    // So it is on a multiplexed gRPC call, where ending one request cannot cancel the shared call.
    const sendInBand =
      stream !== undefined &&
      schema.supportsStop &&
      (graceful || transport.protocol === 'http' || stream.cancelsOnServer === false);
    const cancel = !graceful || !sendInBand;
    // The means are recorded before anything is awaited: the stream may reach its final response
    // while the stop is in flight, and its report must already say how the server was told.
    if (sendInBand) via.push('in_band_stop');
    if (cancel) via.push(this.cancelMeans());
    if (sendInBand) {
      try {
        await withinGrace(stream.sendStop(encodeStopRequest(schema, this.requestId)), STOP_GRACE_MS);
      } catch {
        via.splice(via.indexOf('in_band_stop'), 1);
        if (!cancel) via.push(this.cancelMeans());
        this.controller.abort();
      }
    }
    if (cancel) this.controller.abort();
    else if (!this.controller.signal.aborted) {
      // A graceful stop waits for the final response, but not forever: a server that stopped
      // answering gets the call cancelled instead.
      this.stopGrace = setTimeout(() => {
        if (this.finished) return;
        via.push(this.cancelMeans());
        this.controller.abort();
      }, STOP_GRACE_MS);
    }
    if (!this.report()?.serverStopsGenerating) this.ctx.warnServerKeepsGenerating(schema.model);
  }

  private report(): EarlyStopReport | undefined {
    if (this.early === undefined) return undefined;
    const { via, trigger } = this.early;
    const flavor = this.ctx.schema.flavor;
    const stopsOnCancel = flavor === 'tensorrt_llm' || flavor === 'llmapi';
    const told = via.filter((m) => m !== 'none');
    return {
      trigger,
      via: [...via],
      serverTold: told.length > 0,
      serverStopsGenerating: via.includes('in_band_stop') || (stopsOnCancel && told.length > 0),
    };
  }

  private state(index: number): SequenceState {
    let s = this.states.get(index);
    if (s !== undefined) return s;
    const { schema, tokenizer, request, streaming } = this.ctx;
    const stops =
      request.stopWords !== undefined && request.stopWords.length > 0
        ? new StopSequenceMatcher(request.stopWords)
        : undefined;
    const detok =
      schema.flavor === 'tensorrt_llm' && tokenizer !== undefined
        ? new IncrementalDetokenizer(tokenizer, { skipSpecialTokens: true })
        : undefined;
    const textDecoder =
      schema.flavor === 'tensorrt_llm'
        ? undefined
        : new TextDeltaDecoder({ mode: streaming && schema.cumulativeText ? 'cumulative' : 'delta' });
    s = new SequenceState(index, detok, textDecoder, stops);
    this.states.set(index, s);
    return s;
  }

  private absorb(response: InferResponse): DeltaChunk[] {
    const { schema, request, encoded, streaming } = this.ctx;
    const decoded: DecodedResponse = decodeResponse(response, schema, {
      logProbs: request.returnLogProbs === true,
      perfMetrics: request.returnPerfMetrics === true,
      contextLogits: request.returnContextLogits === true,
      generationLogits: request.returnGenerationLogits === true,
    });
    if (decoded.numInputTokens !== undefined) this.numInputTokens = decoded.numInputTokens;
    if (decoded.contextLogits !== undefined) this.contextLogits = decoded.contextLogits;
    if (decoded.perfMetrics !== undefined) this.perfMetrics = decoded.perfMetrics;
    const chunks: DeltaChunk[] = [];
    for (const seq of decoded.sequences) {
      const s = this.state(seq.sequenceIndex);
      if (seq.finishReason !== undefined) s.serverFinish = seq.finishReason;
      if (seq.stopReason !== undefined) s.stopReason = seq.stopReason;
      if (seq.cumLogProb !== undefined) s.cumLogProb = seq.cumLogProb;
      if (seq.generationLogits !== undefined) s.generationLogits = seq.generationLogits;
      // A response for one sequence reports that sequence's count (n > 1 sends one response per sequence).
      if (decoded.numOutputTokens !== undefined && decoded.sequences.length === 1 && !streaming) {
        s.reportedTokens = decoded.numOutputTokens;
      }
      if (s.matchedStop) continue;
      let ids = seq.tokenIds ? [...seq.tokenIds] : [];
      if (seq.tokenIds !== undefined) {
        const prompt = encoded.promptIds;
        if (!streaming && !encoded.promptExcluded && prompt !== undefined && startsWith(ids, prompt)) {
          ids = ids.slice(prompt.length);
        }
        // Some backends leave the end id at the end of the sequence; it is not text.
        while (ids.length > 0 && encoded.endId !== undefined && ids[ids.length - 1] === encoded.endId)
          ids.pop();
        s.countKnown = true;
      }
      let text = '';
      let lossy = false;
      if (s.detokenizer !== undefined) text = s.detokenizer.push(ids);
      else if (s.textDecoder !== undefined && seq.text !== undefined) {
        let raw = seq.text;
        if (
          !streaming &&
          !encoded.promptExcluded &&
          request.prompt !== undefined &&
          raw.startsWith(request.prompt)
        ) {
          raw = raw.slice(request.prompt.length);
        }
        text = s.textDecoder.push(raw);
        lossy = streaming && !schema.cumulativeText && raw.includes('\uFFFD');
        if (streaming && raw.length > 0) {
          s.tokenCount += 1;
          s.countKnown = true;
        }
      }
      if (lossy) s.lossy = true;
      s.ids.push(...ids);
      if (seq.tokenIds !== undefined) s.tokenCount += ids.length;
      if (seq.logProbs !== undefined) s.logProbs = [...(s.logProbs ?? []), ...seq.logProbs];
      if (s.stops !== undefined && text.length > 0) {
        const out = s.stops.push(text);
        text = out.emit;
        if (out.matched !== undefined) s.matchedStop = true;
      }
      s.text += text;
      if (text.length > 0 || ids.length > 0) {
        chunks.push({
          done: false,
          requestId: this.requestId,
          sequenceIndex: s.index,
          text,
          tokenIds: ids,
          ...(seq.logProbs !== undefined ? { logProbs: seq.logProbs } : {}),
          totalTokens: s.tokenCount,
          lossy,
        });
      }
    }
    return chunks;
  }

  private allSequencesMatchedStop(): boolean {
    if (this.states.size === 0) return false;
    for (const s of this.states.values()) if (!s.matchedStop) return false;
    return true;
  }

  /** Releases text held back at the end (incomplete characters, possible stop-sequence prefixes). */
  private flush(): DeltaChunk[] {
    const chunks: DeltaChunk[] = [];
    for (const s of this.states.values()) {
      if (s.matchedStop) continue;
      let text = s.detokenizer?.flush() ?? s.textDecoder?.flush() ?? '';
      if (s.stops !== undefined) {
        const out = text.length > 0 ? s.stops.push(text) : { emit: '' };
        text = out.emit + (out.matched === undefined ? s.stops.flush() : '');
        if (out.matched !== undefined) s.matchedStop = true;
      }
      s.text += text;
      if (text.length > 0) {
        chunks.push({
          done: false,
          requestId: this.requestId,
          sequenceIndex: s.index,
          text,
          tokenIds: [],
          totalTokens: s.tokenCount,
          lossy: false,
        });
      }
    }
    return chunks;
  }

  private finishReason(s: SequenceState): FinishReason {
    if (s.matchedStop) return 'stop';
    const early = this.earlyFinish();
    if (early !== undefined) return early;
    if (s.serverFinish !== undefined) {
      const f = s.serverFinish.toLowerCase();
      if (f === 'length') return 'length';
      if (f === 'stop' || f === 'end_id' || f === 'stop_words') return 'stop';
      if (f === 'cancelled' || f === 'canceled') return 'cancelled';
      if (f === 'error') return 'error';
    }
    const count = s.countKnown ? s.tokenCount : s.reportedTokens;
    if (count === undefined) return 'unknown';
    return count >= this.ctx.request.maxTokens ? 'length' : 'stop';
  }

  private result(started: number, firstAt: number | undefined, gaps: number[]): GenerateResult {
    const sequences: SequenceResult[] = [...this.states.values()]
      .sort((a, b) => a.index - b.index)
      .map((s) => {
        const tokenCount = s.countKnown ? s.tokenCount : (s.reportedTokens ?? s.tokenCount);
        return {
          index: s.index,
          text: s.text,
          tokenIds: s.ids,
          tokenCount,
          finishReason: this.finishReason(s),
          lossy: s.lossy,
          ...(s.stopReason !== undefined ? { stopReason: s.stopReason } : {}),
          ...(s.cumLogProb !== undefined ? { cumLogProb: s.cumLogProb } : {}),
          ...(s.logProbs !== undefined ? { logProbs: s.logProbs } : {}),
          ...(s.generationLogits !== undefined ? { generationLogits: s.generationLogits } : {}),
        };
      });
    const first = sequences[0];
    const promptTokens = this.numInputTokens ?? this.ctx.encoded.promptIds?.length;
    const report = this.report();
    return {
      requestId: this.requestId,
      model: this.ctx.schema.model,
      text: first?.text ?? '',
      finishReason: first?.finishReason ?? this.earlyFinish() ?? 'stop',
      sequences,
      usage: {
        ...(promptTokens !== undefined ? { promptTokens } : {}),
        completionTokens: sequences.reduce((n, s) => n + s.tokenCount, 0),
      },
      timings: {
        ...(firstAt !== undefined ? { timeToFirstTokenMs: firstAt - started } : {}),
        interTokenMs: gaps,
        totalMs: now() - started,
      },
      ...(this.contextLogits !== undefined ? { contextLogits: this.contextLogits } : {}),
      ...(this.perfMetrics !== undefined ? { perfMetrics: this.perfMetrics } : {}),
      ...(report !== undefined ? { earlyStop: report } : {}),
    };
  }

  /** The finish reason an early end gives every sequence that did not match a stop sequence itself. */
  private earlyFinish(): FinishReason | undefined {
    const trigger = this.early?.trigger;
    if (trigger === 'stop' || trigger === 'stop_sequence') return 'stopped';
    if (trigger === 'abort' || trigger === 'break') return 'cancelled';
    return undefined;
  }
}

function startsWith(ids: readonly number[], prefix: readonly number[]): boolean {
  if (prefix.length > ids.length) return false;
  for (let i = 0; i < prefix.length; i++) if (ids[i] !== prefix[i]) return false;
  return true;
}

/** An iterator over the single response of a unary call. */
function once(call: () => Promise<InferResponse>): AsyncIterator<InferResponse> {
  let done = false;
  return {
    async next(): Promise<IteratorResult<InferResponse>> {
      if (done) return { done: true, value: undefined };
      done = true;
      return { done: false, value: await call() };
    },
  };
}
