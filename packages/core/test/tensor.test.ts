import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TritonLlmError } from '../src/errors.js';
import { decodeTensorData, encodeTensorData } from '../src/tensors/codec.js';
import {
  bytesPerElement,
  DATA_TYPES,
  type DataType,
  dataTypeFromConfig,
  elementCount,
  isDataType,
} from '../src/tensors/data-types.js';
import {
  tensorBigInts,
  tensorBooleans,
  tensorBytes,
  tensorNumbers,
  tensorStrings,
} from '../src/tensors/readers.js';
import { createTensor, type Tensor, type TensorData } from '../src/tensors/tensor.js';

function thrown(fn: () => unknown): TritonLlmError {
  try {
    fn();
  } catch (err) {
    if (err instanceof TritonLlmError) return err;
    throw err;
  }
  throw new Error('expected a TritonLlmError, nothing was thrown');
}

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join(' ');
}

/** Element-wise equality that tells NaN, 0 and -0 apart the way the wire does. */
function sameElements(actual: TensorData, expected: ArrayLike<unknown>): void {
  expect(actual.length).toBe(expected.length);
  for (let i = 0; i < expected.length; i++) {
    const a: unknown = actual[i];
    const e = expected[i];
    if (a instanceof Uint8Array) expect(Array.from(a)).toEqual(Array.from(e as Uint8Array));
    else expect(Object.is(a, e), `element ${i}: ${String(a)} vs ${String(e)}`).toBe(true);
  }
}

function roundTrip(t: Tensor): TensorData {
  return decodeTensorData(t.datatype, t.shape, encodeTensorData(t));
}

describe('data type names', () => {
  it('lists the 14 wire names once each', () => {
    expect(new Set(DATA_TYPES).size).toBe(14);
    expect(DATA_TYPES).toContain('BF16');
    expect(DATA_TYPES.every(isDataType)).toBe(true);
    expect(isDataType('STRING')).toBe(false);
    expect(isDataType('int32')).toBe(false);
  });

  it.each([
    ['TYPE_INT32', 'INT32'],
    ['TYPE_STRING', 'BYTES'],
    ['TYPE_BF16', 'BF16'],
    ['TYPE_BOOL', 'BOOL'],
    ['TYPE_UINT64', 'UINT64'],
    ['FP16', 'FP16'],
    ['BYTES', 'BYTES'],
  ])('reads the config name %s as %s', (name, wire) => {
    expect(dataTypeFromConfig(name)).toBe(wire);
  });

  it.each(['TYPE_INVALID', 'TYPE_BYTES', 'STRING', 'int32', 'TYPE_FP8', ''])(
    'refuses %j as protocol',
    (name) => {
      const err = thrown(() => dataTypeFromConfig(name));
      expect(err.code).toBe('protocol');
      expect(err.message).toContain(JSON.stringify(name));
    },
  );

  it('gives the wire size of each element, none for BYTES', () => {
    const sizes = Object.fromEntries(DATA_TYPES.map((dt) => [dt, bytesPerElement(dt)]));
    expect(sizes).toEqual({
      BOOL: 1,
      UINT8: 1,
      INT8: 1,
      UINT16: 2,
      INT16: 2,
      FP16: 2,
      BF16: 2,
      UINT32: 4,
      INT32: 4,
      FP32: 4,
      UINT64: 8,
      INT64: 8,
      FP64: 8,
      BYTES: undefined,
    });
  });
});

describe('elementCount', () => {
  it.each([
    [[], 1],
    [[7], 7],
    [[2, 3, 4], 24],
    [[3, 0, 5], 0],
  ])('of %j is %i', (shape, count) => {
    expect(elementCount(shape)).toBe(count);
  });

  it.each([[[-1]], [[2, 1.5]], [[Number.NaN]], [[2 ** 40, 2 ** 40]]])('refuses %j', (shape) => {
    const err = thrown(() => elementCount(shape));
    expect(err.code).toBe('invalid_argument');
    expect(err.message).toMatch(/^shape: /);
  });
});

describe('known byte layouts', () => {
  it.each<[DataType, number[], unknown[], string]>([
    ['BYTES', [1, 1], ['hi'], '02 00 00 00 68 69'],
    ['BYTES', [2], ['', 'é'], '00 00 00 00 02 00 00 00 c3 a9'],
    ['FP16', [1], [1], '00 3c'],
    ['FP16', [2], [-2, 65504], '00 c0 ff 7b'],
    ['BF16', [1], [1], '80 3f'],
    ['FP32', [1], [1], '00 00 80 3f'],
    ['FP64', [1], [-2], '00 00 00 00 00 00 00 c0'],
    ['BOOL', [3], [true, false, true], '01 00 01'],
    ['INT8', [2], [-1, 127], 'ff 7f'],
    ['UINT8', [2], [0, 255], '00 ff'],
    ['INT16', [1], [-2], 'fe ff'],
    ['UINT16', [1], [0x1234], '34 12'],
    ['INT32', [2], [1, -2], '01 00 00 00 fe ff ff ff'],
    ['UINT32', [1], [0xdeadbeef], 'ef be ad de'],
    ['INT64', [1], [-2n], 'fe ff ff ff ff ff ff ff'],
    ['UINT64', [1], [0x0102030405060708n], '08 07 06 05 04 03 02 01'],
    ['INT32', [2, 0], [], ''],
  ])('%s %j %s packs to [%s]', (datatype, shape, values, bytes) => {
    const t = createTensor('x', datatype, shape, values as (number | bigint | boolean | string)[]);
    expect(hex(encodeTensorData(t))).toBe(bytes);
  });
});

const shapes = fc.array(fc.integer({ min: 0, max: 4 }), { maxLength: 3 });

/** A shape and exactly as many values as it holds. */
function filled<T>(element: fc.Arbitrary<T>): fc.Arbitrary<[number[], T[]]> {
  return shapes.chain((shape) => {
    const n = shape.reduce((a, b) => a * b, 1);
    return fc
      .array(element, { minLength: n, maxLength: n })
      .map((values): [number[], T[]] => [shape, values]);
  });
}

const int = (min: number, max: number) => fc.integer({ min, max });

describe('encode then decode returns the input', () => {
  const integerTypes: [DataType, fc.Arbitrary<number | bigint>][] = [
    ['INT8', int(-128, 127)],
    ['UINT8', int(0, 255)],
    ['INT16', int(-32768, 32767)],
    ['UINT16', int(0, 65535)],
    ['INT32', int(-(2 ** 31), 2 ** 31 - 1)],
    ['UINT32', fc.nat({ max: 2 ** 32 - 1 })],
    ['INT64', fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })],
    ['UINT64', fc.bigInt({ min: 0n, max: 2n ** 64n - 1n })],
  ];

  it.each(integerTypes)('%s', (datatype, element) => {
    fc.assert(
      fc.property(filled(element), ([shape, values]) => {
        const t = createTensor('x', datatype, shape, values);
        sameElements(roundTrip(t), values);
      }),
    );
  });

  it.each<[DataType, bigint]>([
    ['INT64', -(2n ** 63n)],
    ['INT64', 2n ** 63n - 1n],
    ['UINT64', 2n ** 64n - 1n],
    ['UINT64', 0n],
  ])('%s extreme %s', (datatype, value) => {
    expect(
      tensorBigInts(createTensor('x', datatype, [1], roundTrip(createTensor('x', datatype, [1], [value])))),
    ).toEqual([value]);
  });

  it('FP32, NaN, infinities and -0 included', () => {
    fc.assert(
      fc.property(filled(fc.float()), ([shape, values]) => {
        sameElements(roundTrip(createTensor('x', 'FP32', shape, values)), values);
      }),
    );
  });

  it('FP64, NaN, infinities and -0 included', () => {
    fc.assert(
      fc.property(filled(fc.double()), ([shape, values]) => {
        sameElements(roundTrip(createTensor('x', 'FP64', shape, values)), values);
      }),
    );
  });

  it('BOOL', () => {
    fc.assert(
      fc.property(filled(fc.boolean()), ([shape, values]) => {
        expect(roundTrip(createTensor('x', 'BOOL', shape, values))).toEqual(values);
      }),
    );
  });

  it('BYTES with arbitrary bytes', () => {
    fc.assert(
      fc.property(filled(fc.uint8Array({ maxLength: 40 })), ([shape, values]) => {
        sameElements(roundTrip(createTensor('x', 'BYTES', shape, values)), values);
      }),
    );
  });

  it('BYTES with arbitrary text', () => {
    fc.assert(
      fc.property(filled(fc.string({ unit: 'binary' })), ([shape, values]) => {
        const decoded = roundTrip(createTensor('x', 'BYTES', shape, values));
        expect(tensorStrings({ name: 'x', datatype: 'BYTES', shape, data: decoded })).toEqual(values);
      }),
    );
  });

  it.each<['FP16' | 'BF16', number, number]>([
    ['FP16', 0x7bff, 0x7c00],
    ['BF16', 0x7f7f, 0x7f80],
  ])('%s: every representable value, NaN included, comes back unchanged', (datatype, maxFinite, infinity) => {
    const view = new DataView(new ArrayBuffer(2));
    const halfValue = (bits: number) => {
      view.setUint16(0, bits, true);
      return (decodeTensorData(datatype, [], new Uint8Array(view.buffer)) as Float32Array)[0]!;
    };
    expect(halfValue(maxFinite)).toBe(datatype === 'FP16' ? 65504 : 3.3895313892515355e38);
    expect(halfValue(infinity)).toBe(Number.POSITIVE_INFINITY);
    fc.assert(
      fc.property(filled(fc.integer({ min: 0, max: 0xffff }).map(halfValue)), ([shape, values]) => {
        sameElements(roundTrip(createTensor('x', datatype, shape, values)), values);
      }),
    );
  });

  it.each(['FP16', 'BF16'] as const)('%s: any number comes back as its 16-bit rounding', (datatype) => {
    fc.assert(
      fc.property(filled(fc.double()), ([shape, values]) => {
        const t = createTensor('x', datatype, shape, values);
        // createTensor already holds the rounded values; the wire must carry exactly those.
        sameElements(roundTrip(t), t.data);
        // ...and the same bytes come out of packing the unrounded numbers directly.
        const direct = encodeTensorData({ name: 'x', datatype, shape, data: Float64Array.from(values) });
        expect(hex(direct)).toBe(hex(encodeTensorData(t)));
      }),
    );
  });
});

describe('decoding from message subarrays', () => {
  const samples: [DataType, unknown[]][] = [
    ['INT16', [-3, 4]],
    ['UINT16', [65535, 1]],
    ['INT32', [-(2 ** 31), 7]],
    ['UINT32', [2 ** 32 - 1, 2]],
    ['INT64', [-(2n ** 63n), 5n]],
    ['UINT64', [2n ** 64n - 1n, 9n]],
    ['FP16', [0.5, -1]],
    ['BF16', [2, -0.25]],
    ['FP32', [1.5, -2.25]],
    ['FP64', [Math.PI, -1e300]],
    ['BOOL', [false, true]],
    ['BYTES', ['ab', 'cde']],
  ];

  it.each(samples)('%s decodes at every byte offset', (datatype, values) => {
    const t = createTensor('x', datatype, [values.length], values as (number | bigint | boolean | string)[]);
    const packed = encodeTensorData(t);
    for (let offset = 1; offset < 8; offset++) {
      const message = new Uint8Array(offset + packed.length + 3).fill(0xaa);
      message.set(packed, offset);
      sameElements(
        decodeTensorData(datatype, t.shape, message.subarray(offset, offset + packed.length)),
        t.data,
      );
    }
  });

  it('copies numbers out of the message, and gives BYTES elements as plain Uint8Array views even of a Node Buffer', () => {
    const message = Buffer.from([0xff, 1, 0, 0, 0, 2, 0, 0, 0, 0xff]);
    const raw = message.subarray(1, 9);
    const ints = decodeTensorData('INT32', [2], raw);
    const strings = decodeTensorData('BYTES', [1], Buffer.from([2, 0, 0, 0, 0x68, 0x69]));
    message.fill(0);
    expect(Array.from(ints as Int32Array)).toEqual([1, 2]);
    expect(ints).toBeInstanceOf(Int32Array);
    expect(Object.getPrototypeOf((strings as Uint8Array[])[0])).toBe(Uint8Array.prototype);
  });
});

describe('decode errors', () => {
  it.each<[DataType, number[], number[], RegExp]>([
    ['FP32', [2], [0, 0, 0, 0, 0, 0, 0], /FP32 tensor of shape \[2\] \(7 bytes\).*need 8 bytes/],
    ['INT64', [1, 2], [0, 0, 0, 0, 0, 0, 0, 0], /INT64 tensor of shape \[1, 2\] \(8 bytes\).*need 16 bytes/],
    ['FP16', [], [0], /FP16 tensor of shape \[\] \(1 bytes\)/],
    ['BOOL', [3], [1, 0], /BOOL tensor of shape \[3\] \(2 bytes\)/],
    [
      'BYTES',
      [2],
      [2, 0, 0, 0, 0x68, 0x69, 1, 0],
      /BYTES tensor .*\(8 bytes\).*element 1 is truncated.*4-byte length/,
    ],
    [
      'BYTES',
      [1],
      [5, 0, 0, 0, 0x68],
      /BYTES tensor .*element 0 is truncated: it declares 5 bytes, 1 remain/,
    ],
    ['BYTES', [1], [1, 0, 0, 0, 0x68, 0x69], /BYTES tensor .*\(6 bytes\).*1 bytes follow the last element/],
    ['INT32', [-1], [], /INT32 tensor of shape \[-1\].*dimension -1/],
    ['FP8' as DataType, [1], [0], /FP8 tensor .*unknown data type/],
  ])('%s %j from %j', (datatype, shape, bytes, message) => {
    const err = thrown(() => decodeTensorData(datatype, shape, Uint8Array.from(bytes)));
    expect(err.code).toBe('protocol');
    expect(err.message).toMatch(message);
  });
});

describe('createTensor', () => {
  it('keeps a typed array already in the type form and copies the shape', () => {
    const data = new Int32Array([1, 2, 3, 4]);
    const shape = [2, 2];
    const t = createTensor('input_ids', 'INT32', shape, data);
    shape[0] = 9;
    expect(t).toMatchObject({ name: 'input_ids', datatype: 'INT32', shape: [2, 2] });
    expect(t.data).toBe(data);
  });

  it('normalizes plain values into the form of the data type', () => {
    expect(createTensor('a', 'INT64', [2], [1, 2n]).data).toEqual(new BigInt64Array([1n, 2n]));
    expect(createTensor('a', 'UINT8', [2], [3n, 4]).data).toEqual(new Uint8Array([3, 4]));
    expect(createTensor('a', 'FP32', [1], [0.1]).data).toEqual(new Float32Array([0.1]));
    expect(createTensor('a', 'INT32', [2], new Float64Array([5, 6])).data).toEqual(new Int32Array([5, 6]));
    expect(createTensor('a', 'BYTES', [1], ['é']).data).toEqual([new Uint8Array([0xc3, 0xa9])]);
    expect(createTensor('a', 'FP16', [1], [0.1]).data).toEqual(new Float32Array([0.0999755859375]));
  });

  it.each<[string, DataType, number[], unknown, RegExp]>([
    ['', 'INT32', [1], [1], /^name: .*name/],
    ['t', 'INT4' as DataType, [1], [1], /^t: unknown data type.*\(got "INT4"\)/],
    ['t', 'INT32', [-1], [1], /^t: invalid shape: dimension -1 .*\(got \[-1\]\)/],
    ['t', 'INT32', [1.5], [1], /^t: invalid shape: dimension 1.5/],
    [
      't',
      'INT32',
      [2, 2],
      [1, 2, 3],
      /^t: shape \[2, 2\] holds 4 elements, so the tensor needs 4 values \(got 3\)/,
    ],
    [
      't',
      'INT32',
      [2],
      [1, 3.5],
      /^t: element 1 of an INT32 tensor must be an integer in \[-2147483648, 2147483647\] \(got 3.5\)/,
    ],
    [
      't',
      'INT8',
      [1],
      [128],
      /^t: element 0 of an INT8 tensor must be an integer in \[-128, 127\] \(got 128\)/,
    ],
    ['t', 'UINT8', [1], [-1], /element 0 of a UINT8 tensor .*\(got -1\)/],
    ['t', 'UINT32', [1], [2n ** 32n], /element 0 of a UINT32 tensor .*\(got 4294967296n\)/],
    ['t', 'INT32', [1], ['7'], /element 0 of an INT32 tensor .*\(got "7"\)/],
    [
      't',
      'INT64',
      [1],
      [2 ** 53],
      /element 0 of an INT64 tensor must be a bigint .* or a safe integer number/,
    ],
    ['t', 'INT64', [1], [2n ** 63n], /element 0 of an INT64 tensor .*\(got 9223372036854775808n\)/],
    ['t', 'UINT64', [1], [-1n], /element 0 of a UINT64 tensor .*\(got -1n\)/],
    ['t', 'UINT64', [1], [1.5], /element 0 of a UINT64 tensor/],
    ['t', 'BOOL', [1], [1], /element 0 of a BOOL tensor must be a boolean \(got 1\)/],
    ['t', 'BYTES', [1], [5], /element 0 of a BYTES tensor must be a string or a Uint8Array \(got 5\)/],
    ['t', 'FP32', [1], [true], /element 0 of an FP32 tensor must be a number \(got true\)/],
    ['t', 'FP16', [1], ['x'], /element 0 of an FP16 tensor must be a number/],
    ['t', 'FP64', [1], undefined, /^t: tensor values must be an array or a typed array/],
  ])('refuses %j %s %j %s', (name, datatype, shape, values, message) => {
    const err = thrown(() => createTensor(name, datatype, shape, values as number[]));
    expect(err.code).toBe('invalid_argument');
    expect(err.message).toMatch(message);
  });
});

describe('encodeTensorData input checks', () => {
  it('packs data given in another numeric form after checking it', () => {
    const fromFloats: Tensor = {
      name: 'ids',
      datatype: 'INT32',
      shape: [2],
      data: new Float64Array([1, -2]),
    };
    expect(hex(encodeTensorData(fromFloats))).toBe('01 00 00 00 fe ff ff ff');
  });

  it.each<[Tensor, RegExp]>([
    [
      { name: 'ids', datatype: 'INT32', shape: [3], data: new Int32Array(2) },
      /^ids: shape \[3\] holds 3 elements/,
    ],
    [
      { name: 'ids', datatype: 'INT32', shape: [1], data: new Float64Array([1.5]) },
      /^ids: element 0 of an INT32/,
    ],
    [{ name: 'm', datatype: 'BOOL', shape: [1], data: new Uint8Array([1]) }, /^m: element 0 of a BOOL/],
    [{ name: 'e', datatype: 'FP16', shape: [-1], data: new Float32Array(1) }, /^e: invalid shape/],
    [
      { name: 'e', datatype: 'FP8' as DataType, shape: [1], data: new Float32Array(1) },
      /^e: unknown data type/,
    ],
  ])('refuses %j', (tensor, message) => {
    const err = thrown(() => encodeTensorData(tensor));
    expect(err.code).toBe('invalid_argument');
    expect(err.message).toMatch(message);
  });
});

describe('readers', () => {
  // The shape HTTP /generate gives its outputs: FP64 with shape [n] or [].
  const fromGenerate = (shape: number[], values: number[]): Tensor => ({
    name: 'output_ids',
    datatype: 'FP64',
    shape,
    data: Float64Array.from(values),
  });
  const bytesTensor = (...values: Uint8Array[]): Tensor => ({
    name: 'text',
    datatype: 'BYTES',
    shape: [values.length],
    data: values,
  });

  it('read FP64 tensors from HTTP /generate, vectors and scalars', () => {
    expect(tensorNumbers(fromGenerate([3], [5, 6, 7]))).toEqual([5, 6, 7]);
    expect(tensorBigInts(fromGenerate([], [42]))).toEqual([42n]);
    expect(tensorStrings(fromGenerate([2], [1.5, 2]))).toEqual(['1.5', '2']);
    expect(tensorBooleans(fromGenerate([3], [0, 1, 2]))).toEqual([false, true, true]);
  });

  it('read JSON-decoded plain arrays', () => {
    const json = (data: unknown[]): Tensor => ({
      name: 'j',
      datatype: 'BYTES',
      shape: [data.length],
      data: data as boolean[],
    });
    expect(tensorStrings(json(['a', 'b']))).toEqual(['a', 'b']);
    expect(tensorBytes(json(['hi']))).toEqual([new Uint8Array([0x68, 0x69])]);
    expect(tensorNumbers(json([true, false, 3]))).toEqual([1, 0, 3]);
  });

  it('convert 64-bit integers, refusing bigints numbers cannot hold', () => {
    const big = (...v: bigint[]): Tensor => ({
      name: 'ids',
      datatype: 'INT64',
      shape: [v.length],
      data: BigInt64Array.from(v),
    });
    expect(tensorNumbers(big(-5n, 2n ** 53n - 1n))).toEqual([-5, 2 ** 53 - 1]);
    expect(tensorBigInts(big(-(2n ** 63n)))).toEqual([-(2n ** 63n)]);
    const err = thrown(() => tensorNumbers(big(1n, 2n ** 53n)));
    expect(err.code).toBe('protocol');
    expect(err.message).toMatch(
      /^tensor 'ids' \(INT64\): element 1 cannot be read as a number.*\(got 9007199254740992n\)/,
    );
  });

  it('decode BYTES as UTF-8 with replacement characters and a kept byte order mark', () => {
    expect(
      tensorStrings(bytesTensor(new Uint8Array([0xff, 0x68]), new Uint8Array([0xef, 0xbb, 0xbf, 0x61]))),
    ).toEqual(['\uFFFDh', '\uFEFFa']);
    expect(tensorStrings(bytesTensor(new Uint8Array([0xe6, 0x9c])))).toEqual(['\uFFFD']);
    const raw = [new Uint8Array([0, 0xff])];
    expect(tensorBytes(bytesTensor(...raw))).toEqual(raw);
  });

  it('read BOOL tensors', () => {
    const t = createTensor('flags', 'BOOL', [2], [true, false]);
    expect(tensorBooleans(t)).toEqual([true, false]);
    expect(tensorNumbers(t)).toEqual([1, 0]);
  });

  it.each<[string, () => unknown, RegExp]>([
    [
      'numbers from BYTES',
      () => tensorNumbers(bytesTensor(new Uint8Array([0x31]))),
      /element 0 cannot be read as a number .*\(got 1 bytes\)/,
    ],
    [
      'bigints from fractions',
      () => tensorBigInts(fromGenerate([1], [1.5])),
      /element 0 cannot be read as an integer \(got 1.5\)/,
    ],
    ['bigints from NaN', () => tensorBigInts(fromGenerate([1], [Number.NaN])), /\(got NaN\)/],
    [
      'booleans from BYTES',
      () => tensorBooleans(bytesTensor(new Uint8Array())),
      /cannot be read as a boolean/,
    ],
    [
      'booleans from NaN',
      () => tensorBooleans(fromGenerate([1], [Number.NaN])),
      /cannot be read as a boolean/,
    ],
    [
      'bytes from numbers',
      () => tensorBytes(fromGenerate([1], [3])),
      /^tensor 'output_ids' \(FP64\): element 0 cannot be read as bytes \(got 3\)/,
    ],
    [
      'anything from missing data',
      () =>
        tensorStrings({ name: 'n', datatype: 'BYTES', shape: [1], data: undefined as unknown as boolean[] }),
      /tensor 'n' \(BYTES\) holds no array/,
    ],
  ])('refuse %s with protocol', (_what, read, message) => {
    const err = thrown(read);
    expect(err.code).toBe('protocol');
    expect(err.message).toMatch(message);
  });
});

describe('tensorStrings on short UTF-8 (decoded in JavaScript up to 24 bytes)', () => {
  // The reference: the runtime's decoder, as configured in tensors/readers.ts (a BOM is text).
  const reference = new TextDecoder('utf-8', { ignoreBOM: true });
  const text = (bytes: Uint8Array) =>
    tensorStrings({ name: 'x', datatype: 'BYTES', shape: [1], data: [bytes] })[0];

  // Bytes shaped like UTF-8 often enough to reach every branch: lead bytes of each length (and
  // the invalid ones), continuation bytes, ASCII.
  const utf8ish = fc
    .array(
      fc.oneof(
        fc.integer({ min: 0, max: 0x7f }),
        fc.integer({ min: 0x80, max: 0xbf }),
        fc.constantFrom(0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xe1, 0xed, 0xee, 0xef, 0xf0, 0xf1, 0xf4, 0xf5, 0xff),
        fc.integer({ min: 0, max: 0xff }),
      ),
      { maxLength: 24 },
    )
    .map((values) => Uint8Array.from(values));

  it('decodes any bytes as the runtime decoder does, U+FFFD included', () => {
    fc.assert(
      fc.property(utf8ish, (bytes) => {
        expect(text(bytes)).toBe(reference.decode(bytes));
      }),
      { numRuns: 5000 },
    );
  });

  it('gives back any short text it was given', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 6 }).filter((s) => Buffer.byteLength(s) <= 24),
        (s) => {
          expect(text(new TextEncoder().encode(s))).toBe(s);
        },
      ),
    );
  });

  it.each([
    ['two-byte', [0xc3, 0xa9], 'é'],
    ['three-byte', [0xe6, 0x9c, 0xba], '机'],
    ['four-byte (a surrogate pair)', [0xf0, 0x9f, 0xa4, 0x96], '🤖'],
    ['a byte order mark, kept', [0xef, 0xbb, 0xbf, 0x61], '\uFEFFa'],
    ['a sequence cut at the end', [0x61, 0xe6, 0x9c], 'a\uFFFD'],
    ['an overlong form', [0xe0, 0x80, 0x80], '\uFFFD\uFFFD\uFFFD'],
    ['an encoded surrogate', [0xed, 0xa0, 0x80], '\uFFFD\uFFFD\uFFFD'],
    ['a code point past U+10FFFF', [0xf4, 0x90, 0x80, 0x80], '\uFFFD\uFFFD\uFFFD\uFFFD'],
  ])('%s', (_what, bytes, expected) => {
    expect(text(Uint8Array.from(bytes))).toBe(expected);
  });
});
