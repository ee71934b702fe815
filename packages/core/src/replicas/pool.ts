import { now } from '../clock.js';
import { TritonLlmError } from '../errors.js';
import { DEFAULT_RETRY, RetryPlan } from '../retry.js';
import type { CallOptions, Transport } from '../transport.js';
import { type EndpointStats, ReplicaEndpoint } from './endpoint.js';

/** Where the endpoints come from: a fixed list, or addresses discovered again and again. */
export type EndpointSource =
  | { readonly kind: 'fixed'; readonly endpoints: readonly { name: string; transport: Transport }[] }
  | {
      readonly kind: 'discovered';
      readonly discover: () => Promise<readonly string[]>;
      readonly connect: (address: string) => Transport;
    };

/** The pool's policy, validated and with defaults filled in. */
export interface PoolPolicy {
  readonly protocol: Transport['protocol'];
  /** 0: no background checks. */
  readonly healthIntervalMs: number;
  readonly healthTimeoutMs: number;
  readonly refreshIntervalMs: number;
  readonly model: string | undefined;
  readonly modelVersion: string | undefined;
  readonly ejectAfterFailures: number;
  readonly failoverAttempts: number;
}

const NOTHING_YET = { delivered: false, stopSent: false } as const;

/**
 * One request's way through the endpoints: which it tried, and the retry plan that decides
 * whether it may move on (the client's, passed down in the call options, or one of its own for a
 * caller that uses this transport directly).
 */
export class Attempts {
  readonly plan: RetryPlan;
  // The endpoints tried: the first in a field, any others (a request that moved) in a set made
  // then, so that a request that never moves costs no set.
  private firstTried: ReplicaEndpoint | undefined;
  private othersTried: Set<ReplicaEndpoint> | undefined;

  constructor(
    readonly options: CallOptions | undefined,
    failoverAttempts: number,
  ) {
    this.plan =
      options?.retryPlan ??
      // Used directly, the transport knows nothing of the request: it moves any request that
      // failed retryably before its answer, `failoverAttempts` times, within its deadline only.
      new RetryPlan(
        {
          ...DEFAULT_RETRY,
          attempts: failoverAttempts + 1,
          budgetMs: Number.POSITIVE_INFINITY,
          retryNonIdempotent: true,
        },
        { idempotent: true, timeoutMs: positive(options?.timeoutMs) },
      );
  }

  /** How many endpoints the request was sent to. */
  get count(): number {
    if (this.firstTried === undefined) return 0;
    return 1 + (this.othersTried?.size ?? 0);
  }

  tried(e: ReplicaEndpoint): boolean {
    return e === this.firstTried || this.othersTried?.has(e) === true;
  }

  add(e: ReplicaEndpoint): void {
    if (this.firstTried === undefined) {
      this.firstTried = e;
    } else if (e !== this.firstTried) {
      this.othersTried ??= new Set();
      this.othersTried.add(e);
    }
  }

  /** The first attempt gets the caller's options as given; a move gets what remains of the deadline. */
  callOptions(): CallOptions | undefined {
    if (this.count <= 1) return this.options;
    const remaining = this.plan.remainingMs();
    if (remaining === undefined) return this.options;
    return { ...this.options, timeoutMs: Math.max(1, remaining) };
  }
}

function positive(ms: number | undefined): number | undefined {
  return ms !== undefined && Number.isFinite(ms) && ms > 0 ? ms : undefined;
}

/**
 * The endpoints of a replica transport and everything that decides between them:
 * least-outstanding-requests picks (ties in turn), ejection on failures, background health checks,
 * re-discovery, failover of a request that failed before delivering anything.
 */
export class ReplicaPool {
  private endpoints: ReplicaEndpoint[] = [];
  private turn = 0;
  private closed = false;
  private discovery: Promise<void> | undefined;
  private discoveryError: TritonLlmError | undefined;
  private rounds: Promise<void> = Promise.resolve();
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();

  constructor(
    private readonly source: EndpointSource,
    readonly policy: PoolPolicy,
  ) {
    if (source.kind === 'fixed') {
      this.endpoints = source.endpoints.map(
        (e) => new ReplicaEndpoint(e.name, e.transport, policy.ejectAfterFailures),
      );
      if (policy.healthIntervalMs > 0) this.healthLoop();
    } else {
      this.discover().then(
        () => this.healthLoop(),
        () => this.healthLoop(),
      );
      this.every(policy.refreshIntervalMs, () => this.discover());
    }
  }

  stats(): EndpointStats[] {
    return this.endpoints.map((e) => e.stats());
  }

  /**
   * The endpoint for a request's first attempt, picked at once when endpoints are known (so that
   * requests started together see each other in flight), else after the first discovery.
   */
  first(attempts: Attempts): ReplicaEndpoint | Promise<ReplicaEndpoint> {
    this.checkOpen();
    for (const e of this.endpoints) if (e.state !== 'draining') return this.pickFirst(attempts);
    return this.discover().then(() => this.pickFirst(attempts));
  }

  private pickFirst(attempts: Attempts): ReplicaEndpoint {
    this.checkOpen();
    const endpoint = this.pick(attempts);
    if (endpoint !== undefined) return endpoint;
    throw new TritonLlmError('unavailable', 'no endpoint to send the request to: discovery listed none', {
      ...(this.discoveryError !== undefined ? { cause: this.discoveryError } : {}),
    });
  }

  /**
   * The endpoint to try after `err`, or undefined when the request must fail with it: the error
   * is not retryable, the failover budget or the deadline is spent, the caller aborted, or every
   * endpoint was tried.
   */
  failover(
    attempts: Attempts,
    err: TritonLlmError,
    situation: { readonly delivered: boolean; readonly stopSent: boolean },
  ): ReplicaEndpoint | undefined {
    if (this.closed || attempts.count > this.policy.failoverAttempts) return undefined;
    if (!this.endpoints.some((e) => untried(e, attempts))) return undefined;
    const decision = attempts.plan.decide(err, {
      ...situation,
      ended: attempts.options?.signal?.aborted === true,
      elsewhere: true,
    });
    return decision.action === 'move' ? this.pick(attempts) : undefined;
  }

  /** Runs a unary call with failover; inference calls count in the endpoints' statistics. */
  async call<T>(
    options: CallOptions | undefined,
    inference: boolean,
    run: (transport: Transport, options: CallOptions | undefined) => Promise<T>,
  ): Promise<T> {
    const attempts = new Attempts(options, this.policy.failoverAttempts);
    const picked = this.first(attempts);
    let endpoint = picked instanceof Promise ? await picked : picked;
    for (;;) {
      const current = endpoint;
      const started = now();
      if (inference) current.begin();
      try {
        const result = await run(current.transport, attempts.callOptions());
        if (inference) current.recordLatency(now() - started);
        current.succeed();
        return result;
      } catch (err) {
        const error = TritonLlmError.from(err);
        current.fail(error, inference);
        const next = this.failover(attempts, error, NOTHING_YET);
        if (next === undefined) throw error;
        endpoint = next;
      } finally {
        if (inference) current.end();
      }
    }
  }

  /** Probes every endpoint once (after any round in progress) and ejects or readmits each. */
  checkHealth(): Promise<void> {
    if (this.closed) return Promise.resolve();
    const round = this.rounds.then(() =>
      Promise.all(this.endpoints.filter((e) => e.state !== 'draining').map((e) => this.probe(e))),
    );
    this.rounds = round.then(() => undefined);
    return this.rounds;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    const results = await Promise.allSettled(this.endpoints.map((e) => e.close()));
    const failed = results.find((r) => r.status === 'rejected');
    if (failed !== undefined) throw TritonLlmError.from(failed.reason, 'unknown');
  }

  private checkOpen(): void {
    if (this.closed) {
      throw new TritonLlmError('unavailable', 'this replica transport is closed', { retryable: false });
    }
  }

  /**
   * Least outstanding requests among the healthy endpoints not tried yet (any, when none is
   * healthy). A healthy endpoint silent past `STALL_MS` with requests in flight (a frozen peer:
   * its open-request count alone would invite the next requests once its waiting ones time out)
   * is probed at once and skipped until the probe answers; a failed probe ejects it.
   */
  private pick(attempts: Attempts): ReplicaEndpoint | undefined {
    // Loops, not filtered arrays: every request picks, and a pick allocates nothing.
    const endpoints = this.endpoints;
    const at = now();
    let healthy = 0;
    let open = 0;
    for (const e of endpoints) {
      if (!untried(e, attempts)) continue;
      open += 1;
      if (e.state !== 'healthy' || e.probing) continue;
      if (e.stalled(at)) this.probeSuspect(e);
      else healthy += 1;
    }
    if (healthy === 0) {
      // Every healthy endpoint is under a probe (a slow moment can make a live one look frozen):
      // the one heard from most recently is the best bet.
      let best: ReplicaEndpoint | undefined;
      for (const e of endpoints) {
        if (
          untried(e, attempts) &&
          e.state === 'healthy' &&
          (best === undefined || e.lastHeardAt > best.lastHeardAt)
        ) {
          best = e;
        }
      }
      if (best !== undefined) {
        attempts.add(best);
        return best;
      }
    }
    // With every endpoint ejected the health view may be stale: trying one beats failing outright.
    const onlyHealthy = healthy > 0;
    const n = onlyHealthy ? healthy : open;
    if (n === 0) return undefined;
    const start = this.turn % n;
    this.turn = (this.turn + 1) % 0x40000000;
    // The candidates in turn from the `start`-th: the first with the fewest requests in flight.
    let best: ReplicaEndpoint | undefined;
    let bestAt = 0;
    let index = 0;
    for (const e of endpoints) {
      if (!untried(e, attempts) || (onlyHealthy && (e.state !== 'healthy' || e.probing))) continue;
      const order = index < start ? index + n : index;
      index += 1;
      if (
        best === undefined ||
        e.inFlight < best.inFlight ||
        (e.inFlight === best.inFlight && order < bestAt)
      ) {
        best = e;
        bestAt = order;
      }
    }
    if (best !== undefined) attempts.add(best);
    return best;
  }

  /** Probes an endpoint suspected frozen, out of turn; it takes no new request until the answer. */
  private probeSuspect(e: ReplicaEndpoint): void {
    e.probing = true;
    void this.probe(e).finally(() => {
      e.probing = false;
    });
  }

  private async probe(e: ReplicaEndpoint): Promise<void> {
    const { model, modelVersion, healthTimeoutMs } = this.policy;
    const options = { timeoutMs: healthTimeoutMs };
    try {
      if (!(await e.transport.serverReady(options))) {
        e.failCheck(new TritonLlmError('unavailable', `health check of ${e.name}: the server is not ready`));
      } else if (model !== undefined && !(await e.transport.modelReady(model, modelVersion, options))) {
        e.failCheck(
          new TritonLlmError('unavailable', `health check of ${e.name}: model '${model}' is not ready`, {
            model,
          }),
        );
      } else {
        e.succeed();
      }
    } catch (err) {
      e.failCheck(TritonLlmError.from(err, 'unavailable'));
    }
  }

  /** Runs discovery once (joining a run in progress) and reconciles the endpoints with its list. */
  private discover(): Promise<void> {
    const source = this.source;
    if (source.kind !== 'discovered') return Promise.resolve();
    this.discovery ??= (async () => {
      try {
        const addresses = await source.discover();
        if (!this.closed) this.reconcile(addresses, source.connect);
        this.discoveryError = undefined;
      } catch (err) {
        this.discoveryError = new TritonLlmError(
          'unavailable',
          `endpoint discovery failed: ${err instanceof Error ? err.message : String(err)}`,
          { cause: err },
        );
        throw this.discoveryError;
      } finally {
        this.discovery = undefined;
      }
    })();
    return this.discovery;
  }

  private reconcile(addresses: readonly string[], connect: (address: string) => Transport): void {
    const listed = new Set(addresses);
    this.endpoints = this.endpoints.filter((e) => !e.closed);
    for (const e of this.endpoints) if (!listed.has(e.name) && e.state !== 'draining') e.drain();
    for (const address of listed) {
      const known = this.endpoints.find((e) => e.name === address && !e.closed);
      if (known !== undefined && (known.state !== 'draining' || known.readmit())) continue;
      const transport = connect(address);
      if (transport.protocol !== this.policy.protocol) {
        // The misconfiguration is the error to report; this transport was never used.
        transport.close().catch(() => undefined);
        throw new TritonLlmError(
          'invalid_argument',
          `endpoints: connect('${address}') made a ${transport.protocol} transport; the others are ${this.policy.protocol}`,
        );
      }
      this.endpoints.push(new ReplicaEndpoint(address, transport, this.policy.ejectAfterFailures));
    }
  }

  private healthLoop(): void {
    if (this.policy.healthIntervalMs > 0 && !this.closed) {
      void this.checkHealth();
      this.every(this.policy.healthIntervalMs, () => this.checkHealth());
    }
  }

  /** Runs `task` every `ms` (each run waits for the one before), on timers that never keep a process alive. */
  private every(ms: number, task: () => Promise<void>): void {
    if (ms <= 0) return;
    const schedule = (): void => {
      if (this.closed) return;
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        // A failed round is already recorded (discovery error, endpoint stats); the next one retries.
        task().then(schedule, schedule);
      }, ms);
      unref(timer);
      this.timers.add(timer);
    };
    schedule();
  }
}

/** Lets Node exit while the timer is pending; browsers and other runtimes have no such call. */
function unref(timer: unknown): void {
  if (typeof timer === 'object' && timer !== null && 'unref' in timer && typeof timer.unref === 'function') {
    timer.unref();
  }
}

/** Whether `e` may take the request's next attempt: not draining, and not tried by it yet. */
function untried(e: ReplicaEndpoint, attempts: Attempts): boolean {
  return e.state !== 'draining' && !attempts.tried(e);
}
