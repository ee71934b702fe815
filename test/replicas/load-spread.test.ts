import { TritonLlm } from '@trtllm/sdk';
import { fakeTokenizer, generateTokens } from '@trtllm/testing';
import { describe, expect, it, vi } from 'vitest';
import { PROTOCOLS, rawRequest, useThreeFakes } from './support.js';

const MODEL = 'tensorrt_llm_bls';
const PROMPT = 'What is ML?';

function expectedText(maxTokens: number): string {
  return fakeTokenizer.decode(generateTokens(fakeTokenizer.encode(PROMPT), { maxTokens })[0]!.tokens);
}

describe.each(PROTOCOLS)('load over three replicas (%s)', (protocol) => {
  const replicas = useThreeFakes();

  it('sends one request after another to each replica in turn, with correct results', async () => {
    const t = replicas.transport(protocol, { healthIntervalMs: 0 });
    const llm = new TritonLlm({ transport: t, model: MODEL });
    for (let i = 0; i < 9; i++) {
      expect((await llm.generate({ prompt: PROMPT, maxTokens: 6 })).text).toBe(expectedText(6));
    }
    const served = [0, 1, 2].map((i) => replicas.received(i, MODEL).length);
    expect(served).toEqual([3, 3, 3]);
    const stats = t.endpointStats();
    expect(stats.map((s) => s.name)).toEqual(replicas.urls(protocol));
    expect(stats.map((s) => s.requests)).toEqual(served);
    expect(stats.every((s) => s.inFlight === 0 && s.errors === 0 && s.state === 'healthy')).toBe(true);
    expect(stats.every((s) => s.latencyMs !== undefined && s.latencyMs >= 0)).toBe(true);
  });

  it('puts each new stream on the replica with the fewest streams open', async () => {
    const t = replicas.transport(protocol, { healthIntervalMs: 0 });
    const llm = new TritonLlm({ transport: t, model: MODEL });
    const streams = [];
    for (let i = 0; i < 6; i++) {
      const stream = llm.stream({ prompt: PROMPT, maxTokens: 200 });
      const iterator = stream[Symbol.asyncIterator]();
      // The first chunk proves the stream is placed and still running.
      expect((await iterator.next()).done).toBe(false);
      streams.push({ stream, iterator });
    }
    expect(t.endpointStats().map((s) => s.inFlight)).toEqual([2, 2, 2]);
    for (const [i] of [0, 1, 2].entries()) {
      const ids = new Set(replicas.received(i, MODEL).map((e) => e.id));
      expect(streams.filter((s) => ids.has(s.stream.requestId))).toHaveLength(2);
    }
    await Promise.all(streams.map((s) => s.iterator.return?.()));
    expect(t.endpointStats().map((s) => s.inFlight)).toEqual([0, 0, 0]);
  });

  it('releases a stream read to its final response and left there once the stream ends', async () => {
    const t = replicas.transport(protocol, { healthIntervalMs: 0 });
    const iterator = t.stream(rawRequest('left', [1, 2, 3], 3))[Symbol.asyncIterator]();
    let response = await iterator.next();
    while (response.done !== true && !response.value.final) response = await iterator.next();
    expect(response).toMatchObject({ done: false, value: { final: true } });
    // Nobody pulls again: the stream reads its end (over gRPC, the trailers) itself.
    await vi.waitFor(() => expect(t.endpointStats().map((s) => s.inFlight)).toEqual([0, 0, 0]));
    expect(t.endpointStats().map((s) => s.requests)).toEqual([1, 0, 0]);
    expect(await iterator.next()).toEqual({ done: true, value: undefined });
  });

  it('spreads concurrent requests over all three', async () => {
    const t = replicas.transport(protocol, { healthIntervalMs: 0 });
    const llm = new TritonLlm({ transport: t, model: MODEL });
    const results = await Promise.all(
      Array.from({ length: 30 }, () => llm.generate({ prompt: PROMPT, maxTokens: 6 })),
    );
    expect(results.every((r) => r.text === expectedText(6))).toBe(true);
    const served = [0, 1, 2].map((i) => replicas.received(i, MODEL).length);
    expect(served.reduce((a, b) => a + b, 0)).toBe(30);
    // Least outstanding requests with 30 at once: no replica is left idle or takes most of them.
    expect(Math.min(...served)).toBeGreaterThanOrEqual(5);
    expect(t.endpointStats().map((s) => s.requests)).toEqual(served);
  });
});
