import { invalidArgument, TritonLlmError } from '../errors.js';
import type { ImageInput, ModelFlavor } from '../request/request.js';
import type { BindingValue } from './bindings.js';
import type { ModelSchema } from './schema.js';

/**
 * The input each flavor of NVIDIA's model repository takes images by URL in (NVIDIA/TensorRT-LLM
 * `triton_backend/all_models/`): the LLM-API model's `image_url` (STRING [-1]), the multimodal
 * ensemble's `image_url_input` (STRING [-1]) and the BLS's (STRING [1]). Their other image inputs
 * (`image_bytes_input`, `image_input`, `video_bytes_input`) hold decoded or pre-processed pixel
 * tensors, which the client does not make from image files; `image_sizes_input` describes those.
 */
const IMAGE_URL_INPUTS: Partial<Record<ModelFlavor, string>> = {
  llmapi: 'image_url',
  ensemble: 'image_url_input',
  bls: 'image_url_input',
};

/**
 * The preprocessing model behind `image_url_input` decodes a `data:` URI only when it starts with
 * `data:image/jpeg;base64,`; it fetches any other URL with an HTTP GET, which fails for `data:`.
 */
const PREPROCESSING_DATA_URL = 'data:image/jpeg;base64,';

/** The input and URLs `images` become on the deployed model, or why it cannot take them. */
export function encodeImages(
  images: readonly ImageInput[],
  schema: ModelSchema,
): { readonly name: string; readonly value: BindingValue } {
  const name = IMAGE_URL_INPUTS[schema.flavor];
  const spec = name === undefined ? undefined : schema.inputs.get(name);
  if (name === undefined || spec === undefined) {
    throw new TritonLlmError(
      'invalid_argument',
      `images: model '${schema.model}' (${schema.flavor}) has no image input ` +
        `(${name === undefined ? 'its flavor takes no images' : `it declares no '${name}'`}); ` +
        'send the prompt without images, or call a multimodal model (LLM-API with image_url, the multimodal ensemble or a BLS with image_url_input)',
      { model: schema.model, field: 'images' },
    );
  }
  // A fixed dimension (the BLS's [1]) is how many images one request carries.
  const fixed = spec.dims.at(-1) ?? -1;
  if (fixed > 0 && images.length > fixed) {
    throw new TritonLlmError(
      'invalid_argument',
      `images: model '${schema.model}' (${schema.flavor}) takes ${fixed} image${fixed === 1 ? '' : 's'} per request ` +
        `('${name}' is declared [${spec.dims.join(', ')}]); got ${images.length}`,
      { model: schema.model, field: 'images' },
    );
  }
  const throughPreprocessing = schema.flavor !== 'llmapi';
  const urls = images.map((image, i) => {
    const url = 'url' in image ? image.url : dataUrl(image.data, image.mediaType);
    if (throughPreprocessing && url.startsWith('data:') && !url.startsWith(PREPROCESSING_DATA_URL)) {
      throw invalidArgument(
        `images[${i}]`,
        url.slice(0, url.indexOf(',') + 1),
        `model '${schema.model}' (${schema.flavor}) reads a data: URI only as ${PREPROCESSING_DATA_URL} ` +
          '(its preprocessing fetches any other URL over HTTP); send JPEG bytes or an http(s) URL',
      );
    }
    return url;
  });
  return { name, value: { kind: 'list', values: urls } };
}

/** `data:<type>;base64,<bytes>`; `image/jpg` is written as the registered `image/jpeg`. */
export function dataUrl(data: Uint8Array, mediaType: string): string {
  const type = mediaType.toLowerCase() === 'image/jpg' ? 'image/jpeg' : mediaType.toLowerCase();
  return `data:${type};base64,${base64(data)}`;
}

/** Base64 through the web platform's `btoa` (core has no Node built-ins), in chunks the call stack takes. */
function base64(data: Uint8Array): string {
  const CHUNK = 0x8000;
  let binary = '';
  for (let i = 0; i < data.length; i += CHUNK) {
    binary += String.fromCharCode(...data.subarray(i, i + CHUNK));
  }
  return btoa(binary);
}
