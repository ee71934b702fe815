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
 * fire late: by a millisecond or more on a busy machine, and on some virtual machines by a share of
 * the wait itself (docs/PERFORMANCE.md, "trtllm-bench's own accuracy"). So each timer aims a few
 * percent short of what is left, again until little is left, and the last stretch is waited out
 * turn by turn, still letting I/O in between.
 */
export async function sleepUntil(due: number, signals: readonly (AbortSignal | undefined)[]): Promise<void> {
  for (;;) {
    const aim = (due - performance.now()) * (1 - TIMER_MARGIN) - SPIN_MS;
    if (aim < 1 || aborted(signals)) break;
    await sleep(aim, signals);
  }
  while (performance.now() < due && !aborted(signals)) await yieldToIo();
}

function aborted(signals: readonly (AbortSignal | undefined)[]): boolean {
  return signals.some((s) => s?.aborted);
}

/** How long before a deadline the timers hand over to turn-by-turn waiting. */
const SPIN_MS = 2;
/** The share of what is left that a timer leaves out, for timers that run slow. */
const TIMER_MARGIN = 0.03;
