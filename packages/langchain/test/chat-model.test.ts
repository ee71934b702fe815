import type { LLMResult } from '@langchain/core/outputs';
import { ChatPromptTemplate } from '@langchain/core/prompts';
import { ChatTriton } from '@trtllm/langchain';
import { type FakeTriton, fakeScript, fakeTokenizer, startFakeTriton } from '@trtllm/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatmlPrompt, decodedText, generatedText } from './expected.js';

const quiet = { warn: () => undefined };

// The model as a user wires it: a prompt template piped into ChatTriton, over both transports.
describe.each(['grpc', 'http'] as const)('ChatTriton over %s against the fake Triton', (protocol) => {
  let fake: FakeTriton;
  const models: ChatTriton[] = [];
  const chatModel = (
    fields: Omit<ConstructorParameters<typeof ChatTriton>[0], 'grpcUrl' | 'httpUrl' | 'transport'>,
  ) => {
    const url = protocol === 'grpc' ? { grpcUrl: fake.grpcUrl } : { httpUrl: fake.httpUrl };
    const m = new ChatTriton({
      ...url,
      chatTemplate: 'chatml',
      logger: quiet,
      ...fields,
    } as ConstructorParameters<typeof ChatTriton>[0]);
    models.push(m);
    return m;
  };
  beforeAll(async () => {
    fake = await startFakeTriton({ itlMs: 2 });
  });
  afterAll(async () => {
    await Promise.all(models.map((m) => m.close()));
    await fake.close();
  });

  const template = ChatPromptTemplate.fromMessages([
    ['system', 'You are terse.'],
    ['human', 'Tell me about {topic}'],
  ]);
  const rendered = (topic: string) =>
    chatmlPrompt([
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: `Tell me about ${topic}` },
    ]);

  it('invoke: a prompt template piped into the model answers with the generated text, usage and finish reason', async () => {
    const chain = template.pipe(chatModel({ model: 'tensorrt_llm_bls', maxTokens: 24 }));
    const message = await chain.invoke({ topic: 'ML' });
    const prompt = await rendered('ML');
    expect(message.content).toBe(generatedText(prompt, { maxTokens: 24 }));
    expect(message.response_metadata.finish_reason).toBe('length');
    expect(message.response_metadata.model_name).toBe('tensorrt_llm_bls');
    expect(message.usage_metadata).toEqual({
      input_tokens: fakeTokenizer.encode(prompt).length,
      output_tokens: 24,
      total_tokens: fakeTokenizer.encode(prompt).length + 24,
    });
  });

  it('stream: chunks add up to the generated text and callbacks get every token in order', async () => {
    const chain = template.pipe(chatModel({ model: 'tensorrt_llm_bls', maxTokens: 30 }));
    const tokens: string[] = [];
    const chunks: string[] = [];
    let last: Record<string, unknown> = {};
    let usage: unknown;
    const stream = await chain.stream(
      { topic: 'data' },
      { callbacks: [{ handleLLMNewToken: (token: string) => void tokens.push(token) }] },
    );
    for await (const chunk of stream) {
      chunks.push(chunk.text);
      if (chunk.response_metadata.finish_reason !== undefined) last = chunk.response_metadata;
      usage = chunk.usage_metadata ?? usage;
    }
    const want = generatedText(await rendered('data'), { maxTokens: 30 });
    expect(chunks.join('')).toBe(want);
    // Streamed for real: more than one piece, and the callbacks saw exactly the chunks with text.
    expect(chunks.filter((c) => c !== '').length).toBeGreaterThan(1);
    expect(tokens).toEqual(chunks.filter((c) => c !== ''));
    expect(last.finish_reason).toBe('length');
    expect(usage).toMatchObject({ output_tokens: 30 });
  });

  it('invoke: callbacks receive the tokens of a streamed model too', async () => {
    const tokens: string[] = [];
    const model = chatModel({ model: 'tensorrt_llm', tokenizer: fakeTokenizer, maxTokens: 12 });
    const message = await model.invoke('Hello world', {
      callbacks: [{ handleLLMNewToken: (token: string) => void tokens.push(token) }],
    });
    const want = generatedText(await chatmlPrompt([{ role: 'user', content: 'Hello world' }]), {
      maxTokens: 12,
    });
    expect(message.content).toBe(want);
    expect(tokens.join('')).toBe(want);
    expect(tokens.length).toBeGreaterThan(1);
  });

  it('streamEvents: the chain reports every chunk of the model as on_chat_model_stream', async () => {
    const chain = template.pipe(chatModel({ model: 'tensorrt_llm_bls', maxTokens: 20 }));
    let text = '';
    for await (const event of chain.streamEvents({ topic: 'ML' }, { version: 'v2' })) {
      if (event.event === 'on_chat_model_stream') text += (event.data.chunk as { text: string }).text;
    }
    expect(text).toBe(generatedText(await rendered('ML'), { maxTokens: 20 }));
  });

  it('batch: each input gets its own answer, in input order', async () => {
    const chain = template.pipe(chatModel({ model: 'tensorrt_llm_bls', maxTokens: 10 }));
    const topics = ['ML', 'data', 'patterns'];
    const replies = await chain.batch(topics.map((topic) => ({ topic })));
    const wants = await Promise.all(
      topics.map(async (t) => generatedText(await rendered(t), { maxTokens: 10 })),
    );
    expect(replies.map((r) => r.content)).toEqual(wants);
  });

  it('a multi-turn conversation renders every turn; the last scripted marker decides the reply', async () => {
    const model = chatModel({ model: 'ensemble', maxTokens: 50 });
    const message = await model.invoke([
      ['human', `Say hi ${fakeScript('Hi there.')}`],
      ['ai', 'Hi there.'],
      ['human', `And now? ${fakeScript('Plain ASCII answer, second turn.')}`],
    ]);
    expect(message.content).toBe('Plain ASCII answer, second turn.');
    expect(message.response_metadata.finish_reason).toBe('stop');
  });

  it('stop: the text ends before the stop string, finish reason stop', async () => {
    const script = 'alpha beta gamma delta epsilon';
    const model = chatModel({ model: 'tensorrt_llm_bls', maxTokens: 100 });
    const message = await model.invoke(`Go ${fakeScript(script)}`, { stop: [' gamma'] });
    expect(message.content).toBe('alpha beta');
    expect(message.response_metadata.finish_reason).toBe('stop');
  });

  it('call options override the defaults (seed, maxTokens)', async () => {
    const model = chatModel({ model: 'tensorrt_llm_bls', maxTokens: 5 });
    const message = await model.invoke('Hello world', { seed: 9, maxTokens: 7 });
    const prompt = await chatmlPrompt([{ role: 'user', content: 'Hello world' }]);
    expect(message.content).toBe(generatedText(prompt, { maxTokens: 7, seed: 9 }));
  });

  it('generate with beams returns one generation per beam', async () => {
    const model = chatModel({ model: 'tensorrt_llm_bls', maxTokens: 8 });
    const result: LLMResult = await model.generate([[['human', 'What is ML?']]], { beamWidth: 2 });
    const prompt = await chatmlPrompt([{ role: 'user', content: 'What is ML?' }]);
    // The BLS reports no token count per beam, so nothing says a beam was cut by maxTokens: each
    // keeps its whole decode, a split character's remnant too.
    expect(result.generations[0]!.map((g) => g.text)).toEqual([
      decodedText(prompt, { maxTokens: 8, beamWidth: 2 }, 0),
      decodedText(prompt, { maxTokens: 8, beamWidth: 2 }, 1),
    ]);
    expect(result.generations[0]!.map((g) => g.generationInfo?.finish_reason)).toEqual([
      'unknown',
      'unknown',
    ]);
  });

  it('a model that is not decoupled answers stream() with its whole text in one chunk', async () => {
    const model = chatModel({ model: 'ensemble_unary', maxTokens: 6 });
    const pieces: string[] = [];
    for await (const chunk of await model.stream('What is ML?')) pieces.push(chunk.text);
    const want = generatedText(await chatmlPrompt([{ role: 'user', content: 'What is ML?' }]), {
      maxTokens: 6,
    });
    expect(pieces.filter((p) => p !== '')).toEqual([want]);
  });
});
