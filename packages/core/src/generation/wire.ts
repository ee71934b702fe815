import { TritonLlmError } from '../errors.js';
import { type EncodedRequest, encodeGenerateRequest, encodeStopRequest } from '../models/encode-request.js';
import type { EarlyStopReport, FinishReason } from '../result.js';
import { backoff, exhausted, RetryPlan } from '../retry.js';
import type { CallOptions, InferRequest, InferResponse, InferStream } from '../transport.js';
import type { WireContext } from './options.js';

/** How an early end reached the server (inline in the public type, named here). */
type StopMeans = EarlyStopReport['via'][number];

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

/** How a request was ended early, as far as it went: the trigger and the means used so far. */
export interface EarlyEnd {
  readonly trigger: EarlyStopReport['trigger'];
  readonly via: StopMeans[];
}

/**
 * The wire side of one generation: its attempts on the transport (the encoded request, the retry
 * plan, the abort controller), their cancellation, and an early end (in-band stop, cancel, stop
 * grace) with the report of how the server was told. A {@link Generation} owns one and reads the
 * responses of the attempts it opens; everything here is the wire's own state, changed only
 * through these methods. Nothing here runs per token: the generation keeps the reading state.
 */
export class GenerationWire {
  readonly requestId: string;
  /** Made on first need (unary calls, retry waits): a stream is ended by its `cancel()`, not a signal. */
  private controller: AbortController | undefined;
  /** The wire was told to end this request (signal aborted or stream cancelled). */
  private wireCancelled = false;
  /** The open attempt's stream (a decoupled model's), until a failed attempt waits to retry. */
  private transportStream: InferStream | undefined;
  private earlyEnd: EarlyEnd | undefined;
  /** The early end in progress or done (its in-band stop may take a round trip). */
  private endingEarly: Promise<void> | undefined;
  /** The result was built (the final chunk is queued or delivered), or the request failed. */
  private closed = false;
  /** The transport said the attempt ended (its last response, or an error): nothing to cancel. */
  private sourceEnded = false;
  private stopGrace: ReturnType<typeof setTimeout> | undefined;
  /**
   * The encoded request until a transport stream has it (a unary call's, until its first response).
   * A retry of a stream encodes the request again: kept for the stream's whole wait for its first
   * token, its tensors outlived the young generation once thousands of streams were open, and
   * were a quarter of what every request left for the old generation's collector.
   */
  private inferRequest: InferRequest | undefined;
  private readonly ctx: WireContext;
  /** Whether and where a failed attempt starts again; made when the request starts. */
  private plan: RetryPlan | undefined;
  /** The model was sent the stop strings and ends the request at them itself. */
  private readonly serverMatchesStops: boolean;
  private onAbort: (() => void) | undefined;

  /** `ctx` is the generation's own context object, shared read-only. */
  constructor(ctx: WireContext, encoded: EncodedRequest) {
    this.ctx = ctx;
    this.requestId = encoded.request.id;
    this.inferRequest = encoded.request;
    this.serverMatchesStops = encoded.serverMatchesStops;
  }

  /** The early end under way or done, if any. */
  get early(): EarlyEnd | undefined {
    return this.earlyEnd;
  }

  /** Whether the request is over for the wire: its result was built or it failed. */
  get finished(): boolean {
    return this.closed;
  }

  /**
   * The request starts: its retry plan is made, and the caller's signal ends it early until
   * {@link release}.
   */
  start(): void {
    const { signal } = this.ctx.options;
    if (signal !== undefined) {
      this.onAbort = () => void this.endEarly('abort');
      signal.addEventListener('abort', this.onAbort, { once: true });
    }
    this.plan = this.retryPlan();
  }

  /** Drops the listeners and timers of a request that is over. */
  release(): void {
    if (this.onAbort !== undefined) this.ctx.options.signal?.removeEventListener('abort', this.onAbort);
    if (this.stopGrace !== undefined) clearTimeout(this.stopGrace);
  }

  /** The result is built: an early end from here on has nothing to change. */
  finish(): void {
    this.closed = true;
  }

  /** The request is over: its listeners go, and whatever is still open on the wire is cancelled. */
  close(): void {
    this.closed = true;
    this.release();
    this.cancelOnWire();
  }

  /**
   * The first response arrived: a request that has answered is never retried, so neither its
   * encoding nor its plan (and the closures it holds) is kept.
   */
  answered(): void {
    this.inferRequest = undefined;
    this.plan = undefined;
  }

  /** The transport ended the attempt (its last response, or an error): nothing is left to cancel. */
  sourceDone(): void {
    this.sourceEnded = true;
  }

  /**
   * The request's retry plan. Generation is idempotent until something was delivered: only
   * failures before the first response are retried. The plan goes down with every attempt, so
   * that a replica transport moves the request only as it allows, within its attempts and
   * deadline; its retries (waits and moves) are reported as `retry` events.
   */
  private retryPlan(): RetryPlan {
    const { observe, schema, retry, options } = this.ctx;
    const model = schema.model;
    return new RetryPlan(retry, {
      idempotent: true,
      timeoutMs: options.timeoutMs,
      ended: () => this.earlyEnd !== undefined,
      onRetry:
        observe === undefined
          ? undefined
          : (attempt, delayMs, error, moved) =>
              observe({
                type: 'retry',
                requestId: this.requestId,
                model,
                attempt,
                delayMs,
                moved,
                error: error.withContext({ requestId: this.requestId, model }),
              }),
    });
  }

  /**
   * After a failed attempt that delivered nothing: the wait before the next one, or `undefined`
   * when the policy gives up (then {@link exhausted} is the error to end with).
   */
  retryDelay(err: unknown): number | undefined {
    const decision = this.plan!.decide(err);
    return decision.action === 'wait' ? decision.delayMs : undefined;
  }

  /** The error a request ends with once its retries gave up. */
  exhausted(err: unknown): unknown {
    return err instanceof TritonLlmError ? exhausted(err, this.plan!.attempts) : err;
  }

  /**
   * Waits `delayMs` before the next attempt. The failed call has ended: a stop() or abort during
   * the wait has nothing to tell it, and ends the wait instead.
   */
  waitToRetry(delayMs: number): Promise<void> {
    this.transportStream = undefined;
    return backoff(delayMs, this.signal());
  }

  /** The error of a request ended (abort, stop) while it waited to start again. */
  endedWhileWaiting(): TritonLlmError {
    return new TritonLlmError('cancelled', 'the request was ended while waiting to retry', {
      requestId: this.requestId,
      model: this.ctx.schema.model,
    });
  }

  /**
   * Starts one attempt of the request on the wire, with what is left of the deadline, and returns
   * its responses; a decoupled model's attempt is an {@link InferStream} (see {@link stream}).
   */
  open(): AsyncIterator<InferResponse> {
    const { ctx } = this;
    this.sourceEnded = false;
    const timeoutMs = this.plan!.remainingMs();
    // A stream gets no signal: the caller's abort, like every other early end, reaches it as its
    // cancel() (one way on every transport, and an idle stream costs no AbortController).
    const decoupled = ctx.schema.decoupled;
    const callOptions: CallOptions = {
      ...(decoupled ? {} : { signal: this.signal() }),
      ...(timeoutMs !== undefined ? { timeoutMs: Math.max(1, timeoutMs) } : {}),
      ...(ctx.options.headers !== undefined ? { headers: ctx.options.headers } : {}),
      ...(this.plan !== undefined ? { retryPlan: this.plan } : {}),
    };
    const request = this.inferRequest ?? this.encodeAgain();
    if (!decoupled) {
      const { unary, transport } = ctx;
      return once(() => (unary !== undefined ? unary(callOptions) : transport.infer(request, callOptions)));
    }
    const stream = ctx.transport.stream(request, callOptions);
    this.transportStream = stream;
    this.inferRequest = undefined;
    // Ended before it opened (a stop() before the first read): it ends as it opens, as a unary
    // call does with its signal aborted.
    if (this.wireCancelled) stream.cancel();
    return stream[Symbol.asyncIterator]();
  }

  /** The open attempt's stream, for a decoupled model. */
  get stream(): InferStream | undefined {
    return this.transportStream;
  }

  /** The request encoded as it was the first time (same id): for a retried stream. */
  private encodeAgain(): InferRequest {
    const { ctx } = this;
    return encodeGenerateRequest(ctx.request, {
      schema: ctx.schema,
      requestId: this.requestId,
      streaming: ctx.streaming,
      protocol: ctx.transport.protocol,
      ...(ctx.tokenizer !== undefined ? { tokenizer: ctx.tokenizer } : {}),
    }).request;
  }

  /** The signal of this request's calls (and retry waits), made on first need. */
  private signal(): AbortSignal {
    this.controller ??= new AbortController();
    if (this.wireCancelled) this.controller.abort();
    return this.controller.signal;
  }

  /** Tells the wire to end this request: the stream's cancel, or the signal of a unary call or retry wait. */
  private cancelWire(): void {
    if (this.wireCancelled) return;
    this.wireCancelled = true;
    this.transportStream?.cancel();
    this.controller?.abort();
  }

  /** Whatever is still open on the wire is cancelled (nothing is when the transport already ended). */
  private cancelOnWire(): void {
    if (!this.sourceEnded) this.cancelWire();
  }

  /**
   * Whether a client stop-sequence match has to end the request. Not when nothing more is being
   * generated for it (the server's last response, or text that came whole), and not while the
   * server, sent the same stop strings, may end it itself: cancelling then only adds a cancel to a
   * request that is finishing (and on Triton 2.51 leaves a cancelled ensemble request counted in
   * flight, issue 28). Only output after the match shows the server did not stop there.
   */
  mustEndAtMatch(response: InferResponse, outputAfterMatch: boolean): boolean {
    if (response.final || !this.ctx.streaming) return false;
    return !this.serverMatchesStops || outputAfterMatch;
  }

  stoppedInBand(): boolean {
    return this.earlyEnd?.via.includes('in_band_stop') === true;
  }

  private cancelMeans(): StopMeans {
    if (this.transportStream?.cancelsOnServer === false) return 'none';
    return this.ctx.transport.protocol === 'grpc' ? 'grpc_cancel' : 'http_disconnect';
  }

  /** The request's deadline passed on the wire: recorded as its early end, unless one came first. */
  deadlineExceeded(): void {
    if (this.earlyEnd === undefined) this.earlyEnd = { trigger: 'deadline', via: [this.cancelMeans()] };
  }

  /** Ends the request early by the best means the model and transport offer. */
  endEarly(trigger: EarlyStopReport['trigger']): Promise<void> {
    if (this.earlyEnd !== undefined || this.closed) return this.endingEarly ?? Promise.resolve();
    // Set before anything is awaited: a consumer that leaves meanwhile waits for it (see return()).
    this.endingEarly = this.tellServer(trigger);
    return this.endingEarly;
  }

  private async tellServer(trigger: EarlyStopReport['trigger']): Promise<void> {
    const { schema, transport } = this.ctx;
    // Only the caller ends a request whose attempt is still open (abort, break, stop(), its idle
    // timeout, a stop sequence); an attempt the transport already ended (the server died, a
    // keepalive failed) is ended for the error's sake, and the GPU advice would blame the caller.
    const byCaller = !this.sourceEnded;
    const via: StopMeans[] = [];
    this.earlyEnd = { trigger, via };
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
        if (this.closed) return;
        via.push(this.cancelMeans());
        this.cancelWire();
      }, STOP_GRACE_MS);
    }
    if (byCaller && !this.report()?.serverStopsGenerating)
      this.ctx.warnServerKeepsGenerating(schema.model, schema.flavor);
  }

  report(): EarlyStopReport | undefined {
    if (this.earlyEnd === undefined) return undefined;
    const { via, trigger } = this.earlyEnd;
    const flavor = this.ctx.schema.flavor;
    // vLLM aborts a request whose cancellation it sees; Triton flags an HTTP disconnect only at the
    // next response it writes, and a vLLM request that does not stream writes only its last one.
    const stopsOnCancel =
      flavor === 'tensorrt_llm' ||
      flavor === 'llmapi' ||
      (flavor === 'vllm' && (this.ctx.streaming || this.ctx.transport.protocol === 'grpc'));
    const told = via.filter((m) => m !== 'none');
    return {
      trigger,
      via: [...via],
      serverTold: told.length > 0,
      serverStopsGenerating: via.includes('in_band_stop') || (stopsOnCancel && told.length > 0),
    };
  }

  /** The finish reason an early end gives every sequence that did not match a stop sequence itself. */
  earlyFinish(): FinishReason | undefined {
    const trigger = this.earlyEnd?.trigger;
    if (trigger === 'stop' || trigger === 'stop_sequence') return 'stopped';
    if (trigger === 'abort' || trigger === 'break') return 'cancelled';
    return undefined;
  }
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
