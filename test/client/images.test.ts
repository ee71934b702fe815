import { createHash, randomBytes } from 'node:crypto';
import { type ImageInput, TritonLlm, TritonLlmError } from '@trtllm/sdk';
import { describe, expect, it } from 'vitest';
import { PROTOCOLS, useFakeTriton } from '../support/fake.js';

/**
 * What the fake's multimodal models answer (GENERATOR.md "Images"): the count, then per image its
 * kind, length and the first 8 hex digits of the SHA-256 of the bytes it received (a data: URI
 * decoded; an http(s) URL's own text, which the fake does not fetch). Worked out here from the
 * images the test sends, so the reply proves they arrived byte for byte.
 */
function expectedReply(images: readonly ImageInput[]): string {
  const each = images.map((image, i) => {
    const [kind, bytes] =
      'url' in image
        ? (['url', Buffer.from(image.url)] as const)
        : (['data', Buffer.from(image.data)] as const);
    return `#${i + 1} ${kind} ${bytes.length} bytes ${createHash('sha256').update(bytes).digest('hex').slice(0, 8)}`;
  });
  return `${images.length} image${images.length === 1 ? '' : 's'}: ${each.join('; ')}.`;
}

// A JPEG's start-of-image and JFIF header, then random bytes (every byte value, including the ones
// that are not valid UTF-8 and the ones base64 writes as + and /).
const JPEG = new Uint8Array(Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), randomBytes(3000)]));
const PNG = new Uint8Array(Buffer.concat([Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'), randomBytes(5000)]));
const URL_IMAGE = { url: 'https://example.com/images/cat.png?size=large' } as const;

describe.each(PROTOCOLS)('images over %s', (protocol) => {
  const fake = useFakeTriton();
  const client = (model: string) => new TritonLlm({ transport: fake.transport(protocol), model });

  it('the LLM-API model receives every image intact (bytes of any image type, and URLs)', async () => {
    const images: ImageInput[] = [
      { data: PNG, mediaType: 'image/png' },
      URL_IMAGE,
      { data: JPEG, mediaType: 'image/jpeg' },
    ];
    const result = await client('llmapi').generate({ prompt: 'What is in these?', images, maxTokens: 400 });
    expect(result.text).toBe(expectedReply(images));
  });

  it('the LLM-API model streams the same reply', async () => {
    const images: ImageInput[] = [{ data: PNG, mediaType: 'image/png' }];
    let text = '';
    for await (const chunk of client('llmapi').stream({ prompt: 'Describe.', images, maxTokens: 400 }))
      text += chunk.text;
    expect(text).toBe(expectedReply(images));
  });

  it('the multimodal ensemble receives its list of images intact', async () => {
    const images: ImageInput[] = [URL_IMAGE, { data: JPEG, mediaType: 'image/jpeg' }];
    const result = await client('multimodal').generate({ prompt: 'Compare them.', images, maxTokens: 400 });
    expect(result.text).toBe(expectedReply(images));
  });

  it('the BLS receives its one image intact', async () => {
    const images: ImageInput[] = [{ data: JPEG, mediaType: 'image/jpeg' }];
    const result = await client('tensorrt_llm_bls_per_token').generate({
      prompt: 'Describe.',
      images,
      maxTokens: 400,
    });
    expect(result.text).toBe(expectedReply(images));
  });

  it.each(['ensemble', 'tensorrt_llm'])(
    'the text-only model %s refuses images by name before sending',
    async (model) => {
      const before = fake
        .triton()
        .events()
        .filter((e) => e.model === model).length;
      const request =
        model === 'tensorrt_llm'
          ? { inputIds: [5, 6], maxTokens: 4, images: [URL_IMAGE] }
          : { prompt: 'hi', maxTokens: 4, images: [URL_IMAGE] };
      const err = await client(model)
        .generate(request)
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TritonLlmError);
      expect(err).toMatchObject({ code: 'invalid_argument', field: 'images', model });
      expect((err as Error).message).toContain(`model '${model}'`);
      expect((err as Error).message).toContain('has no image input');
      expect(
        fake
          .triton()
          .events()
          .filter((e) => e.model === model).length,
      ).toBe(before);
    },
  );
});
