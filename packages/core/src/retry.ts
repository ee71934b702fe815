import { invalidArgument, TritonLlmError } from './errors.js';

/**
 * How a call that failed before the server answered is tried again: exponential backoff with full
 * jitter, within a number of attempts and a time budget. Only failures where no answer arrived
 * at all are retried (refused, reset or dropped connections, DNS failures), never a status the
 * server sent, and never a request that already delivered a response: a retry can then neither
 * repeat nor lose output. Every field is optional; `{ attempts: 1 }` turns retries off.
 */
export interface RetryOptions {
  /** Attempts in total, the first one included. Default 3; 1 turns retries off. */
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

// Shared, so a schedule (one per request) adds no closure of its own.
const performanceClock = (): number => performance.now();

/**
 * The retry state of one call: how many attempts were made, how long they took, and whether
 * another one may start. `timeoutMs` is the call's whole deadline, shared by its attempts.
 */
export class RetrySchedule {
  private attempt = 1;
  private readonly started: number;

  constructor(
    private readonly policy: RetryPolicy,
    private readonly call: { readonly idempotent: boolean; readonly timeoutMs?: number | undefined },
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
   * The milliseconds to wait before the next attempt after `err`, or undefined when the call
   * should fail with `err`: not a connection failure, not idempotent, out of attempts, or the
   * wait would end past the budget or the deadline.
   */
  nextDelay(err: unknown, random: number = Math.random()): number | undefined {
    const { policy } = this;
    if (!isConnectionFailure(err)) return undefined;
    if (!this.call.idempotent && !policy.retryNonIdempotent) return undefined;
    if (this.attempt >= policy.attempts) return undefined;
    const delay = backoffDelay(policy, this.attempt - 1, random);
    const elapsed = this.clock() - this.started;
    if (elapsed + delay > policy.budgetMs) return undefined;
    const remaining = this.remainingMs();
    if (remaining !== undefined && delay >= remaining) return undefined;
    this.attempt += 1;
    return delay;
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
 * Runs a unary call under a retry policy. `run` receives the deadline left for its attempt;
 * the caller's `signal` ends the waits between attempts, and an aborted call is never retried.
 */
export async function withRetry<T>(
  run: (timeoutMs: number | undefined) => Promise<T>,
  policy: RetryPolicy,
  call: { readonly idempotent: boolean; readonly timeoutMs?: number; readonly signal?: AbortSignal },
): Promise<T> {
  const schedule = new RetrySchedule(policy, call);
  for (;;) {
    try {
      const remaining = schedule.remainingMs();
      return await run(remaining === undefined ? undefined : Math.max(1, remaining));
    } catch (err) {
      const delay = call.signal?.aborted === true ? undefined : schedule.nextDelay(err);
      if (delay === undefined) {
        throw err instanceof TritonLlmError ? exhausted(err, schedule.attempts) : err;
      }
      // An abort during the wait is reported by the next attempt's transport call, as `cancelled`.
      await backoff(delay, call.signal);
    }
  }
}
