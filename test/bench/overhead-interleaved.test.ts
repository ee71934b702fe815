import { afterEach, describe, expect, it, vi } from 'vitest';
import { readConfig } from '../../bench/overhead/config.js';
import {
  interleavedVariants,
  interleavedWindow,
  readInterleavedLevels,
} from '../../bench/overhead/interleaved.js';
import { resultsMarkdown, summaryMarkdown } from '../../bench/overhead/markdown.js';
import type { OverheadResults } from '../../bench/overhead/results.js';
import { checkTargets } from '../../bench/overhead/targets.js';
import { emptyResults, runRow } from './overhead-results.js';

// Each test sets the variables it reads; none leaks into the next.
afterEach(() => {
  vi.unstubAllEnvs();
});

describe('bench:overhead with tokens in turn', () => {
  it('runs at 64 and 512 streams unless told otherwise, and only the gRPC paths and their probes', () => {
    vi.stubEnv('BENCH_INTERLEAVED_LEVELS', undefined);
    expect(readInterleavedLevels()).toEqual([64, 512]);
    vi.stubEnv('BENCH_INTERLEAVED_LEVELS', '0');
    expect(readInterleavedLevels()).toEqual([]);
    vi.stubEnv('BENCH_INTERLEAVED_LEVELS', '512,lots');
    expect(() => readInterleavedLevels()).toThrow(/BENCH_INTERLEAVED_LEVELS.*"512,lots"/);
    expect(
      interleavedVariants(['sdk-http', 'sdk-grpc-mux', 'perf-analyzer', 'socket-probe', 'sdk-grpc']),
    ).toEqual(['sdk-grpc', 'sdk-grpc-mux', 'socket-probe']);
  });

  it("measures a longer window than the main runs', from the environment, and keeps the rest", () => {
    vi.stubEnv('BENCH_INTERLEAVED_TOKENS', undefined);
    vi.stubEnv('BENCH_INTERLEAVED_WARMUP', undefined);
    vi.stubEnv('BENCH_TOKENS', '64000');
    vi.stubEnv('BENCH_NODE_WARMUP', '8000');
    vi.stubEnv('BENCH_REPEATS', '2');
    const main = readConfig(false);
    const window = interleavedWindow(main);
    expect([window.tokens, window.nodeWarmup]).toEqual([256_000, 16_000]);
    expect({ ...window, tokens: main.tokens, nodeWarmup: main.nodeWarmup }).toEqual(main);
    vi.stubEnv('BENCH_INTERLEAVED_TOKENS', '32000');
    vi.stubEnv('BENCH_INTERLEAVED_WARMUP', '0');
    expect([interleavedWindow(main).tokens, interleavedWindow(main).nodeWarmup]).toEqual([32_000, 0]);
    vi.stubEnv('BENCH_INTERLEAVED_TOKENS', 'many');
    expect(() => interleavedWindow(main)).toThrow(/BENCH_INTERLEAVED_TOKENS.*"many"/);
  });

  it('judges multiplexing on both fakes, each against the default path of the same run', () => {
    const main = [runRow('sdk-grpc', 512, 4), runRow('sdk-grpc-mux', 512, 5.2)];
    const interleaved = {
      levels: [512],
      tokensPerTurn: 1,
      throughput: [
        runRow('sdk-grpc', 512, 5),
        runRow('sdk-grpc-mux', 512, 5.5),
        runRow('socket-probe', 512, 4),
        runRow('socket-probe-mux', 512, 3.6),
      ],
    };
    const targets = checkTargets(main, [], undefined, interleaved);
    expect(
      targets.filter((t) => t.target.startsWith('multiplex')).map((t) => [t.target, t.level, t.value, t.met]),
    ).toEqual([
      ["multiplex: CPU per token <= 1.2x the default path's", 512, 1.3, false],
      ["multiplex (tokens in turn): CPU per token <= 1.2x the default path's", 512, 1.1, true],
    ]);

    const results: OverheadResults = { ...emptyResults(), throughput: main, interleaved, targets };
    const doc = resultsMarkdown(results);
    expect(doc).toContain('### Tokens in turn, as in-flight batching sends them');
    expect(doc).toContain('| client | µs/token at 512 | tokens/s at 512 | vs a call per request at 512 |');
    expect(doc).toContain('| TritonLlm over gRPC (multiplex) | 5.50 | 1,000 | 1.10x |');
    expect(doc).toContain('| probe: the same, requests on 32 shared calls | 3.60 | 1,000 | 0.90x |');
    expect(summaryMarkdown(results)).toContain(
      'With one token of each request in turn, as in-flight batching sends them: the default path 5.00 µs at 512 streams, `multiplex: true` 5.50 µs at 512.',
    );
    // Results written before this part have no such section, and those before its window no mention of one.
    expect(doc).not.toContain('unmeasured requests');
    const windowed = { ...results, interleaved: { ...interleaved, tokens: 256_000, nodeWarmup: 16_000 } };
    expect(resultsMarkdown(windowed)).toContain(
      'Each run here measures 256,000 tokens after 16,000 unmeasured requests',
    );
    const { interleaved: _, ...older } = results;
    expect(resultsMarkdown(older)).not.toContain('Tokens in turn');
  });
});
