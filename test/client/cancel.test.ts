import { grpcTransport } from '@trtllm/grpc';
import { type EarlyStopReport, TritonLlm } from '@trtllm/sdk';
import { describe, expect, it } from 'vitest';
import { PROTOCOLS, useFakeTriton } from '../support/fake.js';

describe.each(PROTOCOLS)('cancel and stop over %s', (protocol) => {
  const fake = useFakeTriton({ itlMs: 5 });

  it('an AbortSignal ends the stream with cancelled and the raw model stops on the server', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'tensorrt_llm' });
    const controller = new AbortController();
    const stream = llm.stream({ inputIds: [259, 260], maxTokens: 5000 }, { signal: controller.signal });
    let tokens = 0;
    let final: unknown;
    for await (const chunk of stream) {
      if (chunk.done) final = chunk;
      else {
        tokens += chunk.tokenIds.length;
        if (tokens >= 5) controller.abort();
      }
    }
    expect(final).toMatchObject({ done: true, finishReason: 'cancelled' });
    const report = (final as { result: { earlyStop?: { serverStopsGenerating: boolean; via: string[] } } })
      .result.earlyStop;
    expect(report?.serverStopsGenerating).toBe(true);
    expect(report?.via).toEqual(protocol === 'grpc' ? ['grpc_cancel'] : ['in_band_stop', 'http_disconnect']);
    const seen = await fake
      .triton()
      .waitForEvent(
        (e) =>
          e.id === stream.requestId &&
          e.model === 'tensorrt_llm' &&
          (e.event === 'cancelled' || e.event === 'stopped'),
        5000,
      );
    expect(seen.tokens).toBeLessThan(5000);
  });

  it('breaking out of for-await cancels the request on the server', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'tensorrt_llm' });
    const stream = llm.stream({ inputIds: [261], maxTokens: 5000 });
    for await (const chunk of stream) {
      if (!chunk.done && chunk.totalTokens >= 3) break;
    }
    const seen = await fake
      .triton()
      .waitForEvent(
        (e) => e.id === stream.requestId && (e.event === 'cancelled' || e.event === 'stopped'),
        5000,
      );
    expect(seen.tokens).toBeLessThan(5000);
  });

  it('stop() ends the raw model gracefully with finish reason stopped', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'tensorrt_llm' });
    const stream = llm.stream({ inputIds: [262], maxTokens: 5000 });
    let tokens = 0;
    let finishReason: string | undefined;
    let via: readonly string[] | undefined;
    for await (const chunk of stream) {
      if (chunk.done) {
        finishReason = chunk.finishReason;
        via = chunk.result.earlyStop?.via;
      } else {
        tokens += chunk.tokenIds.length;
        if (tokens === 4) void stream.stop();
      }
    }
    expect(finishReason).toBe('stopped');
    expect(via).toEqual(['in_band_stop']);
    const seen = await fake
      .triton()
      .waitForEvent((e) => e.id === stream.requestId && e.event === 'stopped', 5000);
    expect(seen.tokens).toBeGreaterThanOrEqual(4);
    expect(seen.tokens).toBeLessThan(5000);
  });

  it('cancelling an ensemble says the server keeps generating, and it does', async () => {
    const warnings: string[] = [];
    const llm = new TritonLlm({
      transport: fake.transport(protocol),
      model: 'ensemble',
      logger: { warn: (m) => warnings.push(m) },
    });
    const controller = new AbortController();
    const stream = llm.stream({ prompt: 'Hello world', maxTokens: 120 }, { signal: controller.signal });
    let final: { result: { earlyStop?: { serverStopsGenerating: boolean } } } | undefined;
    for await (const chunk of stream) {
      if (chunk.done) final = chunk;
      else if (chunk.totalTokens >= 3) controller.abort();
    }
    expect(final?.result.earlyStop?.serverStopsGenerating).toBe(false);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/tensorrt_llm/);
    const inner = await fake
      .triton()
      .waitForEvent(
        (e) => e.id === stream.requestId && e.model === 'tensorrt_llm' && e.event === 'completed',
        10_000,
      );
    expect(inner.tokens).toBe(120);
  });
});

describe('cancel over a multiplexed gRPC transport', () => {
  const fake = useFakeTriton({ itlMs: 5 });

  it('an abort on the raw model is sent as an in-band stop, since the shared call cannot be cancelled', async () => {
    const transport = grpcTransport({ baseUrl: fake.triton().grpcUrl, multiplex: true });
    try {
      const llm = new TritonLlm({ transport, model: 'tensorrt_llm' });
      const controller = new AbortController();
      const stream = llm.stream({ inputIds: [263], maxTokens: 5000 }, { signal: controller.signal });
      let report: EarlyStopReport | undefined;
      for await (const chunk of stream) {
        if (chunk.done) report = chunk.result.earlyStop;
        else if (chunk.totalTokens >= 3) controller.abort();
      }
      expect(report?.via).toEqual(['in_band_stop', 'none']);
      expect(report?.serverStopsGenerating).toBe(true);
      const seen = await fake
        .triton()
        .waitForEvent((e) => e.id === stream.requestId && e.event === 'stopped', 5000);
      expect(seen.tokens).toBeLessThan(5000);
    } finally {
      await transport.close();
    }
  });

  it('an abort on the ensemble tells the server nothing, and says so', async () => {
    const transport = grpcTransport({ baseUrl: fake.triton().grpcUrl, multiplex: true });
    try {
      const llm = new TritonLlm({ transport, model: 'ensemble', logger: { warn: () => undefined } });
      const controller = new AbortController();
      let report: EarlyStopReport | undefined;
      for await (const chunk of llm.stream(
        { prompt: 'Hello world', maxTokens: 200 },
        { signal: controller.signal },
      )) {
        if (chunk.done) report = chunk.result.earlyStop;
        else if (chunk.totalTokens >= 3) controller.abort();
      }
      expect(report).toMatchObject({ via: ['none'], serverTold: false, serverStopsGenerating: false });
    } finally {
      await transport.close();
    }
  });
});
