import { startFakeTriton } from '@trtllm/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  type ColdStartRow,
  coldStartRow,
  coldVariants,
  readColdStartConfig,
  runColdStart,
  withPythonRatios,
} from '../../bench/overhead/cold-start.js';
import { readConfig } from '../../bench/overhead/config.js';
import { resultsMarkdown } from '../../bench/overhead/markdown.js';
import { closedPort } from '../reliability/support/processes.js';
import { emptyResults } from './overhead-results.js';

// Each test sets the variables it reads; none leaks into the next.
afterEach(() => {
  vi.unstubAllEnvs();
});

describe('bench:overhead cold start (process start to first token)', () => {
  it('runs 10 fresh processes per client by default, skips the part given 0, and can run alone', () => {
    vi.stubEnv('BENCH_COLD_RUNS', undefined);
    vi.stubEnv('BENCH_COLD_ONLY', undefined);
    expect(readColdStartConfig()).toMatchObject({ runs: 10, only: false });
    vi.stubEnv('BENCH_COLD_RUNS', '0');
    expect(readColdStartConfig().runs).toBe(0);
    vi.stubEnv('BENCH_COLD_RUNS', 'ten');
    expect(() => readColdStartConfig()).toThrow(/BENCH_COLD_RUNS.*"ten"/);
    vi.stubEnv('BENCH_COLD_RUNS', '3');
    vi.stubEnv('BENCH_COLD_ONLY', '1');
    expect(readColdStartConfig()).toMatchObject({ runs: 3, only: true });
    vi.stubEnv('BENCH_COLD_RUNS', '0');
    expect(() => readColdStartConfig()).toThrow(/BENCH_COLD_ONLY=1.*BENCH_COLD_RUNS=0/);
  });

  it("takes its clients from the run's variants: Python left out by BENCH_SKIP_PYTHON, the baseline only with one", () => {
    vi.stubEnv('BENCH_VARIANTS', undefined);
    vi.stubEnv('BENCH_BASELINE', undefined);
    vi.stubEnv('BENCH_SKIP_PYTHON', undefined);
    expect(coldVariants(readConfig(false).variants)).toEqual([
      'sdk-grpc',
      'sdk-http',
      'grpc-js-bare',
      'python-tritonclient',
    ]);
    vi.stubEnv('BENCH_SKIP_PYTHON', '1');
    vi.stubEnv('BENCH_BASELINE', '/elsewhere');
    expect(coldVariants(readConfig(false).variants)).toEqual([
      'sdk-grpc',
      'sdk-grpc-baseline',
      'sdk-http',
      'grpc-js-bare',
    ]);
    vi.stubEnv('BENCH_VARIANTS', 'sdk-grpc-mux,sdk-http');
    expect(coldVariants(readConfig(false).variants)).toEqual(['sdk-http']);
  });

  it('times fresh processes of the SDK over gRPC and HTTP and of bare grpc-js to their first token', async () => {
    const fake = await startFakeTriton();
    try {
      const failures: string[] = [];
      const results = await runColdStart(
        ['sdk-grpc', 'sdk-http', 'grpc-js-bare'],
        { runs: 2, maxTokens: 4 },
        { grpcUrl: fake.grpcUrl, httpUrl: fake.httpUrl },
        (variant, error) => failures.push(`${variant}: ${error}`),
      );
      expect(failures).toEqual([]);
      expect(results.rows.map((r) => r.variant)).toEqual(['sdk-grpc', 'sdk-http', 'grpc-js-bare']);
      for (const row of results.rows) {
        expect(row.runs).toBe(2);
        expect(row.firstTokenMsRuns).toHaveLength(2);
        // A Node process takes some milliseconds to start; the child is killed after 60 s.
        for (const ms of row.firstTokenMsRuns) expect(ms).toBeGreaterThan(5);
        for (const ms of row.firstTokenMsRuns) expect(ms).toBeLessThan(60_000);
        expect(row.firstTokenMs).toBe((row.firstTokenMsRuns[0]! + row.firstTokenMsRuns[1]!) / 2);
        expect(row.cpuMs).toBeGreaterThan(0);
        expect(row.ratioToPython).toBeUndefined();
      }
      // Each run sent its one request to the fake: two per client, over the transport it names.
      const received = fake.events().filter((e) => e.event === 'received' && e.model === 'ensemble');
      expect(received.filter((e) => e.protocol === 'grpc')).toHaveLength(4);
      expect(received.filter((e) => e.protocol === 'http')).toHaveLength(2);
    } finally {
      await fake.close();
    }
  }, 120_000);

  it('reports a client whose process fails as a failure, with no row', async () => {
    const port = await closedPort();
    const failures: { variant: string; error: string }[] = [];
    const results = await runColdStart(
      ['grpc-js-bare'],
      { runs: 1, maxTokens: 4 },
      { grpcUrl: `http://127.0.0.1:${port}`, httpUrl: `http://127.0.0.1:${port}` },
      (variant, error) => failures.push({ variant, error }),
    );
    expect(results.rows).toEqual([]);
    expect(failures.map((f) => f.variant)).toEqual(['grpc-js-bare']);
    expect(failures[0]?.error).toMatch(/exited with 1/);
  }, 60_000);

  it("sets each row against Python's time when Python ran, and shows the table only when the part ran", () => {
    const rows: ColdStartRow[] = withPythonRatios([
      coldStartRow('sdk-grpc', [
        { firstTokenMs: 100, cpuMs: 80 },
        { firstTokenMs: 120, cpuMs: 90 },
        { firstTokenMs: 110, cpuMs: 85 },
      ]),
      coldStartRow('python-tritonclient', [{ firstTokenMs: 220, cpuMs: 150 }]),
    ]);
    expect(rows[0]).toMatchObject({ firstTokenMs: 110, cpuMs: 85, ratioToPython: 0.5 });
    expect(rows[1]?.ratioToPython).toBeUndefined();
    const text = resultsMarkdown({ ...emptyResults(), coldStart: { runs: 3, maxTokens: 8, rows } });
    expect(text).toContain('### Cold start: process start to first token');
    expect(text).toContain('| TritonLlm over gRPC | 110 | 100, 120, 110 | 85 | 0.50x |');
    expect(text).toContain('run 3 times per client');
    expect(resultsMarkdown(emptyResults())).not.toContain('Cold start');
  });
});
