import { runBenchmark } from '@trtllm/bench';
import { encode, type FakeTriton, startFakeTriton } from '@trtllm/testing';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { describeEachServer, ITL_MS } from './servers.js';

// trtllm-bench on Triton's vLLM backend: the fake's `vllm` model and the real Triton's stand-in. It
// takes a URL, not a transport, so the fake is started here rather than through useServer.
describeEachServer('trtllm-bench on vLLM: %s Triton over %s', (kind, protocol) => {
  let fake: FakeTriton | undefined;
  let url = '';
  beforeAll(async () => {
    if (kind === 'fake') {
      fake = await startFakeTriton({ itlMs: ITL_MS });
      url = protocol === 'grpc' ? fake.grpcUrl : fake.httpUrl;
    } else {
      const real = inject('realTriton');
      if ('unavailable' in real) throw new Error(real.unavailable);
      url = protocol === 'grpc' ? real.grpcUrl : real.httpUrl;
    }
  });
  afterAll(() => fake?.close());

  it('measures a streamed level: every request completes, tokens counted by the server', async () => {
    const report = await runBenchmark({
      url,
      protocol,
      model: 'vllm',
      prompts: [
        { input: 'What is ML?', line: 1 },
        { input: 'Hello world.', line: 2 },
      ],
      concurrency: [2],
      numRequests: 6,
      streaming: true,
      maxTokens: 8,
    });
    const level = report.levels[0]!;
    expect([level.requests, level.completed, level.errors]).toEqual([6, 6, 0]);
    // No tokenizer: the counts are vLLM's num_input_tokens / num_output_tokens.
    expect(report.tokenSource).toBe('server');
    expect(level.outputTokens).toBe(6 * 8);
    // Round-robin over the two prompts: each sent three times.
    expect(level.inputTokens).toBe(3 * (encode('What is ML?').length + encode('Hello world.').length));
    expect(level.ttftMs?.count).toBe(6);
  });
});
