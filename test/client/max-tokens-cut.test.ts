import { type StreamChunk, TritonLlm } from '@trtllm/sdk';
import { fakeScript, fakeTokenizer } from '@trtllm/testing';
import { describe, expect, it } from 'vitest';
import { PROTOCOLS, useFakeTriton } from '../support/fake.js';

// The fake's vocabulary is byte-level for these characters (GENERATOR.md): "Zürich " is 8 tokens
// ("ü" two of them), then "北" three and "京" three.
const SCRIPT = 'Zürich 北京';
const prompt = `Where? ${fakeScript(SCRIPT)}`;
const IN_BEI = 9; // one byte of "北"
const AFTER_BEI = 11; // "北" whole
const IN_UE = 2; // one byte of "ü"

async function streamed(llm: TritonLlm, maxTokens: number) {
  const chunks: StreamChunk[] = [];
  for await (const chunk of llm.stream({ prompt, maxTokens })) chunks.push(chunk);
  const final = chunks.at(-1);
  if (final?.done !== true) throw new Error('no final chunk');
  return { deltas: chunks.map((c) => c.text).join(''), result: final.result };
}

// A generation cut by maxTokens inside a character drops the remnant (U+FFFD) from its text, as
// OpenAI and vLLM do; its token ids keep every token.
describe.each(PROTOCOLS)('text cut by maxTokens inside a character over %s', (protocol) => {
  const fake = useFakeTriton({ itlMs: 0 });
  const llm = (model: string) =>
    new TritonLlm({ transport: fake.transport(protocol), model, tokenizer: fakeTokenizer });

  it.each([
    [IN_BEI, 'Zürich '],
    [IN_UE, 'Z'],
    [AFTER_BEI, 'Zürich 北'],
  ])('a BLS stream (accumulate_tokens) cut after %i tokens shows and returns %j', async (maxTokens, text) => {
    const { deltas, result } = await streamed(llm('tensorrt_llm_bls'), maxTokens);
    expect(result.finishReason).toBe('length');
    expect(deltas).toBe(text);
    expect(result.text).toBe(text);
    expect(result.usage.completionTokens).toBe(maxTokens);
  });

  it('a raw model stream through the tokenizer drops the remnant; the token ids keep it', async () => {
    const { deltas, result } = await streamed(llm('tensorrt_llm'), IN_BEI);
    expect(result.finishReason).toBe('length');
    expect(deltas).toBe('Zürich ');
    expect(result.text).toBe('Zürich ');
    expect(result.sequences[0]?.tokenIds).toEqual(fakeTokenizer.encode(SCRIPT).slice(0, IN_BEI));
    expect(fakeTokenizer.decode(result.sequences[0]!.tokenIds)).toBe('Zürich \uFFFD');
  });

  it.each(['ensemble', 'tensorrt_llm', 'tensorrt_llm_unary', 'ensemble_unary'])(
    'generate() on %s cut inside a character returns the text without the remnant',
    async (model) => {
      const result = await llm(model).generate({ prompt, maxTokens: IN_BEI });
      expect(result.finishReason).toBe('length');
      expect(result.text).toBe('Zürich ');
    },
  );

  it('generate() cut at a character boundary keeps every character', async () => {
    const result = await llm('ensemble').generate({ prompt, maxTokens: AFTER_BEI });
    expect(result.finishReason).toBe('length');
    expect(result.text).toBe('Zürich 北');
  });

  it('a text that ends by itself keeps what it has (nothing is cut)', async () => {
    const result = await llm('ensemble').generate({ prompt: `x ${fakeScript('ab\uFFFD')}`, maxTokens: 50 });
    expect(result.finishReason).toBe('stop');
    expect(result.text).toBe('ab\uFFFD');
  });
});
