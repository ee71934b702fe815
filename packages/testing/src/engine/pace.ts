/** Waiting between tokens without holding up the event loop or outliving a cancellation. */

/** Resolves after `ms`, or at once when any of `signals` aborts. */
export function sleep(ms: number, signals: readonly (AbortSignal | undefined)[]): Promise<void> {
  const live = signals.filter((s): s is AbortSignal => s !== undefined);
  if (live.some((s) => s.aborted)) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      for (const s of live) s.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    for (const s of live) s.addEventListener('abort', done, { once: true });
  });
}

/** Lets I/O (cancellations, stop requests, other streams) in between back-to-back tokens. */
export function yieldToIo(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Resolves at `due` (a `performance.now()` time), or at once when any of `signals` aborts. Timers
 * fire a millisecond or more late on a busy machine, which is 2 % of a 50 ms time to first token:
 * so the timer is set to wake a little early and the last stretch is waited out turn by turn,
 * still letting I/O in between.
 */
export async function sleepUntil(due: number, signals: readonly (AbortSignal | undefined)[]): Promise<void> {
  const early = due - performance.now() - SPIN_MS;
  if (early > 0) await sleep(early, signals);
  while (performance.now() < due && !signals.some((s) => s?.aborted)) await yieldToIo();
}

/** How long before a deadline the timer hands over to turn-by-turn waiting. */
const SPIN_MS = 2;
