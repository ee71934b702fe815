import { afterEach, describe, expect, it, vi } from 'vitest';
import { readConfig } from '../../bench/overhead/config.js';
import { resultsMarkdown, summaryMarkdown } from '../../bench/overhead/markdown.js';
import type { OverheadResults } from '../../bench/overhead/results.js';
import { readStreamLimitConfig, streamLimitVariants } from '../../bench/overhead/stream-limit.js';
import { checkTargets } from '../../bench/overhead/targets.js';
import { emptyResults, runRow } from './overhead-results.js';

// Each test sets the variables it reads; none leaks into the next.
afterEach(() => {
  vi.unstubAllEnvs();
});

describe('bench:overhead past a stream limit, with a larger young generation', () => {
  it('runs the larger young generation beside the default path only when asked', () => {
    vi.stubEnv('BENCH_LIMIT_SEMI_SPACE', undefined);
    vi.stubEnv('BENCH_VARIANTS', undefined);
    expect(readStreamLimitConfig().semiSpaceMb).toBe(0);
    expect(streamLimitVariants(readStreamLimitConfig())).toEqual([
      'sdk-grpc',
      'socket-probe',
      'socket-probe-iter',
    ]);
    // Never one of the main levels' default variants.
    expect(readConfig(false).variants).not.toContain('sdk-grpc-young');
    vi.stubEnv('BENCH_LIMIT_SEMI_SPACE', '64');
    const config = readStreamLimitConfig();
    expect(config.semiSpaceMb).toBe(64);
    expect(streamLimitVariants(config)).toEqual([
      'sdk-grpc',
      'socket-probe',
      'socket-probe-iter',
      'sdk-grpc-young',
    ]);
    vi.stubEnv('BENCH_LIMIT_SEMI_SPACE', '0');
    expect(streamLimitVariants(readStreamLimitConfig())).toEqual([
      'sdk-grpc',
      'socket-probe',
      'socket-probe-iter',
    ]);
    vi.stubEnv('BENCH_LIMIT_SEMI_SPACE', 'big');
    expect(() => readStreamLimitConfig()).toThrow(/BENCH_LIMIT_SEMI_SPACE.*"big"/);
  });

  it('skips an optional part given 0, while the main levels refuse 0, both naming the variable', () => {
    vi.stubEnv('BENCH_LIMIT_LEVELS', '0');
    expect(readStreamLimitConfig().levels).toEqual([]);
    vi.stubEnv('BENCH_LIMIT_LEVELS', '64,0');
    expect(() => readStreamLimitConfig()).toThrow(
      /BENCH_LIMIT_LEVELS must be 0 or a comma-separated.*"64,0"/,
    );
    vi.stubEnv('BENCH_MEMORY_LEVELS', '0');
    expect(() => readConfig(false)).toThrow(/BENCH_MEMORY_LEVELS must be a comma-separated.*"0"/);
  });

  it('judges each client run against its own lowest level, the default one by the target', () => {
    const streamLimit = {
      levels: [64, 10_000],
      memoryStreams: 0,
      maxStreams: 100,
      maxConnections: 128,
      semiSpaceMb: 64,
      throughput: [
        runRow('sdk-grpc', 64, 10),
        runRow('sdk-grpc-young', 64, 8),
        runRow('sdk-grpc', 10_000, 18),
        runRow('sdk-grpc-young', 10_000, 9),
        runRow('socket-probe', 64, 4),
        runRow('socket-probe', 10_000, 6),
        runRow('socket-probe-iter', 64, 5),
        runRow('socket-probe-iter', 10_000, 7),
      ],
      memory: [],
    };
    // The probe is the floor shown beside the client, not a client judged by the target.
    const checks = checkTargets([], [], streamLimit).filter((c) => c.target.startsWith('past 100'));
    expect(checks.map((c) => [c.target, c.level, c.value, c.met])).toEqual([
      ['past 100 streams per connection: CPU per token <= 1.2x that at 64', 10_000, 1.8, false],
      [
        'past 100 streams per connection with --max-semi-space-size=64: CPU per token <= 1.2x that at 64',
        10_000,
        1.125,
        true,
      ],
    ]);

    const results: OverheadResults = {
      ...emptyResults(),
      streamLimit,
      targets: checkTargets([], [], streamLimit),
    };
    const doc = resultsMarkdown(results);
    expect(doc).toContain('| client | µs/token at 64 | µs/token at 10,000 | at 10,000 / at 64 |');
    expect(doc).toContain('| TritonLlm, V8 defaults | 10.00 | 18.00 | 1.80x |');
    expect(doc).toContain('| TritonLlm, `--max-semi-space-size=64` | 8.00 | 9.00 | 1.13x |');
    expect(doc).toContain('| socket probe (the floor) | 4.00 | 6.00 | 1.50x |');
    expect(doc).toContain('| socket probe through an async iterator | 5.00 | 7.00 | 1.40x |');
    expect(doc).toContain('and the socket probe opening a connection per 100 streams as well:');
    expect(summaryMarkdown(results)).toContain(
      '10.00 µs at 64, 18.00 µs at 10,000 streams; with `--max-semi-space-size=64` (see docs/PERFORMANCE.md): 8.00 µs at 64, 9.00 µs at 10,000; the socket probe on as many connections: 4.00 µs at 64, 6.00 µs at 10,000.',
    );

    // Results written before the young-generation run keep their one-client table.
    const { semiSpaceMb: _, ...older } = streamLimit;
    const before = resultsMarkdown({
      ...results,
      streamLimit: { ...older, throughput: streamLimit.throughput.filter((t) => t.variant === 'sdk-grpc') },
    });
    expect(before).not.toContain('V8 defaults');
    expect(before).not.toContain('socket probe');
    expect(before).toContain('| TritonLlm over gRPC | 10.00 | 18.00 | 1.80x |');
  });
});
