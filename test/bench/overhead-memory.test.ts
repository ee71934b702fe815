import { afterEach, describe, expect, it, vi } from 'vitest';
import { readConfig } from '../../bench/overhead/config.js';
import { resultsMarkdown, summaryMarkdown } from '../../bench/overhead/markdown.js';
import { memoryRow, type OverheadResults } from '../../bench/overhead/results.js';
import { checkTargets } from '../../bench/overhead/targets.js';
import { emptyResults } from './overhead-results.js';

// Each test sets the variables it reads; none leaks into the next.
afterEach(() => {
  vi.unstubAllEnvs();
});

const KB = 1024;

describe('bench:overhead memory runs, repeated', () => {
  it('repeats each memory cell three times unless told otherwise, and refuses a bad count by name', () => {
    vi.stubEnv('BENCH_MEMORY_REPEATS', undefined);
    expect(readConfig(false).memoryRepeats).toBe(3);
    vi.stubEnv('BENCH_MEMORY_REPEATS', '1');
    expect(readConfig(false).memoryRepeats).toBe(1);
    vi.stubEnv('BENCH_MEMORY_REPEATS', '0');
    expect(() => readConfig(false)).toThrow(/BENCH_MEMORY_REPEATS.*"0"/);
  });

  it('takes the medians of RSS and heap, keeps every run, and judges the target by the median', () => {
    // 1,000 streams; RSS 13, 5 and 9 KB per stream: one run alone could miss or meet 12 KB.
    const runs = [
      { rssBytes: 13 * KB * 1000, heapBytes: 6 * KB * 1000 },
      { rssBytes: 5 * KB * 1000, heapBytes: 7 * KB * 1000 },
      { rssBytes: 9 * KB * 1000, heapBytes: 5 * KB * 1000 },
    ];
    const http = memoryRow('sdk-http', 1000, runs);
    expect(http.rssBytesPerStream).toBe(9 * KB);
    expect(http.heapBytesPerStream).toBe(6 * KB);
    expect(http.rssBytesPerStreamRuns).toEqual([13 * KB, 5 * KB, 9 * KB]);

    // Python has no V8 heap: no heap figure, whatever its runs.
    const python = memoryRow('python-tritonclient', 1000, [
      { rssBytes: 1000 * KB, heapBytes: null },
      { rssBytes: 3000 * KB, heapBytes: null },
    ]);
    expect(python.heapBytesPerStream).toBeNull();
    expect(python.rssBytesPerStream).toBe(2 * KB);

    const checks = checkTargets([], [http], undefined);
    expect(checks.map((c) => [c.target, c.level, c.value, c.met])).toEqual([
      ['HTTP SSE: RSS growth per idle stream <= 12 KB', 1000, 9 * KB, true],
    ]);

    const results: OverheadResults = { ...emptyResults(), memory: [http, python], targets: checks };
    const doc = resultsMarkdown(results);
    expect(doc).toContain('RSS (young generation left out) and JS heap + external (medians)');
    expect(doc).toContain('| client | RSS at 1,000, median (runs) | heap at 1,000 |');
    expect(doc).toContain('| TritonLlm over HTTP SSE | 9.0 (13.0, 5.0, 9.0) | 6.0 |');
    expect(doc).toContain('| Python tritonclient (gRPC stream) | 2.0 (1.0, 3.0) | n/a |');
  });

  it('says when a single run left the young generation out, and renders older results as before', () => {
    const one = memoryRow('sdk-grpc', 1000, [{ rssBytes: 4500 * 1000, heapBytes: 4400 * 1000 }]);
    expect(one.rssBytesPerStreamRuns).toBeUndefined();
    const single = resultsMarkdown({ ...emptyResults(), memory: [one] });
    expect(single).toContain('RSS (young generation left out) and JS heap + external, at each');
    expect(single).toContain('| client | RSS at 1,000 | heap at 1,000 |');

    // Results written before memory runs were repeated have no memoryRepeats, and measured the whole RSS.
    const { memoryRepeats: _, ...olderConfig } = emptyResults().config;
    const results: OverheadResults = { ...emptyResults(), config: olderConfig, memory: [one] };
    const doc = resultsMarkdown(results);
    expect(doc).toContain('in KB: RSS and JS heap + external, at each');
    expect(doc).toContain('| TritonLlm over gRPC | 4.4 | 4.3 |');
    expect(summaryMarkdown(results)).toContain('RSS per idle gRPC stream: 4.4 KB at 1,000.');
  });
});
