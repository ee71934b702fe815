import { parsePrompts, runBenchmark } from '@trtllm/bench';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeProcess, startFakeProcess } from './fake-process.js';

// The server waits TTFT_MS before the first token and ITL_MS between tokens; what the bench reports
// must be those values, seen from the client: medians within 2 % (or 0.2 ms, whichever is larger).
// Large enough that the path's own latency stays inside 2 %: on the 2-core VM a stream's first
// response spends 15-25 ms between the fake's token and the client (the fake's first response, then
// the client's), where later tokens spend 2-3 ms give or take 2; at 500 ms and 25 ms that alone was past 2 %.
const TTFT_MS = 2000;
const ITL_MS = 100;
const tolerance = (injected: number) => Math.max(0.02 * injected, 0.2);

const prompts = parsePrompts(
  ['What is ML?', 'Hello world', 'Models learn patterns from data']
    .map((input) => JSON.stringify({ input }))
    .join('\n'),
);

describe.each(['grpc', 'http'] as const)('measurements over %s', (protocol) => {
  let triton: FakeProcess;
  beforeAll(async () => {
    triton = await startFakeProcess({ ttftMs: TTFT_MS, itlMs: ITL_MS });
  });
  afterAll(async () => {
    await triton.stop();
  });

  it('reports the injected time to first token and inter-token latency as its medians', async () => {
    const report = await runBenchmark({
      url: protocol === 'grpc' ? triton.grpcUrl : triton.httpUrl,
      protocol,
      model: 'ensemble',
      prompts,
      concurrency: [4],
      numRequests: 12,
      warmup: 4,
      streaming: true,
      maxTokens: 20,
    });
    const level = report.levels[0]!;
    expect(level.errors).toBe(0);
    expect(level.completed).toBe(12);
    expect(level.outputTokens).toBe(12 * 20);
    expect.soft(Math.abs(level.ttftMs!.p50 - TTFT_MS)).toBeLessThanOrEqual(tolerance(TTFT_MS));
    expect.soft(Math.abs(level.itlMs!.p50 - ITL_MS)).toBeLessThanOrEqual(tolerance(ITL_MS));
    // End to end is the first token plus 19 gaps.
    const e2e = TTFT_MS + 19 * ITL_MS;
    expect.soft(Math.abs(level.e2eMs!.p50 - e2e)).toBeLessThanOrEqual(tolerance(e2e));
  }, 60_000);
});
