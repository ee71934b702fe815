import { createOpenAiServer, transportFromUrl } from '@trtllm/openai';
import OpenAI, { APIError, InternalServerError, NotFoundError } from 'openai';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { closedPort } from '../../../test/reliability/support/processes.js';
import { type Stack, startStack } from './stack.js';

async function failure(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    () => expect.fail('the call succeeded'),
    (err: unknown) => err,
  );
}

// Words of the SDK's own calls, which a client of this server never made.
const INTERNAL = /schema on|ModelConfig|modelConfig|GET \/v2|httpTransport|grpcTransport/;

describe('errors in the caller’s words', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ model: 'ensemble', server: { logger: { warn: () => undefined } } });
  });
  afterAll(() => stack.close());

  test('a request naming another model is OpenAI’s 404 model_not_found, naming the served model', async () => {
    for (const call of [
      () =>
        stack.client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }),
      () => stack.client.completions.create({ model: 'gpt-4o', prompt: 'x', max_tokens: 2 }),
      () => stack.client.models.retrieve('gpt-4o'),
    ]) {
      const err = await failure(call());
      expect(err).toBeInstanceOf(NotFoundError);
      const e = err as NotFoundError;
      expect(e.code).toBe('model_not_found');
      expect(e.type).toBe('invalid_request_error');
      expect(e.param).toBeNull();
      expect(e.message).toContain("The model 'gpt-4o' does not exist; this server serves 'ensemble'");
    }
  });

  test('an error in the middle of a stream leads with the request', async () => {
    stack.fake.setFaults({ errorAfterTokens: 2 });
    try {
      const stream = await stack.client.completions.create({
        model: 'ensemble',
        prompt: 'Hello',
        max_tokens: 20,
        stream: true,
      });
      const err = await failure(
        (async () => {
          for await (const _ of stream);
        })(),
      );
      expect(err).toBeInstanceOf(APIError);
      expect((err as APIError).message).toMatch(
        /^POST \/v1\/completions failed: .*injected error after 2 tokens/,
      );
    } finally {
      stack.fake.setFaults(undefined);
    }
  });

  test('a Triton model that does not exist is reported for the request, not for the SDK steps', async () => {
    for (const url of [stack.fake.grpcUrl.replace(/^http:/, 'grpc:'), stack.fake.httpUrl]) {
      const transport = transportFromUrl(url);
      const server = createOpenAiServer({ transport, model: 'ensembel' });
      try {
        const client = new OpenAI({ baseURL: await server.listen(0), apiKey: 'unused', maxRetries: 0 });
        const err = await failure(
          client.chat.completions.create({ model: 'ensembel', messages: [{ role: 'user', content: 'x' }] }),
        );
        expect(err, url).toBeInstanceOf(NotFoundError);
        const message = (err as NotFoundError).message;
        expect(message).toMatch(/^404 POST \/v1\/chat\/completions failed: Triton answered: .*'ensembel'/);
        expect(message).not.toMatch(INTERNAL);
      } finally {
        await server.close();
        await transport.close();
      }
    }
  });

  // Each of the two calls retries for the SDK's whole default budget (10 s) before the gateway answers,
  // so the test takes about 20 s: Vitest's default timeout, which a loaded machine would cross.
  test('an unreachable Triton is a 503 that says Triton did not answer', async () => {
    const port = await closedPort();
    for (const url of [`grpc://127.0.0.1:${port}`, `http://127.0.0.1:${port}`]) {
      const transport = transportFromUrl(url);
      const server = createOpenAiServer({ transport, model: 'ensemble' });
      try {
        const client = new OpenAI({ baseURL: await server.listen(0), apiKey: 'unused', maxRetries: 0 });
        const err = await failure(
          client.completions.create({ model: 'ensemble', prompt: 'x', max_tokens: 2 }),
        );
        expect(err, url).toBeInstanceOf(InternalServerError);
        expect((err as InternalServerError).status).toBe(503);
        const message = (err as InternalServerError).message;
        expect(message).toMatch(/^503 POST \/v1\/completions failed: Triton did not answer: /);
        expect(message).not.toMatch(INTERNAL);
      } finally {
        await server.close();
        await transport.close();
      }
    }
  }, 60_000);
});
