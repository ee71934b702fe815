import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type GenerateRequest, type ModelConfig, TritonLlmError, tensorStrings } from '../src/index.js';
import { encodeGenerateRequest } from '../src/models/encode-request.js';
import { detectSchema, validateRequest } from '../src/transport-kit.js';
import { spec } from './tensor-spec.js';

function errorOf(run: () => unknown): TritonLlmError {
  try {
    run();
  } catch (err) {
    if (err instanceof TritonLlmError) return err;
    throw err;
  }
  throw new Error('expected a TritonLlmError');
}

function config(name: string, parts: Partial<ModelConfig> & Pick<ModelConfig, 'inputs'>): ModelConfig {
  return {
    name,
    platform: '',
    backend: 'python',
    maxBatchSize: 64,
    outputs: [spec('text_output', 'BYTES', [-1])],
    decoupled: false,
    parameters: {},
    ...parts,
  };
}

// The image inputs as NVIDIA/TensorRT-LLM triton_backend/all_models/ declares them.
const LLMAPI = config('llmapi', {
  inputs: [
    spec('text_input', 'BYTES', [-1], false),
    spec('image_url', 'BYTES', [-1]),
    spec('sampling_param_max_tokens', 'INT32', [1]),
  ],
});
const MULTIMODAL = config('multimodal', {
  platform: 'ensemble',
  backend: '',
  inputs: [
    spec('text_input', 'BYTES', [1], false),
    spec('image_bytes_input', 'UINT8', [-1, -1, -1, -1]),
    spec('image_url_input', 'BYTES', [-1]),
    spec('image_sizes_input', 'INT64', [-1, 2]),
    spec('max_tokens', 'INT32', [1], false),
  ],
});
const BLS = config('tensorrt_llm_bls', {
  inputs: [
    spec('text_input', 'BYTES', [1], false),
    spec('max_tokens', 'INT32', [1], false),
    spec('image_bytes_input', 'UINT8', [-1, -1, -1, -1]),
    spec('image_url_input', 'BYTES', [1]),
  ],
});
const TEXT_ENSEMBLE = config('ensemble', {
  platform: 'ensemble',
  backend: '',
  inputs: [spec('text_input', 'BYTES', [1], false), spec('max_tokens', 'INT32', [1], false)],
});
const RAW = config('tensorrt_llm', {
  backend: 'tensorrtllm',
  inputs: [
    spec('input_ids', 'INT32', [-1]),
    spec('input_lengths', 'INT32', [1], false),
    spec('request_output_len', 'INT32', [1], false),
  ],
});

function encode(model: ModelConfig, request: GenerateRequest) {
  validateRequest(request);
  return encodeGenerateRequest(request, {
    schema: detectSchema(model),
    requestId: '1',
    streaming: false,
  }).request;
}

const JPEG = Uint8Array.of(0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 1, 0xff, 0xd9);

describe('images: validation', () => {
  const base = { prompt: 'what is this?', maxTokens: 4 };
  it.each<[unknown, string, string]>([
    ['not a list', 'images', '"not a list"'],
    [[{ url: 'ftp://host/cat.png' }], 'images[0].url', '"ftp://host/cat.png"'],
    [[{ url: 'file:///etc/passwd' }], 'images[0].url', '"file:///etc/passwd"'],
    [[{ url: 'data:image/png,rawtext' }], 'images[0].url', '"data:image/png,rawtext"'],
    [[{ url: 42 }], 'images[0].url', '42'],
    [
      [{ url: 'https://host/a.png' }, { data: new Uint8Array(0), mediaType: 'image/png' }],
      'images[1].data',
      '0 bytes',
    ],
    [[{ data: JPEG }], 'images[0].mediaType', 'undefined'],
    [[{ data: JPEG, mediaType: 'application/pdf' }], 'images[0].mediaType', '"application/pdf"'],
    [[{ data: 'aGk=', mediaType: 'image/png' }], 'images[0].data', '"aGk="'],
    [[{ url: 'https://host/a.png', data: JPEG, mediaType: 'image/jpeg' }], 'images[0]', 'url'],
    [[{ uri: 'https://host/a.png' }], 'images[0].uri', 'did you mean url'],
    [[null], 'images[0]', 'null'],
  ])('refuses a bad image by field and value (case %#)', (images, field, shown) => {
    const err = errorOf(() => validateRequest({ ...base, images } as unknown as GenerateRequest));
    expect(err.code).toBe('invalid_argument');
    expect(err.field).toBe(field);
    expect(err.message.startsWith(`${field}:`)).toBe(true);
    expect(err.message).toContain(shown);
  });

  it('accepts http(s) URLs, base64 data: URIs and image bytes', () => {
    expect(() =>
      validateRequest({
        ...base,
        images: [
          { url: 'https://example.com/cat.png?size=2' },
          { url: 'http://10.0.0.1:8080/dog.jpg' },
          { url: 'data:image/png;base64,iVBORw0KGgo=' },
          { data: JPEG, mediaType: 'image/jpeg' },
        ],
      }),
    ).not.toThrow();
  });
});

describe('images: mapping to the deployed model', () => {
  const base = { prompt: 'describe', maxTokens: 4 };

  it('sends the LLM-API model every image in image_url, bytes as a data: URI that decodes to them', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 70_000 }),
        fc.constantFrom('image/png', 'image/jpeg', 'image/webp'),
        (data, mediaType) => {
          const request = encode(LLMAPI, {
            ...base,
            images: [{ url: 'https://example.com/a.png' }, { data, mediaType }],
          });
          const tensor = request.inputs.find((t) => t.name === 'image_url');
          expect(tensor?.datatype).toBe('BYTES');
          expect(tensor?.shape).toEqual([1, 2]);
          const [url, uri] = tensorStrings(tensor!);
          expect(url).toBe('https://example.com/a.png');
          const prefix = `data:${mediaType};base64,`;
          expect(uri!.startsWith(prefix)).toBe(true);
          expect(new Uint8Array(Buffer.from(uri!.slice(prefix.length), 'base64'))).toEqual(data);
        },
      ),
      { numRuns: 25 },
    );
  });

  it('sends the multimodal ensemble a list in image_url_input and no image_sizes_input', () => {
    const request = encode(MULTIMODAL, {
      ...base,
      images: [{ url: 'https://example.com/a.png' }, { data: JPEG, mediaType: 'image/jpg' }],
    });
    const tensor = request.inputs.find((t) => t.name === 'image_url_input');
    expect(tensor?.shape).toEqual([1, 2]);
    const [, uri] = tensorStrings(tensor!);
    expect(uri).toBe(`data:image/jpeg;base64,${Buffer.from(JPEG).toString('base64')}`);
    expect(request.inputs.map((t) => t.name)).not.toContain('image_sizes_input');
    expect(request.inputs.map((t) => t.name)).not.toContain('image_bytes_input');
  });

  it('sends the BLS its one image in image_url_input and refuses a second by count', () => {
    const request = encode(BLS, { ...base, images: [{ data: JPEG, mediaType: 'image/jpeg' }] });
    expect(request.inputs.find((t) => t.name === 'image_url_input')?.shape).toEqual([1, 1]);
    const err = errorOf(() =>
      encode(BLS, { ...base, images: [{ url: 'https://a/1.png' }, { url: 'https://a/2.png' }] }),
    );
    expect(err.field).toBe('images');
    expect(err.model).toBe('tensorrt_llm_bls');
    expect(err.message).toContain('takes 1 image per request');
    expect(err.message).toContain('got 2');
  });

  it('refuses non-JPEG bytes where the preprocessing model reads only data:image/jpeg URIs', () => {
    for (const model of [BLS, MULTIMODAL]) {
      const err = errorOf(() => encode(model, { ...base, images: [{ data: JPEG, mediaType: 'image/png' }] }));
      expect(err.code).toBe('invalid_argument');
      expect(err.field).toBe('images[0]');
      expect(err.message).toContain('data:image/png;base64,');
      expect(err.message).toContain('data:image/jpeg;base64,');
    }
  });

  it.each([
    [TEXT_ENSEMBLE, 'ensemble'],
    [RAW, 'tensorrt_llm'],
  ])('a model without an image input refuses images by name (%#)', (model, flavor) => {
    const request: GenerateRequest =
      flavor === 'tensorrt_llm'
        ? { inputIds: [1, 2], maxTokens: 4, images: [{ url: 'https://a/1.png' }] }
        : { ...base, images: [{ url: 'https://a/1.png' }] };
    const err = errorOf(() => encode(model, request));
    expect(err.code).toBe('invalid_argument');
    expect(err.field).toBe('images');
    expect(err.model).toBe(model.name);
    expect(err.message).toContain(`model '${model.name}' (${flavor}) has no image input`);
  });

  it('sends nothing for an empty list', () => {
    const request = encode(TEXT_ENSEMBLE, { ...base, images: [] });
    expect(request.inputs.map((t) => t.name)).toEqual(['text_input', 'max_tokens']);
  });
});
