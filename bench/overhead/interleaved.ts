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
import { numbers, type VariantName } from './config.js';
import type { ThroughputRow } from './results.js';

/** Tokens a generation sends back to back in this part: one, as in-flight batching does. */
export const INTERLEAVED_TOKENS_PER_TURN = 1;

export interface InterleavedResults {
  /** Concurrent streams of the runs. `BENCH_INTERLEAVED_LEVELS`, default `64,512`; `0` skips the part. */
  readonly levels: readonly number[];
  /** The fake's `tokensPerTurn`. */
  readonly tokensPerTurn: number;
  readonly throughput: readonly ThroughputRow[];
}

export function readInterleavedLevels(): number[] {
  return numbers('BENCH_INTERLEAVED_LEVELS', [64, 512]);
}

/** The runs of each level: both gRPC paths, and the probes (their floors) when the run has them. */
export function interleavedVariants(runVariants: readonly VariantName[]): VariantName[] {
  const wanted: readonly VariantName[] = ['sdk-grpc', 'sdk-grpc-mux', 'socket-probe', 'socket-probe-mux'];
  return wanted.filter((v) => runVariants.includes(v));
}
