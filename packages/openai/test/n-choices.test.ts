import { encode, fakeTokenizer } from '@trtllm/testing';
import { afterEach, describe, expect, test } from 'vitest';
import { cutAtLength, generated } from './expected.js';
import { type Stack, startStack } from './stack.js';

describe('n > 1', () => {
  let stack: Stack | undefined;
  afterEach(() => stack?.close());

  test('uses num_return_sequences in one upstream request where the model has it', async () => {
    stack = await startStack({ model: 'ensemble' });
    const prompt = 'What is ML?';
    const r = await stack.client.completions.create({ model: 'ensemble', prompt, max_tokens: 6, n: 3 });
    const want = generated(prompt, { maxTokens: 6, numReturnSequences: 3 });
    expect(r.choices.map((c) => c.index)).toEqual([0, 1, 2]);
    expect(r.choices.map((c) => c.text)).toEqual(want.map((s) => cutAtLength(s.text)));
    const received = stack.fake.events().filter((e) => e.model === 'ensemble' && e.event === 'received');
    expect(received).toHaveLength(1);
  });

  test('streams n interleaved chat choices, each with its own role chunk and finish', async () => {
    stack = await startStack({ model: 'tensorrt_llm_bls' });
    const prompt = '<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n';
    const stream = await stack.client.chat.completions.create({
      model: 'tensorrt_llm_bls',
      messages: [{ role: 'user', content: 'Hello' }],
      max_tokens: 5,
      n: 2,
      stream: true,
    });
    const text = ['', ''];
    const roles: number[] = [];
    const finishes: [number, string][] = [];
    for await (const chunk of stream) {
      for (const c of chunk.choices) {
        if (c.delta.role === 'assistant') roles.push(c.index);
        text[c.index] += c.delta.content ?? '';
        if (c.finish_reason) finishes.push([c.index, c.finish_reason]);
      }
    }
    // tensorrt_llm_bls accumulates tokens, so streamed text is exact even across split characters.
    expect(text).toEqual(
      generated(prompt, { maxTokens: 5, numReturnSequences: 2 }).map((s) => cutAtLength(s.text)),
    );
    expect(roles.sort()).toEqual([0, 1]);
    expect(finishes.sort()).toEqual([
      [0, 'length'],
      [1, 'length'],
    ]);
  });

  test('runs n upstream requests where the model has no num_return_sequences (LLM-API model)', async () => {
    stack = await startStack({ model: 'llmapi', server: { tokenizer: fakeTokenizer } });
    const r = await stack.client.completions.create({
      model: 'llmapi',
      prompt: 'Hello',
      max_tokens: 4,
      n: 3,
    });
    const one = generated('Hello', { maxTokens: 4 })[0]!.text;
    expect(r.choices.map((c) => [c.index, c.text])).toEqual([
      [0, one],
      [1, one],
      [2, one],
    ]);
    const received = stack.fake.events().filter((e) => e.model === 'llmapi' && e.event === 'received');
    expect(received).toHaveLength(3);
    // The LLM-API model reports no token counts: the server's tokenizer counts the text.
    expect(r.usage?.completion_tokens).toBe(3 * encode(one).length);
    expect(r.usage?.prompt_tokens).toBe(encode('Hello').length);
  });
});
