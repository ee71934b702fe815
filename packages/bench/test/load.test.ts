import { setTimeout as sleep } from 'node:timers/promises';
import { driveLoad } from '@trtllm/bench';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

describe('load driver', () => {
  it('sends every request once, in order, never more than the concurrency at a time', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 40 }),
        async (concurrency, delays) => {
          const started: number[] = [];
          let inFlight = 0;
          let peak = 0;
          await driveLoad({ concurrency, requests: delays.length }, async (index) => {
            started.push(index);
            inFlight += 1;
            peak = Math.max(peak, inFlight);
            await sleep(delays[index]!);
            inFlight -= 1;
          });
          expect(started).toEqual(delays.map((_, i) => i));
          expect(peak).toBe(Math.min(concurrency, delays.length));
          expect(inFlight).toBe(0);
        },
      ),
      { numRuns: 30 },
    );
  });

  it('holds each request of a fixed rate until its turn', async () => {
    const startedAt: number[] = [];
    const begin = performance.now();
    await driveLoad({ concurrency: 4, requests: 5, requestRate: 100 }, async () => {
      startedAt.push(performance.now() - begin);
    });
    // Spacing is 10 ms: no request may start before its turn (later is the machine's business).
    startedAt.forEach((t, i) => {
      expect(t).toBeGreaterThanOrEqual(i * 10);
    });
  });
});
