import type { ColdStartResults } from './cold-start.js';
import { BARE_VARIANTS, type OverheadConfig, VARIANT_LABELS, type VariantName } from './config.js';
import type { InterleavedResults } from './interleaved.js';
import type { Machine } from './machine.js';
import type { SideBySideResults } from './side-by-side.js';
import type { StreamLimitResults } from './stream-limit.js';

/** One variant at one concurrency level of the throughput runs. */
export interface ThroughputRow {
  readonly variant: VariantName;
  readonly label: string;
  readonly concurrency: number;
  /** Runs behind this row (`BENCH_REPEATS`); the totals below add them up. */
  readonly runs: number;
  readonly requests: number;
  readonly tokens: number;
  readonly wallMs: number;
  /** Client process CPU (user + system) over the measured windows, in microseconds. */
  readonly cpuUs: number;
  /** Median over the runs. */
  readonly tokensPerSec: number;
  /** tokens/s of each run, when there were several. */
  readonly tokensPerSecRuns?: readonly number[];
  /** Median over the runs. */
  readonly cpuUsPerToken: number;
  readonly tokensPerCpuSec: number;
  /** Median CPU per token over the warm-up requests (Node clients), what a freshly started process pays. */
  readonly warmupCpuUsPerToken?: number;
  /** tokens/s divided by that of the fastest bare client at this level (1 = as fast). */
  readonly ratioToFastestBare?: number;
}

/** One variant holding a number of idle streams: medians over its runs. */
export interface MemoryRow {
  readonly variant: VariantName;
  readonly label: string;
  readonly streams: number;
  /**
   * RSS growth per stream: outside V8's young generation in results whose config has
   * `memoryRepeats` (from 2026-11-27; see client.ts footprint), the whole RSS before.
   */
  readonly rssBytesPerStream: number;
  /** V8 heap used + external + array buffers per stream; null for Python. */
  readonly heapBytesPerStream: number | null;
  /** RSS growth per stream of each run, when there were several (results before 2026-11-27 had one). */
  readonly rssBytesPerStreamRuns?: readonly number[];
}

/** One memory run of a client: growth over its idle streams. */
export interface MemoryRun {
  readonly rssBytes: number;
  /** null for Python, which has no V8 heap. */
  readonly heapBytes: number | null;
}

/** One row from one or more memory runs of a variant: the medians of RSS and heap growth per stream. */
export function memoryRow(variant: VariantName, streams: number, runs: readonly MemoryRun[]): MemoryRow {
  const rss = runs.map((r) => r.rssBytes / streams);
  const heaps = runs.flatMap((r) => (r.heapBytes === null ? [] : [r.heapBytes / streams]));
  return {
    variant,
    label: VARIANT_LABELS[variant],
    streams,
    rssBytesPerStream: median(rss),
    heapBytesPerStream: heaps.length === runs.length ? median(heaps) : null,
    ...(runs.length > 1 ? { rssBytesPerStreamRuns: rss } : {}),
  };
}

export interface TargetCheck {
  readonly target: string;
  /** Concurrent streams (throughput) or idle streams (memory) the check is about. */
  readonly level: number;
  readonly value: number;
  /** How `value` and `threshold` read: µs, bytes, a ratio (x) or a share (shown as %). */
  readonly unit: 'us' | 'bytes' | 'ratio' | 'share';
  readonly threshold: number;
  readonly met: boolean;
}

export interface RunFailure {
  readonly variant: VariantName;
  readonly mode: 'throughput' | 'memory' | 'cold-start' | 'side-by-side';
  readonly level: number;
  readonly error: string;
}

export interface OverheadResults {
  readonly machine: Machine;
  /**
   * `nodeWarmup` is absent from runs before it existed (then every client warmed up with `warmup`),
   * `memoryRepeats` from runs before memory was measured more than once.
   */
  readonly config: Omit<OverheadConfig, 'nodeWarmup' | 'memoryRepeats'> & {
    readonly nodeWarmup?: number;
    readonly memoryRepeats?: number;
    readonly fakeServer: string;
  };
  readonly throughput: readonly ThroughputRow[];
  readonly memory: readonly MemoryRow[];
  /** The stream-limit part (issue 31 item 3), when it ran. */
  readonly streamLimit?: StreamLimitResults;
  /** Both gRPC paths against a fake that sends one token of each generation in turn, when it ran. */
  readonly interleaved?: InterleavedResults;
  /** Process start to first token of fresh processes (issue #53 point 10), when it ran. */
  readonly coldStart?: ColdStartResults;
  /** Pairs of clients measured in alternation (issue 54), when it ran. */
  readonly sideBySide?: SideBySideResults;
  readonly targets: readonly TargetCheck[];
  readonly failures: readonly RunFailure[];
}

/** One measured run of a client: its window's totals, and its warm-up's (Node clients only). */
export interface RunResult {
  readonly tokens: number;
  readonly requests: number;
  readonly wallMs: number;
  readonly cpuUs: number;
  readonly warmup?: { readonly tokens: number; readonly cpuUs: number };
}

/** One row from one or more runs of a variant at a level: the medians of tokens/s and of CPU per token. */
export function throughputRow(
  variant: VariantName,
  concurrency: number,
  runs: readonly RunResult[],
): ThroughputRow {
  const perSec = runs.map((r) => r.tokens / (r.wallMs / 1000));
  const cpuPerToken = runs.map((r) => r.cpuUs / r.tokens);
  const sum = (f: (r: RunResult) => number) => runs.reduce((a, r) => a + f(r), 0);
  const cpuUsPerToken = median(cpuPerToken);
  const warmups = runs.flatMap((r) => (r.warmup !== undefined && r.warmup.tokens > 0 ? [r.warmup] : []));
  return {
    variant,
    label: VARIANT_LABELS[variant],
    concurrency,
    runs: runs.length,
    requests: sum((r) => r.requests),
    tokens: sum((r) => r.tokens),
    wallMs: sum((r) => r.wallMs),
    cpuUs: sum((r) => r.cpuUs),
    tokensPerSec: median(perSec),
    ...(runs.length > 1 ? { tokensPerSecRuns: perSec } : {}),
    cpuUsPerToken,
    tokensPerCpuSec: 1e6 / cpuUsPerToken,
    ...(warmups.length === runs.length
      ? { warmupCpuUsPerToken: median(warmups.map((w) => w.cpuUs / w.tokens)) }
      : {}),
  };
}

function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Adds each row's ratio to the fastest bare client of its level. */
export function withRatios(rows: readonly ThroughputRow[]): ThroughputRow[] {
  return rows.map((row) => {
    const bare = rows.filter((r) => r.concurrency === row.concurrency && BARE_VARIANTS.includes(r.variant));
    if (bare.length === 0) return row;
    const fastest = Math.max(...bare.map((r) => r.tokensPerSec));
    return { ...row, ratioToFastestBare: row.tokensPerSec / fastest };
  });
}

/** Rows by variant (in the order variants first appear), each sorted by concurrency. */
export function byVariant(rows: readonly ThroughputRow[]): Map<string, ThroughputRow[]> {
  const out = new Map<string, ThroughputRow[]>();
  for (const row of rows) out.set(row.variant, [...(out.get(row.variant) ?? []), row]);
  for (const list of out.values()) list.sort((a, b) => a.concurrency - b.concurrency);
  return out;
}
