import { encode } from '@trtllm/testing';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { cutAtStop, generated, isAscii, seedWhere } from './expected.js';
import { type Stack, startStack } from './stack.js';

describe('stop sequences', () => {
  let stack: Stack;
  beforeAll(async () => {
    // The SDK rightly warns that an ensemble ended at a stop string keeps generating upstream.
    stack = await startStack({ model: 'ensemble', server: { logger: { warn: () => undefined } } });
  });
  afterAll(() => stack.close());

  const prompt = 'Hello';
  const maxTokens = 40;
  // An output that reaches " data" after some other text, so the cut is visible.
  const seed = seedWhere(prompt, maxTokens, (t) => t.indexOf(' data') > 0);
  const full = generated(prompt, { maxTokens, seed, stopWords: [encode(' data')] })[0]!.text;

  test('a stop string ends the completion before it, with finish reason stop', async () => {
    const r = await stack.client.completions.create({
      model: 'ensemble',
      prompt,
      max_tokens: maxTokens,
      seed,
      stop: ' data',
    });
    const want = cutAtStop(full, [' data']);
    expect(want.stopped).toBe(true);
    expect(r.choices[0]!.text).toBe(want.text);
    expect(r.choices[0]!.finish_reason).toBe('stop');
  });

  test('the earliest of several stop strings wins, streamed too', async () => {
    const stops = [' data', ' learn'];
    const chatPrompt = `<|im_start|>user\n${prompt}<|im_end|>\n<|im_start|>assistant\n`;
    // " learn" comes before " data" in the output, and the text before it is ASCII (streamed exactly).
    const chatSeed = seedWhere(chatPrompt, maxTokens, (t) => {
      const learn = t.indexOf(' learn');
      return learn > 0 && learn < t.indexOf(' data') && isAscii(t.slice(0, learn));
    });
    const text = generated(chatPrompt, {
      maxTokens,
      seed: chatSeed,
      stopWords: stops.map((s) => encode(s)),
    })[0]!.text;
    const want = cutAtStop(text, stops);
    expect(want.stopped).toBe(true);
    const stream = await stack.client.chat.completions.create({
      model: 'ensemble',
      messages: [{ role: 'user', content: prompt }],
      max_tokens: maxTokens,
      seed: chatSeed,
      stop: stops,
      stream: true,
    });
    let got = '';
    const finishes: string[] = [];
    for await (const chunk of stream) {
      got += chunk.choices[0]?.delta.content ?? '';
      const finish = chunk.choices[0]?.finish_reason;
      if (finish) finishes.push(finish);
    }
    expect(got).toBe(want.text);
    expect(finishes).toEqual(['stop']);
  });
});
