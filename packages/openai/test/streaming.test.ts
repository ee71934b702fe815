import { encode } from '@trtllm/testing';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { generated, isAscii, seedWhere } from './expected.js';
import { type Stack, startStack } from './stack.js';

// The ensemble streams each token decoded alone (U+FFFD for split characters, as real Triton
// does); outputs chosen to be ASCII make the streamed text equal to the whole text.
describe.each(['grpc', 'http'] as const)('streaming over %s', (protocol) => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ model: 'ensemble', protocol, fake: { itlMs: 1 } });
  });
  afterAll(() => stack.close());

  test('chat streams a role chunk, content deltas, a finish chunk, and usage when asked', async () => {
    const prompt = '<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n';
    const seed = seedWhere(prompt, 9, isAscii);
    const stream = await stack.client.chat.completions.create({
      model: 'ensemble',
      messages: [{ role: 'user', content: 'Hello' }],
      max_tokens: 9,
      seed,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks[0]!.choices[0]!.delta.role).toBe('assistant');
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe(generated(prompt, { maxTokens: 9, seed })[0]!.text);
    const finishes = chunks.flatMap((c) => c.choices.map((x) => x.finish_reason)).filter((f) => f !== null);
    expect(finishes).toEqual(['length']);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual({
      prompt_tokens: encode(prompt).length,
      completion_tokens: 9,
      total_tokens: encode(prompt).length + 9,
    });
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
  });

  test('completions stream text pieces and end with the finish reason; no usage unless asked', async () => {
    const prompt = 'What is ML?';
    const seed = seedWhere(prompt, 7, isAscii);
    const stream = await stack.client.completions.create({
      model: 'ensemble',
      prompt,
      max_tokens: 7,
      seed,
      stream: true,
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.length).toBeGreaterThan(2);
    expect(chunks.map((c) => c.choices[0]!.text).join('')).toBe(
      generated(prompt, { maxTokens: 7, seed })[0]!.text,
    );
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('length');
    expect(chunks.every((c) => c.usage === undefined)).toBe(true);
  });
});
