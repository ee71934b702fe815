import { createHash } from 'node:crypto';

/**
 * The start of a JPEG file (SOI, APP0 'JFIF'): the AI SDK tells its media type from these bytes, and
 * NVIDIA's preprocessing reads data: URIs only as JPEG.
 */
export const JPEG = Uint8Array.from([
  0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1,
]);
/** The start of a PNG file (signature, IHDR). */
export const PNG = Uint8Array.from([
  0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52,
]);
/** An image URL, which neither server fetches. */
export const URL_TEXT = 'https://example.com/cat.png';

/** One image as the multimodal models receive it: bytes (a data: URI) or a URL's text. */
export interface SentImage {
  readonly kind: 'data' | 'url';
  readonly bytes: Uint8Array;
}

/** {@link URL_TEXT} as the multimodal models receive it. */
export const url: SentImage = { kind: 'url', bytes: new TextEncoder().encode(URL_TEXT) };

/**
 * The multimodal models' reply on the fake and on the real server (GENERATOR.md "Images"): the
 * count, then per image whether it came as bytes (a data: URI) or a URL (never fetched), its byte
 * length and the first 8 hex digits of its SHA-256. Computed here, not taken from the fake, so the
 * tests check the fake's reply rather than repeat it.
 */
export function described(images: readonly SentImage[]): string {
  const each = images.map(
    (image, i) =>
      `#${i + 1} ${image.kind} ${image.bytes.length} bytes ${createHash('sha256').update(image.bytes).digest('hex').slice(0, 8)}`,
  );
  return `${images.length} image${images.length === 1 ? '' : 's'}: ${each.join('; ')}.`;
}
