import { TritonLlm } from '@trtllm/sdk';
import { fakeTokenizer, generateTokens } from '@trtllm/testing';
import { describe, expect, it, vi } from 'vitest';
import { PROTOCOLS, statsOf, useThreeFakes } from './support.js';

const MODEL = 'tensorrt_llm_bls';
const PROMPT = 'What is ML?';
const EXPECTED = fakeTokenizer.decode(
  generateTokens(fakeTokenizer.encode(PROMPT), { maxTokens: 6 })[0]!.tokens,
);
const WAIT = { timeout: 10_000, interval: 20 };

describe.each(PROTOCOLS)('a replica killed and brought back (%s)', (protocol) => {
  const replicas = useThreeFakes();

  it('keeps serving every request while one is down, ejects it, and readmits it once it is back', async () => {
    const t = replicas.transport(protocol, { healthIntervalMs: 50, healthTimeoutMs: 1000, model: MODEL });
    const llm = new TritonLlm({ transport: t, model: MODEL });
    const generate = async () => (await llm.generate({ prompt: PROMPT, maxTokens: 6 })).text;
    const killed = replicas.urls(protocol)[1]!;

    for (let i = 0; i < 6; i++) expect(await generate()).toBe(EXPECTED);
    expect([0, 1, 2].map((i) => replicas.received(i, MODEL).length)).toEqual([2, 2, 2]);

    await replicas.kill(1);
    for (let i = 0; i < 9; i++) expect(await generate()).toBe(EXPECTED);
    await vi.waitFor(() => expect(statsOf(t, killed).state).toBe('ejected'), WAIT);
    expect(statsOf(t, killed).lastError?.code).toBe('unavailable');
    // Every request while it was down was served by the other two, counted by the servers themselves.
    expect(replicas.received(0, MODEL).length + replicas.received(2, MODEL).length).toBe(4 + 9);

    await replicas.restart(1);
    await vi.waitFor(() => expect(statsOf(t, killed).state).toBe('healthy'), WAIT);
    for (let i = 0; i < 6; i++) expect(await generate()).toBe(EXPECTED);
    expect(replicas.received(1, MODEL).length).toBeGreaterThan(0);
    expect(statsOf(t, killed).ejections).toBeGreaterThanOrEqual(1);
    expect(t.endpointStats().every((s) => s.inFlight === 0)).toBe(true);
  });
});
