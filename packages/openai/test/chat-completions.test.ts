import { encode } from '@trtllm/testing';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { generated } from './expected.js';
import { type Stack, startStack } from './stack.js';

describe('POST /v1/chat/completions', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ model: 'ensemble' });
  });
  afterAll(() => stack.close());

  test('renders the conversation with ChatML by default and returns the assistant message', async () => {
    const r = await stack.client.chat.completions.create({
      model: 'ensemble',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'What is ML?' },
      ],
      max_completion_tokens: 10,
      seed: 3,
    });
    const prompt =
      '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nWhat is ML?<|im_end|>\n<|im_start|>assistant\n';
    const [want] = generated(prompt, { maxTokens: 10, seed: 3 });
    expect(r.object).toBe('chat.completion');
    expect(r.choices[0]!.message).toMatchObject({ role: 'assistant', content: want!.text });
    expect(r.choices[0]!.finish_reason).toBe('length');
    expect(r.usage).toMatchObject({ prompt_tokens: encode(prompt).length, completion_tokens: 10 });
  });

  test('takes content as text parts and the deprecated max_tokens', async () => {
    const r = await stack.client.chat.completions.create({
      model: 'ensemble',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Hello' },
            { type: 'text', text: ' world' },
          ],
        },
      ],
      max_tokens: 5,
    });
    const prompt = '<|im_start|>user\nHello world<|im_end|>\n<|im_start|>assistant\n';
    expect(r.choices[0]!.message.content).toBe(generated(prompt, { maxTokens: 5 })[0]!.text);
  });
});
