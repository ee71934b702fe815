import { TritonLlmError } from './errors.js';
import { type DecodeWants, decodeResponse } from './models/decode-response.js';
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
import { SequenceTracker } from './sequences.js';
import type { Tokenizer } from './tokenizer.js';
import type {
  CallOptions,
  InferRequest,
  InferResponse,
  InferSink,
  InferStream,
  Transport,
} from './transport.js';

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

const now = (): number => performance.now();

// How long an early end waits for the in-band stop to be answered before it cancels instead: a
// server that accepted the connection but stopped answering (frozen, overloaded) must not hold
// an abort, a stop() or an idle timeout forever.
const STOP_GRACE_MS = 2000;

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

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
 *
 * It is its own iterator, written as a small state machine rather than an async generator: a
 * delivered chunk costs the transport's promise and one reaction, and the chunks of one response
 * wait in a queue that `next()` hands out without reading again.
 */
export class Generation implements AsyncIterable<StreamChunk>, AsyncIterator<StreamChunk>, InferSink {
  readonly requestId: string;
  /** Made on first need: a stream of a transport with `cancellableStreams` is ended without one. */
  private controller: AbortController | undefined;
  /** The wire was told to end this request (signal aborted or stream cancelled). */
  private wireCancelled = false;
  private readonly sequences: SequenceTracker;
  private readonly wants: DecodeWants;
  private transportStream: InferStream | undefined;
  private source: AsyncIterator<InferResponse> | undefined;
  private schedule: RetrySchedule | undefined;
  private early: { trigger: EarlyStopReport['trigger']; via: StopMeans[] } | undefined;
  /** The early end in progress or done (its in-band stop may take a round trip). */
  private endingEarly: Promise<void> | undefined;
  /** new: not iterated yet; running: reading responses; done: nothing more to read. */
  private phase: 'new' | 'running' | 'done' = 'new';
  private iterated = false;
  /** The result was built (the final chunk is queued or delivered). */
  private finished = false;
  /** The transport said the request ended (its last response, or an error): nothing to cancel. */
  private sourceEnded = false;
  private responded = false;
  private readonly out: StreamChunk[] = [];
  private outHead = 0;
  private stopGrace: ReturnType<typeof setTimeout> | undefined;
  private numInputTokens: number | undefined;
  private contextLogits: Logits | undefined;
  private perfMetrics: PerfMetrics | undefined;
  private started = 0;
  private firstAt: number | undefined;
  private lastAt: number | undefined;
  private gaps: number[] | undefined;
  private onAbort: (() => void) | undefined;
  /** The request on the wire, kept until the first response: only a retry sends it again. */
  private inferRequest: InferRequest | undefined;
  private readonly promptTokens: number | undefined;
  /** The model was sent the stop strings and ends the request at them itself. */
  private readonly serverMatchesStops: boolean;
  private readonly ctx: Omit<GenerationContext, 'encoded'>;
  private readonly onResult = (
    r: IteratorResult<InferResponse>,
  ): Promise<IteratorResult<StreamChunk>> | IteratorResult<StreamChunk> =>
    this.result(r.done === true ? undefined : r.value);
  /** The consumer's pending `next()`, while a pulled stream (`InferStream.pull`) has not answered. */
  private resolveRead: ((r: IteratorResult<StreamChunk>) => void) | undefined;
  private rejectRead: ((e: unknown) => void) | undefined;
  private readonly onReadError = (
    err: unknown,
  ): Promise<IteratorResult<StreamChunk>> | IteratorResult<StreamChunk> => this.readFailed(err);

  constructor(context: GenerationContext) {
    const { encoded, ...ctx } = context;
    this.ctx = ctx;
    this.requestId = encoded.request.id;
    this.inferRequest = encoded.request;
    this.promptTokens = encoded.promptIds?.length;
    this.serverMatchesStops = encoded.serverMatchesStops;
    const { request } = ctx;
    this.sequences = new SequenceTracker(
      ctx.schema,
      request,
      encoded,
      ctx.tokenizer,
      ctx.streaming,
      this.requestId,
    );
    this.wants = {
      logProbs: request.returnLogProbs === true,
      perfMetrics: request.returnPerfMetrics === true,
      contextLogits: request.returnContextLogits === true,
      generationLogits: request.returnGenerationLogits === true,
    };
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
    if (this.iterated)
      throw new TritonLlmError('failed_precondition', 'a generation can be iterated only once');
    this.iterated = true;
    return this;
  }

  next(): Promise<IteratorResult<StreamChunk>> {
    if (this.outHead < this.out.length) return Promise.resolve(this.take());
    if (this.phase === 'done') return Promise.resolve(DONE);
    if (this.phase === 'new') {
      const refused = this.begin();
      if (refused !== undefined) return Promise.reject(refused);
    }
    return this.read();
  }

  /** The consumer left the loop (break / return / throw): cancel on the wire unless it is over. */
  return(): Promise<IteratorResult<StreamChunk>> {
    const phase = this.phase;
    this.phase = 'done';
    this.out.length = 0;
    this.outHead = 0;
    if (phase === 'new') return Promise.resolve(DONE);
    this.release();
    if (this.finished) return Promise.resolve(DONE);
    // An early end already under way (an abort sending the in-band stop) finishes first, so the
    // server hears the stop before the connection closes, as it did when the abort came alone.
    const ending =
      this.early === undefined ? this.endEarly('break') : (this.endingEarly ?? Promise.resolve());
    return ending.then(() => {
      this.finished = true;
      this.cancelOnWire();
      return DONE;
    });
  }

  /** Starts the request; returns the error when it must not be sent at all. */
  private begin(): unknown {
    const { ctx } = this;
    const { schema, options } = ctx;
    this.phase = 'running';
    this.started = now();
    if (options.signal?.aborted) {
      this.phase = 'done';
      return new TritonLlmError('cancelled', 'the request was aborted before it was sent', {
        requestId: this.requestId,
        model: schema.model,
      });
    }
    if (options.signal !== undefined) {
      this.onAbort = () => void this.endEarly('abort');
      options.signal.addEventListener('abort', this.onAbort, { once: true });
    }
    ctx.observe?.({
      type: 'request',
      requestId: this.requestId,
      model: schema.model,
      streaming: ctx.streaming,
    });
    // Generation is idempotent until something was delivered: only failures before the first
    // response are retried.
    this.schedule = new RetrySchedule(ctx.retry, { idempotent: true, timeoutMs: options.timeoutMs });
    return undefined;
  }

  /** Reads the next response and turns it into chunks (or the end, or an error). */
  private read(): Promise<IteratorResult<StreamChunk>> {
    let source = this.source;
    if (source === undefined) {
      try {
        source = this.open(this.schedule!.remainingMs());
      } catch (err) {
        return Promise.resolve(this.failed(err));
      }
    }
    const stream = this.transportStream;
    if (stream?.pull !== undefined && this.ctx.options.idleTimeoutMs === undefined) {
      // Push mode: the stream hands the next response to this generation's sink methods, and the
      // consumer's promise is settled from there (one promise per chunk).
      return new Promise((resolve, reject) => {
        this.resolveRead = resolve;
        this.rejectRead = reject;
        stream.pull!(this);
      });
    }
    const pending = source.next();
    const guarded = this.ctx.options.idleTimeoutMs === undefined ? pending : this.withIdleTimeout(pending);
    return guarded.then(this.onResult, this.onReadError);
  }

  /** @internal The pulled stream's next response (see {@link InferSink}). */
  onResponse(response: InferResponse): void {
    const [resolve, reject] = this.takeRead();
    settle(this.result(response), resolve, reject);
  }

  /** @internal The pulled stream ended. */
  onEnd(): void {
    const [resolve, reject] = this.takeRead();
    settle(this.result(undefined), resolve, reject);
  }

  /** @internal The pulled stream failed. */
  onError(error: unknown): void {
    const [resolve, reject] = this.takeRead();
    settle(this.readFailed(error), resolve, reject);
  }

  /**
   * The pending read's resolvers, taken before the answer is worked out: working it out may start
   * the next read (a response that brought no chunk), which sets its own.
   */
  private takeRead(): [
    ((r: IteratorResult<StreamChunk>) => void) | undefined,
    ((e: unknown) => void) | undefined,
  ] {
    const pair: [typeof this.resolveRead, typeof this.rejectRead] = [this.resolveRead, this.rejectRead];
    this.resolveRead = undefined;
    this.rejectRead = undefined;
    return pair;
  }

  /** One answer of the transport: a response, or (undefined) the end of the stream. */
  private result(
    response: InferResponse | undefined,
  ): Promise<IteratorResult<StreamChunk>> | IteratorResult<StreamChunk> {
    try {
      if (this.phase === 'done') return this.take();
      if (response === undefined) {
        this.sourceEnded = true;
        this.ending();
        return this.take();
      }
      this.responded = true;
      this.inferRequest = undefined;
      const at = now();
      const { ctx } = this;
      ctx.observe?.({
        type: 'response',
        requestId: this.requestId,
        model: ctx.schema.model,
        elapsedMs: at - this.started,
      });
      const queued = this.out.length;
      this.absorb(response);
      if (this.out.length > queued) {
        if (this.firstAt === undefined) this.firstAt = at;
        else if (this.lastAt !== undefined) {
          this.gaps ??= [];
          this.gaps.push(at - this.lastAt);
        }
        this.lastAt = at;
      }
      if (this.sequences.allMatchedStop && this.early === undefined && this.mustEndAtMatch(response)) {
        return this.endEarly('stop_sequence').then(() => {
          // With an in-band stop the stream still delivers its final response; without one the call is gone.
          if (!this.stoppedInBand() && this.phase !== 'done') this.ending();
          return this.continue();
        });
      }
      return this.continue();
    } catch (err) {
      return this.failed(err);
    }
  }

  /** The next queued chunk, or another read when the last response brought none. */
  private continue(): Promise<IteratorResult<StreamChunk>> | IteratorResult<StreamChunk> {
    if (this.outHead < this.out.length) return this.take();
    if (this.phase === 'done') return DONE;
    return this.read();
  }

  private take(): IteratorResult<StreamChunk> {
    if (this.outHead >= this.out.length) return DONE;
    const value = this.out[this.outHead]!;
    this.outHead += 1;
    if (this.outHead === this.out.length) {
      this.out.length = 0;
      this.outHead = 0;
    }
    return { done: false, value };
  }

  /** A failed read: retried when nothing was delivered yet and the policy allows, else the end. */
  private readFailed(err: unknown): Promise<IteratorResult<StreamChunk>> | IteratorResult<StreamChunk> {
    this.sourceEnded = true;
    if (this.responded || this.phase === 'done') return this.failed(err);
    const schedule = this.schedule!;
    const delay = this.early === undefined ? schedule.nextDelay(err) : undefined;
    if (delay === undefined) {
      return this.failed(err instanceof TritonLlmError ? exhausted(err, schedule.attempts) : err);
    }
    const { schema } = this.ctx;
    this.ctx.observe?.({
      type: 'retry',
      requestId: this.requestId,
      model: schema.model,
      attempt: schedule.attempts,
      delayMs: delay,
      error: TritonLlmError.from(err).withContext({ requestId: this.requestId, model: schema.model }),
    });
    // The failed call has ended; a stop() or abort during the wait has nothing to tell it.
    this.transportStream = undefined;
    this.source = undefined;
    return backoff(delay, this.signal()).then(
      () => {
        if (this.early !== undefined) {
          return this.failed(
            new TritonLlmError('cancelled', 'the request was ended while waiting to retry', {
              requestId: this.requestId,
              model: schema.model,
            }),
          );
        }
        this.sourceEnded = false;
        return this.read();
      },
      (e: unknown) => this.failed(e),
    );
  }

  /**
   * The request ended in an error. Our own cancellation (abort, stop without an in-band path, stop
   * sequence) ends it normally: what was delivered stays delivered and the final chunk says why.
   */
  private failed(err: unknown): Promise<IteratorResult<StreamChunk>> | IteratorResult<StreamChunk> {
    const { schema } = this.ctx;
    const error = TritonLlmError.from(err, 'unknown');
    if (this.early !== undefined && error.code === 'cancelled' && this.early.trigger !== 'idle_timeout') {
      if (!this.finished) this.ending();
      return this.take();
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
    this.ctx.observe?.({ type: 'error', requestId: this.requestId, model: schema.model, error: wrapped });
    this.phase = 'done';
    this.release();
    // The request is ended on the wire before its error surfaces.
    const ending = !this.finished && this.early === undefined ? this.endEarly('break') : Promise.resolve();
    return ending.then(() => {
      this.finished = true;
      this.cancelOnWire();
      throw wrapped;
    });
  }

  /** Starts one attempt of the request on the wire, with what is left of the deadline. */
  private open(timeoutMs: number | undefined): AsyncIterator<InferResponse> {
    const { ctx } = this;
    // A transport whose streams can be cancelled directly gets no signal: an idle stream then
    // costs no AbortController, listener or event machinery.
    const direct = ctx.schema.decoupled && ctx.transport.cancellableStreams === true;
    const callOptions: CallOptions = {
      ...(direct ? {} : { signal: this.signal() }),
      ...(timeoutMs !== undefined ? { timeoutMs: Math.max(1, timeoutMs) } : {}),
      ...(ctx.options.headers !== undefined ? { headers: ctx.options.headers } : {}),
    };
    let source: AsyncIterator<InferResponse>;
    const request = this.inferRequest!;
    if (!ctx.schema.decoupled) {
      const { unary, transport } = ctx;
      source = once(() => (unary !== undefined ? unary(callOptions) : transport.infer(request, callOptions)));
    } else {
      this.transportStream = ctx.transport.stream(request, callOptions);
      source = this.transportStream[Symbol.asyncIterator]();
    }
    this.source = source;
    return source;
  }

  /** Queues the held-back text, then the final chunk with the whole result; nothing is read after. */
  private ending(): void {
    this.sequences.flush(this.out as DeltaChunk[]);
    this.finished = true;
    this.phase = 'done';
    const result = this.buildResult();
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
    this.out.push(final);
    this.release();
    this.cancelOnWire();
  }

  /** Drops the listeners and timers of a request that is over. */
  private release(): void {
    if (this.onAbort !== undefined) this.ctx.options.signal?.removeEventListener('abort', this.onAbort);
    if (this.stopGrace !== undefined) clearTimeout(this.stopGrace);
  }

  /** The signal of this request's calls (and retry waits), made on first need. */
  private signal(): AbortSignal {
    this.controller ??= new AbortController();
    if (this.wireCancelled) this.controller.abort();
    return this.controller.signal;
  }

  /** Tells the wire to end this request: the stream's own cancel, and the signal where there is one. */
  private cancelWire(): void {
    if (this.wireCancelled) return;
    this.wireCancelled = true;
    this.transportStream?.cancel?.();
    this.controller?.abort();
  }

  /** Whatever is still open on the wire is cancelled (nothing is when the transport already ended). */
  private cancelOnWire(): void {
    if (!this.sourceEnded) this.cancelWire();
  }

  private withIdleTimeout<T>(pending: Promise<T>): Promise<T> {
    const idle = this.ctx.options.idleTimeoutMs!;
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

  /**
   * Whether a client stop-sequence match has to end the request. Not when nothing more is being
   * generated for it (the server's last response, or text that came whole), and not while the
   * server, sent the same stop strings, may end it itself: cancelling then only adds a cancel to a
   * request that is finishing (and on Triton 2.51 leaves a cancelled ensemble request counted in
   * flight, issue 28). Only output after the match shows the server did not stop there.
   */
  private mustEndAtMatch(response: InferResponse): boolean {
    if (response.final || !this.ctx.streaming) return false;
    return !this.serverMatchesStops || this.sequences.outputAfterMatch;
  }

  private stoppedInBand(): boolean {
    return this.early?.via.includes('in_band_stop') === true;
  }

  private cancelMeans(): StopMeans {
    if (this.transportStream?.cancelsOnServer === false) return 'none';
    return this.ctx.transport.protocol === 'grpc' ? 'grpc_cancel' : 'http_disconnect';
  }

  /** Ends the request early by the best means the model and transport offer. */
  private endEarly(trigger: EarlyStopReport['trigger']): Promise<void> {
    if (this.early !== undefined || this.finished) return this.endingEarly ?? Promise.resolve();
    // Set before anything is awaited: a consumer that leaves meanwhile waits for it (see return()).
    this.endingEarly = this.tellServer(trigger);
    return this.endingEarly;
  }

  private async tellServer(trigger: EarlyStopReport['trigger']): Promise<void> {
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
        this.cancelWire();
      }
    }
    if (cancel) this.cancelWire();
    else if (!this.wireCancelled) {
      // A graceful stop waits for the final response, but not forever: a server that stopped
      // answering gets the call cancelled instead.
      this.stopGrace = setTimeout(() => {
        if (this.finished) return;
        via.push(this.cancelMeans());
        this.cancelWire();
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

  private absorb(response: InferResponse): void {
    const decoded = decodeResponse(response, this.ctx.schema, this.wants);
    if (decoded.numInputTokens !== undefined) this.numInputTokens = decoded.numInputTokens;
    if (decoded.contextLogits !== undefined) this.contextLogits = decoded.contextLogits;
    if (decoded.perfMetrics !== undefined) this.perfMetrics = decoded.perfMetrics;
    this.sequences.absorb(decoded, this.out as DeltaChunk[]);
  }

  private buildResult(): GenerateResult {
    const sequences = this.sequences.results(this.earlyFinish());
    const first = sequences[0];
    const promptTokens = this.numInputTokens ?? this.promptTokens;
    const completionTokens = totalTokens(sequences);
    const report = this.report();
    return {
      requestId: this.requestId,
      model: this.ctx.schema.model,
      text: first?.text ?? '',
      finishReason: first?.finishReason ?? this.earlyFinish() ?? 'stop',
      sequences,
      usage: {
        ...(promptTokens !== undefined ? { promptTokens } : {}),
        ...(completionTokens !== undefined ? { completionTokens } : {}),
      },
      timings: {
        ...(this.firstAt !== undefined ? { timeToFirstTokenMs: this.firstAt - this.started } : {}),
        interTokenMs: this.gaps ?? [],
        totalMs: now() - this.started,
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

/** The tokens of all sequences (0 when none arrived), when every one of them has a known count. */
function totalTokens(sequences: readonly SequenceResult[]): number | undefined {
  let total = 0;
  for (const s of sequences) {
    if (s.tokenCount === undefined) return undefined;
    total += s.tokenCount;
  }
  return total;
}

/** Hands a read's outcome, a value or a promise of one, to the consumer's pending `next()`. */
function settle(
  out: Promise<IteratorResult<StreamChunk>> | IteratorResult<StreamChunk>,
  resolve: ((r: IteratorResult<StreamChunk>) => void) | undefined,
  reject: ((e: unknown) => void) | undefined,
): void {
  if (resolve === undefined || reject === undefined) return;
  if (out instanceof Promise) out.then(resolve, reject);
  else resolve(out);
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
