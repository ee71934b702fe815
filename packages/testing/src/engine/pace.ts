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

/**
 * In-flight batching's iteration clock: one step every `stepMs` on a fixed schedule, and each
 * generation waiting on it gets its next token at that step, all of them together, as a GPU's
 * batch iteration produces one token for every request in it. Requests that arrive between steps
 * join at the next one. The timer runs only while a generation waits.
 */
export class BatchClock {
  private waiters: (() => void)[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private due = 0;

  constructor(private readonly stepMs: number) {}

  /** Resolves at the next step. */
  next(): Promise<void> {
    return new Promise((resolve) => {
      this.waiters.push(resolve);
      if (this.timer === undefined) this.arm();
    });
  }

  private arm(): void {
    const now = performance.now();
    // On schedule while steps keep coming; after an idle spell (or a step that ran late by more
    // than a whole step) the schedule starts again from now rather than catching up in a burst.
    this.due = this.due + this.stepMs > now ? this.due + this.stepMs : now + this.stepMs;
    this.timer = setTimeout(() => this.step(), this.due - now);
  }

  private step(): void {
    this.timer = undefined;
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }
}
