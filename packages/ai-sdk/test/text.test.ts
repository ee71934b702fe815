import { createTriton, type TritonProvider, type TritonProviderOptions } from '@trtllm/ai-sdk';
import {
  decode,
  encode,
  type FakeTriton,
  fakeScript,
  fakeTokenizer,
  generateTokens,
  startFakeTriton,
} from '@trtllm/testing';
import { generateText, streamText } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

(globalThis as { AI_SDK_LOG_WARNINGS?: unknown }).AI_SDK_LOG_WARNINGS = false;

/** ChatML, the default template when no tokenizer directory is given: one turn per message, then the assistant's. */
const chatml = (...turns: [string, string][]): string =>
  `${turns.map(([role, content]) => `<|im_start|>${role}\n${content}<|im_end|>\n`).join('')}<|im_start|>assistant\n`;

const tokensFor = (prompt: string, maxTokens: number, extra: { beamWidth?: number } = {}) =>
  generateTokens(encode(prompt), { maxTokens, ...extra });
/**
 * A text cut by maxTokens: the decode of all ids (GENERATOR.md "Responses") without the remnant of
 * a character split at the cut, which the SDK drops as OpenAI and vLLM do.
 */
const cutText = (tokens: readonly number[]): string => decode(tokens).replace(/\uFFFD$/u, '');
const wholeText = (prompt: string, maxTokens: number): string =>
  cutText(tokensFor(prompt, maxTokens)[0]!.tokens);
/** The ensemble decodes each streamed token alone. */
const perTokenText = (prompt: string, maxTokens: number): string =>
  tokensFor(prompt, maxTokens)[0]!
    .tokens.map((t) => decode([t]))
    .join('');

describe.each(['grpc', 'http'] as const)('AI SDK text generation over %s', (protocol) => {
  let fake: FakeTriton;
  let triton: TritonProvider;
  beforeAll(async () => {
    fake = await startFakeTriton({ itlMs: 1 });
    triton = createTriton(protocol === 'grpc' ? { grpcUrl: fake.grpcUrl } : { httpUrl: fake.httpUrl });
  });
  afterAll(async () => {
    await triton.close();
    await fake.close();
  });

  it('generateText returns the model text, finish reason, usage and the Triton request id', async () => {
    const r = await generateText({
      model: triton('tensorrt_llm_bls'),
      prompt: 'What is ML?',
      maxOutputTokens: 12,
    });
    const prompt = chatml(['user', 'What is ML?']);
    expect(r.text).toBe(wholeText(prompt, 12));
    expect(r.finishReason).toBe('length');
    expect(r.usage.outputTokens).toBe(12);
    expect(r.usage.inputTokens).toBe(encode(prompt).length);
    const meta = r.providerMetadata?.trtllm as { requestId: string; finishReason: string };
    expect(meta.finishReason).toBe('length');
    expect(fake.events().some((e) => e.id === meta.requestId && e.event === 'completed')).toBe(true);
    expect(r.warnings).toEqual([]);
  });

  it('streamText streams the ensemble text delta by delta, as the generator documents it', async () => {
    const result = streamText({ model: triton('ensemble'), prompt: 'Hello world', maxOutputTokens: 20 });
    const deltas: string[] = [];
    for await (const d of result.textStream) deltas.push(d);
    const prompt = chatml(['user', 'Hello world']);
    expect(deltas.join('')).toBe(perTokenText(prompt, 20));
    expect(deltas.length).toBeGreaterThan(1);
    expect(await result.finishReason).toBe('length');
    expect((await result.usage).outputTokens).toBe(20);
  });

  it('the raw model streams exact text through the tokenizer, split characters included', async () => {
    const result = streamText({
      model: triton('tensorrt_llm', { tokenizer: fakeTokenizer }),
      prompt: 'What is ML?',
      maxOutputTokens: 400,
      // A script that fits in maxOutputTokens ends with finish stop (GENERATOR.md "Scripted output").
      providerOptions: { trtllm: { parameters: { fake_script: 'Machine learning 🤖 learns.' } } },
    });
    let text = '';
    for await (const d of result.textStream) text += d;
    expect(text).toBe('Machine learning 🤖 learns.');
    expect(await result.finishReason).toBe('stop');
    expect((await result.usage).inputTokens).toBe(encode(chatml(['user', 'What is ML?'])).length);
  });

  it('a conversation goes through the chat template; the last script marker answers it', async () => {
    const r = await generateText({
      model: triton('tensorrt_llm_bls'),
      maxOutputTokens: 100,
      instructions: 'You answer briefly.',
      messages: [
        { role: 'user', content: `Hi ${fakeScript('unused')}` },
        { role: 'assistant', content: 'Hello.' },
        { role: 'user', content: `What is ML? ${fakeScript('Pattern learning.')}` },
      ],
    });
    expect(r.text).toBe('Pattern learning.');
    expect(r.finishReason).toBe('stop');
    const prompt = chatml(
      ['system', 'You answer briefly.'],
      ['user', `Hi ${fakeScript('unused')}`],
      ['assistant', 'Hello.'],
      ['user', `What is ML? ${fakeScript('Pattern learning.')}`],
    );
    expect(r.usage.inputTokens).toBe(encode(prompt).length);
  });

  it('stopSequences end the text before the stop string with finish stop', async () => {
    const script = 'Models learn patterns from data and make predictions.';
    const r = await generateText({
      model: triton('tensorrt_llm_bls'),
      prompt: `Go ${fakeScript(script)}`,
      maxOutputTokens: 100,
      stopSequences: [' from'],
    });
    expect(r.text).toBe(script.slice(0, script.indexOf(' from')));
    expect(r.finishReason).toBe('stop');
  });

  it('beams: the text is beam 0, every beam is in providerMetadata.trtllm.sequences', async () => {
    // A typed variable, as an app keeps its options: it must fit the AI SDK's JSON providerOptions.
    const beamSearch: TritonProviderOptions = { beamWidth: 3 };
    const r = await generateText({
      model: triton('tensorrt_llm_unary', { tokenizer: fakeTokenizer }),
      prompt: 'What is ML?',
      maxOutputTokens: 8,
      providerOptions: { trtllm: beamSearch },
    });
    const beams = tokensFor(chatml(['user', 'What is ML?']), 8, { beamWidth: 3 });
    const meta = r.providerMetadata?.trtllm as { sequences: { index: number; text: string }[] } | undefined;
    const sequences = meta?.sequences ?? [];
    expect(sequences.map((s) => s.text)).toEqual(beams.map((b) => cutText(b.tokens)));
    expect(r.text).toBe(cutText(beams[0]!.tokens));
  });

  it('several returned sequences: the stream is sequence 0, the final metadata has them all', async () => {
    const result = streamText({
      model: triton('tensorrt_llm_bls'),
      prompt: 'What is ML?',
      maxOutputTokens: 10,
      providerOptions: { trtllm: { numReturnSequences: 2 } },
    });
    let text = '';
    for await (const d of result.textStream) text += d;
    const expected = generateTokens(encode(chatml(['user', 'What is ML?'])), {
      maxTokens: 10,
      numReturnSequences: 2,
    }).map((s) => decode(s.tokens));
    expect(text).toBe(expected[0]);
    const meta = (await result.providerMetadata)?.trtllm as { sequences?: { text: string }[] } | undefined;
    expect(meta?.sequences?.map((s) => s.text)).toEqual(expected);
  });

  it('a streamText result serves a useChat client as a UI message stream', async () => {
    const result = streamText({
      model: triton('tensorrt_llm_bls'),
      prompt: `Hi ${fakeScript('for the browser')}`,
      maxOutputTokens: 30,
    });
    const body = await result.toUIMessageStreamResponse().text();
    const deltas = body
      .split('\n')
      .filter((line) => line.startsWith('data: {'))
      .map((line) => JSON.parse(line.slice(6)) as { type: string; delta?: string })
      .filter((part) => part.type === 'text-delta');
    expect(deltas.map((d) => d.delta).join('')).toBe('for the browser');
  });

  it('a seed reaches the generator (it shifts where the corpus starts)', async () => {
    const r = await generateText({
      model: triton('tensorrt_llm_bls'),
      prompt: 'What is ML?',
      maxOutputTokens: 10,
      seed: 5,
    });
    const prompt = chatml(['user', 'What is ML?']);
    expect(r.text).toBe(cutText(generateTokens(encode(prompt), { maxTokens: 10, seed: 5 })[0]!.tokens));
  });

  it('temperature 0 is greedy decoding, sent as top_k 1 (the fake ignores sampling: same text)', async () => {
    const r = await generateText({
      model: triton('tensorrt_llm_bls'),
      prompt: 'What is ML?',
      maxOutputTokens: 6,
      temperature: 0,
      include: { requestBody: true },
    });
    expect(r.text).toBe(wholeText(chatml(['user', 'What is ML?']), 6));
    expect((r.request.body as { topK?: number; temperature?: number }).topK).toBe(1);
    expect((r.request.body as { temperature?: number }).temperature).toBeUndefined();
  });
});
