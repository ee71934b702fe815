import { TritonLlm } from '@trtllm/sdk';
import { describe, expect, it } from 'vitest';
import { PROTOCOLS, statsOf, useThreeFakes } from './support.js';

const MODEL = 'tensorrt_llm_bls';
const SLOW_TTFT_MS = 100;

describe.each(PROTOCOLS)('one slow replica among three (%s)', (protocol) => {
  const replicas = useThreeFakes([{}, { ttftMs: SLOW_TTFT_MS, itlMs: 10 }, {}]);

  it('gets fewer requests than either fast one, and its statistics show why', async () => {
    const t = replicas.transport(protocol, { healthIntervalMs: 0 });
    const llm = new TritonLlm({ transport: t, model: MODEL });
    // Six callers, eight requests each: every pick sees the slow replica's requests still in flight.
    await Promise.all(
      Array.from({ length: 6 }, async () => {
        for (let i = 0; i < 8; i++) await llm.generate({ prompt: 'What is ML?', maxTokens: 8 });
      }),
    );
    const [fastA, slow, fastB] = [0, 1, 2].map((i) => replicas.received(i, MODEL).length) as [
      number,
      number,
      number,
    ];
    expect(fastA + slow + fastB).toBe(48);
    expect(slow).toBeLessThan(Math.min(fastA, fastB));
    const urls = replicas.urls(protocol);
    // The fake cannot answer before its time to first token, so this bound holds on any machine.
    expect(statsOf(t, urls[1]!).latencyMs).toBeGreaterThanOrEqual(SLOW_TTFT_MS);
    expect(t.endpointStats().map((s) => s.requests)).toEqual([fastA, slow, fastB]);
  });
});
