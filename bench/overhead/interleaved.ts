/**
 * The interleaved part of `pnpm bench:overhead` (issue 31 item 2, judged as a GPU server sends
 * tokens). At full speed the fake sends up to 64 tokens of one generation back to back, so a
 * 32-token answer leaves the server whole: on the default path (a call per request) the client
 * then reads a request's tokens one after another while its state is warm, which a multiplexed
 * call, whose server-side writes wait for each other, does not get. A GPU's in-flight batching
 * gives neither path that: each iteration yields one token of every request in the batch. This
 * part runs the two gRPC paths (and the socket probes, when the run has them) against a fake that
 * sends one token of each generation in turn (`tokensPerTurn: 1`), side by side.
 */
import { numbers, type OverheadConfig, type VariantName, whole } from './config.js';
import type { ThroughputRow } from './results.js';

/** Tokens a generation sends back to back in this part: one, as in-flight batching does. */
export const INTERLEAVED_TOKENS_PER_TURN = 1;

export interface InterleavedResults {
  /** Concurrent streams of the runs. `BENCH_INTERLEAVED_LEVELS`, default `64,512`; `0` skips the part. */
  readonly levels: readonly number[];
  /** The fake's `tokensPerTurn`. */
  readonly tokensPerTurn: number;
  /**
   * Tokens each run aims at and the Node clients' warm-up requests in this part (see
   * {@link interleavedWindow}); absent in results written before this part had a window of its own.
   */
  readonly tokens?: number;
  readonly nodeWarmup?: number;
  readonly throughput: readonly ThroughputRow[];
}

export function readInterleavedLevels(): number[] {
  return numbers('BENCH_INTERLEAVED_LEVELS', [64, 512]);
}

/**
 * The main runs' settings with this part's longer window: `BENCH_INTERLEAVED_TOKENS` (default
 * 256,000) tokens measured after `BENCH_INTERLEAVED_WARMUP` (default 16,000) unmeasured requests
 * from each Node client. The comparison here is between two paths of one client, and with the main
 * runs' window (64,000 tokens after 8,000 requests) the multiplexed one at 64 streams was still
 * being compiled: by hand its CPU per token settled only after about 12,000 requests.
 */
export function interleavedWindow(config: OverheadConfig): OverheadConfig {
  return {
    ...config,
    tokens: whole('BENCH_INTERLEAVED_TOKENS', 256_000),
    nodeWarmup: whole('BENCH_INTERLEAVED_WARMUP', 16_000, 0),
  };
}

/** The runs of each level: both gRPC paths, and the probes (their floors) when the run has them. */
export function interleavedVariants(runVariants: readonly VariantName[]): VariantName[] {
  const wanted: readonly VariantName[] = ['sdk-grpc', 'sdk-grpc-mux', 'socket-probe', 'socket-probe-mux'];
  return wanted.filter((v) => runVariants.includes(v));
}
