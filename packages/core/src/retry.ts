import { invalidArgument, TritonLlmError } from './errors.js';
import type { CallOptions } from './transport.js';

/**
 * How a call that failed before the server answered is tried again: exponential backoff with full
 * jitter, within a number of attempts and a time budget. Only failures where no answer arrived
 * at all are retried (refused, reset or dropped connections, DNS failures), never a status the
 * server sent, and never a request that already delivered a response: a retry can then neither
 * repeat nor lose output. Every field is optional; `{ attempts: 1 }` turns retries off.
 */
export interface RetryOptions {
  /**
   * Attempts in total, the first one included. Default 3; 1 turns retries off. Waits after a
   * refused connection (nothing listening: a restart) are not counted here but bounded by
   * `budgetMs` alone, see {@link RetryPlan}.
   */
  readonly attempts?: number;
  /** Upper bound of the wait before the first retry, in milliseconds. Default 100. */
  readonly initialDelayMs?: number;
  /** Upper bound of any one wait, in milliseconds. Default 2000. */
  readonly maxDelayMs?: number;
  /**
   * No retry starts later than this many milliseconds after the first attempt began (waits
   * included). Default 10 000. A call's `timeoutMs` bounds all of its attempts as well.
   */
  readonly budgetMs?: number;
  /**
   * Retry calls the SDK cannot know to be idempotent as well: `infer()` on an arbitrary model.
   * Generation is retried only while nothing was delivered, and reads (health, metadata, config)
   * are always safe. Default false.
   */
  readonly retryNonIdempotent?: boolean;
}

/**
 * {@link RetryOptions} with every field resolved and checked.
 *
 * @inline
 */
export type RetryPolicy = Required<RetryOptions>;

/** The policy used where neither the client nor the call sets one. */
export const DEFAULT_RETRY: RetryPolicy = {
  attempts: 3,
  initialDelayMs: 100,
  maxDelayMs: 2000,
  budgetMs: 10_000,
  retryNonIdempotent: false,
};

// Far more than any sane policy; it keeps a typo (1e9) from turning into an endless loop.
const MAX_ATTEMPTS = 1000;

/**
 * Merges retry options, later layers winning field by field (client options, then the call's),
 * over {@link DEFAULT_RETRY}, and checks the result. Bad values are `invalid_argument` naming
 * the field.
 */
export function retryPolicy(...layers: readonly (RetryOptions | undefined)[]): RetryPolicy {
  const merged: Record<string, unknown> = { ...DEFAULT_RETRY };
  for (const layer of layers) {
    if (layer === undefined) continue;
    if (layer === null || typeof layer !== 'object')
      throw invalidArgument('retry', layer, 'must be an object of retry options');
    for (const [key, value] of Object.entries(layer)) {
      if (!Object.hasOwn(DEFAULT_RETRY, key)) throw invalidArgument(`retry.${key}`, value, 'unknown option');
      if (value !== undefined) merged[key] = value;
    }
  }
  const policy = merged as RetryPolicy;
  const { attempts, initialDelayMs, maxDelayMs, budgetMs, retryNonIdempotent } = policy;
  if (!Number.isInteger(attempts) || attempts < 1 || attempts > MAX_ATTEMPTS)
    throw invalidArgument('retry.attempts', attempts, `must be a whole number from 1 to ${MAX_ATTEMPTS}`);
  for (const [field, value] of [
    ['retry.initialDelayMs', initialDelayMs],
    ['retry.maxDelayMs', maxDelayMs],
    ['retry.budgetMs', budgetMs],
  ] as const) {
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
      throw invalidArgument(field, value, 'must be a finite number of milliseconds >= 0');
  }
  if (maxDelayMs < initialDelayMs)
    throw invalidArgument(
      'retry.maxDelayMs',
      maxDelayMs,
      `must be >= retry.initialDelayMs (${initialDelayMs})`,
    );
  if (typeof retryNonIdempotent !== 'boolean')
    throw invalidArgument('retry.retryNonIdempotent', retryNonIdempotent, 'must be a boolean');
  return policy;
}

/**
 * The wait before retry number `retry` (0 for the first retry): "full jitter", a uniform draw
 * from [0, min(maxDelayMs, initialDelayMs * 2^retry)), so that clients cut off together by a
 * restart do not come back together. `random` is a draw from [0, 1).
 */
export function backoffDelay(policy: RetryPolicy, retry: number, random: number = Math.random()): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** Math.min(retry, 52));
  return Math.floor(ceiling * Math.min(Math.max(random, 0), 1));
}

/**
 * True for a failure worth another attempt: a retryable `TritonLlmError` that carries no answer
 * of the server (no HTTP or gRPC status, no server message). A status the server chose to send,
 * even 503, is the caller's to handle; so are TLS failures, a closed transport and local limits,
 * which the transports mark as not retryable.
 */
export function isConnectionFailure(err: unknown): boolean {
  return (
    err instanceof TritonLlmError &&
    err.retryable &&
    err.httpStatus === undefined &&
    err.grpcStatus === undefined &&
    err.serverMessage === undefined
  );
}

/**
 * True when nothing listened where the call went: `ECONNREFUSED` on the error or anywhere in its
 * causes (an `AggregateError` of Node's address attempts included). The request never left this
 * process, so it cannot have run, and the usual reason is a server restarting (issue 55).
 */
export function isRefusedConnection(err: unknown): boolean {
  return refusedIn(err, 0);
}

function refusedIn(err: unknown, depth: number): boolean {
  if (depth > 5 || typeof err !== 'object' || err === null) return false;
  const { code, cause, errors } = err as { code?: unknown; cause?: unknown; errors?: unknown };
  if (code === 'ECONNREFUSED') return true;
  if (Array.isArray(errors) && errors.some((e) => refusedIn(e, depth + 1))) return true;
  return refusedIn(cause, depth + 1);
}

// Shared, so a plan (one per request) adds no closure of its own.
const performanceClock = (): number => performance.now();

/** What the caller of {@link RetryPlan.decide} knows about the failed attempt beyond its error. */
export interface AttemptSituation {
  /** A response of this request reached the caller: trying again could repeat or lose output. */
  readonly delivered?: boolean;
  /** The in-band stop was sent: the request is ending on purpose and must not start over. */
  readonly stopSent?: boolean;
  /** The caller gave up (abort, break, stop, idle timeout). */
  readonly ended?: boolean;
  /**
   * Another endpoint (a replica this request has not tried) can take the request at once. Only the
   * replica transport passes true; it asks before moving, and does not ask when it cannot move.
   */
  readonly elsewhere?: boolean;
}

/**
 * The verdict on a failed attempt: `fail` ends the call with the error; `move` starts the next
 * attempt at once on another endpoint; `wait` starts it after `delayMs` on the same target (a
 * replica transport picks its endpoint again).
 */
export type RetryDecision =
  | { readonly action: 'fail' }
  | { readonly action: 'move'; readonly attempt: number }
  | { readonly action: 'wait'; readonly attempt: number; readonly delayMs: number };

const FAIL: RetryDecision = Object.freeze({ action: 'fail' });

/** What one call tells its plan: how safe a repeat is, its deadline, and who hears of retries. */
export interface RetryCall {
  /**
   * Whether running the request twice is harmless. Generation is, while nothing was delivered;
   * reads are; `infer()` on an arbitrary model is not (unless `retryNonIdempotent`).
   */
  readonly idempotent: boolean;
  /** The call's whole deadline in milliseconds, shared by all of its attempts. */
  readonly timeoutMs?: number | undefined;
  /**
   * Told of every attempt about to start: its number (from 2), the wait before it, the error of
   * the attempt before, and whether it moves to another endpoint.
   */
  readonly onRetry?:
    | ((attempt: number, delayMs: number, error: TritonLlmError, moved: boolean) => void)
    | undefined;
  /** True once the caller ended the call (abort, break, stop): no attempt starts after that. */
  readonly ended?: (() => boolean) | undefined;
}

/**
 * The one place that decides whether, when and where a failed attempt is tried again, for unary
 * calls, streams before their first response and replica failover alike. One plan serves one call
 * across every layer (the client passes it down in {@link CallOptions.retryPlan}), so its
 * attempts, budget and deadline are counted once however many endpoints it visits.
 *
 * The rules, in order (docs/RELIABILITY.md has the table and the tests of each):
 * 1. Never after output was delivered, a stop was sent or the caller ended the call.
 * 2. Only a `TritonLlmError` marked `retryable`.
 * 3. Never past `attempts` (moves count), `budgetMs` from the first attempt, or the deadline.
 * 4. A failure with no answer from the server (the request may have run) only when the call is
 *    idempotent or `retryNonIdempotent` is set; then on another endpoint at once if there is
 *    one, else after a backoff wait.
 *    A refused connection (`isRefusedConnection`: nothing listens, the server is most likely
 *    restarting) with no endpoint to move to does not use up `attempts` (unless `attempts` is 1,
 *    which turns retries off): the call waits, backoff
 *    after backoff, until `budgetMs` has passed since its first attempt (the last wait is cut to
 *    end at the budget) or its deadline would, so a request
 *    made while its only server restarts succeeds if the server is back within the budget
 *    (default 10 s) instead of spending its 3 attempts in about 0.3 s (issue 55). Such waits
 *    still count in the attempt number reported (`onRetry`, "(after N attempts)"), and no call
 *    makes more than 1000 attempts in all, whatever its waits.
 * 5. An answer of the server (a status such as 503 or gRPC UNAVAILABLE: it did not run the
 *    request) only on another endpoint: the same server's refusal is the caller's to handle.
 */
export class RetryPlan {
  private attempt = 1;
  /** Attempts that count against `policy.attempts`: all but those after a refused connection. */
  private counted = 1;
  private readonly started: number;

  constructor(
    private readonly policy: RetryPolicy,
    private readonly call: RetryCall,
    private readonly clock: () => number = performanceClock,
  ) {
    this.started = clock();
  }

  /** The attempt running now, from 1. */
  get attempts(): number {
    return this.attempt;
  }

  /** What is left of the call's deadline for the next attempt; undefined when the call has none. */
  remainingMs(): number | undefined {
    const { timeoutMs } = this.call;
    return timeoutMs === undefined ? undefined : timeoutMs - (this.clock() - this.started);
  }

  /**
   * The verdict on the attempt that just failed with `err`. Any verdict but `fail` counts the next
   * attempt as started and is reported to `onRetry`.
   */
  decide(err: unknown, situation: AttemptSituation = {}, random: number = Math.random()): RetryDecision {
    if (situation.delivered === true || situation.stopSent === true || situation.ended === true) return FAIL;
    if (this.call.ended?.() === true) return FAIL;
    if (!(err instanceof TritonLlmError) || !err.retryable) return FAIL;
    const { policy } = this;
    if (this.attempt >= MAX_ATTEMPTS) return FAIL;
    const elapsed = this.clock() - this.started;
    const remaining = this.remainingMs();
    const answered = !isConnectionFailure(err);
    // Only a wait on the same target is free: a move always counts (see rule 4 above). A policy of
    // one attempt asked for no retry at all, so nothing is free there either.
    const free = policy.attempts > 1 && situation.elsewhere !== true && !answered && isRefusedConnection(err);
    if (!free && this.counted >= policy.attempts) return FAIL;
    if (!answered && !this.call.idempotent && !policy.retryNonIdempotent) return FAIL;
    let decision: RetryDecision;
    if (situation.elsewhere === true) {
      if (elapsed > policy.budgetMs || (remaining !== undefined && remaining <= 0)) return FAIL;
      decision = { action: 'move', attempt: this.attempt + 1 };
    } else {
      if (answered) return FAIL;
      let delayMs = backoffDelay(policy, this.attempt - 1, random);
      // A refused connection's last wait is cut to end at the budget: one more try there, so a
      // server back just inside the budget is not missed for a long draw.
      if (free && elapsed < policy.budgetMs)
        delayMs = Math.min(delayMs, Math.ceil(policy.budgetMs - elapsed));
      if (elapsed + delayMs > policy.budgetMs) return FAIL;
      if (remaining !== undefined && delayMs >= remaining) return FAIL;
      decision = { action: 'wait', attempt: this.attempt + 1, delayMs };
    }
    this.attempt += 1;
    if (!free) this.counted += 1;
    if (decision.action === 'move') this.call.onRetry?.(this.attempt, 0, err, true);
    else this.call.onRetry?.(this.attempt, decision.delayMs, err, false);
    return decision;
  }
}

/**
 * The error a call fails with after retries: the last attempt's error, its message saying how
 * many attempts were made, everything else kept.
 */
export function exhausted(err: TritonLlmError, attempts: number): TritonLlmError {
  if (attempts <= 1) return err;
  const copy = new TritonLlmError(err.code, `${err.message} (after ${attempts} attempts)`, {
    retryable: err.retryable,
    ...(err.serverMessage !== undefined ? { serverMessage: err.serverMessage } : {}),
    ...(err.requestId !== undefined ? { requestId: err.requestId } : {}),
    ...(err.model !== undefined ? { model: err.model } : {}),
    ...(err.httpStatus !== undefined ? { httpStatus: err.httpStatus } : {}),
    ...(err.grpcStatus !== undefined ? { grpcStatus: err.grpcStatus } : {}),
    ...(err.cause !== undefined ? { cause: err.cause } : {}),
    ...(err.earlyStop !== undefined ? { earlyStop: err.earlyStop } : {}),
  });
  if (err.stack !== undefined) copy.stack = err.stack.replace(err.message, copy.message);
  return copy;
}

/** Waits `ms`, or less when `signal` aborts (the caller then sees the abort itself). */
export function backoff(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (ms <= 0 || signal?.aborted === true) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Runs a unary call under `policy`: one plan for all of its attempts, each given what is left of
 * the deadline in `options.timeoutMs` and the plan in `options.retryPlan` (for a replica
 * transport's moves). The caller's `signal` ends the waits between attempts, and an aborted call
 * is never retried.
 */
export async function withRetry<T>(
  policy: RetryPolicy,
  idempotent: boolean,
  options: CallOptions,
  run: (options: CallOptions) => Promise<T>,
): Promise<T> {
  const plan = new RetryPlan(policy, { idempotent, timeoutMs: options.timeoutMs });
  const { signal } = options;
  for (;;) {
    try {
      const left = plan.remainingMs();
      return await run({
        ...options,
        ...(left !== undefined ? { timeoutMs: Math.max(1, left) } : {}),
        retryPlan: plan,
      });
    } catch (err) {
      const decision = plan.decide(err, { ended: signal?.aborted === true });
      if (decision.action === 'fail') {
        throw err instanceof TritonLlmError ? exhausted(err, plan.attempts) : err;
      }
      // An abort during the wait is reported by the next attempt's transport call, as `cancelled`.
      if (decision.action === 'wait') await backoff(decision.delayMs, signal);
    }
  }
}
