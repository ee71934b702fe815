/**
 * Interleaves several async iterables in arrival order, tagging each value with its source. Each
 * source is asked for its next value only after the previous one was taken, so nothing is
 * buffered beyond one value per source. Leaving early (or a source failing) closes the others.
 */
export function mergeAsync<T>(
  sources: readonly AsyncIterable<T>[],
): AsyncGenerator<{ readonly source: number; readonly value: T }, void, undefined> {
  // One source (every n = 1 request) needs no race: this skips a Promise.race and two promises
  // per value on the streaming path.
  return sources.length === 1 ? single(sources[0]!) : several(sources);
}

async function* several<T>(
  sources: readonly AsyncIterable<T>[],
): AsyncGenerator<{ readonly source: number; readonly value: T }, void, undefined> {
  const iterators = sources.map((s) => s[Symbol.asyncIterator]());
  const pending = new Map<number, Promise<{ index: number; result: IteratorResult<T> }>>();
  const live = new Set(iterators.keys());
  const pull = (index: number): void => {
    pending.set(
      index,
      iterators[index]!.next().then((result) => ({ index, result })),
    );
  };
  for (const index of live) pull(index);
  try {
    while (pending.size > 0) {
      const { index, result } = await Promise.race(pending.values());
      pending.delete(index);
      if (result.done) {
        live.delete(index);
        continue;
      }
      yield { source: index, value: result.value };
      pull(index);
    }
  } finally {
    // Not awaited: a source may be waiting on the network, and the caller's abort signal (not
    // this cleanup) is what ends that wait; the returns run once the pending reads settle.
    for (const index of live) {
      pending.get(index)?.catch(() => undefined);
      void Promise.resolve(iterators[index]!.return?.()).catch(() => undefined);
    }
  }
}

async function* single<T>(
  source: AsyncIterable<T>,
): AsyncGenerator<{ readonly source: number; readonly value: T }, void, undefined> {
  const iterator = source[Symbol.asyncIterator]();
  let done = false;
  try {
    for (;;) {
      const result = await iterator.next();
      if (result.done) {
        done = true;
        return;
      }
      yield { source: 0, value: result.value };
    }
  } finally {
    // As above: the source's return is not awaited.
    if (!done) void Promise.resolve(iterator.return?.()).catch(() => undefined);
  }
}
