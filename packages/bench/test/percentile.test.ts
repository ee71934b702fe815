import { latencyStats, percentile } from '@trtllm/bench';
import { TritonLlmError } from '@trtllm/sdk';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

const values = fc.array(fc.double({ min: -1e6, max: 1e6, noNaN: true }), { minLength: 1, maxLength: 200 });
const sortedOf = (v: number[]) => [...v].sort((a, b) => a - b);

describe('percentile', () => {
  it('interpolates between the nearest ranks', () => {
    expect(percentile([1, 2, 3, 4], 50)).toBe(2.5);
    expect(percentile([1, 2, 3, 4], 90)).toBeCloseTo(3.7, 12);
    expect(percentile([10, 20, 30], 50)).toBe(20);
    expect(percentile([7], 99)).toBe(7);
  });

  it('gives the minimum at 0 and the maximum at 100', () => {
    fc.assert(
      fc.property(values, (v) => {
        const s = sortedOf(v);
        expect(percentile(s, 0)).toBe(s[0]);
        expect(percentile(s, 100)).toBe(s[s.length - 1]);
      }),
    );
  });

  it('never decreases as p grows and stays within the values', () => {
    fc.assert(
      fc.property(
        values,
        fc.double({ min: 0, max: 100, noNaN: true }),
        fc.double({ min: 0, max: 100, noNaN: true }),
        (v, a, b) => {
          const s = sortedOf(v);
          const [lo, hi] = a <= b ? [a, b] : [b, a];
          expect(percentile(s, lo)).toBeLessThanOrEqual(percentile(s, hi));
          expect(percentile(s, lo)).toBeGreaterThanOrEqual(s[0]!);
          expect(percentile(s, hi)).toBeLessThanOrEqual(s[s.length - 1]!);
        },
      ),
    );
  });

  it('takes the middle value as the median of an odd count', () => {
    fc.assert(
      fc.property(
        values.filter((v) => v.length % 2 === 1),
        (v) => {
          const s = sortedOf(v);
          expect(percentile(s, 50)).toBe(s[(s.length - 1) / 2]);
        },
      ),
    );
  });

  it('refuses an empty list and a p outside 0..100 as invalid_argument', () => {
    for (const call of [
      () => percentile([], 50),
      () => percentile([1], 101),
      () => percentile([1], Number.NaN),
    ]) {
      expect(call).toThrow(TritonLlmError);
      try {
        call();
      } catch (err) {
        expect((err as TritonLlmError).code).toBe('invalid_argument');
      }
    }
  });
});

describe('latencyStats', () => {
  it('summarizes values in any order', () => {
    const stats = latencyStats([4, 1, 3, 2]);
    expect(stats).toMatchObject({ count: 4, mean: 2.5, min: 1, p50: 2.5, max: 4 });
    expect(stats?.p90).toBeCloseTo(3.7, 12);
    expect(stats?.p99).toBeCloseTo(3.97, 12);
  });

  it('has no summary for no values rather than zeros', () => {
    expect(latencyStats([])).toBeUndefined();
  });

  it('has a mean between the minimum and the maximum', () => {
    fc.assert(
      fc.property(values, (v) => {
        const stats = latencyStats(v)!;
        expect(stats.mean).toBeGreaterThanOrEqual(stats.min - 1e-6);
        expect(stats.mean).toBeLessThanOrEqual(stats.max + 1e-6);
        expect(stats.p50).toBeLessThanOrEqual(stats.p90);
        expect(stats.p90).toBeLessThanOrEqual(stats.p99);
      }),
    );
  });
});
