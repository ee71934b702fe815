import { create, toBinary } from '@bufbuild/protobuf';
import { createTensor, type InferRequest, TritonLlmError } from '@trtllm/sdk';
import type { ParameterValue } from '@trtllm/sdk/transport';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ModelInferRequestSchema } from '../src/gen/inference/grpc_service_pb.js';
import { toModelInferRequest } from '../src/transport/infer-request.js';
import { STREAM_PARAMETERS } from '../src/transport/stream-codec.js';
import { writeModelInferRequest } from '../src/transport/wire-writer.js';

// The hand-written writer must produce exactly what protobuf-es's generated encoder produces from
// the existing conversion: that pair is the reference.
const reference = (request: InferRequest, extra?: typeof STREAM_PARAMETERS) =>
  Buffer.from(
    toBinary(ModelInferRequestSchema, create(ModelInferRequestSchema, toModelInferRequest(request, extra))),
  );

const parameterValue: fc.Arbitrary<ParameterValue> = fc.oneof(
  fc.boolean(),
  fc.string(),
  fc.integer({ min: -(2 ** 40), max: 2 ** 40 }),
  fc.constantFrom(0, -1, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER),
  fc.double({ noNaN: true }),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 64n - 1n }),
);
const parameterName = fc.oneof(
  fc.constantFrom('triton_enable_empty_final_response', 'priority', '__proto__', 'constructor', '', '7'),
  fc.string({ maxLength: 12 }),
);
const input = fc.oneof(
  fc
    .array(fc.string({ maxLength: 40 }), { minLength: 1, maxLength: 3 })
    .map((v) => createTensor('text_input', 'BYTES', [1, v.length], v)),
  fc
    .array(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), { maxLength: 300 })
    .map((v) => createTensor('input_ids', 'INT32', [1, v.length], v)),
  fc.boolean().map((v) => createTensor('streaming', 'BOOL', [1, 1], [v])),
  fc
    .array(fc.float({ noNaN: true }), { maxLength: 5 })
    .map((v) => createTensor('temperature', 'FP32', [v.length], v)),
);
const request: fc.Arbitrary<InferRequest> = fc.record(
  {
    model: fc.constantFrom('ensemble', 'tensorrt_llm', 'tensorrt_llm_bls', '', 'modèle'),
    modelVersion: fc.constantFrom('', '1', '42'),
    id: fc.string({ maxLength: 20 }),
    inputs: fc.array(input, { maxLength: 4 }),
    outputs: fc.array(fc.constantFrom('text_output', 'output_ids', 'cum_log_probs'), { maxLength: 3 }),
    parameters: fc.dictionary(parameterName, parameterValue, { maxKeys: 4 }),
  },
  { requiredKeys: ['model', 'id', 'inputs'] },
);

describe('ModelInferRequest writer', () => {
  it('writes the bytes protobuf-es writes, with and without the stream parameters', () => {
    fc.assert(
      fc.property(request, fc.boolean(), (r, streamed) => {
        const extra = streamed ? STREAM_PARAMETERS : undefined;
        expect(writeModelInferRequest(r, extra).equals(reference(r, extra))).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('refuses what the conversion refuses, with the same error', () => {
    const bad: InferRequest[] = [
      { model: 'm', id: '1', inputs: [{ name: 'x', datatype: 'INT32', shape: [-1], data: Int32Array.of() }] },
      { model: 'm', id: '1', inputs: [], parameters: { big: 2n ** 64n } },
      { model: 'm', id: '1', inputs: [], parameters: { odd: {} as unknown as string } },
    ];
    for (const r of bad) {
      let expected: unknown;
      try {
        reference(r);
      } catch (err) {
        expected = err;
      }
      expect(expected).toBeInstanceOf(TritonLlmError);
      expect(() => writeModelInferRequest(r)).toThrow((expected as Error).message);
    }
  });
});
