import { afterEach, describe, expect, it, vi } from 'vitest';
import { readConfig, warmupFor } from '../../bench/overhead/config.js';
import { resultsMarkdown } from '../../bench/overhead/markdown.js';
import { type OverheadResults, throughputRow } from '../../bench/overhead/results.js';
import { emptyResults } from './overhead-results.js';

// Each test sets the variables it reads; none leaks into the next.
afterEach(() => {
  vi.unstubAllEnvs();
});

describe('bench:overhead warm-up', () => {
  it('warms Node clients up for 8,000 requests and the peers that do not compile for 100', () => {
    vi.stubEnv('BENCH_NODE_WARMUP', undefined);
    vi.stubEnv('BENCH_WARMUP', undefined);
    const config = readConfig(false);
    expect(warmupFor(config, 'sdk-grpc')).toBe(8000);
    expect(warmupFor(config, 'http-probe')).toBe(8000);
    expect(warmupFor(config, 'python-tritonclient')).toBe(100);
    expect(warmupFor(config, 'perf-analyzer')).toBe(100);
  });

  it('takes both counts from the environment and refuses a bad one, naming it', () => {
    vi.stubEnv('BENCH_NODE_WARMUP', '250');
    vi.stubEnv('BENCH_WARMUP', '7');
    const config = readConfig(false);
    expect(warmupFor(config, 'sdk-http')).toBe(250);
    expect(warmupFor(config, 'perf-analyzer')).toBe(7);
    vi.stubEnv('BENCH_NODE_WARMUP', 'lots');
    expect(() => readConfig(false)).toThrow(/BENCH_NODE_WARMUP.*"lots"/);
  });

  it("reports the median of the warm-up windows' CPU per token, and none when a run lacks one", () => {
    const run = (tokens: number, cpuUs: number) => ({
      tokens: 3200,
      requests: 100,
      wallMs: 100,
      cpuUs: 32_000,
      warmup: { tokens, cpuUs },
    });
    const row = throughputRow('sdk-grpc', 64, [run(100, 3000), run(100, 1000), run(200, 4000)]);
    expect(row.cpuUsPerToken).toBe(10);
    expect(row.warmupCpuUsPerToken).toBe(20);
    const peer = throughputRow('perf-analyzer', 64, [
      { tokens: 3200, requests: 100, wallMs: 100, cpuUs: 32_000 },
    ]);
    expect(peer.warmupCpuUsPerToken).toBeUndefined();
  });

  it('shows the warm-up column and both counts only for runs that measured them', () => {
    const row = throughputRow('sdk-grpc', 64, [
      { tokens: 3200, requests: 100, wallMs: 100, cpuUs: 32_000, warmup: { tokens: 100, cpuUs: 2500 } },
    ]);
    const base: OverheadResults = { ...emptyResults(), throughput: [row] };
    const now = resultsMarkdown(base);
    expect(now).toContain('µs/token in warm-up');
    expect(now).toContain('| 25.00 |');
    expect(now).toContain('8,000 warm-up requests (Node clients; 100 for Python and perf_analyzer');
    const { nodeWarmup: _, ...older } = base.config;
    const { warmupCpuUsPerToken: __, ...olderRow } = row;
    const before = resultsMarkdown({ ...base, config: older, throughput: [olderRow] });
    expect(before).not.toContain('warm-up requests (Node clients');
    expect(before).not.toContain('µs/token in warm-up');
    expect(before).toContain('after 100 warm-up requests');
  });
});
