import { TritonLlmError } from '@trtllm/sdk';
import { invalidArgument } from '@trtllm/sdk/transport';

/** Frees the slot a request held; calling it twice frees it once. */
export type Release = () => void;

const NOTHING_HELD: Release = () => undefined;

/** The 429s of this server's own limit, which carry `Retry-After` (an upstream 429 does not). */
const atCapacity = new WeakSet<TritonLlmError>();

/** Whether `err` is this server's refusal past its concurrency limit and queue. */
export function isAtCapacity(err: unknown): boolean {
  return err instanceof TritonLlmError && atCapacity.has(err);
}

interface Waiter {
  readonly grant: (release: Release) => void;
  readonly refuse: (err: unknown) => void;
}

/**
 * At most `maxConcurrency` generation requests run upstream at once; up to `maxQueue` more wait
 * in order for a slot, and the rest are refused at once with `resource_exhausted` (429): past
 * what Triton can take, queuing in front of it only grows latency for everyone.
 */
export class Admission {
  private runningCount = 0;
  private readonly queue: Waiter[] = [];

  constructor(
    private readonly maxConcurrency: number | undefined,
    private readonly maxQueue: number,
    private readonly retryAfterSeconds: number,
  ) {
    if (maxConcurrency !== undefined && (!Number.isInteger(maxConcurrency) || maxConcurrency < 1))
      throw invalidArgument('maxConcurrency', maxConcurrency, 'must be a positive integer');
    if (!Number.isInteger(maxQueue) || maxQueue < 0)
      throw invalidArgument('maxQueue', maxQueue, 'must be a non-negative integer');
    if (!Number.isInteger(retryAfterSeconds) || retryAfterSeconds < 0)
      throw invalidArgument('retryAfterSeconds', retryAfterSeconds, 'must be a non-negative integer');
  }

  /** Requests holding a slot. */
  get running(): number {
    return this.runningCount;
  }

  /** Requests waiting for a slot. */
  get waiting(): number {
    return this.queue.length;
  }

  /** The `Retry-After` of a refusal, in seconds. */
  get retryAfter(): number {
    return this.retryAfterSeconds;
  }

  /**
   * A slot for one request: at once when one is free, after waiting in the queue, or a refusal.
   * A request whose client leaves (`signal`) while queued gives up its place.
   */
  acquire(signal: AbortSignal): Release | Promise<Release> {
    if (this.maxConcurrency === undefined) return NOTHING_HELD;
    if (this.runningCount < this.maxConcurrency) {
      this.runningCount += 1;
      return this.releaser();
    }
    if (this.queue.length >= this.maxQueue) throw this.refusal();
    return new Promise<Release>((resolve, reject) => {
      const waiter: Waiter = {
        grant: (release) => {
          signal.removeEventListener('abort', leave);
          resolve(release);
        },
        refuse: reject,
      };
      const leave = (): void => {
        const at = this.queue.indexOf(waiter);
        if (at >= 0) this.queue.splice(at, 1);
        reject(new TritonLlmError('cancelled', 'the client left while its request waited for a slot'));
      };
      signal.addEventListener('abort', leave, { once: true });
      this.queue.push(waiter);
    });
  }

  private releaser(): Release {
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      const next = this.queue.shift();
      // The slot passes straight to the next waiter, so the count stays as it is.
      if (next !== undefined) next.grant(this.releaser());
      else this.runningCount -= 1;
    };
  }

  private refusal(): TritonLlmError {
    const err = new TritonLlmError(
      'resource_exhausted',
      `The server is at its limit: ${this.runningCount} requests running (maxConcurrency ${this.maxConcurrency}) ` +
        `and ${this.queue.length} waiting (maxQueue ${this.maxQueue}); retry after ${this.retryAfterSeconds} s`,
      { retryable: true },
    );
    atCapacity.add(err);
    return err;
  }
}
