import { type StreamChunk, TritonLlm } from '@trtllm/sdk';
import { fakeScript, fakeTokenizer, generateTokens } from '@trtllm/testing';
import { describe, expect, it } from 'vitest';
import { PROTOCOLS, useFakeTriton } from '../support/fake.js';

// Stop strings are sent to the model and matched on the client (issue 28): when the server stops
// at the same place, its own final response ends the call, with no cancel and no warning.
const PROMPT = 'What is ML?';
const MAX = 300;
const tokens = generateTokens(fakeTokenizer.encode(PROMPT), { maxTokens: MAX })[0]!.tokens;
const full = fakeTokenizer.decode(tokens);
// What a per-token stream shows: each token decoded alone (U+FFFD for a split character).
const perToken = tokens.map((t) => fakeTokenizer.decode([t])).join('');

async function finalOf(stream: AsyncIterable<StreamChunk>) {
  let text = '';
  for await (const chunk of stream) {
    if (chunk.done) return { text, result: chunk.result };
    text += chunk.text;
  }
  throw new Error('no final chunk');
}

describe.each(PROTOCOLS)('stop words the server also enforces, over %s', (protocol) => {
  const fake = useFakeTriton({ itlMs: 2 });
  const client = (model: string, warnings: string[]) =>
    new TritonLlm({
      transport: fake.transport(protocol),
      model,
      tokenizer: fakeTokenizer,
      logger: { warn: (m) => warnings.push(m) },
    });
  const ensembleEvent = (id: string) =>
    fake.triton().waitForEvent((e) => e.model === 'ensemble' && e.id === id && e.event !== 'received');
  const rawModelEvent = (id: string) =>
    fake.triton().waitForEvent((e) => e.model === 'tensorrt_llm' && e.id === id && e.event !== 'received');

  it('lets the ensemble end the stream at its own stop: no cancel, no early-stop report, no warning', async () => {
    const warnings: string[] = [];
    const stream = client('ensemble', warnings).stream({
      prompt: PROMPT,
      maxTokens: MAX,
      stopWords: [' data'],
    });
    const { text, result } = await finalOf(stream);
    expect(text).toBe(perToken.slice(0, perToken.indexOf(' data')));
    expect(result.finishReason).toBe('stop');
    expect(result.earlyStop).toBeUndefined();
    expect(warnings).toEqual([]);
    expect((await ensembleEvent(stream.requestId)).event).toBe('completed');
  });

  it.each(['tensorrt_llm_bls', 'llmapi'])(
    'reads a repeated whole text from %s as no new output: its own stop ends the stream',
    async (model) => {
      const warnings: string[] = [];
      const stream = client(model, warnings).stream({ prompt: PROMPT, maxTokens: MAX, stopWords: [' data'] });
      const { text, result } = await finalOf(stream);
      expect(text).toBe(full.slice(0, full.indexOf(' data')));
      expect(result.finishReason).toBe('stop');
      expect(result.earlyStop).toBeUndefined();
      expect(warnings).toEqual([]);
    },
  );

  it('cancels once tokens keep coming after a match the server cannot make', async () => {
    // "data" without its leading space has other ids than " data" in context: only the client matches it.
    const warnings: string[] = [];
    const stream = client('ensemble', warnings).stream({
      prompt: PROMPT,
      maxTokens: MAX,
      stopWords: ['data'],
    });
    const { text, result } = await finalOf(stream);
    expect(text).toBe(perToken.slice(0, perToken.indexOf('data')));
    expect(result.earlyStop?.trigger).toBe('stop_sequence');
    expect(result.earlyStop?.serverStopsGenerating).toBe(false);
    expect(warnings).toHaveLength(1);
    expect((await ensembleEvent(stream.requestId)).event).toBe('cancelled');
  });

  // The raw model takes stop words as a [1, 2, N] token-id list, which gRPC carries and the HTTP
  // generate extension cannot (README, early-stop table): each protocol gets the case it can pass.
  if (protocol === 'grpc') {
    it('ends the raw model at its own stop_words_list: its final response ends the call, no in-band stop', async () => {
      const stream = client('tensorrt_llm', []).stream({
        prompt: PROMPT,
        maxTokens: MAX,
        stopWords: [' data'],
      });
      const { text, result } = await finalOf(stream);
      expect(text).toBe(full.slice(0, full.indexOf(' data')));
      expect(result.finishReason).toBe('stop');
      expect(result.earlyStop).toBeUndefined();
      expect((await rawModelEvent(stream.requestId)).event).toBe('completed');
    });
  } else {
    it("matches the raw model's stop word on the client and stops the model in-band: HTTP cannot carry the list", async () => {
      const stream = client('tensorrt_llm', []).stream({
        prompt: PROMPT,
        maxTokens: MAX,
        stopWords: [' data'],
      });
      const { text, result } = await finalOf(stream);
      expect(text).toBe(full.slice(0, full.indexOf(' data')));
      expect(result.finishReason).toBe('stop');
      expect(result.earlyStop?.trigger).toBe('stop_sequence');
      expect(result.earlyStop?.serverStopsGenerating).toBe(true);
      expect((await rawModelEvent(stream.requestId)).event).toBe('stopped');
    });
  }

  it('reports no early stop for text that came whole, whatever matched', async () => {
    const warnings: string[] = [];
    const result = await client('ensemble', warnings).generate({
      prompt: PROMPT,
      maxTokens: MAX,
      stopWords: ['data'],
    });
    expect(result.text).toBe(full.slice(0, full.indexOf('data')));
    expect(result.earlyStop).toBeUndefined();
    expect(warnings).toEqual([]);
  });
});

describe.each(PROTOCOLS)('stop strings a per-token stream cannot match, over %s', (protocol) => {
  const fake = useFakeTriton();
  const client = (model: string, warnings: string[]) =>
    new TritonLlm({ transport: fake.transport(protocol), model, logger: { warn: (m) => warnings.push(m) } });
  const prompt = `${fakeScript('Machine learning 机器学习 works.')} ${PROMPT}`;

  it('warns once per model that a non-ASCII stop string may never match, naming the exact-text models', async () => {
    const warnings: string[] = [];
    const llm = client('ensemble', warnings);
    for (let i = 0; i < 2; i++) await finalOf(llm.stream({ prompt, maxTokens: 40, stopWords: ['机器'] }));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('"机器"');
    expect(warnings[0]).toContain('accumulate_tokens');
    expect(warnings[0]).toContain('tensorrt_llm');
  });

  it('says nothing where the text is exact: accumulated BLS text, or ASCII stop strings', async () => {
    const warnings: string[] = [];
    const { text } = await finalOf(
      client('tensorrt_llm_bls', warnings).stream({ prompt, maxTokens: 40, stopWords: ['机器'] }),
    );
    expect(text).toBe('Machine learning ');
    await finalOf(client('ensemble', warnings).stream({ prompt, maxTokens: 40, stopWords: ['works'] }));
    expect(warnings.filter((w) => w.includes('U+FFFD'))).toEqual([]);
  });
});
