import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

/** How one level sends its requests. */
export interface LoadPlan {
  /** Most requests in flight at once. */
  readonly concurrency: number;
  /** Requests to send in all. */
  readonly requests: number;
  /**
   * Requests per second, evenly spaced from the start of the level (still never more than
   * `concurrency` in flight). Absent: closed loop, each slot sends its next request as soon as
   * the last one ends.
   */
  readonly requestRate?: number;
}

/**
 * Sends `plan.requests` requests through `send(index)` (index 0, 1, ... in order of sending) and
 * resolves when every one has ended. `send` must not throw: a failed request is a result to record.
 */
export async function driveLoad(plan: LoadPlan, send: (index: number) => Promise<void>): Promise<void> {
  const start = performance.now();
  const spacingMs = plan.requestRate !== undefined ? 1000 / plan.requestRate : 0;
  let next = 0;
  const slot = async (): Promise<void> => {
    while (next < plan.requests) {
      const index = next++;
      const due = start + index * spacingMs;
      // Node timers may fire a little early by performance.now(); wait again until the turn has come.
      for (let wait = due - performance.now(); wait > 0; wait = due - performance.now()) await sleep(wait);
      await send(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(plan.concurrency, plan.requests) }, slot));
}
