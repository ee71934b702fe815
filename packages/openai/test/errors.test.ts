import OpenAI, {
  APIError,
  AuthenticationError,
  BadRequestError,
  InternalServerError,
  NotFoundError,
  RateLimitError,
} from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { type Stack, startStack } from './stack.js';

const quiet = { warn: () => undefined };

async function failure(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    () => expect.fail('the call succeeded'),
    (err: unknown) => err,
  );
}

describe('error mapping', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ model: 'ensemble', server: { logger: quiet } });
  });
  afterEach(() => stack.fake.setFaults(undefined));
  afterAll(() => stack.close());

  test('a parameter out of range is a 400 naming the parameter', async () => {
    const err = await failure(
      stack.client.completions.create({ model: 'ensemble', prompt: 'Hi', max_tokens: 4, temperature: 3 }),
    );
    expect(err).toBeInstanceOf(BadRequestError);
    const e = err as BadRequestError;
    expect(e.status).toBe(400);
    expect(e.param).toBe('temperature');
    expect(e.type).toBe('invalid_request_error');
    expect(e.message).toContain('got 3');
  });

  test('bad messages, stop lists and n are refused with their parameter', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ messages: [] }, 'messages'],
      [{ messages: [{ role: 'wizard', content: 'x' }] }, 'messages[0].role'],
      [{ messages: [{ role: 'user', content: 'x' }], stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop'],
      [{ messages: [{ role: 'user', content: 'x' }], n: 0 }, 'n'],
      [{ messages: [{ role: 'user', content: 'x' }], top_logprobs: 2 }, 'top_logprobs'],
      [{ messages: [{ role: 'user', content: 'x' }], logit_bias: { '5': 10 } }, 'logit_bias'],
    ];
    for (const [extra, param] of cases) {
      const body = {
        model: 'ensemble',
        max_tokens: 2,
        ...extra,
      } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming;
      const err = await failure(stack.client.chat.completions.create(body));
      expect(err, param).toBeInstanceOf(BadRequestError);
      expect((err as BadRequestError).param).toBe(param);
    }
  });

  test('a body that is not JSON is a 400 in OpenAI error JSON', async () => {
    const res = await fetch(`${stack.baseURL}/chat/completions`, { method: 'POST', body: '{"model": ' });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { type: string; param: string | null; message: string } };
    expect(body.error.type).toBe('invalid_request_error');
    expect(body.error.param).toBe('body');
    expect(body.error.message).toContain('not valid JSON');
  });

  test('an unknown URL is a 404', async () => {
    const err = await failure(stack.client.post('/nope', { body: {} }));
    expect(err).toBeInstanceOf(NotFoundError);
  });

  test('Triton saying resource exhausted becomes 429', async () => {
    stack.fake.setFaults({ statusOnce: { grpc: 8, http: 429, message: 'queue is full' } });
    const err = await failure(
      stack.client.completions.create({ model: 'ensemble', prompt: 'Hi', max_tokens: 4 }),
    );
    expect(err).toBeInstanceOf(RateLimitError);
    expect((err as RateLimitError).message).toContain('queue is full');
  });

  test('Triton being unavailable becomes 503 with the server error type', async () => {
    stack.fake.setFaults({ statusOnce: { grpc: 14, http: 503, message: 'draining' } });
    const err = await failure(
      stack.client.chat.completions.create({
        model: 'ensemble',
        messages: [{ role: 'user', content: 'Hi' }],
        max_tokens: 4,
        stream: true,
      }),
    );
    expect(err).toBeInstanceOf(InternalServerError);
    expect((err as InternalServerError).status).toBe(503);
    expect((err as InternalServerError).type).toBe('server_error');
  });

  test('an error in the middle of a stream reaches the client as an API error', async () => {
    stack.fake.setFaults({ errorAfterTokens: 3 });
    const stream = await stack.client.completions.create({
      model: 'ensemble',
      prompt: 'Hello',
      max_tokens: 20,
      stream: true,
    });
    let chunks = 0;
    const err = await failure(
      (async () => {
        for await (const _ of stream) chunks += 1;
      })(),
    );
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).message).toContain('injected error after 3 tokens');
    expect(chunks).toBeGreaterThan(0);
  });

  test('log probs from a model without them are refused up front', async () => {
    const llmapi = await startStack({ model: 'llmapi' });
    try {
      const err = await failure(
        llmapi.client.completions.create({ model: 'llmapi', prompt: 'Hi', max_tokens: 2, logprobs: 1 }),
      );
      expect(err).toBeInstanceOf(BadRequestError);
      expect((err as BadRequestError).param).toBe('logprobs');
    } finally {
      await llmapi.close();
    }
  });
});

describe('request body limit', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ model: 'ensemble', server: { maxBodyBytes: 1000 } });
  });
  afterAll(() => stack.close());

  test('a body over maxBodyBytes is a 400 naming the limit, and the server goes on serving', async () => {
    const big = JSON.stringify({ model: 'ensemble', prompt: 'x'.repeat(200_000), max_tokens: 2 });
    const res = await fetch(`${stack.baseURL}/completions`, { method: 'POST', body: big });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { param: string | null; message: string } };
    expect(body.error.param).toBe('body');
    expect(body.error.message).toContain('at most 1000 bytes');
    const r = await stack.client.completions.create({ model: 'ensemble', prompt: 'Hi', max_tokens: 2 });
    expect(r.choices).toHaveLength(1);
  });
});

describe('API key', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ model: 'ensemble', server: { apiKey: 'sk-right' }, apiKey: 'sk-right' });
  });
  afterAll(() => stack.close());

  test('the right key is let through', async () => {
    const r = await stack.client.completions.create({ model: 'ensemble', prompt: 'Hi', max_tokens: 2 });
    expect(r.choices).toHaveLength(1);
  });

  test('a wrong key, or none, is a 401 on every endpoint', async () => {
    const wrong = new OpenAI({ baseURL: stack.baseURL, apiKey: 'sk-wrong', maxRetries: 0 });
    for (const call of [
      wrong.models.list(),
      wrong.completions.create({ model: 'ensemble', prompt: 'Hi', max_tokens: 2 }),
      wrong.chat.completions.create({ model: 'ensemble', messages: [{ role: 'user', content: 'x' }] }),
    ]) {
      expect(await failure(call)).toBeInstanceOf(AuthenticationError);
    }
    const none = await fetch(`${stack.baseURL}/models`);
    expect(none.status).toBe(401);
    expect(((await none.json()) as { error: { message: string } }).error.message).toContain(
      'missing API key',
    );
  });
});
