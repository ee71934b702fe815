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
