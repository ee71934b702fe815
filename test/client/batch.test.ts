import { TritonLlm, TritonLlmError } from '@trtllm/sdk';
import { fakeTokenizer, generateTokens } from '@trtllm/testing';
import { beforeEach, describe, expect, it } from 'vitest';
import { PROTOCOLS, useFakeTriton } from '../support/fake.js';

function expectedIds(inputIds: readonly number[], maxTokens: number): readonly number[] {
  return generateTokens(inputIds, { maxTokens })[0]!.tokens;
}

// Every answer here runs to maxTokens; a cut inside a character drops its remnant (OpenAI, vLLM).
function expectedText(prompt: string, maxTokens: number): string {
  return fakeTokenizer.decode(expectedIds(fakeTokenizer.encode(prompt), maxTokens)).replace(/\uFFFD$/u, '');
}

describe.each(PROTOCOLS)('generateBatch over %s', (protocol) => {
  const fake = useFakeTriton();
  beforeEach(() => fake.triton().clearEvents());

  /** The requests the generator model received, one per wire request. */
  const received = (model: string): string[] =>
    fake
      .triton()
      .events()
      .filter((e) => e.model === model && e.event === 'received')
      .map((e) => e.id);

  it('sends prompts of different lengths and limits as one batched request, results in input order', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'ensemble_unary' });
    const requests = [
      { prompt: 'What is ML?', maxTokens: 7 },
      { prompt: 'Hello world', maxTokens: 3 },
      { prompt: 'A much longer prompt about machine learning', maxTokens: 11 },
    ];
    const results = await llm.generateBatch(requests);
    expect(results.map((r) => r.text)).toEqual(requests.map((r) => expectedText(r.prompt, r.maxTokens)));
    expect(results.map((r) => r.usage.completionTokens)).toEqual([7, 3, 11]);
    expect(results.map((r) => r.finishReason)).toEqual(['length', 'length', 'length']);
    expect(received('tensorrt_llm_unary')).toHaveLength(1);
    // One request on the server: every result names it.
    expect(new Set(results.map((r) => r.requestId)).size).toBe(1);
    expect(received('tensorrt_llm_unary')[0]).toBe(results[0]!.requestId);
  });

  it('pads the raw model id rows and word lists, and cuts each answer to its own sequence length', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'tensorrt_llm_unary' });
    const prompts = [[5, 6, 7, 8, 9, 10], [42], [100, 3, 77]];
    const limits = [4, 9, 1];
    // Item 1 stops on its own fourth token; the others' words never come up.
    const fourth = expectedIds([42], 9)[3]!;
    const words = [[[3, 3, 3]], [[fourth], [280, 281]], [[4, 4]]];
    const requests = prompts.map((inputIds, i) => ({
      inputIds,
      maxTokens: limits[i]!,
      stopWordIds: words[i]!,
    }));
    const results = await llm.generateBatch(requests);
    const want = requests.map(
      (r) => generateTokens(r.inputIds, { maxTokens: r.maxTokens, stopWords: r.stopWordIds })[0]!,
    );
    expect(results.map((r) => r.sequences[0]!.tokenIds)).toEqual(want.map((w) => w.tokens));
    expect(want[1]!.tokens).toHaveLength(4);
    expect(results.map((r) => r.finishReason)).toEqual(['length', 'stop', 'length']);
    expect(received('tensorrt_llm_unary')).toHaveLength(1);
    // The same answers as requests sent one by one.
    const alone = await llm.generateBatch(requests, { batch: false });
    expect(alone.map((r) => r.sequences[0]!.tokenIds)).toEqual(results.map((r) => r.sequences[0]!.tokenIds));
    expect(received('tensorrt_llm_unary')).toHaveLength(4);
  });

  it('demultiplexes the beams of every item of a batch', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'tensorrt_llm_unary' });
    const requests = [
      { inputIds: [259, 260], maxTokens: 5, beamWidth: 2 },
      { inputIds: [42], maxTokens: 3, beamWidth: 2 },
    ];
    const results = await llm.generateBatch(requests);
    expect(results.map((r) => r.sequences.map((q) => q.tokenIds))).toEqual(
      requests.map((r) => generateTokens(r.inputIds, r).map((q) => q.tokens)),
    );
    expect(received('tensorrt_llm_unary')).toHaveLength(1);
  });

  it('splits above max_batch_size and keeps input order', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'ensemble_unary' });
    const { maxBatchSize } = await llm.schema();
    const count = maxBatchSize * 2 + 3;
    const requests = Array.from({ length: count }, (_, i) => ({
      prompt: `prompt number ${i}`,
      maxTokens: 1 + (i % 4),
    }));
    const results = await llm.generateBatch(requests);
    expect(results.map((r) => r.text)).toEqual(requests.map((r) => expectedText(r.prompt, r.maxTokens)));
    expect(received('tensorrt_llm_unary')).toHaveLength(3);
    const sizes = new Map<string, number>();
    for (const r of results) sizes.set(r.requestId, (sizes.get(r.requestId) ?? 0) + 1);
    expect([...sizes.values()].sort((a, b) => a - b)).toEqual([3, maxBatchSize, maxBatchSize]);
  });

  it('sends requests with different inputs, and those with their own id, in requests of their own', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'ensemble_unary' });
    const requests = [
      { prompt: 'one', maxTokens: 4 },
      { prompt: 'two', maxTokens: 4, temperature: 0.5 },
      { prompt: 'three', maxTokens: 4 },
      { prompt: 'four', maxTokens: 4, requestId: '777001' },
    ];
    const results = await llm.generateBatch(requests);
    expect(results.map((r) => r.text)).toEqual(requests.map((r) => expectedText(r.prompt, r.maxTokens)));
    expect(results[0]!.requestId).toBe(results[2]!.requestId);
    expect(results[1]!.requestId).not.toBe(results[0]!.requestId);
    expect(results[3]!.requestId).toBe('777001');
    expect(received('tensorrt_llm_unary').sort()).toEqual(
      [results[0]!.requestId, results[1]!.requestId, '777001'].sort(),
    );
  });

  it('fans out one request per prompt on a decoupled model', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'ensemble' });
    const prompts = ['Hello world', 'What is ML?', 'Machine learning'];
    const results = await llm.generateBatch(prompts.map((prompt) => ({ prompt, maxTokens: 5 })));
    expect(results.map((r) => r.text)).toEqual(prompts.map((p) => expectedText(p, 5)));
    expect(new Set(received('tensorrt_llm'))).toEqual(new Set(results.map((r) => r.requestId)));
    expect(received('tensorrt_llm')).toHaveLength(3);
  });

  it('refuses bad input in any item before anything is sent', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'ensemble_unary' });
    const error = await llm
      .generateBatch([
        { prompt: 'fine', maxTokens: 3 },
        { prompt: 'bad', maxTokens: -1 },
      ])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TritonLlmError);
    expect((error as TritonLlmError).code).toBe('invalid_argument');
    expect((error as TritonLlmError).message).toContain('maxTokens');
    await expect(llm.generateBatch([{ prompt: 'x', maxTokens: 1 }], { concurrency: 0 })).rejects.toThrow(
      /concurrency/,
    );
    expect(received('tensorrt_llm_unary')).toHaveLength(0);
  });
});

describe.each(PROTOCOLS)('generateBatch cancellation over %s', (protocol) => {
  const slowFake = useFakeTriton({ itlMs: 5 });

  it('cancels the batched request when the signal aborts, every item reporting cancelled', async () => {
    const slow = new TritonLlm({ transport: slowFake.transport(protocol), model: 'tensorrt_llm_unary' });
    const controller = new AbortController();
    const pending = slow.generateBatch(
      [
        { inputIds: [1, 2, 3], maxTokens: 2000 },
        { inputIds: [4, 5], maxTokens: 2000 },
      ],
      { signal: controller.signal },
    );
    await slowFake.triton().waitForEvent((e) => e.model === 'tensorrt_llm_unary' && e.event === 'received');
    controller.abort();
    const results = await pending;
    expect(results.map((r) => r.finishReason)).toEqual(['cancelled', 'cancelled']);
    expect(results[0]!.earlyStop?.via).toEqual([protocol === 'grpc' ? 'grpc_cancel' : 'http_disconnect']);
    expect(results[0]!.requestId).toBe(results[1]!.requestId);
    if (protocol === 'grpc') {
      // HTTP: Triton notices a closed connection only when it writes (see the README's cancel table).
      const ended = await slowFake
        .triton()
        .waitForEvent((e) => e.model === 'tensorrt_llm_unary' && e.event === 'cancelled');
      expect(ended.id).toBe(results[0]!.requestId);
      expect(ended.tokens).toBeLessThan(4000);
    }
  });
});
