import { BadRequestError } from 'openai';
import type { ChatCompletionContentPart } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { described, JPEG, PNG, URL_TEXT, url } from '../../../test/support/images.js';
import { type Stack, startStack } from './stack.js';

const dataUrl = (type: string, bytes: Uint8Array): string =>
  `data:${type};base64,${Buffer.from(bytes).toString('base64')}`;

const question = (...images: ChatCompletionContentPart[]) => [
  { role: 'user' as const, content: [{ type: 'text' as const, text: 'What is this?' }, ...images] },
];

describe.each(['grpc', 'http'] as const)('chat image_url parts over %s', (protocol) => {
  const stacks: Stack[] = [];
  const stackFor = async (model: string): Promise<Stack> => {
    const stack = await startStack({ model, protocol, fake: { itlMs: 1 } });
    stacks.push(stack);
    return stack;
  };
  let multimodal: Stack;
  let llmapi: Stack;
  let ensemble: Stack;
  beforeAll(async () => {
    multimodal = await stackFor('multimodal');
    llmapi = await stackFor('llmapi');
    ensemble = await stackFor('ensemble');
  });
  afterAll(() => Promise.all(stacks.map((s) => s.close())));

  test('a JPEG data: URL reaches the multimodal ensemble intact (detail accepted and ignored)', async () => {
    const r = await multimodal.client.chat.completions.create({
      model: 'multimodal',
      messages: question({
        type: 'image_url',
        image_url: { url: dataUrl('image/jpeg', JPEG), detail: 'high' },
      }),
      max_completion_tokens: 200,
    });
    expect(r.choices[0]!.message.content).toBe(described([{ kind: 'data', bytes: JPEG }]));
    expect(r.choices[0]!.finish_reason).toBe('stop');
  });

  test('streamed: the multimodal reply arrives delta by delta', async () => {
    const stream = await multimodal.client.chat.completions.create({
      model: 'multimodal',
      messages: question({ type: 'image_url', image_url: { url: dataUrl('image/jpeg', JPEG) } }),
      max_completion_tokens: 200,
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe(described([{ kind: 'data', bytes: JPEG }]));
  });

  test('an http(s) URL and a PNG data: URL reach the LLM-API model in order, the URL unfetched', async () => {
    const r = await llmapi.client.chat.completions.create({
      model: 'llmapi',
      messages: question(
        { type: 'image_url', image_url: { url: URL_TEXT, detail: 'low' } },
        { type: 'image_url', image_url: { url: dataUrl('image/png', PNG) } },
      ),
      max_completion_tokens: 200,
    });
    expect(r.choices[0]!.message.content).toBe(described([url, { kind: 'data', bytes: PNG }]));
  });

  test('a model without image inputs answers 400 naming the part and the model, before anything is sent', async () => {
    const before = ensemble.fake.events().length;
    const err = await ensemble.client.chat.completions
      .create({
        model: 'ensemble',
        messages: question({ type: 'image_url', image_url: { url: URL_TEXT } }),
        max_completion_tokens: 20,
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    const bad = err as BadRequestError;
    expect(bad.status).toBe(400);
    expect(bad.type).toBe('invalid_request_error');
    expect(bad.param).toBe('messages[0].content[1]');
    expect(bad.message).toMatch(/model 'ensemble' \(ensemble\) takes no images/);
    expect(ensemble.fake.events().length).toBe(before);
  });

  test.each([
    [
      'a URL of another scheme',
      { type: 'image_url', image_url: { url: 'ftp://example.com/a.png' } },
      'messages[0].content[1].image_url.url',
    ],
    [
      'an unknown detail',
      { type: 'image_url', image_url: { url: URL_TEXT, detail: 'ultra' } },
      'messages[0].content[1].image_url.detail',
    ],
    [
      'a part OpenAI has but Triton cannot take',
      { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } },
      'messages[0].content[1]',
    ],
  ])('%s is refused with 400 naming the field', async (_, part, param) => {
    const err = await llmapi.client.chat.completions
      .create({
        model: 'llmapi',
        messages: question(part as ChatCompletionContentPart),
        max_completion_tokens: 20,
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect((err as BadRequestError).param).toBe(param);
  });

  test('an image in an assistant message is refused naming the part: only user messages carry images', async () => {
    const err = await llmapi.client.chat.completions
      .create({
        model: 'llmapi',
        messages: [
          { role: 'user', content: 'Hi' },
          {
            role: 'assistant',
            content: [{ type: 'image_url', image_url: { url: URL_TEXT } }] as unknown as string,
          },
          { role: 'user', content: 'And?' },
        ],
        max_completion_tokens: 20,
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect((err as BadRequestError).param).toBe('messages[1].content[0]');
  });
});
