import fc from 'fast-check';
import { describe, expect, test, vi } from 'vitest';
import { mergeAsync } from '../src/merge.js';

async function* source(values: readonly number[], delays: readonly number[]): AsyncGenerator<number> {
  for (const [i, v] of values.entries()) {
    await new Promise((r) => setTimeout(r, delays[i % Math.max(1, delays.length)] ?? 0));
    yield v;
  }
}

describe('mergeAsync', () => {
  test('yields every value of every source once, each source in its own order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(fc.integer(), { maxLength: 6 }), { maxLength: 4 }),
        fc.array(fc.integer({ min: 0, max: 2 }), { maxLength: 4 }),
        async (lists, delays) => {
          const seen: number[][] = lists.map(() => []);
          for await (const { source: s, value } of mergeAsync(lists.map((l) => source(l, delays))))
            seen[s]!.push(value);
          expect(seen).toEqual(lists);
        },
      ),
      { numRuns: 40 },
    );
  });

  test('leaving early closes every source still open', async () => {
    const closed: number[] = [];
    async function* endless(id: number): AsyncGenerator<number> {
      try {
        for (;;) {
          await new Promise((r) => setTimeout(r, 1));
          yield id;
        }
      } finally {
        closed.push(id);
      }
    }
    for await (const _ of mergeAsync([endless(0), endless(1), endless(2)])) break;
    // A source suspended in its own await closes when that await ends: no event says when.
    await vi.waitFor(() => expect([...closed].sort()).toEqual([0, 1, 2]), { timeout: 2_000 });
  });

  test('a failing source fails the merge', async () => {
    async function* failing(): AsyncGenerator<number> {
      yield 1;
      throw new Error('boom');
    }
    const run = async (): Promise<void> => {
      for await (const _ of mergeAsync([failing(), source([1, 2, 3], [1])])) {
        // drain
      }
    };
    await expect(run()).rejects.toThrow('boom');
  });
});
