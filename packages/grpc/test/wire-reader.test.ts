import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { createTensor, type Tensor } from '@trtllm/sdk';
import { encodeTensorData } from '@trtllm/sdk/transport';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FrameReader, frameMessage } from '../src/call/messages.js';
import { ModelStreamInferResponseSchema } from '../src/gen/inference/grpc_service_pb.js';
import { fromModelInferResponse } from '../src/transport/infer-response.js';
import { readStreamResponse } from '../src/transport/wire-reader.js';

// The lean reader must read exactly what the generated decoder reads; the generated decoder and
// the existing conversion are the reference.
const parameter = fc.oneof(
  fc.boolean().map((value) => ({ case: 'boolParam' as const, value })),
  fc
    .bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })
    .map((value) => ({ case: 'int64Param' as const, value })),
  fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map((value) => ({ case: 'uint64Param' as const, value })),
  fc.string().map((value) => ({ case: 'stringParam' as const, value })),
  fc.double({ noNaN: true }).map((value) => ({ case: 'doubleParam' as const, value })),
);
const parameterName = fc.oneof(
  fc.constantFrom('triton_final_response', 'sequence_index', '__proto__', 'constructor'),
  fc.string({ maxLength: 12 }),
);

const output = fc.oneof(
  fc.array(fc.string({ maxLength: 8 }), { maxLength: 3 }).map((v) => ['BYTES', v] as const),
  fc
    .array(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), { maxLength: 4 })
    .map((v) => ['INT32', v] as const),
  fc.array(fc.boolean(), { maxLength: 4 }).map((v) => ['BOOL', v] as const),
  fc.array(fc.float({ noNaN: true }), { maxLength: 4 }).map((v) => ['FP32', v] as const),
);

const response = fc.record({
  modelName: fc.string({ maxLength: 16 }),
  modelVersion: fc.constantFrom('', '1', '42'),
  id: fc.string({ maxLength: 16 }),
  parameters: fc.array(fc.tuple(parameterName, parameter), { maxLength: 4 }),
  outputs: fc.array(fc.tuple(fc.constantFrom('text_output', 'output_ids', 'finish_reason', 'x'), output), {
    maxLength: 3,
  }),
});

type Generated = typeof response extends fc.Arbitrary<infer T> ? T : never;

function encode(r: Generated): Buffer {
  const tensors: Tensor[] = r.outputs.map(([name, [datatype, values]]) =>
    createTensor(name, datatype, [1, values.length], values as never),
  );
  const message = create(ModelStreamInferResponseSchema, {
    inferResponse: {
      modelName: r.modelName,
      modelVersion: r.modelVersion,
      id: r.id,
      parameters: Object.fromEntries(r.parameters.map(([k, p]) => [k, { parameterChoice: p }])),
      outputs: tensors.map((t) => ({ name: t.name, datatype: t.datatype, shape: t.shape.map(BigInt) })),
      rawOutputContents: tensors.map((t) => encodeTensorData(t)),
    },
  });
  return Buffer.from(toBinary(ModelStreamInferResponseSchema, message));
}

const plain = (t: Tensor) => ({ ...t, data: Array.from(t.data as ArrayLike<unknown>) });

/** The lean reader reads `bytes` as the generated decoder and the existing conversion do. */
function expectReadAsReference(bytes: Buffer, id: string): void {
  const lean = readStreamResponse(bytes, id);
  const reference = fromModelInferResponse(
    fromBinary(ModelStreamInferResponseSchema, bytes).inferResponse!,
    false,
  );
  if (typeof lean === 'string') throw new Error(`read as an error: ${lean}`);
  expect(lean.model).toBe(reference.model);
  expect(lean.modelVersion).toBe(reference.modelVersion);
  expect(lean.id).toBe(reference.id);
  expect(Object.entries(lean.parameters)).toEqual(Object.entries(reference.parameters));
  expect(lean.outputs.map(plain)).toEqual(reference.outputs.map(plain));
  expect(lean.wireFinal).toBe(reference.parameters.triton_final_response === true);
}

describe('the lean response reader', () => {
  it('reads every response as the generated decoder and its conversion do', () => {
    fc.assert(
      fc.property(response, (r) => expectReadAsReference(encode(r), r.id)),
      { numRuns: 400 },
    );
  });

  it('reads responses that repeat their parameters and outputs (a stream) as the generated decoder does', () => {
    // One value per output (shape [1, 1], as streamed tokens have): the runs the reader remembers.
    const single = response.map((r) => ({
      ...r,
      outputs: r.outputs.map(([name, [datatype, values]]) => [name, [datatype, values.slice(0, 1)]] as const),
    }));
    fc.assert(
      fc.property(
        fc.array(single, { minLength: 1, maxLength: 6 }),
        fc.array(fc.tuple(fc.nat(), fc.string({ maxLength: 6 })), { minLength: 1, maxLength: 16 }),
        (pool, picks) => {
          for (const [k, [pick, text]] of picks.entries()) {
            const base = pool[pick % pool.length]!;
            // The same parameters and outputs with new contents and id, as the next token brings.
            const r = {
              ...base,
              id: `${base.id}${k}`,
              outputs: base.outputs.map(([name, [datatype, values]]) =>
                datatype === 'BYTES' && values.length === 1
                  ? ([name, [datatype, [text]]] as const)
                  : ([name, [datatype, values]] as const),
              ),
            } as Generated;
            expectReadAsReference(encode(r), r.id);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('reads an id through the known decimal ids as the id the server sent, never a look-alike', () => {
    const decimal = fc.bigInt({ min: 0n, max: 10n ** 17n }).map(String);
    const id = fc.oneof(
      decimal,
      decimal.map((d) => `0${d}`),
      decimal.map((d) => `-${d}`),
      decimal.map((d) => `${d} `),
      fc.string({ maxLength: 16 }),
    );
    fc.assert(
      fc.property(response, id, fc.array(decimal, { maxLength: 6 }), (r, sent, others) => {
        // The shared call knows its members' decimal ids by value; the sent id's value may be one.
        const known = new Map<number, string>();
        for (const d of [...others, sent.replace(/^[-0]+|\s+$/g, '') || '0']) {
          const value = Number(d);
          if (/^(0|[1-9]\d{0,14})$/.test(d)) known.set(value, d);
        }
        const bytes = encode({ ...r, id: sent });
        const lean = readStreamResponse(bytes, undefined, 0, bytes.length, known);
        if (typeof lean === 'string') throw new Error(`read as an error: ${lean}`);
        expect(lean.id).toBe(fromBinary(ModelStreamInferResponseSchema, bytes).inferResponse!.id);
      }),
      { numRuns: 400 },
    );
  });

  it("returns the server's error_message as text", () => {
    const bytes = toBinary(
      ModelStreamInferResponseSchema,
      create(ModelStreamInferResponseSchema, { errorMessage: 'in ensemble: unknown input' }),
    );
    expect(readStreamResponse(Buffer.from(bytes))).toBe('in ensemble: unknown input');
  });

  it('refuses a message cut inside a field as protocol', () => {
    const bytes = encode({
      modelName: 'ensemble',
      modelVersion: '1',
      id: '7',
      parameters: [],
      outputs: [['text_output', ['BYTES', ['hello']]]],
    });
    expect(() => readStreamResponse(bytes.subarray(0, bytes.length - 3))).toThrow(
      expect.objectContaining({ code: 'protocol' }),
    );
  });
});

describe('gRPC framing', () => {
  it('gives back every message, in order, however the DATA chunks cut the frames', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ maxLength: 40 }), { minLength: 1, maxLength: 6 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        (messages, cuts) => {
          const wire = Buffer.concat(messages.map((m) => frameMessage(m, false)));
          const points = [...new Set(cuts.map((c) => c % (wire.length + 1)))].sort((a, b) => a - b);
          const reader = new FrameReader(1 << 20);
          const got: number[][] = [];
          const sink = {
            message: (m: Buffer, start: number, end: number, compressed: boolean) => {
              expect(compressed).toBe(false);
              got.push([...m.subarray(start, end)]);
              return true;
            },
          };
          let at = 0;
          for (const p of [...points, wire.length]) {
            reader.push(wire, at, p, sink);
            at = p;
          }
          expect(got).toEqual(messages.map((m) => [...m]));
          expect(reader.incomplete).toBe(false);
        },
      ),
    );
  });

  it('refuses a message over maxReceiveMessageBytes on its prefix, before any of it arrives', () => {
    const reader = new FrameReader(4);
    // Only the 5-byte prefix of a 1.9 GB message: refused without waiting for (or keeping) its body.
    const prefix = Buffer.alloc(5);
    prefix.writeUInt32BE(1_900_000_000, 1);
    expect(() => reader.push(prefix, 0, prefix.length, { message: () => true })).toThrow(
      /a message of 1900000000 bytes, more than maxReceiveMessageBytes 4/,
    );
    // A prefix cut over two chunks is checked all the same.
    const split = new FrameReader(4);
    split.push(prefix, 0, 3, { message: () => true });
    expect(() => split.push(prefix, 3, prefix.length, { message: () => true })).toThrow(
      /more than maxReceiveMessageBytes 4/,
    );
  });
});
