import { HumanMessage, SystemMessage } from '@langchain/core/messages';
import { ChatTriton } from '@trtllm/langchain';
import { type FakeTriton, startFakeTriton } from '@trtllm/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { described, JPEG, PNG, URL_TEXT, url } from '../../../test/support/images.js';

const quiet = { warn: () => undefined };
const base64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64');

describe.each(['grpc', 'http'] as const)('ChatTriton images over %s', (protocol) => {
  let fake: FakeTriton;
  const models: ChatTriton[] = [];
  const chatModel = (model: string) => {
    const m = new ChatTriton({
      ...(protocol === 'grpc' ? { grpcUrl: fake.grpcUrl } : { httpUrl: fake.httpUrl }),
      model,
      maxTokens: 200,
      logger: quiet,
    });
    models.push(m);
    return m;
  };
  beforeAll(async () => {
    fake = await startFakeTriton({ itlMs: 1 });
  });
  afterAll(async () => {
    await Promise.all(models.map((m) => m.close()));
    await fake.close();
  });

  it('an image_url block with a JPEG data URL reaches the multimodal ensemble intact', async () => {
    const message = await chatModel('multimodal').invoke([
      new HumanMessage({
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${base64(JPEG)}`, detail: 'low' } },
        ],
      }),
    ]);
    expect(message.content).toBe(described([{ kind: 'data', bytes: JPEG }]));
  });

  it('stream: a standard image block of JPEG bytes streams the multimodal reply', async () => {
    let text = '';
    const stream = await chatModel('multimodal').stream([
      new HumanMessage({ content: [{ type: 'image', mimeType: 'image/jpeg', data: JPEG }] }),
    ]);
    for await (const chunk of stream) text += chunk.text;
    expect(text).toBe(described([{ kind: 'data', bytes: JPEG }]));
  });

  it('image_url strings, standard url and base64 blocks and the older source_type blocks reach the LLM-API model in order', async () => {
    const message = await chatModel('llmapi').invoke([
      new SystemMessage('You describe images.'),
      new HumanMessage({
        content: [
          { type: 'image_url', image_url: URL_TEXT },
          { type: 'image', url: URL_TEXT },
          { type: 'text', text: 'and' },
          { type: 'image', mimeType: 'image/png', data: base64(PNG) },
          { type: 'image', source_type: 'base64', mime_type: 'image/jpeg', data: base64(JPEG) },
        ],
      }),
    ]);
    expect(message.content).toBe(
      described([url, url, { kind: 'data', bytes: PNG }, { kind: 'data', bytes: JPEG }]),
    );
  });

  it('a text-only model refuses an image by name before anything is sent', async () => {
    const before = fake.events().filter((e) => e.model === 'ensemble').length;
    await expect(
      chatModel('ensemble').invoke([
        new HumanMessage({ content: [{ type: 'image_url', image_url: URL_TEXT }] }),
      ]),
    ).rejects.toMatchObject({
      code: 'invalid_argument',
      message: expect.stringMatching(/images: model 'ensemble' \(ensemble\) has no image input/),
    });
    expect(fake.events().filter((e) => e.model === 'ensemble').length).toBe(before);
  });

  it('a provider file id is refused naming the block: Triton cannot resolve it', async () => {
    await expect(
      chatModel('llmapi').invoke([new HumanMessage({ content: [{ type: 'image', fileId: 'file-abc' }] })]),
    ).rejects.toMatchObject({
      code: 'invalid_argument',
      message: expect.stringContaining('messages[0].content[0]'),
    });
  });
});
