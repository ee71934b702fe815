import { createOpenAiServer, transportFromUrl } from '@trtllm/openai';
import { fakeTokenizer } from '@trtllm/testing';
import { afterEach, describe, expect, test } from 'vitest';
import { sampleValue, scrape } from './prometheus-text.js';
import { type Stack, startStack } from './stack.js';

const model = 'ensemble';
// The SDK rightly warns that an ensemble keeps generating after a cancel; the test knows.
const quiet = { warn: () => undefined };

/** Awaits the scrape in which `num_requests_waiting` reads `n` (each try is a request, not a sleep). */
async function waitingBecomes(baseURL: string, n: number): Promise<void> {
  for (let tries = 0; tries < 500; tries++) {
    const { samples } = await scrape(baseURL);
    if (sampleValue(samples, 'trtllm:num_requests_waiting') === n) return;
  }
  throw new Error(`num_requests_waiting never read ${n}`);
}

function completion(baseURL: string, body: Record<string, unknown>, signal?: AbortSignal): Promise<Response> {
  return fetch(`${baseURL}/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, prompt: 'Hello', ...body }),
    ...(signal !== undefined ? { signal } : {}),
  });
}

describe('maxConcurrency and maxQueue', () => {
  let stack: Stack | undefined;
  afterEach(() => stack?.close());

  test('past the running and queued requests the server answers 429 with Retry-After; a freed slot runs the queued one', async () => {
    stack = await startStack({
      model,
      fake: { itlMs: 5 },
      server: {
        tokenizer: fakeTokenizer,
        logger: quiet,
        maxConcurrency: 1,
        maxQueue: 1,
        retryAfterSeconds: 3,
      },
    });
    const { baseURL, fake } = stack;
    const holder = new AbortController();
    const running = await completion(baseURL, { max_tokens: 5000, stream: true }, holder.signal);
    const runningId = running.headers.get('x-request-id');
    const reader = running.body!.getReader();
    await reader.read();

    const queued = completion(baseURL, { max_tokens: 3 });
    await waitingBecomes(baseURL, 1);

    const refused = await completion(baseURL, { max_tokens: 3 });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('3');
    const body = (await refused.json()) as { error: { type: string; code: string; message: string } };
    expect(body.error).toMatchObject({ type: 'rate_limit_error', code: 'resource_exhausted' });
    expect(body.error.message).toContain('maxConcurrency 1');

    // The client of the running stream leaves: its Triton request ends, and the queued one runs.
    holder.abort();
    await reader.cancel().catch(() => undefined);
    const cancelled = await fake.waitForEvent(
      (e) => e.id === runningId && e.model === model && (e.event === 'cancelled' || e.event === 'stopped'),
      10_000,
    );
    expect(cancelled.tokens).toBeLessThan(5000);
    const answered = await queued;
    expect(answered.status).toBe(200);
    const { samples } = await scrape(baseURL);
    expect(sampleValue(samples, 'trtllm:http_requests_total', { model_name: '', status: '429' })).toBe(1);
    expect(sampleValue(samples, 'trtllm:num_requests_waiting')).toBe(0);
  });

  test('a client that leaves while queued gives up its place without reaching Triton', async () => {
    stack = await startStack({
      model,
      fake: { itlMs: 5 },
      server: { tokenizer: fakeTokenizer, logger: quiet, maxConcurrency: 1, maxQueue: 4 },
    });
    const { baseURL, fake } = stack;
    const holder = new AbortController();
    const running = await completion(baseURL, { max_tokens: 5000, stream: true }, holder.signal);
    const reader = running.body!.getReader();
    await reader.read();
    const leaver = new AbortController();
    const left = completion(baseURL, { max_tokens: 3 }, leaver.signal).catch((e: unknown) => e);
    await waitingBecomes(baseURL, 1);
    const receivedBefore = fake.events().filter((e) => e.event === 'received' && e.model === model).length;
    leaver.abort();
    expect(await left).toBeInstanceOf(Error);
    await waitingBecomes(baseURL, 0);
    holder.abort();
    await reader.cancel().catch(() => undefined);
    // The next request gets the freed slot: the one that left never took it.
    const next = await completion(baseURL, { max_tokens: 3 });
    expect(next.status).toBe(200);
    const received = fake.events().filter((e) => e.event === 'received' && e.model === model);
    expect(received.length).toBe(receivedBefore + 1);
    expect(received.at(-1)!.id).toBe(next.headers.get('x-request-id'));
  });

  test.each([
    ['maxConcurrency', { maxConcurrency: 0 }],
    ['maxQueue', { maxConcurrency: 2, maxQueue: -1 }],
    ['retryAfterSeconds', { retryAfterSeconds: 0.5 }],
  ])('%s out of range is refused when the server is created', async (field, limits) => {
    const transport = transportFromUrl('grpc://127.0.0.1:1');
    try {
      expect(() => createOpenAiServer({ transport, model, ...limits })).toThrow(
        expect.objectContaining({ code: 'invalid_argument', field }),
      );
    } finally {
      await transport.close();
    }
  });
});
