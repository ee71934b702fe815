import { TritonLlm } from '@trtllm/sdk';
import { describe, expect, it } from 'vitest';
import { PROTOCOLS, useFakeTriton } from '../support/fake.js';

const TTFT_MS = 20;

describe.each(PROTOCOLS)('perf metrics over %s', (protocol) => {
  const fake = useFakeTriton({ ttftMs: TTFT_MS, itlMs: 2 });

  it('returns the backend timestamps as bigint nanoseconds since the epoch, in order', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'tensorrt_llm' });
    const before = BigInt(Date.now()) * 1_000_000n;
    let metrics: Awaited<ReturnType<typeof llm.generate>>['perfMetrics'];
    for await (const chunk of llm.stream({ inputIds: [5, 6], maxTokens: 3, returnPerfMetrics: true })) {
      if (chunk.done) metrics = chunk.result.perfMetrics;
    }
    const { arrivalTimeNs, firstTokenTimeNs, lastTokenTimeNs } = metrics ?? {};
    expect(typeof arrivalTimeNs).toBe('bigint');
    // Epoch nanoseconds are past 2^53: a number could not hold them exactly.
    expect(arrivalTimeNs! > BigInt(Number.MAX_SAFE_INTEGER)).toBe(true);
    // The clocks of client and server agree to well within a second on loopback.
    expect(arrivalTimeNs! > before - 1_000_000_000n && arrivalTimeNs! < before + 1_000_000_000n).toBe(true);
    expect(firstTokenTimeNs! - arrivalTimeNs!).toBeGreaterThanOrEqual(BigInt(TTFT_MS) * 1_000_000n);
    expect(lastTokenTimeNs! >= firstTokenTimeNs!).toBe(true);
  });
});
