import { type InferRequest, type Transport, TritonLlm, TritonLlmError } from '@trtllm/sdk';
import type { CallOptions } from '@trtllm/sdk/transport';
import { fakeTokenizer, generateTokens } from '@trtllm/testing';
import { describe, expect, it } from 'vitest';
import { PROTOCOLS, useFakeTriton } from '../support/fake.js';

const PROMPT = 'What is ML?';

function expectedText(
  prompt: string,
  maxTokens: number,
  extra: Parameters<typeof generateTokens>[1] | object = {},
): string {
  const [seq] = generateTokens(fakeTokenizer.encode(prompt), { maxTokens, ...extra });
  return fakeTokenizer.decode(seq!.tokens);
}

describe.each(PROTOCOLS)('generate over %s', (protocol) => {
  const fake = useFakeTriton();

  it('returns the ensemble text, usage and a length finish reason', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'ensemble' });
    const result = await llm.generate({ prompt: PROMPT, maxTokens: 12 });
    expect(result.text).toBe(expectedText(PROMPT, 12));
    expect(result.finishReason).toBe('length');
    expect(result.usage.completionTokens).toBe(12);
    expect(result.requestId).toMatch(/^\d+$/);
    expect(result.timings.totalMs).toBeGreaterThan(0);
  });

  it('collects a decoupled BLS model and a non-decoupled ensemble alike', async () => {
    const bls = new TritonLlm({ transport: fake.transport(protocol), model: 'tensorrt_llm_bls' });
    const unary = new TritonLlm({ transport: fake.transport(protocol), model: 'ensemble_unary' });
    const [a, b] = await Promise.all([
      bls.generate({ prompt: PROMPT, maxTokens: 30 }),
      unary.generate({ prompt: PROMPT, maxTokens: 30 }),
    ]);
    expect(a.text).toBe(expectedText(PROMPT, 30));
    expect(b.text).toBe(a.text);
    // GENERATOR.md: a reply starts at a sentence of the corpus (this prompt's is the first).
    expect(a.text.startsWith(' Machine learning is')).toBe(true);
  });

  it('reports stop when the end id ends generation early', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'ensemble' });
    const dataId = fakeTokenizer.encode(' data')[0]!;
    const result = await llm.generate({ prompt: PROMPT, maxTokens: 200, endId: dataId });
    expect(result.finishReason).toBe('stop');
    expect(result.text).toBe(expectedText(PROMPT, 200, { endId: dataId }));
    expect(result.text).not.toContain(' data');
  });

  it('trims a client-side stop sequence that the server does not match on ids', async () => {
    // "data" without its leading space has other ids than " data" in context: only the client catches it.
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'ensemble' });
    const full = expectedText(PROMPT, 200);
    const result = await llm.generate({ prompt: PROMPT, maxTokens: 200, stopWords: ['data'] });
    expect(result.text).toBe(full.slice(0, full.indexOf('data')));
    expect(result.finishReason).toBe('stop');
  });

  it('returns the raw model ids and the prompt is not echoed', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'tensorrt_llm' });
    const inputIds = [259, 260, 261];
    const result = await llm.generate({ inputIds, maxTokens: 9 });
    expect(result.sequences[0]?.tokenIds).toEqual(generateTokens(inputIds, { maxTokens: 9 })[0]?.tokens);
    expect(result.usage.promptTokens).toBe(3);
    expect(result.text).toBe('');
  });

  it('refuses text for the raw model without a tokenizer, naming what to do', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'tensorrt_llm' });
    const err = await llm.generate({ prompt: 'hi', maxTokens: 4 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TritonLlmError);
    expect((err as TritonLlmError).code).toBe('invalid_argument');
    expect((err as TritonLlmError).message).toMatch(/tokenizer/);
  });

  it('serves the raw model from text with a tokenizer', async () => {
    const llm = new TritonLlm({
      transport: fake.transport(protocol),
      model: 'tensorrt_llm',
      tokenizer: fakeTokenizer,
    });
    const result = await llm.generate({ prompt: PROMPT, maxTokens: 30 });
    expect(result.text).toBe(expectedText(PROMPT, 30));
  });

  it('returns distinct sequences for numReturnSequences', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'tensorrt_llm' });
    const inputIds = [259, 260];
    const result = await llm.generate({ inputIds, maxTokens: 6, numReturnSequences: 2 });
    const expected = generateTokens(inputIds, { maxTokens: 6, numReturnSequences: 2 });
    expect(result.sequences.map((s) => s.tokenIds)).toEqual(expected.map((s) => s.tokens));
    expect(result.sequences[0]?.tokenIds).not.toEqual(result.sequences[1]?.tokenIds);
  });

  it('counts tokens per sequence when an ensemble returns several', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'ensemble' });
    const result = await llm.generate({ prompt: PROMPT, maxTokens: 7, numReturnSequences: 2 });
    expect(result.sequences.map((s) => [s.tokenCount, s.finishReason])).toEqual([
      [7, 'length'],
      [7, 'length'],
    ]);
    expect(result.usage.completionTokens).toBe(14);
  });

  it('returns log probs when asked', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'tensorrt_llm' });
    const inputIds = [300 - 20, 261];
    const result = await llm.generate({ inputIds, maxTokens: 5, returnLogProbs: true });
    const [expected] = generateTokens(inputIds, { maxTokens: 5, returnLogProbs: true });
    expect(result.sequences[0]?.logProbs).toEqual(expected?.logProbs);
    expect(result.sequences[0]?.cumLogProb).toBeCloseTo(expected!.cumLogProb, 5);
  });

  it('keeps batch results in input order', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'ensemble' });
    const prompts = ['Hello world', 'What is ML?', 'Machine learning'];
    const results = await llm.generateBatch(prompts.map((prompt) => ({ prompt, maxTokens: 5 })));
    expect(results.map((r) => r.text)).toEqual(prompts.map((p) => expectedText(p, 5)));
  });
});

describe('outputs asked of the server over gRPC', () => {
  const fake = useFakeTriton();

  /** The output names of every response the fake streams back for the request `stream()` sends. */
  async function answeredOutputs(numReturnSequences: number | undefined): Promise<string[][]> {
    const transport = fake.transport('grpc');
    const sent: InferRequest[] = [];
    // Records the request the client builds, then lets it through unchanged.
    const recording: Transport = Object.assign(Object.create(transport) as Transport, {
      stream: (request: InferRequest, options?: CallOptions) => {
        sent.push(request);
        return transport.stream(request, options);
      },
    });
    const llm = new TritonLlm({ transport: recording, model: 'ensemble' });
    const request = { prompt: PROMPT, maxTokens: 4, ...(numReturnSequences ? { numReturnSequences } : {}) };
    let tokens = 0;
    for await (const chunk of llm.stream(request)) if (!chunk.done) tokens += 1;
    expect(tokens).toBe(4 * (numReturnSequences ?? 1));
    expect(sent).toHaveLength(1);
    // The same request again, read straight from the transport: what the server put in each response.
    const names: string[][] = [];
    for await (const response of transport.stream(sent[0]!)) names.push(response.outputs.map((t) => t.name));
    return names;
  }

  it('sequence_index comes with the tokens of a request for several sequences only', async () => {
    const one = await answeredOutputs(undefined);
    const two = await answeredOutputs(2);
    expect(one.length).toBeGreaterThanOrEqual(4);
    expect(one.every((names) => names.includes('text_output') && !names.includes('sequence_index'))).toBe(
      true,
    );
    expect(two.length).toBeGreaterThanOrEqual(8);
    expect(
      two.filter((names) => names.includes('text_output')).every((n) => n.includes('sequence_index')),
    ).toBe(true);
  });
});
