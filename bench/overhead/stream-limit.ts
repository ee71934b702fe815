/**
 * The stream-limit part of `pnpm bench:overhead` (issue 31 item 3): the default `TritonLlm` over
 * gRPC, and the socket probe beside it, against a fake that allows only so many concurrent streams
 * per HTTP/2 connection, as nginx (128), HAProxy (100) and many gRPC servers do. Past that limit
 * the transport opens more connections to the same endpoint (`maxConnections`) instead of
 * queueing, so CPU per token should stay flat from 64 to 10,000 streams, and memory per idle
 * stream small.
 *
 * With `BENCH_LIMIT_SEMI_SPACE`, each level also runs the same client with a larger young
 * generation (`--max-semi-space-size`). At thousands of streams each request lives for seconds and
 * waits long between tokens, so with V8's default 16 MB semi-spaces its objects can outlive two
 * scavenges and be promoted; bigger semi-spaces let more of them die young. It is a process flag
 * users choose, so the default row is the one the target judges.
 */
import { numbers, type VariantName } from './config.js';
import type { MemoryRow, ThroughputRow } from './results.js';

export interface StreamLimitConfig {
  /** Concurrent streams of the throughput runs. `BENCH_LIMIT_LEVELS`, default `64,512,2048,10000`; `0` skips the part. */
  readonly levels: readonly number[];
  /** Idle streams of the memory run. `BENCH_LIMIT_MEMORY`, default 10000; `0` skips it. */
  readonly memoryStreams: number;
  /** The fake's SETTINGS_MAX_CONCURRENT_STREAMS. `BENCH_LIMIT_STREAMS`, default 100. */
  readonly maxStreams: number;
  /** The transport's `maxConnections`. `BENCH_LIMIT_CONNECTIONS`, default 128 (10,000 streams need 100). */
  readonly maxConnections: number;
  /**
   * MB per semi-space of a second client run beside the default one at each level
   * (`--max-semi-space-size`), or 0 for none. `BENCH_LIMIT_SEMI_SPACE`, default 0. Absent in
   * results written before it existed.
   */
  readonly semiSpaceMb?: number;
}

export interface StreamLimitResults extends StreamLimitConfig {
  readonly throughput: readonly ThroughputRow[];
  readonly memory: readonly MemoryRow[];
}

export function readStreamLimitConfig(): StreamLimitConfig {
  const [memoryStreams = 0] = numbers('BENCH_LIMIT_MEMORY', [10_000]);
  const [maxStreams = 100] = numbers('BENCH_LIMIT_STREAMS', [100]);
  const [maxConnections = 128] = numbers('BENCH_LIMIT_CONNECTIONS', [128]);
  const [semiSpaceMb = 0] = numbers('BENCH_LIMIT_SEMI_SPACE', []);
  return {
    levels: numbers('BENCH_LIMIT_LEVELS', [64, 512, 2048, 10_000]),
    memoryStreams,
    maxStreams,
    maxConnections,
    semiSpaceMb,
  };
}

/**
 * The V8 flag of the larger young generation's process (64 MB per semi-space when the variant is
 * asked for by name without `BENCH_LIMIT_SEMI_SPACE`).
 */
export function semiSpaceFlag(config: Pick<StreamLimitConfig, 'semiSpaceMb'>): string {
  return `--max-semi-space-size=${config.semiSpaceMb || 64}`;
}

/**
 * The runs of each level: the default path, the socket probe on the same limited connections (the
 * floor: it opens a connection per `maxStreams` streams too, and does nothing per token a client
 * must), the probe read through an async iterator (the floor of any `AsyncIterable` client), and
 * the default path with a larger young generation when asked.
 */
export function streamLimitVariants(config: StreamLimitConfig): VariantName[] {
  return [
    'sdk-grpc',
    'socket-probe',
    'socket-probe-iter',
    ...((config.semiSpaceMb ?? 0) > 0 ? (['sdk-grpc-young'] as const) : []),
  ];
}

/** How the stream-limit table names a run. */
export function streamLimitLabel(variant: string, config: Pick<StreamLimitConfig, 'semiSpaceMb'>): string {
  if (variant === 'sdk-grpc-young') return `TritonLlm, \`${semiSpaceFlag(config)}\``;
  if (variant === 'socket-probe') return 'socket probe (the floor)';
  if (variant === 'socket-probe-iter') return 'socket probe through an async iterator';
  return 'TritonLlm, V8 defaults';
}
