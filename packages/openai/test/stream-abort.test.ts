import { fakeTokenizer } from '@trtllm/testing';
import { afterEach, describe, expect, test } from 'vitest';
import { type Stack, startStack } from './stack.js';

// The SDK rightly warns that an ensemble keeps generating after a cancel; the test knows.
const quiet = { warn: () => undefined };

describe.each([
  ['llmapi', 'grpc', 'break'],
  ['llmapi', 'http', 'break'],
  ['tensorrt_llm', 'grpc', 'abort'],
  ['tensorrt_llm', 'http', 'break'],
  // The ensemble call itself is cancelled (its inner generation runs on, as on real Triton).
  ['ensemble', 'grpc', 'break'],
] as const)('a client leaving a %s stream over %s (%s)', (model, protocol, mode) => {
  let stack: Stack | undefined;
  afterEach(() => stack?.close());

  test('ends the upstream Triton request before max_tokens', async () => {
    stack = await startStack({
      model,
      protocol,
      fake: { itlMs: 5 },
      server: { tokenizer: fakeTokenizer, logger: quiet },
    });
    const abort = new AbortController();
    const { data: stream, response } = await stack.client.chat.completions
      .create(
        { model, messages: [{ role: 'user', content: 'Hello' }], max_tokens: 5000, stream: true },
        { signal: abort.signal },
      )
      .withResponse();
    const requestId = response.headers.get('x-request-id');
    expect(requestId).toMatch(/^\d+$/);
    let chunks = 0;
    // The official client ends the iteration quietly when its own signal aborts it.
    for await (const _ of stream) {
      chunks += 1;
      if (mode === 'break' && chunks === 3) break;
      if (mode === 'abort' && chunks === 3) abort.abort();
    }
    expect(chunks).toBeLessThan(100);
    // Over HTTP the SDK ends these models with their in-band stop, which the log calls `stopped`.
    const ended = await stack.fake.waitForEvent(
      (e) => e.id === requestId && e.model === model && (e.event === 'cancelled' || e.event === 'stopped'),
      10_000,
    );
    expect(ended.tokens).toBeLessThan(5000);
    expect(
      stack.fake.events().some((e) => e.id === requestId && e.model === model && e.event === 'completed'),
    ).toBe(false);
  });
});
