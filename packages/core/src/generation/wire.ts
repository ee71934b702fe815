import { TritonLlmError } from '../errors.js';
import type { GenerationContext, WireContext } from './options.js';
import { encodeGenerateRequest, encodeStopRequest } from '../models/encode-request.js';
import type { EarlyStopReport, FinishReason, StopMeans } from '../result.js';
import { RetryPlan } from '../retry.js';
import type { CallOptions, InferRequest, InferResponse, InferStream } from '../transport.js';

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
 * The wire side of one generation: its attempts on the transport, their cancellation, and an
 * early end (in-band stop, cancel, stop grace) with the report of how the server was told.
 * {@link Generation} builds on it to turn the responses into chunks.
 */
export abstract class GenerationWire {
  readonly requestId: string;
  /** Made on first need: a stream of a transport with `cancellableStreams` is ended without one. */
  private controller: AbortController | undefined;
  /** The wire was told to end this request (signal aborted or stream cancelled). */
  private wireCancelled = false;
  protected transportStream: InferStream | undefined;
  protected source: AsyncIterator<InferResponse> | undefined;
  protected early: { trigger: EarlyStopReport['trigger']; via: StopMeans[] } | undefined;
  /** The early end in progress or done (its in-band stop may take a round trip). */
  protected endingEarly: Promise<void> | undefined;
  /** The result was built (the final chunk is queued or delivered). */
  protected finished = false;
  /** The transport said the request ended (its last response, or an error): nothing to cancel. */
  protected sourceEnded = false;
  protected stopGrace: ReturnType<typeof setTimeout> | undefined;
  /**
   * The encoded request until a transport stream has it (a unary call's, until its first response).
   * A retry of a stream encodes the request again: kept for the stream's whole wait for its first
   * token, its tensors outlived the young generation once thousands of streams were open, and
   * were a quarter of what every request left for the old generation's collector.
   */
  protected inferRequest: InferRequest | undefined;
  protected readonly ctx: WireContext;
  /** Whether and where a failed attempt starts again; made when the request starts. */
  protected plan: RetryPlan | undefined;
  /** The model was sent the stop strings and ends the request at them itself. */
  private readonly serverMatchesStops: boolean;
  private onAbort: (() => void) | undefined;

  constructor(context: GenerationContext) {
    const { encoded } = context;
    this.ctx = {
      transport: context.transport,
      schema: context.schema,
      request: context.request,
      streaming: context.streaming,
      tokenizer: context.tokenizer,
      options: context.options,
      retry: context.retry,
      warnServerKeepsGenerating: context.warnServerKeepsGenerating,
      observe: context.observe,
      unary: context.unary,
    };
    this.requestId = encoded.request.id;
    this.inferRequest = encoded.request;
    this.serverMatchesStops = encoded.serverMatchesStops;
  }

  /** The caller's signal ends the request early, until {@link release}. */
  protected endOnAbort(signal: AbortSignal): void {
    this.onAbort = () => void this.endEarly('abort');
    signal.addEventListener('abort', this.onAbort, { once: true });
  }

  /** Drops the listeners and timers of a request that is over. */
  protected release(): void {
    if (this.onAbort !== undefined) this.ctx.options.signal?.removeEventListener('abort', this.onAbort);
    if (this.stopGrace !== undefined) clearTimeout(this.stopGrace);
  }

  /**
   * The request's retry plan. Generation is idempotent until something was delivered: only
   * failures before the first response are retried. The plan goes down with every attempt, so
   * that a replica transport moves the request only as it allows, within its attempts and
   * deadline; its retries (waits and moves) are reported as `retry` events.
   */
  protected retryPlan(): RetryPlan {
    const { observe, schema, retry, options } = this.ctx;
    const model = schema.model;
    return new RetryPlan(retry, {
      idempotent: true,
      timeoutMs: options.timeoutMs,
      ended: () => this.early !== undefined,
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

  /** The error of a request ended (abort, stop) while it waited to start again. */
  protected endedWhileWaiting(): TritonLlmError {
    return new TritonLlmError('cancelled', 'the request was ended while waiting to retry', {
      requestId: this.requestId,
      model: this.ctx.schema.model,
    });
  }

  /** Starts one attempt of the request on the wire, with what is left of the deadline. */
  protected open(timeoutMs: number | undefined): AsyncIterator<InferResponse> {
    const { ctx } = this;
    // A transport whose streams can be cancelled directly gets no signal: an idle stream then
    // costs no AbortController, listener or event machinery.
    const direct = ctx.schema.decoupled && ctx.transport.cancellableStreams === true;
    const callOptions: CallOptions = {
      ...(direct ? {} : { signal: this.signal() }),
      ...(timeoutMs !== undefined ? { timeoutMs: Math.max(1, timeoutMs) } : {}),
      ...(ctx.options.headers !== undefined ? { headers: ctx.options.headers } : {}),
      ...(this.plan !== undefined ? { retryPlan: this.plan } : {}),
    };
    let source: AsyncIterator<InferResponse>;
    const request = this.inferRequest ?? this.encodeAgain();
    if (!ctx.schema.decoupled) {
      const { unary, transport } = ctx;
      source = once(() => (unary !== undefined ? unary(callOptions) : transport.infer(request, callOptions)));
    } else {
      this.transportStream = ctx.transport.stream(request, callOptions);
      this.inferRequest = undefined;
      source = this.transportStream[Symbol.asyncIterator]();
    }
    this.source = source;
    return source;
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
  protected signal(): AbortSignal {
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
  protected cancelOnWire(): void {
    if (!this.sourceEnded) this.cancelWire();
  }

  /**
   * Whether a client stop-sequence match has to end the request. Not when nothing more is being
   * generated for it (the server's last response, or text that came whole), and not while the
   * server, sent the same stop strings, may end it itself: cancelling then only adds a cancel to a
   * request that is finishing (and on Triton 2.51 leaves a cancelled ensemble request counted in
   * flight, issue 28). Only output after the match shows the server did not stop there.
   */
  protected mustEndAtMatch(response: InferResponse, outputAfterMatch: boolean): boolean {
    if (response.final || !this.ctx.streaming) return false;
    return !this.serverMatchesStops || outputAfterMatch;
  }

  protected stoppedInBand(): boolean {
    return this.early?.via.includes('in_band_stop') === true;
  }

  protected cancelMeans(): StopMeans {
    if (this.transportStream?.cancelsOnServer === false) return 'none';
    return this.ctx.transport.protocol === 'grpc' ? 'grpc_cancel' : 'http_disconnect';
  }

  /** Ends the request early by the best means the model and transport offer. */
  protected endEarly(trigger: EarlyStopReport['trigger']): Promise<void> {
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

  protected report(): EarlyStopReport | undefined {
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

  /** The finish reason an early end gives every sequence that did not match a stop sequence itself. */
  protected earlyFinish(): FinishReason | undefined {
    const trigger = this.early?.trigger;
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
