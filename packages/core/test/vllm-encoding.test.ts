import { describe, expect, it } from 'vitest';
import {
  createTensor,
  type GenerateRequest,
  type ModelConfig,
  TritonLlmError,
  tensorStrings,
} from '../src/index.js';
import { decodeResponse, decodeWants } from '../src/models/decode-response.js';
import { encodeGenerateRequest } from '../src/models/encode-request.js';
import { detectSchema, validateRequest } from '../src/transport-kit.js';
import { spec } from './tensor-spec.js';

// Triton's vLLM backend as its auto_complete_config declares it (vllm_backend src/model.py).
const VLLM: ModelConfig = {
  name: 'vllm_model',
  platform: '',
  backend: 'vllm',
  maxBatchSize: 0,
  decoupled: true,
  parameters: {},
  inputs: [
    spec('text_input', 'BYTES', [1], false),
    spec('image', 'BYTES', [-1]),
    spec('stream', 'BOOL', [1]),
    spec('sampling_parameters', 'BYTES', [1]),
    spec('exclude_input_in_output', 'BOOL', [1]),
    spec('return_finish_reason', 'BOOL', [1]),
    spec('return_cumulative_logprob', 'BOOL', [1]),
    spec('return_logprobs', 'BOOL', [1]),
    spec('return_num_input_tokens', 'BOOL', [1]),
    spec('return_num_output_tokens', 'BOOL', [1]),
    spec('embedding_request', 'BYTES', [1]),
  ],
  outputs: [
    spec('text_output', 'BYTES', [-1]),
    spec('finish_reason', 'BYTES', [-1]),
    spec('cumulative_logprob', 'FP32', [-1]),
    spec('logprobs', 'BYTES', [-1]),
    spec('num_input_tokens', 'UINT32', [1]),
    spec('num_output_tokens', 'UINT32', [-1]),
  ],
};
const schema = detectSchema(VLLM);

function encode(request: GenerateRequest, streaming = false) {
  validateRequest(request);
  return encodeGenerateRequest(request, { schema, requestId: '7', streaming });
}

function inputs(
  request: GenerateRequest,
  streaming = false,
): Map<string, { shape: readonly number[]; value: string }> {
  return new Map(
    encode(request, streaming).request.inputs.map((t) => [
      t.name,
      { shape: t.shape, value: tensorStrings(t).join('|') },
    ]),
  );
}

function sampling(request: GenerateRequest): unknown {
  return JSON.parse(inputs(request).get('sampling_parameters')?.value ?? 'null');
}

function refusal(request: GenerateRequest, streaming = false): TritonLlmError {
  try {
    encode(request, streaming);
  } catch (err) {
    if (err instanceof TritonLlmError) return err;
    throw err;
  }
  throw new Error('accepted');
}

describe('the vllm flavor: encoding', () => {
  it('is detected from text_input and sampling_parameters', () => {
    expect([schema.flavor, schema.backendVersion, schema.supportsStop, schema.cumulativeText]).toEqual([
      'vllm',
      'vllm',
      false,
      false,
    ]);
  });

  it('sends every sampling option as its SamplingParams key', () => {
    expect(
      sampling({
        prompt: 'hi',
        maxTokens: 7,
        temperature: 0.5,
        topP: 0.9,
        topK: 4,
        minTokens: 2,
        seed: 11,
        stopWords: ['\n\n', 'END'],
        presencePenalty: 0.25,
        frequencyPenalty: -0.5,
        repetitionPenalty: 1.5,
        lora: { name: 'sql' },
      }),
    ).toEqual({
      max_tokens: 7,
      temperature: 0.5,
      top_p: 0.9,
      top_k: 4,
      min_tokens: 2,
      seed: 11,
      stop: ['\n\n', 'END'],
      presence_penalty: 0.25,
      frequency_penalty: -0.5,
      repetition_penalty: 1.5,
      lora_name: 'sql',
    });
  });

  it('writes a UINT64 seed past 2^53 as an exact JSON integer', () => {
    const json = inputs({ prompt: 'hi', maxTokens: 1, seed: 18446744073709551615n }).get(
      'sampling_parameters',
    );
    expect(json?.value).toBe('{"max_tokens":1,"seed":18446744073709551615}');
  });

  it('asks for log probs with topLogProbs alternatives, and for the outputs that carry them', () => {
    expect(sampling({ prompt: 'hi', maxTokens: 1, returnLogProbs: true })).toMatchObject({ logprobs: 0 });
    expect(sampling({ prompt: 'hi', maxTokens: 1, returnLogProbs: true, topLogProbs: 3 })).toMatchObject({
      logprobs: 3,
    });
    const encoded = encode({ prompt: 'hi', maxTokens: 1, topLogProbs: 3 });
    const sent = new Map(encoded.request.inputs.map((t) => [t.name, tensorStrings(t)[0]]));
    expect([sent.get('return_logprobs'), sent.get('return_cumulative_logprob')]).toEqual(['true', 'true']);
    expect(encoded.request.outputs).toEqual([
      'text_output',
      'finish_reason',
      'num_input_tokens',
      'num_output_tokens',
      'cumulative_logprob',
      'logprobs',
    ]);
  });

  it('sends guided decoding as structured_outputs, a JSON text the backend parses again', () => {
    const schemaText = '{"type":"object","properties":{"a":{"type":"integer"}}}';
    const cases: [NonNullable<GenerateRequest['guidedDecoding']>, unknown][] = [
      [{ type: 'json_schema', guide: schemaText }, { json: schemaText }],
      [{ type: 'json' }, { json_object: true }],
      [{ type: 'regex', guide: '[0-9]+' }, { regex: '[0-9]+' }],
      [{ type: 'ebnf_grammar', guide: 'root ::= "a"' }, { grammar: 'root ::= "a"' }],
    ];
    for (const [guidedDecoding, params] of cases) {
      const sent = sampling({ prompt: 'hi', maxTokens: 1, guidedDecoding }) as { structured_outputs: string };
      expect(JSON.parse(sent.structured_outputs)).toEqual(params);
    }
    expect(refusal({ prompt: 'hi', maxTokens: 1, guidedDecoding: { type: 'xml' } }).field).toBe(
      'guidedDecoding.type',
    );
  });

  it('shapes every input without a batch dimension, stream per call, prompt excluded and counts asked for', () => {
    const sent = inputs({ prompt: 'hi', maxTokens: 1 }, true);
    expect(Object.fromEntries([...sent].map(([name, t]) => [name, [t.shape, t.value]]))).toEqual({
      text_input: [[1], 'hi'],
      sampling_parameters: [[1], '{"max_tokens":1}'],
      stream: [[1], 'true'],
      exclude_input_in_output: [[1], 'true'],
      return_finish_reason: [[1], 'true'],
      return_num_input_tokens: [[1], 'true'],
      return_num_output_tokens: [[1], 'true'],
    });
    expect(inputs({ prompt: 'hi', maxTokens: 1 }).get('stream')?.value).toBe('false');
  });

  it('sends image bytes and base64 data: URIs as base64 in the image input', () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47]);
    const sent = encode({
      prompt: 'hi',
      maxTokens: 1,
      images: [{ data: png, mediaType: 'image/png' }, { url: 'data:image/jpeg;base64,/9j/4A==' }],
    }).request.inputs.find((t) => t.name === 'image');
    expect(sent?.shape).toEqual([2]);
    expect(tensorStrings(sent!)).toEqual([btoa(String.fromCharCode(...png)), '/9j/4A==']);
    const err = refusal({ prompt: 'hi', maxTokens: 1, images: [{ url: 'https://example.com/a.png' }] });
    expect(err.field).toBe('images[0]');
  });

  it.each([
    ['beamWidth', { beamWidth: 2 }],
    ['numReturnSequences', { numReturnSequences: 2 }],
    ['bestOf', { bestOf: 2 }],
    ['badWords', { badWords: ['x'] }],
    ['endId', { endId: 2 }],
    ['lengthPenalty', { lengthPenalty: 1 }],
    ['returnPerfMetrics', { returnPerfMetrics: true }],
    ['returnContextLogits', { returnContextLogits: true }],
    ['embeddingBias', { embeddingBias: { words: ['a'], weights: [1] } }],
    ['lora.taskId', { lora: { taskId: 1 } }],
    ['lora.path', { lora: { name: 'a', path: '/a' } }],
    ['tensorrtLlmModelName', { tensorrtLlmModelName: 'x' }],
  ] as const)('refuses %s by name, naming the model', (field, extra) => {
    const err = refusal({ prompt: 'hi', maxTokens: 1, ...extra });
    expect([err.code, err.field]).toEqual(['invalid_argument', field]);
    expect(err.message).toContain(`${field}: model 'vllm_model' (vllm) does not support this option`);
  });

  it('takes numReturnSequences 1, which asks for nothing', () => {
    expect(sampling({ prompt: 'hi', maxTokens: 1, numReturnSequences: 1 })).toEqual({ max_tokens: 1 });
  });

  it('refuses echoing the prompt when streaming, as the backend would', () => {
    expect(refusal({ prompt: 'hi', maxTokens: 1, excludeInputInOutput: false }, true).field).toBe(
      'excludeInputInOutput',
    );
    expect(
      inputs({ prompt: 'hi', maxTokens: 1, excludeInputInOutput: false }).get('exclude_input_in_output')
        ?.value,
    ).toBe('false');
  });
});

describe('the vllm flavor: decoding', () => {
  const response = (outputs: Parameters<typeof createTensor>[], final = false) => ({
    model: 'vllm_model',
    modelVersion: '1',
    id: '7',
    parameters: {},
    final,
    outputs: outputs.map((args) => createTensor(...args)),
  });
  const wants = decodeWants({ prompt: 'hi', maxTokens: 1, returnLogProbs: true });

  it("reads vLLM's finish reasons: None is none yet, abort is cancelled", () => {
    const reasons = ['None', 'stop', 'length', 'abort'].map(
      (r) =>
        decodeResponse(
          response([
            ['text_output', 'BYTES', [1], ['x']],
            ['finish_reason', 'BYTES', [1], [r]],
          ]),
          schema,
          wants,
        ).sequences[0]?.finishReason,
    );
    expect(reasons).toEqual([undefined, 'stop', 'length', 'cancelled']);
  });

  it('reads the counts of a response, num_input_tokens a 0-d array as the backend sends it', () => {
    const decoded = decodeResponse(
      response([
        ['text_output', 'BYTES', [1], [' a b']],
        ['num_input_tokens', 'UINT32', [], [5]],
        ['num_output_tokens', 'UINT32', [1], [2]],
      ]),
      schema,
      wants,
    );
    expect([decoded.numInputTokens, decoded.sequences[0]?.tokenCount]).toEqual([5, 2]);
  });

  it('takes the sampled token from the first key of each position, whatever its id', () => {
    // As Python's json.dumps writes vLLM's dicts: the sampled token (id 900, rank 3) first, then the top 2.
    const json =
      '[{"900": {"logprob": -2.5, "rank": 3, "decoded_token": " is"}, ' +
      '"12": {"logprob": -0.5, "rank": 1, "decoded_token": " \\"a\\""}, ' +
      '"7": {"logprob": -1.0, "rank": 2, "decoded_token": "{"}}, ' +
      '{"4": {"logprob": -0.25, "rank": 1, "decoded_token": "."}}]';
    const seq = decodeResponse(
      response([
        ['text_output', 'BYTES', [1], [' is.']],
        ['logprobs', 'BYTES', [1], [json]],
        ['cumulative_logprob', 'FP32', [1], [-2.75]],
      ]),
      schema,
      wants,
    ).sequences[0]!;
    expect(seq.logProbs).toEqual([-2.5, -0.25]);
    expect(seq.logProbTokens?.map((t) => [t.tokenId, t.token, t.rank])).toEqual([
      [900, ' is', 3],
      [4, '.', 1],
    ]);
    expect(seq.topLogProbs?.map((top) => top.map((t) => t.tokenId))).toEqual([[12, 7, 900], [4]]);
    expect(seq.cumLogProb).toBe(-2.75);
  });

  it('reads a NaN cumulative_logprob (log probs not asked for) as none', () => {
    const seq = decodeResponse(
      response([
        ['text_output', 'BYTES', [1], ['x']],
        ['cumulative_logprob', 'FP32', [1], [Number.NaN]],
        ['logprobs', 'BYTES', [1], ['null']],
      ]),
      schema,
      wants,
    ).sequences[0]!;
    expect([seq.cumLogProb, seq.logProbs]).toEqual([undefined, undefined]);
  });
});
