import { afterEach, describe, expect, it, vi } from 'vitest';
import { interleavedVariants, readInterleavedLevels } from '../../bench/overhead/interleaved.js';
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
    expect(doc).toContain('| TritonLlm over gRPC (multiplex) | 512 | 1,000 | 5.50 | 1.10x |');
    expect(doc).toContain('| probe: the same, requests on 32 shared calls | 512 | 1,000 | 3.60 | 0.90x |');
    expect(summaryMarkdown(results)).toContain(
      'With one token of each request in turn, as in-flight batching sends them: the default path 5.00 µs at 512 streams, `multiplex: true` 5.50 µs at 512.',
    );
    // Results written before this part have no such section.
    const { interleaved: _, ...older } = results;
    expect(resultsMarkdown(older)).not.toContain('Tokens in turn');
  });
});
