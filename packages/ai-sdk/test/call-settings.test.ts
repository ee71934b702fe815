import type { LanguageModelV4CallOptions } from '@ai-sdk/provider';
import { grpcTransport } from '@trtllm/grpc';
import { type ModelConfig, TritonLlm } from '@trtllm/sdk';
import { detectSchema } from '@trtllm/sdk/transport';
import { startFakeTriton } from '@trtllm/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareCall } from '../src/call-settings.js';

const NO_OPTIONS = { request: {}, call: {} };
const prompt: LanguageModelV4CallOptions['prompt'] = [
  { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
];

// prepareCall decides on the deployed model's config alone; the fake serves the real shapes, and a
// deployment that lacks some inputs (an older or customised one) is that config with them removed.
describe('the AI SDK settings against what the deployed model declares', () => {
  let config: ModelConfig;
  const closers: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    const fake = await startFakeTriton();
    const transport = grpcTransport({ baseUrl: fake.grpcUrl });
    closers.push(
      () => transport.close(),
      () => fake.close(),
    );
    config = await new TritonLlm({ transport, model: 'ensemble' }).modelConfig();
  });
  afterAll(async () => {
    for (const close of closers) await close();
  });

  const without = (...names: string[]) =>
    detectSchema({ ...config, inputs: config.inputs.filter((t) => !names.includes(t.name)) });

  it('a setting without its input is left out with an unsupported warning naming the inputs looked for', () => {
    const schema = without('presence_penalty', 'seed', 'random_seed');
    const { request, warnings } = prepareCall(
      { prompt, presencePenalty: 0.5, seed: 3, topP: 0.9 },
      schema,
      NO_OPTIONS,
      64,
    );
    expect(request).toMatchObject({ maxTokens: 64, topP: 0.9 });
    expect(request).not.toHaveProperty('presencePenalty');
    expect(request).not.toHaveProperty('seed');
    expect(warnings.map((w) => ('feature' in w ? w.feature : ''))).toEqual(['presencePenalty', 'seed']);
    expect(warnings[0]).toMatchObject({ details: expect.stringContaining('presence_penalty') });
  });

  it('temperature 0 stays temperature 0 on a model without top_k', () => {
    const { request } = prepareCall({ prompt, temperature: 0 }, without('top_k'), NO_OPTIONS, 8);
    expect(request).toMatchObject({ temperature: 0 });
    expect(request).not.toHaveProperty('topK');
  });

  it('stop sequences and providerOptions stop words are sent together', () => {
    const { request } = prepareCall(
      { prompt, stopSequences: ['\n\n'] },
      without(),
      { request: { stopWords: ['END'] }, call: {} },
      8,
    );
    expect(request.stopWords).toEqual(['\n\n', 'END']);
  });

  it('a JSON response format with guidedDecoding in providerOptions is refused as ambiguous', () => {
    expect(() =>
      prepareCall(
        { prompt, responseFormat: { type: 'json' } },
        without(),
        { request: { guidedDecoding: { type: 'regex', guide: 'a+' } }, call: {} },
        8,
      ),
    ).toThrow(/providerOptions.trtllm.guidedDecoding: give either/);
  });
});
