/**
 * Images of a multimodal request (GENERATOR.md "Images"). The fake loads no picture: it answers with
 * a text that names what it received, so a test can tell an image arrived intact: the count, then
 * for each image its bytes (a `data:` URI, decoded) or its URL (an http(s) URL, which the fake does
 * not fetch) with the length and the first 8 hex digits of their SHA-256:
 * `2 images: #1 data 14 bytes 1a2b3c4d; #2 url 25 bytes 9f8e7d6c.`
 */
import { createHash } from 'node:crypto';
import { TritonError } from '../errors.js';
import { type Inputs, textsInput } from './inputs.js';

/** The LLM-API model's input, then the multimodal ensemble's and the BLS's. */
const IMAGE_INPUTS = ['image_url', 'image_url_input'] as const;

/**
 * NVIDIA's preprocessing model decodes a `data:` URI only with this prefix; any other URL it fetches
 * with `requests.get`, which has no adapter for `data:` and fails with this message.
 */
const PREPROCESSING_DATA_URL = 'data:image/jpeg;base64,';

const DATA_URL = /^data:([^,;]+)((?:;[^,;]+)*?)(;base64)?,(.*)$/s;

/** One received image: its bytes, and whether they came in a `data:` URI or are the URL's text. */
interface ReceivedImage {
  readonly kind: 'data' | 'url';
  readonly bytes: Uint8Array;
}

function received(url: string, viaPreprocessing: boolean): ReceivedImage {
  const data = DATA_URL.exec(url);
  if (data === null) return { kind: 'url', bytes: new TextEncoder().encode(url) };
  if (viaPreprocessing && !url.startsWith(PREPROCESSING_DATA_URL)) {
    throw new TritonError('INTERNAL', `No connection adapters were found for '${url}'`);
  }
  const payload = data[4] ?? '';
  const bytes =
    data[3] === undefined
      ? new TextEncoder().encode(decodeURIComponent(payload))
      : new Uint8Array(Buffer.from(payload, 'base64'));
  return { kind: 'data', bytes };
}

/**
 * The reply text naming the images of a request, or undefined without images. The multimodal
 * ensemble and the BLS take them through the preprocessing model, whose `data:` rule applies.
 */
export function imagesScript(inputs: Inputs): string | undefined {
  for (const name of IMAGE_INPUTS) {
    const urls = textsInput(inputs, name);
    if (urls === undefined || urls.length === 0) continue;
    const images = urls.map((url) => received(url, name === 'image_url_input'));
    const each = images.map((image, i) => {
      const hash = createHash('sha256').update(image.bytes).digest('hex').slice(0, 8);
      return `#${i + 1} ${image.kind} ${image.bytes.length} bytes ${hash}`;
    });
    return `${images.length} image${images.length === 1 ? '' : 's'}: ${each.join('; ')}.`;
  }
  return undefined;
}
