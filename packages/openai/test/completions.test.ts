import { encode } from '@trtllm/testing';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { generated } from './expected.js';
import { type Stack, startStack } from './stack.js';

describe.each(['grpc', 'http'] as const)('POST /v1/completions over %s', (protocol) => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ model: 'ensemble', protocol });
  });
  afterAll(() => stack.close());

  test('returns the generated text, token usage and finish reason length', async () => {
    const prompt = 'What is ML?';
    const r = await stack.client.completions.create({ model: 'ensemble', prompt, max_tokens: 12, seed: 5 });
    const [want] = generated(prompt, { maxTokens: 12, seed: 5 });
    expect(r.object).toBe('text_completion');
    expect(r.choices).toHaveLength(1);
    expect(r.choices[0]!.text).toBe(want!.text);
    expect(r.choices[0]!.finish_reason).toBe('length');
    expect(r.usage).toEqual({
      prompt_tokens: encode(prompt).length,
      completion_tokens: 12,
      total_tokens: encode(prompt).length + 12,
    });
  });

  test('defaults max_tokens to OpenAI’s 16', async () => {
    const r = await stack.client.completions.create({ model: 'ensemble', prompt: 'Hello' });
    expect(r.usage?.completion_tokens).toBe(16);
    expect(r.choices[0]!.text).toBe(generated('Hello', { maxTokens: 16 })[0]!.text);
  });

  test('answers a list of prompts with one choice each, in order', async () => {
    const prompts = ['Hello world', 'What is ML?'];
    const r = await stack.client.completions.create({ model: 'ensemble', prompt: prompts, max_tokens: 6 });
    expect(r.choices.map((c) => c.index)).toEqual([0, 1]);
    expect(r.choices.map((c) => c.text)).toEqual(prompts.map((p) => generated(p, { maxTokens: 6 })[0]!.text));
    expect(r.usage?.prompt_tokens).toBe(encode(prompts[0]!).length + encode(prompts[1]!).length);
  });

  test('echo puts the prompt before the generated text', async () => {
    const r = await stack.client.completions.create({
      model: 'ensemble',
      prompt: 'Hi',
      max_tokens: 4,
      echo: true,
    });
    expect(r.choices[0]!.text).toBe(`Hi${generated('Hi', { maxTokens: 4 })[0]!.text}`);
  });
});
