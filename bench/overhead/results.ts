import { BARE_VARIANTS, type OverheadConfig, VARIANT_LABELS, type VariantName } from './config.js';
import type { Machine } from './machine.js';

/** One variant at one concurrency level of the throughput runs. */
export interface ThroughputRow {
  readonly variant: VariantName;
  readonly label: string;
  readonly concurrency: number;
  readonly requests: number;
  readonly tokens: number;
  readonly wallMs: number;
  /** Client process CPU (user + system) over the measured window, in microseconds. */
  readonly cpuUs: number;
  readonly tokensPerSec: number;
  readonly cpuUsPerToken: number;
  readonly tokensPerCpuSec: number;
  /** tokens/s divided by that of the faster bare client at this level (1 = as fast). */
  readonly ratioToFastestBare?: number;
}

/** One variant holding a number of idle streams. */
export interface MemoryRow {
  readonly variant: VariantName;
  readonly label: string;
  readonly streams: number;
  readonly rssBytesPerStream: number;
  /** V8 heap used + external + array buffers per stream; null for Python. */
  readonly heapBytesPerStream: number | null;
}

export interface TargetCheck {
  readonly target: string;
  readonly level: number;
  readonly value: number;
  readonly threshold: number;
  readonly met: boolean;
}

export interface RunFailure {
  readonly variant: VariantName;
  readonly mode: 'throughput' | 'memory';
  readonly level: number;
  readonly error: string;
}

export interface OverheadResults {
  readonly machine: Machine;
  readonly config: OverheadConfig & { readonly fakeServer: string };
  readonly throughput: readonly ThroughputRow[];
  readonly memory: readonly MemoryRow[];
  readonly targets: readonly TargetCheck[];
  readonly failures: readonly RunFailure[];
}

export function throughputRow(
  variant: VariantName,
  concurrency: number,
  r: { tokens: number; requests: number; wallMs: number; cpuUs: number },
): ThroughputRow {
  return {
    variant,
    label: VARIANT_LABELS[variant],
    concurrency,
    requests: r.requests,
    tokens: r.tokens,
    wallMs: r.wallMs,
    cpuUs: r.cpuUs,
    tokensPerSec: r.tokens / (r.wallMs / 1000),
    cpuUsPerToken: r.cpuUs / r.tokens,
    tokensPerCpuSec: r.tokens / (r.cpuUs / 1e6),
  };
}

/** Adds each row's ratio to the faster bare client of its level. */
export function withRatios(rows: readonly ThroughputRow[]): ThroughputRow[] {
  return rows.map((row) => {
    const bare = rows.filter((r) => r.concurrency === row.concurrency && BARE_VARIANTS.includes(r.variant));
    if (bare.length === 0) return row;
    const fastest = Math.max(...bare.map((r) => r.tokensPerSec));
    return { ...row, ratioToFastestBare: row.tokensPerSec / fastest };
  });
}

export const MEMORY_TARGET_BYTES = 40 * 1024;

/** The three targets of the issue, checked for `TritonLlm` over gRPC at every level measured. */
export function checkTargets(
  throughput: readonly ThroughputRow[],
  memory: readonly MemoryRow[],
): TargetCheck[] {
  const checks: TargetCheck[] = [];
  for (const sdk of throughput.filter((r) => r.variant === 'sdk-grpc')) {
    if (sdk.ratioToFastestBare !== undefined) {
      checks.push({
        target: 'tokens/s >= 90 % of the faster bare client',
        level: sdk.concurrency,
        value: sdk.ratioToFastestBare,
        threshold: 0.9,
        met: sdk.ratioToFastestBare >= 0.9,
      });
    }
    const py = throughput.find(
      (r) => r.variant === 'python-tritonclient' && r.concurrency === sdk.concurrency,
    );
    if (py !== undefined) {
      const ratio = sdk.tokensPerCpuSec / py.tokensPerCpuSec;
      checks.push({
        target: 'tokens per client CPU-second >= 3x Python tritonclient',
        level: sdk.concurrency,
        value: ratio,
        threshold: 3,
        met: ratio >= 3,
      });
    }
  }
  for (const m of memory.filter((r) => r.variant === 'sdk-grpc')) {
    checks.push({
      target: 'client memory (RSS growth) per idle stream <= 40 KB',
      level: m.streams,
      value: m.rssBytesPerStream,
      threshold: MEMORY_TARGET_BYTES,
      met: m.rssBytesPerStream <= MEMORY_TARGET_BYTES,
    });
  }
  return checks;
}
