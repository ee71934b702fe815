import { invalidArgument } from '@trtllm/sdk/transport';

/** Mean and percentiles of one latency metric over the requests of a level, in milliseconds. */
export interface LatencyStats {
  readonly count: number;
  readonly mean: number;
  readonly min: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
}

/**
 * The `p`-th percentile (0..100) of ascending `sorted` values, interpolating linearly between the
 * two nearest ranks (NumPy's default), so p50 of an even count is the mean of the middle two.
 */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) throw invalidArgument('sorted', sorted, 'needs at least one value');
  if (!Number.isFinite(p) || p < 0 || p > 100)
    throw invalidArgument('p', p, 'must be a number from 0 to 100');
  const rank = (p / 100) * (sorted.length - 1);
  const lower = Math.floor(rank);
  const upper = Math.ceil(rank);
  const low = sorted[lower]!;
  // On a rank, the value itself: interpolating would turn -0 into 0 and round large values.
  if (lower === upper) return low;
  return low + (sorted[upper]! - low) * (rank - lower);
}

/** Summary of `values` (any order); `undefined` when there are none, so a missing metric is never shown as 0. */
export function latencyStats(values: readonly number[]): LatencyStats | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    count: sorted.length,
    mean: sum / sorted.length,
    min: sorted[0]!,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1]!,
  };
}
