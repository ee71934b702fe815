import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTriton, type TritonProvider } from '@trtllm/ai-sdk';
import { type FakeTriton, startFakeTriton } from '@trtllm/testing';
import { generateText, streamText } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

(globalThis as { AI_SDK_LOG_WARNINGS?: unknown }).AI_SDK_LOG_WARNINGS = false;

// The start of a JPEG file (SOI, APP0 'JFIF'), so the AI SDK can tell its media type from the bytes.
const JPEG = Uint8Array.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1]);
const PNG = Uint8Array.from([
  0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52,
]);
const URL_TEXT = 'https://example.com/cat.png';

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

describe.each(['grpc', 'http'] as const)('AI SDK images over %s', (protocol) => {
  let fake: FakeTriton;
  let triton: TritonProvider;
  beforeAll(async () => {
    fake = await startFakeTriton({ itlMs: 1 });
    triton = createTriton(protocol === 'grpc' ? { grpcUrl: fake.grpcUrl } : { httpUrl: fake.httpUrl });
  });
  afterAll(async () => {
    await triton.close();
    await fake.close();
  });

  it('an image part of bytes reaches the multimodal ensemble intact', async () => {
    const r = await generateText({
      model: triton('multimodal'),
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image', image: JPEG, mediaType: 'image/jpeg' },
          ],
        },
      ],
      maxOutputTokens: 200,
    });
    expect(r.text).toBe(described([{ kind: 'data', bytes: JPEG }]));
    expect(r.warnings).toEqual([]);
  });

  it('streamText sends image bytes without a media type (sniffed as JPEG) to the multimodal ensemble', async () => {
    const result = streamText({
      model: triton('multimodal'),
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', image: JPEG },
            { type: 'text', text: 'Describe' },
          ],
        },
      ],
      maxOutputTokens: 200,
    });
    let text = '';
    for await (const delta of result.textStream) text += delta;
    expect(text).toBe(described([{ kind: 'data', bytes: JPEG }]));
  });

  it('a URL, base64 and a file part reach the LLM-API model in order, the URL unfetched', async () => {
    const r = await generateText({
      model: triton('llmapi'),
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', image: new URL(URL_TEXT) },
            { type: 'text', text: 'and' },
            { type: 'image', image: Buffer.from(PNG).toString('base64'), mediaType: 'image/png' },
            { type: 'file', data: JPEG, mediaType: 'image/jpeg' },
          ],
        },
      ],
      maxOutputTokens: 200,
    });
    expect(r.text).toBe(described([url, { kind: 'data', bytes: PNG }, { kind: 'data', bytes: JPEG }]));
  });

  it('an image in a tool result is not sent, and a warning says so', async () => {
    const r = await generateText({
      model: triton('llmapi'),
      messages: [
        { role: 'user', content: 'Take a photo.' },
        {
          role: 'assistant',
          content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'camera', input: {} }],
        },
        {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: 'c1',
              toolName: 'camera',
              output: {
                type: 'content',
                value: [
                  { type: 'text', text: 'Here it is.' },
                  { type: 'file', mediaType: 'image/jpeg', data: { type: 'data', data: JPEG } },
                ],
              },
            },
          ],
        },
      ],
      maxOutputTokens: 5,
    });
    expect(r.warnings?.map((w) => ('feature' in w ? w.feature : w.type))).toContain(
      'non-text tool result parts',
    );
  });

  it('a text-only model refuses an image by name before anything is sent', async () => {
    const before = fake.events().filter((e) => e.model === 'ensemble').length;
    const err = await generateText({
      model: triton('ensemble'),
      messages: [{ role: 'user', content: [{ type: 'image', image: JPEG, mediaType: 'image/jpeg' }] }],
      maxOutputTokens: 20,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/images: model 'ensemble' \(ensemble\) has no image input/);
    expect(fake.events().filter((e) => e.model === 'ensemble').length).toBe(before);
  });
});

describe('AI SDK images and the chat template', () => {
  let fake: FakeTriton;
  let dir: string;
  beforeAll(async () => {
    fake = await startFakeTriton({ itlMs: 1 });
    dir = await mkdtemp(join(tmpdir(), 'trtllm-ai-sdk-images-'));
  });
  afterAll(async () => {
    await fake.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("a template with image markers (a Hugging Face vision template's shape) places one where each image stood", async () => {
    await writeFile(
      join(dir, 'chat_template.jinja'),
      "{% for m in messages %}{% if m.content is string %}{{ m.content }}{% else %}{% for c in m.content %}{% if c.type == 'image' %}<image>{% else %}{{ c.text }}{% endif %}{% endfor %}{% endif %}{% endfor %}",
    );
    const triton = createTriton({ grpcUrl: fake.grpcUrl, tokenizerDir: dir });
    try {
      const r = await generateText({
        model: triton('llmapi'),
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Compare ' },
              { type: 'image', image: new URL(URL_TEXT) },
              { type: 'text', text: ' with ' },
              { type: 'image', image: JPEG, mediaType: 'image/jpeg' },
            ],
          },
        ],
        maxOutputTokens: 200,
        // The request body (the SDK request, with the rendered prompt) is kept only when asked for.
        include: { requestBody: true },
      });
      expect((r.request.body as { prompt: string }).prompt).toBe('Compare <image> with <image>');
      expect(r.text).toBe(described([url, { kind: 'data', bytes: JPEG }]));
    } finally {
      await triton.close();
    }
  });
});
