import type { ServerName, ToolName } from './config.js';

/** Median and 99th percentile of a latency, in milliseconds. */
export interface Percentiles {
  readonly p50: number;
  readonly p99: number;
}

/** What one tool reported at one concurrency level on one server, in common units. */
export interface LevelFigures {
  readonly tool: ToolName;
  readonly server: ServerName;
  readonly concurrency: number;
  /** Requests measured (warm-up excluded) and completed. */
  readonly requests: number;
  readonly ttftMs?: Percentiles;
  readonly itlMs?: Percentiles;
  readonly e2eMs: Percentiles;
  /** Completed requests per second. */
  readonly requestThroughput: number;
  /** Output tokens per second, counted the tool's way. */
  readonly outputTokenThroughput: number;
  /** Mean output tokens per request, counted the tool's way. */
  readonly outputTokensPerRequest: number;
  /**
   * Figures the tool does not report itself, computed here from its own raw per-request timestamps
   * (perf_analyzer's profile export), with the definitions written in docs/PERFORMANCE.md.
   */
  readonly derived?: readonly string[];
  /** How the tool counted output tokens. */
  readonly tokenCounting: string;
  /**
   * Real Triton only: the generator model's own time from receiving a request to completing it,
   * over the requests of this tool's run (warm-up included), from the model's event log.
   */
  readonly serverMs?: Percentiles;
  /** Seconds from the first measured request sent to the last response, by the tool's own timestamps. */
  readonly spanS?: number;
}

/** The metrics compared between tools, with how each reads from {@link LevelFigures}. */
export const METRICS = [
  ['TTFT p50', (f: LevelFigures) => f.ttftMs?.p50],
  ['TTFT p99', (f: LevelFigures) => f.ttftMs?.p99],
  ['ITL p50', (f: LevelFigures) => f.itlMs?.p50],
  ['ITL p99', (f: LevelFigures) => f.itlMs?.p99],
  ['E2E p50', (f: LevelFigures) => f.e2eMs.p50],
  ['E2E p99', (f: LevelFigures) => f.e2eMs.p99],
  ['requests/s', (f: LevelFigures) => f.requestThroughput],
  ['output tokens/s', (f: LevelFigures) => f.outputTokenThroughput],
] as const;

export type MetricName = (typeof METRICS)[number][0];

/** NumPy's default percentile (linear between ranks), as genai-perf and trtllm-bench compute it. */
export function linearPercentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  return sorted[low]! + (sorted[high]! - sorted[low]!) * (rank - low);
}

export function percentiles(values: readonly number[]): Percentiles {
  return { p50: linearPercentile(values, 50), p99: linearPercentile(values, 99) };
}
