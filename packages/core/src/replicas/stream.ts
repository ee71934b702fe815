import { TritonLlmError } from '../errors.js';
import type { CallOptions, InferRequest, InferResponse, InferStream } from '../transport.js';
import type { ReplicaEndpoint } from './endpoint.js';
import { Attempts, type ReplicaPool } from './pool.js';

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };
const now = (): number => performance.now();

/** The stream of one request on one endpoint. */
interface Leg {
  readonly endpoint: ReplicaEndpoint;
  readonly stream: InferStream;
  readonly started: number;
  iterator?: AsyncIterator<InferResponse>;
  ended: boolean;
}

/**
 * A streamed request on a replica transport. It opens on an endpoint picked when iteration (or
 * `sendStop`) starts. Should that stream fail with a retryable error before its first response,
 * the request starts over on another endpoint; from the first response on, and once a stop was
 * sent, it stays where it is and its errors pass through unchanged: the caller holds output of
 * that generation, and a second one would not continue it.
 */
export class ReplicaStream implements InferStream {
  private readonly attempts: Attempts;
  private leg: Promise<Leg> | undefined;
  private active: Leg | undefined;
  private delivered = false;
  private stopSent = false;
  private iterated = false;
  private finished = false;

  constructor(
    private readonly pool: ReplicaPool,
    private readonly request: InferRequest,
    private readonly options: CallOptions | undefined,
  ) {
    this.attempts = new Attempts(options, pool.policy.failoverAttempts);
    options?.signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  // An abort cancels the endpoint's call by itself, and the consumer may never pull again: the
  // request stops counting in flight now.
  private readonly onAbort = (): void => {
    if (this.active !== undefined) this.end(this.active);
  };

  [Symbol.asyncIterator](): AsyncIterator<InferResponse> {
    if (this.iterated) {
      throw new TritonLlmError('failed_precondition', 'an InferStream can be iterated only once', {
        model: this.request.model,
        requestId: this.request.id,
      });
    }
    this.iterated = true;
    return { next: () => this.next(), return: () => this.return() };
  }

  /** Goes to the endpoint that carries (or will carry) the request: the stop is keyed on its id there. */
  async sendStop(stop: InferRequest): Promise<void> {
    this.stopSent = true;
    const leg = await this.currentLeg();
    await leg.stream.sendStop(stop);
  }

  private currentLeg(): Promise<Leg> {
    this.leg ??= Promise.resolve()
      .then(() => this.pool.first(this.attempts))
      .then((endpoint) => this.open(endpoint));
    return this.leg;
  }

  private open(endpoint: ReplicaEndpoint): Leg {
    const stream = endpoint.transport.stream(this.request, this.attempts.callOptions());
    endpoint.begin();
    this.active = { endpoint, stream, started: now(), ended: false };
    if (this.options?.signal?.aborted === true) this.end(this.active);
    return this.active;
  }

  private async next(): Promise<IteratorResult<InferResponse>> {
    if (this.finished) return DONE;
    for (;;) {
      let leg: Leg;
      try {
        leg = await this.currentLeg();
      } catch (err) {
        this.finish();
        throw TritonLlmError.from(err);
      }
      let r: IteratorResult<InferResponse>;
      try {
        leg.iterator ??= leg.stream[Symbol.asyncIterator]();
        r = await leg.iterator.next();
      } catch (err) {
        const error = TritonLlmError.from(err);
        leg.endpoint.fail(error, true);
        this.end(leg);
        const next = this.pool.failover(this.attempts, error, {
          delivered: this.delivered,
          stopSent: this.stopSent,
        });
        if (next === undefined) {
          this.finish();
          throw error;
        }
        this.leg = Promise.resolve(next).then((endpoint) => this.open(endpoint));
        continue;
      }
      if (r.done === true) {
        this.succeed(leg);
        this.finish();
        return DONE;
      }
      if (!this.delivered) {
        this.delivered = true;
        leg.endpoint.recordLatency(now() - leg.started);
      }
      // The request is complete at its final response, even if the consumer never pulls again.
      if (r.value.final) this.succeed(leg);
      return r;
    }
  }

  private async return(): Promise<IteratorResult<InferResponse>> {
    this.finish();
    const pending = this.leg;
    if (pending === undefined) return DONE;
    let leg: Leg;
    try {
      leg = await pending;
    } catch {
      // Opening failed and next() has not seen it: there is nothing to cancel and the caller is leaving.
      return DONE;
    }
    try {
      // A stop may have opened the call before iteration did: it is closed the same way.
      leg.iterator ??= leg.stream[Symbol.asyncIterator]();
      await leg.iterator.return?.();
    } finally {
      this.end(leg);
    }
    return DONE;
  }

  private finish(): void {
    this.finished = true;
    this.options?.signal?.removeEventListener('abort', this.onAbort);
  }

  private succeed(leg: Leg): void {
    if (leg.ended) return;
    leg.endpoint.succeed();
    this.end(leg);
  }

  private end(leg: Leg): void {
    if (leg.ended) return;
    leg.ended = true;
    leg.endpoint.end();
  }
}
