import type OpenAI from 'openai';
import { BadRequestError } from 'openai';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { generated } from './expected.js';
import { type Stack, startStack } from './stack.js';

async function failure(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    () => expect.fail('the call succeeded'),
    (err: unknown) => err,
  );
}

/** The body as sent, whatever the client's types say (a misspelt field is the point). */
function loose<T>(body: Record<string, unknown>): T {
  return body as unknown as T;
}

describe('request fields', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ model: 'ensemble' });
  });
  afterAll(() => stack.close());

  test('a misspelt chat field is a 400 invalid_request_error naming it and the field meant, and nothing runs', async () => {
    const before = stack.fake.events().length;
    const err = await failure(
      stack.client.chat.completions.create(
        loose<OpenAI.ChatCompletionCreateParamsNonStreaming>({
          model: 'ensemble',
          messages: [{ role: 'user', content: 'Hi' }],
          max_token: 5,
        }),
      ),
    );
    expect(err).toBeInstanceOf(BadRequestError);
    const e = err as BadRequestError;
    expect(e.status).toBe(400);
    expect(e.type).toBe('invalid_request_error');
    expect(e.param).toBe('max_token');
    expect(e.message).toContain('Unrecognized request argument supplied: max_token');
    expect(e.message).toContain('did you mean max_tokens?');
    expect(stack.fake.events().length).toBe(before);
  });

  test('a misspelt completions field is a 400 naming it, streamed or not', async () => {
    for (const stream of [false, true]) {
      const err = await failure(
        stack.client.completions.create(
          loose<OpenAI.CompletionCreateParamsNonStreaming>({
            model: 'ensemble',
            prompt: 'Hi',
            max_tokens: 2,
            temprature: 0.5,
            stream,
          }),
        ),
      );
      expect(err, `stream ${stream}`).toBeInstanceOf(BadRequestError);
      expect((err as BadRequestError).param).toBe('temprature');
      expect((err as BadRequestError).message).toContain(
        'Unrecognized request argument supplied: temprature (did you mean temperature?)',
      );
    }
  });

  test('several unknown fields are all named', async () => {
    const err = await failure(
      stack.client.completions.create(
        loose<OpenAI.CompletionCreateParamsNonStreaming>({
          model: 'ensemble',
          prompt: 'Hi',
          max_tokens: 2,
          top_k: 5,
          ignore_eos: true,
        }),
      ),
    );
    const message = (err as BadRequestError).message;
    expect(message).toContain('Unrecognized request arguments supplied: top_k');
    expect(message).toContain(', ignore_eos');
  });

  test('a chat-only field on /v1/completions is unknown there', async () => {
    const err = await failure(
      stack.client.completions.create(
        loose<OpenAI.CompletionCreateParamsNonStreaming>({
          model: 'ensemble',
          prompt: 'Hi',
          max_tokens: 2,
          tools: [],
        }),
      ),
    );
    expect((err as BadRequestError).param).toBe('tools');
  });

  test('fields with no effect here are accepted and change nothing', async () => {
    const plain = {
      model: 'ensemble',
      messages: [{ role: 'user' as const, content: 'Hello' }],
      max_tokens: 6,
    };
    const bookkeeping = {
      user: 'u-1',
      metadata: { team: 'a' },
      store: false,
      service_tier: 'auto',
      safety_identifier: 'hash',
      prompt_cache_key: 'k',
      prompt_cache_retention: 'in_memory',
      prediction: { type: 'content', content: 'Hello' },
      modalities: ['text'],
    };
    const a = await stack.client.chat.completions.create(plain);
    const b = await stack.client.chat.completions.create(
      loose<OpenAI.ChatCompletionCreateParamsNonStreaming>({ ...plain, ...bookkeeping }),
    );
    expect(b.choices[0]!.message.content).toBe(a.choices[0]!.message.content);
    const c = await stack.client.completions.create({
      model: 'ensemble',
      prompt: 'Hello',
      max_tokens: 5,
      user: 'u-1',
    });
    expect(c.choices[0]!.text).toBe(generated('Hello', { maxTokens: 5 })[0]!.text);
  });

  test('known chat fields asking for what the backend cannot do are refused naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ reasoning_effort: 'high' }, 'reasoning_effort'],
      [{ modalities: ['text', 'audio'] }, 'modalities'],
      [{ audio: { voice: 'alloy', format: 'mp3' } }, 'audio'],
      [{ verbosity: 'low' }, 'verbosity'],
      [{ web_search_options: { search_context_size: 'low' } }, 'web_search_options'],
    ];
    for (const [extra, param] of cases) {
      const err = await failure(
        stack.client.chat.completions.create(
          loose<OpenAI.ChatCompletionCreateParamsNonStreaming>({
            model: 'ensemble',
            messages: [{ role: 'user', content: 'Hi' }],
            max_tokens: 2,
            ...extra,
          }),
        ),
      );
      expect(err, param).toBeInstanceOf(BadRequestError);
      expect((err as BadRequestError).param).toBe(param);
      expect((err as BadRequestError).message).not.toContain('Unrecognized');
    }
  });

  test("the official client's helpers send nothing the server refuses", async () => {
    const messages = [{ role: 'user' as const, content: 'Hello' }];
    const stream = stack.client.chat.completions.stream({
      model: 'ensemble',
      messages,
      max_tokens: 6,
      stream_options: { include_usage: true },
    });
    const final = await stream.finalChatCompletion();
    const whole = await stack.client.chat.completions.create({ model: 'ensemble', messages, max_tokens: 6 });
    expect(final.choices[0]!.message.content).toBe(whole.choices[0]!.message.content);
  });
});
