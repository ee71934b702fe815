import { encode, fakeTokenizer, generateTokens, tokenLogProb } from '@trtllm/testing';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Stack, startStack } from './stack.js';

// The raw model returns token ids, so with the fake's tokenizer every log prob gets its token text.
describe('log probs', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ model: 'tensorrt_llm', server: { tokenizer: fakeTokenizer } });
  });
  afterAll(() => stack.close());

  const prompt = 'What is ML?';
  const [want] = generateTokens(encode(prompt), { maxTokens: 5, returnLogProbs: true });
  const tokens = want!.tokens.map((t) => fakeTokenizer.decode([t]));

  test('completions carry token, log prob, offset and the sampled token as top entry', async () => {
    const r = await stack.client.completions.create({
      model: 'tensorrt_llm',
      prompt,
      max_tokens: 5,
      logprobs: 1,
    });
    const lp = r.choices[0]!.logprobs!;
    expect(lp.tokens).toEqual(tokens);
    expect(lp.token_logprobs).toEqual(want!.tokens.map(tokenLogProb));
    expect(lp.top_logprobs).toEqual(tokens.map((t, i) => ({ [t]: tokenLogProb(want!.tokens[i]!) })));
    expect(lp.text_offset?.[0]).toBe(0);
    expect(r.usage?.prompt_tokens).toBe(encode(prompt).length);
  });

  test('streamed chat chunks carry the log probs of their tokens', async () => {
    const chatPrompt = `<|im_start|>user\n${prompt}<|im_end|>\n<|im_start|>assistant\n`;
    const [chatWant] = generateTokens(encode(chatPrompt), { maxTokens: 5, returnLogProbs: true });
    const stream = await stack.client.chat.completions.create({
      model: 'tensorrt_llm',
      messages: [{ role: 'user', content: prompt }],
      max_tokens: 5,
      logprobs: true,
      stream: true,
    });
    const got: number[] = [];
    for await (const chunk of stream)
      for (const c of chunk.choices[0]?.logprobs?.content ?? []) got.push(c.logprob);
    expect(got).toEqual(chatWant!.tokens.map(tokenLogProb));
  });
});
