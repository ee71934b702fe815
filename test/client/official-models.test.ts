import { TritonLlm, TritonLlmError } from '@trtllm/sdk';
import { fakeTokenizer, generateTokens } from '@trtllm/testing';
import { describe, expect, it } from 'vitest';
import { PROTOCOLS, useFakeTriton } from '../support/fake.js';

// The tensors of NVIDIA's inflight_batcher_llm models at tensorrtllm_backend a315d2d (2025-03):
// no `return_num_*_tokens` inputs, no `num_*_tokens` outputs (issue 28).
const PROMPT = 'What is ML?';

function expectedText(maxTokens: number, extra: object = {}): string {
  const [seq] = generateTokens(fakeTokenizer.encode(PROMPT), { maxTokens, ...extra });
  return fakeTokenizer.decode(seq!.tokens);
}

describe.each(PROTOCOLS)('the 2025-03 official model tensors over %s', (protocol) => {
  const fake = useFakeTriton({ backendVersion: '2025-03' });
  const llm = (model: string) =>
    new TritonLlm({ transport: fake.transport(protocol), model, tokenizer: fakeTokenizer });

  // The raw model wants one id per prompt token and refuses the option (newest-inputs.test.ts).
  it.each(['ensemble', 'tensorrt_llm_bls'])(
    'sends promptTableExtraId to %s under the name its config declares',
    async (model) => {
      const result = await llm(model).generate({ prompt: PROMPT, maxTokens: 6, promptTableExtraId: 7 });
      expect(result.text).toBe(expectedText(6));
    },
  );

  it.each(['ensemble', 'tensorrt_llm_bls'])(
    'leaves the token count of non-streamed text from %s absent instead of 0',
    async (model) => {
      const result = await llm(model).generate({ prompt: PROMPT, maxTokens: 6 });
      expect(result.text).toBe(expectedText(6));
      expect(result.finishReason).toBe('unknown');
      expect(result.usage).not.toHaveProperty('completionTokens');
      expect(result.sequences[0]).not.toHaveProperty('tokenCount');
    },
  );

  it('leaves every beam count and the total absent for beams of an ensemble', async () => {
    const result = await llm('ensemble').generate({ prompt: PROMPT, maxTokens: 5, beamWidth: 2 });
    expect(result.sequences.length).toBeGreaterThan(0);
    expect(result.sequences.filter((s) => s.tokenCount !== undefined)).toEqual([]);
    expect(result.usage.completionTokens).toBeUndefined();
  });

  it('counts one token per streamed response of an ensemble', async () => {
    let final: number | undefined;
    for await (const chunk of llm('ensemble').stream({ prompt: PROMPT, maxTokens: 9 })) {
      if (chunk.done) final = chunk.usage.completionTokens;
    }
    expect(final).toBe(9);
  });

  it('counts the ids of the raw model', async () => {
    const result = await llm('tensorrt_llm').generate({ prompt: PROMPT, maxTokens: 8 });
    expect(result.usage.completionTokens).toBe(8);
    expect(result.sequences[0]?.tokenCount).toBe(8);
  });
});

describe.each(PROTOCOLS)('text cut inside a character over %s', (protocol) => {
  const fake = useFakeTriton({ backendVersion: '2025-03' });
  const llm = (model: string) =>
    new TritonLlm({ transport: fake.transport(protocol), model, tokenizer: fakeTokenizer });
  // Its reply starts at the corpus's Chinese sentence (GENERATOR.md).
  const PROMPT_CJK = 'Hello world.';
  const tokens = generateTokens(fakeTokenizer.encode(PROMPT_CJK), { maxTokens: 60 })[0]!.tokens;
  // The shortest cut that ends inside a multi-byte character.
  const cut = tokens.findIndex((_, i) => fakeTokenizer.decode(tokens.slice(0, i + 1)).endsWith('\uFFFD')) + 1;

  // A known cut (finish length) drops the remnant of the split character, as OpenAI and vLLM do;
  // where the 2025 models report no count, nothing says the text was cut, and it stays.
  it.each([
    ['tensorrt_llm', 'length', false],
    ['ensemble', 'unknown', true],
    ['tensorrt_llm_bls', 'unknown', true],
  ])(
    'the non-streamed text of %s cut at maxTokens in a character: finish %s, U+FFFD kept %s',
    async (model, finish, kept) => {
      expect(cut).toBeGreaterThan(0);
      const result = await llm(model).generate({ prompt: PROMPT_CJK, maxTokens: cut });
      expect(result.text.endsWith('\uFFFD')).toBe(kept);
      expect(result.finishReason).toBe(finish);
    },
  );
});

describe.each(PROTOCOLS)('beam search with streaming over %s', (protocol) => {
  const fake = useFakeTriton();

  it.each(['tensorrt_llm', 'ensemble', 'tensorrt_llm_bls'])(
    'is refused by the backend behind %s, as invalid_argument with its message',
    async (model) => {
      const llm = new TritonLlm({ transport: fake.transport(protocol), model, tokenizer: fakeTokenizer });
      const err = await (async () => {
        for await (const _ of llm.stream({ prompt: PROMPT, maxTokens: 4, beamWidth: 2 })) {
          // nothing arrives
        }
      })().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TritonLlmError);
      expect((err as TritonLlmError).code).toBe('invalid_argument');
      expect((err as TritonLlmError).serverMessage).toMatch(/beam/i);
    },
  );
});
