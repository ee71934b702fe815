import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { TritonLlmError } from '@trtllm/sdk';
import type { ParameterValue } from '@trtllm/sdk/transport';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ModelInferRequestSchema } from '../src/gen/inference/grpc_service_pb.js';
import { fromInferParameters, toInferParameters } from '../src/transport/parameters.js';

const value: fc.Arbitrary<ParameterValue> = fc.oneof(
  fc.boolean(),
  fc.string(),
  fc.integer(),
  fc.double({ noNaN: true }),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 64n - 1n }),
);

// What a value reads back as: 64-bit integers that fit a double exactly come back as numbers.
function expected(v: ParameterValue): ParameterValue {
  if (typeof v === 'bigint' && v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER)) {
    return Number(v);
  }
  return Object.is(v, -0) ? 0 : v;
}

describe('request parameters on the wire', () => {
  it('every parameter survives the protobuf round trip with its type', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ minLength: 1 }), value), (params) => {
        const wire = toBinary(
          ModelInferRequestSchema,
          create(ModelInferRequestSchema, { parameters: toInferParameters(params) }),
        );
        const back = fromInferParameters(fromBinary(ModelInferRequestSchema, wire).parameters);
        expect(back).toEqual(Object.fromEntries(Object.entries(params).map(([k, v]) => [k, expected(v)])));
      }),
    );
  });

  it('whole numbers travel as int64 and fractions as double', () => {
    const wire = toInferParameters({ a: 3, b: 0.5, c: 2n ** 63n, d: true });
    expect(wire.a?.parameterChoice).toEqual({ case: 'int64Param', value: 3n });
    expect(wire.b?.parameterChoice).toEqual({ case: 'doubleParam', value: 0.5 });
    expect(wire.c?.parameterChoice).toEqual({ case: 'uint64Param', value: 2n ** 63n });
    expect(wire.d?.parameterChoice).toEqual({ case: 'boolParam', value: true });
  });

  it('a bigint beyond 64 bits is invalid_argument naming the parameter', () => {
    let err: unknown;
    try {
      toInferParameters({ priority: 2n ** 64n });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TritonLlmError);
    expect((err as TritonLlmError).code).toBe('invalid_argument');
    expect((err as TritonLlmError).message).toContain('priority');
  });
});
