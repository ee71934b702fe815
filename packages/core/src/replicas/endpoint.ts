import { now } from '../clock.js';
import { TritonLlmError } from '../errors.js';
import type { Transport } from '../transport.js';

/** A snapshot of one endpoint of a {@link ReplicaTransport}, from `endpointStats()`. */
export interface EndpointStats {
  /** Its base URL when `grpcTransport`/`httpTransport` built it, else the name it was given (or `endpoint-<i>`). */
  readonly name: string;
  /**
   * Where it stands. `healthy`: picked for requests. `ejected`: skipped while a healthy endpoint
   * exists, until a health check (or a request) succeeds on it. `draining`: discovery no longer
   * lists it; it finishes its requests and is then closed.
   */
  readonly state: 'healthy' | 'ejected' | 'draining';
  /**
   * Inference requests (`infer` and streams) it carries now; a stream counts until it ends (over
   * gRPC, the server's trailers, just after the final response).
   */
  readonly inFlight: number;
  /** Inference requests sent to it, including the ones that then failed over to another endpoint. */
  readonly requests: number;
  /** Inference requests that failed on it; a caller's own cancellation is not counted. */
  readonly errors: number;
  /** Failures since its last success (requests and health checks alike). */
  readonly consecutiveFailures: number;
  /** Times it was ejected. */
  readonly ejections: number;
  /**
   * Moving average of the time to the first response (the whole answer for `infer`), in
   * milliseconds; undefined until a request got one.
   */
  readonly latencyMs: number | undefined;
  /** The same, for the latest request only. */
  readonly lastLatencyMs: number | undefined;
  /** The last error it gave (a request's or a health check's). */
  readonly lastError: TritonLlmError | undefined;
}

/**
 * How long an endpoint with requests in flight may stay silent (no response on any of them, no
 * answer, no passing health check) before it is suspected frozen: it then gets no new request
 * while another endpoint is healthy, and is probed at once (issue 55). A frozen peer keeps its TCP
 * connections open, so nothing else notices it before the next health round (5 s) or a keepalive
 * (minutes). Half a second keeps new requests off it within about a second of a freeze; a live
 * server that is merely slow to answer (a long prefill, a queue) or whose consumers stopped
 * reading costs a probe, which it answers at once.
 */
export const STALL_MS = 500;

// Weight of the newest sample: recent enough to follow a replica that slows down, smooth enough to
// ignore a single stall.
const LATENCY_WEIGHT = 0.2;

/** The bookkeeping of one endpoint; the pool decides, this only counts. */
export class ReplicaEndpoint {
  state: EndpointStats['state'] = 'healthy';
  inFlight = 0;
  private requests = 0;
  private errors = 0;
  private consecutiveFailures = 0;
  private ejections = 0;
  private latencyMs: number | undefined;
  private lastLatencyMs: number | undefined;
  private lastError: TritonLlmError | undefined;
  private closing: Promise<void> | undefined;
  /**
   * When it was last heard from (a response, an answer, a passing health check), or when a
   * request began on it with none in flight: the start of the silence {@link stalled} measures.
   */
  private heardAt = 0;
  /**
   * A request on it ended early (an idle timeout, a deadline, an abort) after a silence: that is
   * what a frozen peer looks like, so the silence still counts with nothing in flight, until it is
   * heard from again.
   */
  private endedInSilence = false;
  /** A probe of a suspected freeze is under way: no new requests meanwhile. */
  probing = false;

  constructor(
    readonly name: string,
    readonly transport: Transport,
    private readonly ejectAfterFailures: number,
  ) {}

  /** An inference request starts on this endpoint. */
  begin(): void {
    // An idle endpoint owed nothing until now: its silence starts with this request.
    if (this.inFlight === 0 && !this.endedInSilence) this.heardAt = now();
    this.inFlight += 1;
    this.requests += 1;
  }

  /** Something came from it at `at` (a clock reading the caller already had). */
  heard(at: number): void {
    this.heardAt = at;
    this.endedInSilence = false;
  }

  /** When it was last heard from; see {@link heardAt}. */
  get lastHeardAt(): number {
    return this.heardAt;
  }

  /** Whether it has been silent past {@link STALL_MS} while owing an answer (or after ending in silence). */
  stalled(now: number): boolean {
    return (this.inFlight > 0 || this.endedInSilence) && now - this.heardAt > STALL_MS;
  }

  /** An inference request started by `begin()` is over. */
  end(): void {
    this.inFlight -= 1;
    if (this.state === 'draining' && this.inFlight === 0) this.closeInBackground();
  }

  /**
   * A request on it ended early (an idle timeout, a deadline, the caller): when nothing was heard
   * from it for longer than {@link STALL_MS}, it stays suspect after the request is gone, so a
   * peer that froze mid-stream is probed before it gets the next request. A live server whose
   * consumer merely stopped reading costs one probe, which it answers at once.
   */
  endedEarly(now: number): void {
    if (now - this.heardAt > STALL_MS) this.endedInSilence = true;
  }

  /**
   * A request's first response (the whole answer for `infer`) took `ms`; the caller reports it
   * heard as well.
   */
  recordLatency(ms: number): void {
    this.lastLatencyMs = ms;
    this.latencyMs =
      this.latencyMs === undefined ? ms : this.latencyMs + LATENCY_WEIGHT * (ms - this.latencyMs);
  }

  /** A call answered: the endpoint works, whatever its state said. */
  succeed(): void {
    this.heard(now());
    this.consecutiveFailures = 0;
    if (this.state === 'ejected') this.state = 'healthy';
  }

  /**
   * A call failed. Only retryable failures (unavailable, overloaded, aborted) say something about
   * the endpoint; a bad request or a model error would fail on every replica alike. A deadline
   * counts too when the endpoint has been silent past {@link STALL_MS}: no response within the
   * deadline from a silent peer is its failure, not the caller's (issue 55); a deadline while it
   * answers (a long generation) is the caller's.
   */
  fail(err: TritonLlmError, inference: boolean): void {
    if (err.code === 'cancelled') return;
    if (inference) this.errors += 1;
    this.lastError = err;
    const silent = err.code === 'deadline_exceeded' && this.stalled(now());
    if (!err.retryable && !silent) return;
    this.consecutiveFailures += 1;
    if (this.consecutiveFailures >= this.ejectAfterFailures) this.eject();
  }

  /** A health check said not ready, or could not ask. */
  failCheck(err: TritonLlmError | undefined): void {
    if (err !== undefined) this.lastError = err;
    this.consecutiveFailures += 1;
    this.eject();
  }

  eject(): void {
    if (this.state !== 'healthy') return;
    this.state = 'ejected';
    this.ejections += 1;
  }

  /** Discovery dropped it: no new requests; closed once the running ones end. */
  drain(): void {
    this.state = 'draining';
    if (this.inFlight === 0) this.closeInBackground();
  }

  /** Discovery listed it again before it was closed. */
  readmit(): boolean {
    if (this.closing !== undefined) return false;
    this.state = 'healthy';
    return true;
  }

  close(): Promise<void> {
    this.closing ??= this.transport.close();
    return this.closing;
  }

  // Nobody awaits a drained endpoint's close: its failure is kept where the stats show it.
  private closeInBackground(): void {
    this.close().catch((err: unknown) => {
      this.lastError = TritonLlmError.from(err, 'unknown');
    });
  }

  get closed(): boolean {
    return this.closing !== undefined;
  }

  stats(): EndpointStats {
    return {
      name: this.name,
      state: this.state,
      inFlight: this.inFlight,
      requests: this.requests,
      errors: this.errors,
      consecutiveFailures: this.consecutiveFailures,
      ejections: this.ejections,
      latencyMs: this.latencyMs,
      lastLatencyMs: this.lastLatencyMs,
      lastError: this.lastError,
    };
  }
}
