import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTriton, type TritonProvider } from '@trtllm/ai-sdk';
import { type FakeTriton, startFakeTriton } from '@trtllm/testing';
import { generateText, streamText } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { described, JPEG, PNG, URL_TEXT, url } from '../../../test/support/images.js';

(globalThis as { AI_SDK_LOG_WARNINGS?: unknown }).AI_SDK_LOG_WARNINGS = false;

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
