import { type StreamChunk, TritonLlm, TritonLlmError } from '@trtllm/sdk';
import { fakeTokenizer, generateTokens } from '@trtllm/testing';
import { describe, expect, it } from 'vitest';
import { PROTOCOLS, useFakeTriton } from '../support/fake.js';

const PROMPT = 'What is ML?';
// Its reply is the corpus's Chinese sentence, then the one with the emoji (GENERATOR.md: sum of its ids mod 3
// is 1), and its 60 tokens end on a whole character, so a correct stream holds no U+FFFD at all.
const PROMPT_CJK = 'Hello world.';

function expectedText(prompt: string, maxTokens: number): string {
  return fakeTokenizer.decode(generateTokens(fakeTokenizer.encode(prompt), { maxTokens })[0]!.tokens);
}

async function collect(stream: AsyncIterable<StreamChunk>): Promise<{ text: string; chunks: StreamChunk[] }> {
  const chunks: StreamChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return { text: chunks.map((c) => c.text).join(''), chunks };
}

describe.each(PROTOCOLS)('stream over %s', (protocol) => {
  const fake = useFakeTriton();

  it('turns BLS cumulative text into exact deltas with no broken characters', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'tensorrt_llm_bls' });
    const { text, chunks } = await collect(llm.stream({ prompt: PROMPT_CJK, maxTokens: 60 }));
    expect(text).toBe(expectedText(PROMPT_CJK, 60));
    expect(text).toContain('机器学习');
    expect(chunks.some((c) => c.text.includes('\uFFFD'))).toBe(false);
    const final = chunks.at(-1);
    expect(final?.done).toBe(true);
    if (final?.done) {
      expect(final.finishReason).toBe('length');
      expect(final.usage.completionTokens).toBe(60);
      expect(final.timings.timeToFirstTokenMs).toBeGreaterThanOrEqual(0);
      expect(final.timings.interTokenMs.length).toBeGreaterThan(0);
    }
    expect(chunks.filter((c) => c.done)).toHaveLength(1);
  });

  it('turns the LLM-API model streamed whole texts into exact deltas', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'llmapi' });
    const { text, chunks } = await collect(llm.stream({ prompt: PROMPT_CJK, maxTokens: 60 }));
    expect(text).toBe(expectedText(PROMPT_CJK, 60));
    expect(chunks.some((c) => c.text.includes('\uFFFD'))).toBe(false);
    expect(chunks.at(-1)?.done && chunks.at(-1)).toMatchObject({ finishReason: 'length' });
  });

  it('flags ensemble chunks whose characters the server already broke', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'ensemble' });
    const { chunks } = await collect(llm.stream({ prompt: PROMPT, maxTokens: 60 }));
    const lossy = chunks.filter((c) => !c.done && c.lossy);
    expect(lossy.length).toBeGreaterThan(0);
    expect(lossy.every((c) => c.text.includes('\uFFFD'))).toBe(true);
    const final = chunks.at(-1);
    expect(final?.done && final.result.sequences[0]?.lossy).toBe(true);
  });

  it('streams exact text from the raw model through a tokenizer', async () => {
    const llm = new TritonLlm({
      transport: fake.transport(protocol),
      model: 'tensorrt_llm',
      tokenizer: fakeTokenizer,
    });
    const streamed = await collect(llm.stream({ prompt: PROMPT_CJK, maxTokens: 60 }));
    const whole = await llm.generate({ prompt: PROMPT_CJK, maxTokens: 60 });
    expect(streamed.text).toBe(whole.text);
    expect(streamed.text).toBe(expectedText(PROMPT_CJK, 60));
    expect(streamed.text).toContain('机器学习');
    expect(streamed.chunks.some((c) => c.text.includes('\uFFFD'))).toBe(false);
  });

  it('enforces a stop sequence that spans chunks, and streams what generate returns', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'tensorrt_llm_bls' });
    const full = expectedText(PROMPT, 200);
    const stop = 'field of';
    const streamed = await collect(llm.stream({ prompt: PROMPT, maxTokens: 200, stopWords: [stop] }));
    expect(streamed.text).toBe(full.slice(0, full.indexOf(stop)));
    const final = streamed.chunks.at(-1);
    expect(final?.done && final.finishReason).toBe('stop');
  });

  it('refuses to stream a model that is not decoupled, saying what to change', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'ensemble_unary' });
    const err = await collect(llm.stream({ prompt: PROMPT, maxTokens: 4 })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TritonLlmError);
    expect((err as TritonLlmError).code).toBe('failed_precondition');
    expect((err as TritonLlmError).message).toMatch(/decoupled/);
  });

  it('echoes a caller-chosen request id', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'ensemble' });
    const stream = llm.stream({ prompt: PROMPT, maxTokens: 3, requestId: 'caller-42' });
    expect(stream.requestId).toBe('caller-42');
    const { chunks } = await collect(stream);
    expect(chunks.every((c) => c.requestId === 'caller-42')).toBe(true);
    expect(
      fake
        .triton()
        .events()
        .some((e) => e.id === 'caller-42' && e.event === 'received'),
    ).toBe(true);
  });

  it('raises a mid-stream server error after the chunks already delivered', async () => {
    fake.triton().setFaults({ model: 'tensorrt_llm', errorAfterTokens: 3 });
    try {
      const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'tensorrt_llm' });
      const got: number[] = [];
      const err = await (async () => {
        for await (const chunk of llm.stream({ inputIds: [259], maxTokens: 50 }))
          if (!chunk.done) got.push(...chunk.tokenIds);
      })().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TritonLlmError);
      expect(got).toEqual(generateTokens([259], { maxTokens: 50 })[0]!.tokens.slice(0, 3));
    } finally {
      fake.triton().setFaults(undefined);
    }
  });

  it('ends with deadline_exceeded when the server stalls past the idle timeout', async () => {
    fake.triton().setFaults({ model: 'tensorrt_llm', stallAfterTokens: 2 });
    try {
      const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'tensorrt_llm' });
      let tokens = 0;
      const err = await (async () => {
        for await (const chunk of llm.stream({ inputIds: [259], maxTokens: 50 }, { idleTimeoutMs: 300 })) {
          if (!chunk.done) tokens += chunk.tokenIds.length;
        }
      })().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TritonLlmError);
      expect((err as TritonLlmError).code).toBe('deadline_exceeded');
      expect((err as TritonLlmError).earlyStop?.trigger).toBe('idle_timeout');
      expect(tokens).toBe(2);
    } finally {
      fake.triton().setFaults(undefined);
    }
  });
});
