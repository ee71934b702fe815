import { now } from '../clock.js';
import { TritonLlmError } from '../errors.js';
import type { CallOptions, InferRequest, InferResponse, InferSink, InferStream } from '../transport.js';
import type { ReplicaEndpoint } from './endpoint.js';
import { Attempts, type ReplicaPool } from './pool.js';

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

/**
 * A streamed request on a replica transport. It opens on an endpoint picked when reading (or
 * `sendStop`) starts. Should that stream fail with a retryable error before its first response,
 * the request starts over on another endpoint; from the first response on, and once a stop was
 * sent, it stays where it is and its errors pass through unchanged: the caller holds output of
 * that generation, and a second one would not continue it.
 *
 * Reading and cancelling go straight to the endpoint's stream: `pull` hands it this stream as its
 * sink (no closure or promise per response), `cancel` is its `cancel`, and whether the server
 * stops is what that stream says. A balanced stream so costs a token what one endpoint's does,
 * plus one call.
 *
 * A request counts in flight on its endpoint until the endpoint's stream ends, not at its final
 * response: `TritonLlm` reads every stream to its end (over gRPC, the server's trailers, a round
 * trip after the final response) before its caller starts the next request. Released at the final
 * response, a connection's requests that finished together saw every endpoint idle when their
 * callers came back, so their successors split between the endpoints; wave after wave, requests
 * that had left in one write came to leave in many. After the final response the stream reads
 * that end itself, so a consumer that never pulls again does not keep the request counted.
 */
export class ReplicaStream implements InferStream, InferSink, AsyncIterator<InferResponse> {
  // The fields every response touches come first, so that they share the object's first bytes.
  // The current leg (the request's stream on one endpoint) lives in the `leg*` fields rather than
  // an object of its own: one object fewer per request, one fewer to reach per response.

  /** The consumer's sink while a pull is unanswered. */
  private sink: InferSink | undefined;
  /** A pull of the leg's stream is unanswered (the consumer's, or the read of its end). */
  private pulling = false;
  /** The open leg's stream; undefined before the first and while the next is being opened. */
  private leg: InferStream | undefined;
  /** The open leg's endpoint (kept after the leg ends, for the end's bookkeeping). */
  private endpoint: ReplicaEndpoint | undefined;
  /** The leg's first response came: the endpoint's latency is recorded. */
  private answered = false;
  /** The leg's final response came: the endpoint has answered the request. */
  private completed = false;
  /** The leg is over: its endpoint no longer counts it in flight. */
  private legEnded = false;
  private delivered = false;
  private finished = false;
  /** What the read of the end brought instead of the end, kept for the consumer's next pull. */
  private ahead: InferResponse | undefined;
  /** When the leg was opened, for the endpoint's latency. */
  private legStarted = 0;
  /** The leg being opened (an endpoint still to be discovered or picked). */
  private opening: Promise<InferStream> | undefined;
  /** The error the stream ended with, answered to every later pull. */
  private failure: TritonLlmError | undefined;
  private stopSent = false;
  private iterated = false;
  private cancelled = false;
  /**
   * The request's way through the endpoints, kept while it may still move (until its first
   * response). With it go the caller's options and the retry plan in them: a waiting stream keeps
   * neither (test/reliability/idle-memory.test.ts), and what thousands of streams keep is copied
   * by every young-generation collection they outlive.
   */
  private attempts: Attempts | undefined;
  /** The caller's signal, listened to until the stream finishes. */
  private readonly signal: AbortSignal | undefined;
  private readonly model: string;
  private readonly requestId: string;
  /** The request, kept while it may have to open on another endpoint (until its first response). */
  private request: InferRequest | undefined;

  constructor(
    private readonly pool: ReplicaPool,
    request: InferRequest,
    options: CallOptions | undefined,
  ) {
    this.request = request;
    this.model = request.model;
    this.requestId = request.id;
    this.attempts = new Attempts(options, pool.policy.failoverAttempts);
    // A caller using the transport directly may end the stream by its signal: that is cancel().
    this.signal = options?.signal;
    if (this.signal?.aborted === true) this.cancelled = true;
    else this.signal?.addEventListener('abort', this, { once: true });
  }

  /** Whether ending this stream early stops its request on the server: its endpoint stream's answer. */
  get cancelsOnServer(): boolean {
    return this.leg?.cancelsOnServer ?? true;
  }

  /** The caller's signal fired (the stream is its own listener object: no closure per request). */
  handleEvent(): void {
    this.cancel();
  }

  /** The stream is its own iterator: the client reads by `pull`, so the iterator it asks for costs nothing. */
  [Symbol.asyncIterator](): AsyncIterator<InferResponse> {
    if (this.iterated) {
      throw new TritonLlmError('failed_precondition', 'an InferStream can be iterated only once', {
        model: this.model,
        requestId: this.requestId,
      });
    }
    this.iterated = true;
    return this;
  }

  /** @internal The iterator's read, for a caller that iterates instead of pulling. */
  next(): Promise<IteratorResult<InferResponse>> {
    return new Promise<IteratorResult<InferResponse>>((resolve, reject) =>
      this.pull({
        onResponse: (value) => resolve({ done: false, value }),
        onEnd: () => resolve(DONE),
        onError: reject,
      }),
    );
  }

  /** @internal The consumer left the loop: the endpoint stream's iterator ends the call as it does alone. */
  async return(): Promise<IteratorResult<InferResponse>> {
    this.finish();
    let leg = this.leg;
    if (leg === undefined && this.opening !== undefined) {
      try {
        leg = await this.opening;
      } catch {
        // Opening failed and no read has seen it: there is nothing to cancel and the caller is leaving.
        return DONE;
      }
    }
    if (leg === undefined) return DONE;
    try {
      // The endpoint stream was only pulled, never iterated: its iterator's return is free to take.
      await leg[Symbol.asyncIterator]().return?.();
    } finally {
      this.end();
    }
    return DONE;
  }

  pull(sink: InferSink): void {
    const ahead = this.ahead;
    if (ahead !== undefined) {
      this.ahead = undefined;
      sink.onResponse(ahead);
      return;
    }
    if (this.finished) {
      if (this.failure !== undefined) sink.onError(this.failure);
      else sink.onEnd();
      return;
    }
    this.sink = sink;
    const leg = this.leg;
    if (leg !== undefined) {
      // A read of the end already waiting answers this pull.
      if (!this.pulling) this.pullLeg(leg);
      return;
    }
    if (this.opening === undefined) {
      // The first read opens the request, at once when the endpoints are known: no promise.
      let first: InferStream | Promise<InferStream>;
      try {
        first = this.openFirst();
      } catch (err) {
        this.failWith(TritonLlmError.from(err));
        return;
      }
      if (!(first instanceof Promise)) {
        this.pullLeg(first);
        return;
      }
    }
    this.opening?.then(
      (opened) => this.pullLeg(opened),
      (err: unknown) => this.failWith(TritonLlmError.from(err)),
    );
  }

  /** Ends the request now on its endpoint (a leg still being opened is cancelled as it opens). */
  cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    const leg = this.leg;
    if (leg === undefined) return;
    leg.cancel();
    // The consumer may never pull again: the request stops counting in flight now.
    this.end();
  }

  /** Goes to the endpoint that carries (or will carry) the request: the stop is keyed on its id there. */
  async sendStop(stop: InferRequest): Promise<void> {
    this.stopSent = true;
    const leg = await this.currentLeg();
    await leg.sendStop(stop);
  }

  /** @internal The endpoint stream's next response. */
  onResponse(response: InferResponse): void {
    this.pulling = false;
    const endpoint = this.endpoint!;
    // The endpoint's silence is what the pool suspects (see STALL_MS); the clock is read once per run.
    const at = now();
    endpoint.heard(at);
    if (!this.answered) {
      this.answered = true;
      endpoint.recordLatency(at - this.legStarted);
    }
    if (!this.delivered) {
      this.delivered = true;
      // It never moves from here: neither the request (its tensors) nor its way through the
      // endpoints need live as long as the stream.
      this.request = undefined;
      this.attempts = undefined;
    }
    const final = response.final;
    if (final && !this.completed) {
      this.completed = true;
      endpoint.succeed();
    }
    const sink = this.sink;
    this.sink = undefined;
    if (sink === undefined) {
      // The read of the end brought a response instead: the consumer's next pull gets it.
      this.ahead = response;
      return;
    }
    sink.onResponse(response);
    // The end follows the final response: read it now (see the class comment), unless the
    // consumer already asked for it or left. The consumer's sink may have cancelled: the leg ended.
    const leg = this.leg;
    if (final && !this.pulling && !this.finished && leg !== undefined && !this.legEnded) this.pullLeg(leg);
  }

  /** @internal The endpoint stream ended after its last response. */
  onEnd(): void {
    this.pulling = false;
    this.succeed();
    this.finish();
    const sink = this.sink;
    this.sink = undefined;
    // Without a pull waiting (the end was read ahead), the consumer's next pull is told.
    sink?.onEnd();
  }

  /** @internal The endpoint stream failed: the request moves on when it may, else the error stands. */
  onError(err: unknown): void {
    this.pulling = false;
    const error = TritonLlmError.from(err);
    // Ended first: a silence it ends after is the endpoint's, so a deadline then counts against it.
    this.end();
    this.endpoint!.fail(error, true);
    // Without attempts, the request has delivered a response: it stays where it is.
    const attempts = this.attempts;
    const next =
      this.cancelled || attempts === undefined
        ? undefined
        : this.pool.failover(attempts, error, { delivered: this.delivered, stopSent: this.stopSent });
    if (next === undefined) {
      this.failWith(error);
      return;
    }
    this.leg = undefined;
    this.opening = Promise.resolve(next).then((endpoint) => this.open(endpoint));
    this.opening.then(
      (opened) => this.pullLeg(opened),
      (e: unknown) => this.failWith(TritonLlmError.from(e)),
    );
  }

  private currentLeg(): Promise<InferStream> {
    if (this.leg !== undefined) return Promise.resolve(this.leg);
    if (this.opening === undefined) {
      try {
        const first = this.openFirst();
        if (!(first instanceof Promise)) return Promise.resolve(first);
      } catch (err) {
        return Promise.reject(err);
      }
    }
    return this.opening ?? Promise.reject(new TritonLlmError('internal', 'no endpoint stream is opening'));
  }

  /**
   * Opens the first leg: at once on an endpoint picked now, or, before the first discovery, as
   * the promise kept in `opening`.
   */
  private openFirst(): InferStream | Promise<InferStream> {
    const picked = this.pool.first(this.attempts!);
    if (!(picked instanceof Promise)) return this.open(picked);
    const opening = picked.then((endpoint) => this.open(endpoint));
    this.opening = opening;
    return opening;
  }

  private open(endpoint: ReplicaEndpoint): InferStream {
    // Legs open only before the first response, while the request and its attempts are kept.
    const leg = endpoint.transport.stream(this.request!, legOptions(this.attempts!.callOptions()));
    endpoint.begin();
    this.legStarted = now();
    this.leg = leg;
    this.endpoint = endpoint;
    this.answered = false;
    this.completed = false;
    this.legEnded = false;
    this.opening = undefined;
    if (this.cancelled) {
      leg.cancel();
      this.end();
    }
    return leg;
  }

  private pullLeg(leg: InferStream): void {
    this.pulling = true;
    leg.pull(this);
  }

  private failWith(error: TritonLlmError): void {
    this.failure = error;
    this.finish();
    const sink = this.sink;
    this.sink = undefined;
    sink?.onError(error);
  }

  private finish(): void {
    this.finished = true;
    this.signal?.removeEventListener('abort', this);
  }

  private succeed(): void {
    if (this.legEnded) return;
    // The end is heard too: after a final response, it is the last thing the endpoint owed.
    if (!this.completed) this.endpoint!.succeed();
    else this.endpoint!.heard(now());
    this.end(false);
  }

  /**
   * The leg is over; `early`: before its end (a cancel, an idle timeout, an error). An early end
   * tells the endpoint, which stays suspect when it was silent past STALL_MS: a peer frozen
   * mid-stream keeps its connection open, and its open-request count, back down once this ends,
   * would otherwise make it the next pick (issue 55).
   */
  private end(early = true): void {
    if (this.legEnded) return;
    this.legEnded = true;
    const endpoint = this.endpoint!;
    if (early) endpoint.endedEarly(now());
    endpoint.end();
  }
}

/** An endpoint's call options: without the caller's signal, whose abort reaches it as `cancel()`. */
function legOptions(options: CallOptions | undefined): CallOptions | undefined {
  if (options?.signal === undefined) return options;
  const { signal: _, ...rest } = options;
  return rest;
}
