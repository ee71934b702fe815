import { createHash } from 'node:crypto';
import { HumanMessage, SystemMessage } from '@langchain/core/messages';
import { ChatTriton } from '@trtllm/langchain';
import { type FakeTriton, startFakeTriton } from '@trtllm/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const quiet = { warn: () => undefined };
const JPEG = Uint8Array.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1]);
const PNG = Uint8Array.from([
  0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52,
]);
const URL_TEXT = 'https://example.com/cat.png';
const base64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64');

/**
 * The fake multimodal models' reply (GENERATOR.md "Images"): the count, then per image whether it
 * came as bytes (a data: URI) or a URL, its byte length and the first 8 hex digits of its SHA-256.
 */
function described(images: readonly { kind: 'data' | 'url'; bytes: Uint8Array }[]): string {
  const each = images.map(
    (image, i) =>
      `#${i + 1} ${image.kind} ${image.bytes.length} bytes ${createHash('sha256').update(image.bytes).digest('hex').slice(0, 8)}`,
  );
  return `${images.length} image${images.length === 1 ? '' : 's'}: ${each.join('; ')}.`;
}
const url = { kind: 'url' as const, bytes: new TextEncoder().encode(URL_TEXT) };

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
