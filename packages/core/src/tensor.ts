import { invalidArgument, TritonLlmError } from './errors.js';
import {
  bfloat16BitsToFloat32,
  float16BitsToFloat32,
  float32ToBfloat16Bits,
  float32ToFloat16Bits,
} from './half-float.js';

/**
 * Triton's tensor data types, as they are named on the wire (KServe v2 / gRPC `datatype`).
 * `BYTES` is the wire name of the config's `TYPE_STRING`.
 */
export type DataType =
  | 'BOOL'
  | 'UINT8'
  | 'UINT16'
  | 'UINT32'
  | 'UINT64'
  | 'INT8'
  | 'INT16'
  | 'INT32'
  | 'INT64'
  | 'FP16'
  | 'FP32'
  | 'FP64'
  | 'BYTES'
  | 'BF16';

/**
 * Decoded tensor values, flattened in row-major order. Which form goes with which data type:
 *
 * | data type | values |
 * |---|---|
 * | BOOL | `boolean[]` |
 * | INT8 / UINT8 / INT16 / UINT16 / INT32 / UINT32 | the matching typed array |
 * | INT64 / UINT64 | `BigInt64Array` / `BigUint64Array` |
 * | FP16 / BF16 / FP32 | `Float32Array` (half floats are widened when decoded) |
 * | FP64 | `Float64Array` |
 * | BYTES | `Uint8Array[]`, one byte string per element (text is UTF-8) |
 */
export type TensorData =
  | boolean[]
  | Int8Array
  | Uint8Array
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array
  | BigInt64Array
  | BigUint64Array
  | Float32Array
  | Float64Array
  | Uint8Array[];

/** A named tensor with its data type, shape (batch dimension included when the model batches) and data. */
export interface Tensor {
  readonly name: string;
  readonly datatype: DataType;
  readonly shape: readonly number[];
  readonly data: TensorData;
}

/** Every data type, in the order of the model configuration's `DataType` enum. */
export const DATA_TYPES: readonly DataType[] = [
  'BOOL',
  'UINT8',
  'UINT16',
  'UINT32',
  'UINT64',
  'INT8',
  'INT16',
  'INT32',
  'INT64',
  'FP16',
  'FP32',
  'FP64',
  'BYTES',
  'BF16',
];

const DATA_TYPE_NAMES: ReadonlySet<string> = new Set(DATA_TYPES);

/** Whether `s` is one of Triton's wire data type names (`'INT32'`, `'BYTES'`, ...). */
export function isDataType(s: string): s is DataType {
  return DATA_TYPE_NAMES.has(s);
}

/**
 * The wire data type for a name found in a model configuration (`'TYPE_INT32'`, and
 * `'TYPE_STRING'` for `'BYTES'`) or in model metadata (already a wire name). Any other name
 * means the server describes its model in terms the SDK does not know: a `protocol` error.
 */
export function dataTypeFromConfig(s: string): DataType {
  if (s.startsWith('TYPE_')) {
    const rest = s.slice('TYPE_'.length);
    if (rest === 'STRING') return 'BYTES';
    if (rest !== 'BYTES' && isDataType(rest)) return rest;
  } else if (isDataType(s)) {
    return s;
  }
  throw new TritonLlmError(
    'protocol',
    `unknown tensor data type ${JSON.stringify(s)}: expected a model config name such as TYPE_INT32 or ` +
      `TYPE_STRING, or a wire name (${DATA_TYPES.join(', ')})`,
  );
}

const BYTES_PER_ELEMENT: Readonly<Record<DataType, number | undefined>> = {
  BOOL: 1,
  UINT8: 1,
  UINT16: 2,
  UINT32: 4,
  UINT64: 8,
  INT8: 1,
  INT16: 2,
  INT32: 4,
  INT64: 8,
  FP16: 2,
  FP32: 4,
  FP64: 8,
  BYTES: undefined,
  BF16: 2,
};

/** Size of one element on the wire; `undefined` for `BYTES`, whose elements vary in length. */
export function bytesPerElement(dt: DataType): number | undefined {
  return BYTES_PER_ELEMENT[dt];
}

/** The number of elements, or why the shape cannot hold any. */
function countOrProblem(shape: readonly number[]): number | string {
  if (!Array.isArray(shape)) return 'a shape is an array of dimensions';
  let count = 1;
  for (let i = 0; i < shape.length; i++) {
    const dim = shape[i];
    if (!Number.isSafeInteger(dim) || (dim as number) < 0)
      return `dimension ${String(dim)} is not a non-negative integer`;
    count *= dim as number;
  }
  return Number.isSafeInteger(count) ? count : 'it has more elements than an array can hold';
}

/**
 * The number of elements a tensor of this shape holds: the product of its dimensions, 1 for a
 * scalar (`[]`). Variable dimensions (`-1`) have no count and get an `invalid_argument` error.
 */
export function elementCount(shape: readonly number[]): number {
  const count = countOrProblem(shape);
  if (typeof count === 'string') throw invalidArgument('shape', shape, count);
  return count;
}

function formatShape(shape: readonly number[]): string {
  return Array.isArray(shape) ? `[${shape.join(', ')}]` : String(shape);
}

type SmallIntType = 'INT8' | 'UINT8' | 'INT16' | 'UINT16' | 'INT32' | 'UINT32';
type SmallIntArray = Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array;
type BigIntArray = BigInt64Array | BigUint64Array;
type FixedWidthType = SmallIntType | 'INT64' | 'UINT64' | 'FP32' | 'FP64';
type FixedWidthArray = SmallIntArray | BigIntArray | Float32Array | Float64Array;

interface TypedArrayClass<A> {
  new (length: number): A;
  new (buffer: ArrayBuffer, byteOffset: number, length: number): A;
}

const SMALL_INTS: Readonly<
  Record<
    SmallIntType,
    { readonly array: TypedArrayClass<SmallIntArray>; readonly min: number; readonly max: number }
  >
> = {
  INT8: { array: Int8Array, min: -(2 ** 7), max: 2 ** 7 - 1 },
  UINT8: { array: Uint8Array, min: 0, max: 2 ** 8 - 1 },
  INT16: { array: Int16Array, min: -(2 ** 15), max: 2 ** 15 - 1 },
  UINT16: { array: Uint16Array, min: 0, max: 2 ** 16 - 1 },
  INT32: { array: Int32Array, min: -(2 ** 31), max: 2 ** 31 - 1 },
  UINT32: { array: Uint32Array, min: 0, max: 2 ** 32 - 1 },
};

const BIG_INTS: Readonly<
  Record<
    'INT64' | 'UINT64',
    { readonly array: TypedArrayClass<BigIntArray>; readonly min: bigint; readonly max: bigint }
  >
> = {
  INT64: { array: BigInt64Array, min: -(2n ** 63n), max: 2n ** 63n - 1n },
  UINT64: { array: BigUint64Array, min: 0n, max: 2n ** 64n - 1n },
};

const FIXED_WIDTH_ARRAYS: Readonly<Record<FixedWidthType, TypedArrayClass<FixedWidthArray>>> = {
  INT8: Int8Array,
  UINT8: Uint8Array,
  INT16: Int16Array,
  UINT16: Uint16Array,
  INT32: Int32Array,
  UINT32: Uint32Array,
  INT64: BigInt64Array,
  UINT64: BigUint64Array,
  FP32: Float32Array,
  FP64: Float64Array,
};

const TEXT_ENCODER = new TextEncoder();
// ignoreBOM keeps a leading U+FEFF as text instead of silently dropping it.
const TEXT_DECODER = new TextDecoder('utf-8', { ignoreBOM: true });

const LITTLE_ENDIAN_HOST = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Swaps each element's bytes in place; only big-endian hosts need it, the wire is little-endian. */
function swapEach<B extends Uint8Array>(bytes: B, size: number): B {
  if (LITTLE_ENDIAN_HOST || size === 1) return bytes;
  for (let start = 0; start < bytes.length; start += size) bytes.subarray(start, start + size).reverse();
  return bytes;
}

/**
 * One plain element of any data type.
 *
 * @inline
 */
type Element = number | bigint | boolean | string | Uint8Array;
/**
 * What `createTensor` packs: typed data as is, or plain elements of the tensor's data type.
 *
 * @inline
 */
type Values = TensorData | readonly Element[];

function isArrayLike(values: unknown): values is ArrayLike<unknown> {
  return Array.isArray(values) || (ArrayBuffer.isView(values) && !(values instanceof DataView));
}

function arrayLike(name: string, values: unknown): ArrayLike<unknown> {
  if (isArrayLike(values)) return values;
  throw invalidArgument(name, values, 'tensor values must be an array or a typed array');
}

function badElement(name: string, datatype: DataType, index: number, value: unknown, expected: string) {
  const article = /^[IF]/.test(datatype) ? 'an' : 'a';
  return invalidArgument(
    name,
    value,
    `element ${index} of ${article} ${datatype} tensor must be ${expected}`,
  );
}

function isNumberArray(values: unknown): values is ArrayLike<number> {
  return (
    ArrayBuffer.isView(values) &&
    !(values instanceof DataView || values instanceof BigInt64Array || values instanceof BigUint64Array)
  );
}

function floatsOf(name: string, datatype: DataType, values: Values): ArrayLike<number> {
  if (isNumberArray(values)) return values;
  const items = arrayLike(name, values);
  const out = new Array<number>(items.length);
  for (let i = 0; i < items.length; i++) {
    const v = items[i];
    if (typeof v === 'number') out[i] = v;
    else if (typeof v === 'bigint') out[i] = Number(v);
    else throw badElement(name, datatype, i, v, 'a number');
  }
  return out;
}

function roundedHalves(name: string, datatype: 'FP16' | 'BF16', values: Values): Float32Array {
  const [toBits, fromBits] = HALF_CODECS[datatype];
  const source = floatsOf(name, datatype, values);
  const out = new Float32Array(source.length);
  for (let i = 0; i < source.length; i++) out[i] = fromBits(toBits(source[i]!));
  return out;
}

const HALF_CODECS = {
  FP16: [float32ToFloat16Bits, float16BitsToFloat32],
  BF16: [float32ToBfloat16Bits, bfloat16BitsToFloat32],
} as const;

function smallIntsOf(name: string, datatype: SmallIntType, values: Values): SmallIntArray {
  const { array, min, max } = SMALL_INTS[datatype];
  if (values instanceof array) return values;
  const items = arrayLike(name, values);
  const out = new array(items.length);
  for (let i = 0; i < items.length; i++) {
    const v = items[i];
    if (typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max) out[i] = v;
    else if (typeof v === 'bigint' && v >= min && v <= max) out[i] = Number(v);
    else throw badElement(name, datatype, i, v, `an integer in [${min}, ${max}]`);
  }
  return out;
}

function bigIntsOf(name: string, datatype: 'INT64' | 'UINT64', values: Values): BigIntArray {
  const { array, min, max } = BIG_INTS[datatype];
  if (values instanceof array) return values;
  const items = arrayLike(name, values);
  const out = new array(items.length);
  for (let i = 0; i < items.length; i++) {
    const v = items[i];
    // Numbers beyond 2^53 may already have lost digits before they got here, so they must be bigints.
    if (typeof v === 'number' && Number.isSafeInteger(v) && v >= min && v <= max) out[i] = BigInt(v);
    else if (typeof v === 'bigint' && v >= min && v <= max) out[i] = v;
    else throw badElement(name, datatype, i, v, `a bigint in [${min}, ${max}] or a safe integer number`);
  }
  return out;
}

function booleansOf(name: string, values: Values): boolean[] {
  const items = arrayLike(name, values);
  const out = new Array<boolean>(items.length);
  for (let i = 0; i < items.length; i++) {
    const v = items[i];
    if (typeof v !== 'boolean') throw badElement(name, 'BOOL', i, v, 'a boolean');
    out[i] = v;
  }
  return out;
}

function byteStringsOf(name: string, values: Values): Uint8Array[] {
  const items = arrayLike(name, values);
  const out = new Array<Uint8Array>(items.length);
  for (let i = 0; i < items.length; i++) {
    const v = items[i];
    if (typeof v === 'string') out[i] = TEXT_ENCODER.encode(v);
    else if (v instanceof Uint8Array) out[i] = v;
    else throw badElement(name, 'BYTES', i, v, 'a string or a Uint8Array');
  }
  return out;
}

function fixedWidthOf(name: string, datatype: FixedWidthType, values: Values): FixedWidthArray {
  switch (datatype) {
    case 'FP32':
      return values instanceof Float32Array ? values : Float32Array.from(floatsOf(name, datatype, values));
    case 'FP64':
      return values instanceof Float64Array ? values : Float64Array.from(floatsOf(name, datatype, values));
    case 'INT64':
    case 'UINT64':
      return bigIntsOf(name, datatype, values);
    default:
      return smallIntsOf(name, datatype, values);
  }
}

function shapeCount(name: string, shape: readonly number[]): number {
  const count = countOrProblem(shape);
  if (typeof count === 'string') throw invalidArgument(name, shape, `invalid shape: ${count}`);
  return count;
}

function sized<T extends { readonly length: number }>(
  name: string,
  shape: readonly number[],
  count: number,
  values: T,
): T {
  if (values.length !== count) {
    throw invalidArgument(
      name,
      values.length,
      `shape ${formatShape(shape)} holds ${count} elements, so the tensor needs ${count} values`,
    );
  }
  return values;
}

/**
 * Builds a tensor, turning plain values into the data form of its type (see {@link TensorData}):
 * strings become UTF-8 for `BYTES`; numbers and bigints are range-checked for the integer types
 * (`INT64`/`UINT64` take bigints, or numbers up to 2^53); FP16/BF16 values are rounded to the
 * 16-bit format right away, so `data` shows exactly what will be sent. A typed array already in
 * the type's form is kept, not copied. The values must fill the shape exactly. Anything else is
 * an `invalid_argument` error naming the tensor.
 */
export function createTensor(
  name: string,
  datatype: DataType,
  shape: readonly number[],
  values: Values,
): Tensor {
  if (typeof name !== 'string' || name === '') throw invalidArgument('name', name, 'a tensor needs a name');
  if (typeof datatype !== 'string' || !isDataType(datatype)) {
    throw invalidArgument(name, datatype, `unknown data type; expected one of ${DATA_TYPES.join(', ')}`);
  }
  const count = shapeCount(name, shape);
  let data: TensorData;
  switch (datatype) {
    case 'BOOL':
      data = booleansOf(name, values);
      break;
    case 'BYTES':
      data = byteStringsOf(name, values);
      break;
    case 'FP16':
    case 'BF16':
      data = roundedHalves(name, datatype, values);
      break;
    default:
      data = fixedWidthOf(name, datatype, values);
  }
  return { name, datatype, shape: [...shape], data: sized(name, shape, count, data) };
}

/**
 * Packs a tensor's data the way gRPC `raw_input_contents` and the HTTP binary extension carry it:
 * little-endian, row-major, no padding; BOOL as one byte 0/1; FP16/BF16 as 2 bytes rounded to
 * nearest even; BYTES as a 4-byte little-endian length before each element. Data not in the
 * type's own form is converted with the checks of {@link createTensor}.
 */
export function encodeTensorData(tensor: Tensor): Uint8Array {
  const { name, datatype, shape, data } = tensor;
  if (!isDataType(datatype)) {
    throw invalidArgument(name, datatype, `unknown data type; expected one of ${DATA_TYPES.join(', ')}`);
  }
  const count = shapeCount(name, shape);
  switch (datatype) {
    case 'BOOL':
      return Uint8Array.from(sized(name, shape, count, booleansOf(name, data)), (b) => (b ? 1 : 0));
    case 'BYTES':
      return packByteStrings(sized(name, shape, count, byteStringsOf(name, data)));
    case 'FP16':
    case 'BF16': {
      const values = sized(name, shape, count, floatsOf(name, datatype, data));
      const toBits = HALF_CODECS[datatype][0];
      const out = new Uint8Array(values.length * 2);
      const view = new DataView(out.buffer);
      for (let i = 0; i < values.length; i++) view.setUint16(i * 2, toBits(values[i]!), true);
      return out;
    }
    default: {
      const values = sized(name, shape, count, fixedWidthOf(name, datatype, data));
      const bytes = new Uint8Array(values.buffer, values.byteOffset, values.byteLength).slice();
      return swapEach(bytes, values.BYTES_PER_ELEMENT);
    }
  }
}

function packByteStrings(items: readonly Uint8Array[]): Uint8Array {
  let total = 0;
  for (const item of items) total += 4 + item.length;
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  let offset = 0;
  for (const item of items) {
    view.setUint32(offset, item.length, true);
    out.set(item, offset + 4);
    offset += 4 + item.length;
  }
  return out;
}

/**
 * Unpacks raw tensor bytes (gRPC `raw_output_contents`, an HTTP binary blob) into the data form
 * of `datatype`. Numbers are copied, so `raw` may be any subarray of a larger message at any
 * alignment; BYTES elements are views of `raw` (copying each would allocate a buffer per streamed
 * token). `start` and `end` pick the tensor's bytes out of a larger `raw` (a whole response
 * message) without a view of them. Bytes that do not fit the shape are a `protocol` error naming
 * datatype, shape and byte count.
 */
export function decodeTensorData(
  datatype: DataType,
  shape: readonly number[],
  raw: Uint8Array,
  start = 0,
  end: number = raw.length,
): TensorData {
  if (!isDataType(datatype)) throw decodeFailure(datatype, shape, end - start, 'unknown data type');
  const count = countOrProblem(shape);
  if (typeof count === 'string') throw decodeFailure(datatype, shape, end - start, count);
  if (datatype === 'BYTES') return unpackByteStrings(raw, start, end, count, shape);
  const length = end - start;
  const size = BYTES_PER_ELEMENT[datatype]!;
  if (length !== count * size) {
    throw decodeFailure(
      datatype,
      shape,
      length,
      `${count} elements of ${size} bytes need ${count * size} bytes`,
    );
  }
  if (
    LITTLE_ENDIAN_HOST &&
    length <= SMALL_NUMBERS_BYTES &&
    datatype !== 'BOOL' &&
    datatype !== 'FP16' &&
    datatype !== 'BF16'
  ) {
    return readSmall(datatype, raw, start, count, size);
  }
  // A plain view, because Node's Buffer.slice() would alias the message instead of copying it.
  const bytes = new Uint8Array(raw.buffer, raw.byteOffset + start, length);
  switch (datatype) {
    case 'BOOL':
      return Array.from(bytes, (b) => b !== 0);
    case 'FP16':
    case 'BF16': {
      const fromBits = HALF_CODECS[datatype][1];
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      const out = new Float32Array(count);
      for (let i = 0; i < count; i++) out[i] = fromBits(view.getUint16(i * 2, true));
      return out;
    }
    default: {
      // The copy starts a fresh buffer, which also gives the typed array the alignment it needs.
      const copy = swapEach(bytes.slice(), size);
      return new FIXED_WIDTH_ARRAYS[datatype](copy.buffer, 0, count);
    }
  }
}

// Streamed responses carry a few one-element counters (sequence_index, num_output_tokens...) with
// every token. Such small arrays live on V8's heap, and read element by element they never need
// the separate ArrayBuffer that the copy-and-view path below allocates.
const SMALL_NUMBERS_BYTES = 64;

function readSmall(
  datatype: FixedWidthType,
  bytes: Uint8Array,
  start: number,
  count: number,
  size: number,
): FixedWidthArray {
  const out = new FIXED_WIDTH_ARRAYS[datatype](count);
  // The element's bytes go through a scratch buffer; the host is little-endian, as the wire is.
  const scratch = SCRATCH[datatype];
  for (let i = 0; i < count; i++) {
    const at = start + i * size;
    for (let k = 0; k < size; k++) SCRATCH_BYTES[k] = bytes[at + k]!;
    out[i] = scratch[0]!;
  }
  return out;
}

const SCRATCH_BUFFER = new ArrayBuffer(8);
const SCRATCH_BYTES = new Uint8Array(SCRATCH_BUFFER);
const SCRATCH: Readonly<Record<FixedWidthType, FixedWidthArray>> = {
  INT8: new Int8Array(SCRATCH_BUFFER, 0, 1),
  UINT8: new Uint8Array(SCRATCH_BUFFER, 0, 1),
  INT16: new Int16Array(SCRATCH_BUFFER, 0, 1),
  UINT16: new Uint16Array(SCRATCH_BUFFER, 0, 1),
  INT32: new Int32Array(SCRATCH_BUFFER, 0, 1),
  UINT32: new Uint32Array(SCRATCH_BUFFER, 0, 1),
  INT64: new BigInt64Array(SCRATCH_BUFFER, 0, 1),
  UINT64: new BigUint64Array(SCRATCH_BUFFER, 0, 1),
  FP32: new Float32Array(SCRATCH_BUFFER, 0, 1),
  FP64: new Float64Array(SCRATCH_BUFFER, 0, 1),
};

// The description is built only on failure: decoding runs for every output of every streamed token.
function decodeFailure(
  datatype: string,
  shape: readonly number[],
  byteLength: number,
  why: string,
): TritonLlmError {
  return new TritonLlmError(
    'protocol',
    `cannot decode ${datatype} tensor of shape ${formatShape(shape)} (${byteLength} bytes): ${why}`,
  );
}

/** The BYTES elements in `bytes[start, end)`, as views; offsets in errors count from `start`. */
function unpackByteStrings(
  bytes: Uint8Array,
  start: number,
  end: number,
  count: number,
  shape: readonly number[],
): Uint8Array[] {
  const out: Uint8Array[] = new Array(count);
  const total = end - start;
  let offset = start;
  for (let i = 0; i < count; i++) {
    if (offset + 4 > end) {
      throw decodeFailure(
        'BYTES',
        shape,
        total,
        `element ${i} is truncated: its 4-byte length would start at byte ${offset - start}`,
      );
    }
    // Little-endian uint32, read without a DataView per tensor.
    const length =
      (bytes[offset]! |
        (bytes[offset + 1]! << 8) |
        (bytes[offset + 2]! << 16) |
        (bytes[offset + 3]! << 24)) >>>
      0;
    offset += 4;
    if (offset + length > end) {
      throw decodeFailure(
        'BYTES',
        shape,
        total,
        `element ${i} is truncated: it declares ${length} bytes, ${end - offset} remain`,
      );
    }
    // A plain Uint8Array even when `bytes` is a Node Buffer (whose subarray would be a Buffer).
    out[i] = new Uint8Array(bytes.buffer, bytes.byteOffset + offset, length);
    offset += length;
  }
  if (offset !== end)
    throw decodeFailure('BYTES', shape, total, `${end - offset} bytes follow the last element`);
  return out;
}

function show(v: unknown): string {
  if (typeof v === 'bigint') return `${v}n`;
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 37)}...` : v);
  if (v instanceof Uint8Array) return `${v.length} bytes`;
  return String(v);
}

/** Reads every element with `read`; `undefined` from it means the element is not of the wanted kind. */
function readEach<T>(t: Tensor, wanted: string, read: (v: unknown) => T | undefined): T[] {
  const items: unknown = t.data;
  if (!isArrayLike(items)) {
    throw new TritonLlmError('protocol', `tensor '${t.name}' (${t.datatype}) holds no array of values`);
  }
  const out = new Array<T>(items.length);
  for (let i = 0; i < items.length; i++) {
    const value = read(items[i]);
    if (value === undefined) {
      throw new TritonLlmError(
        'protocol',
        `tensor '${t.name}' (${t.datatype}): element ${i} cannot be read as ${wanted} (got ${show(items[i])})`,
      );
    }
    out[i] = value;
  }
  return out;
}

/**
 * A tensor's elements as numbers, whatever its numeric form: typed arrays, the FP64 tensors of
 * HTTP `/generate`, booleans (0/1), and bigints up to 2^53; larger bigints are a `protocol` error
 * (read them with {@link tensorBigInts}).
 */
export function tensorNumbers(t: Tensor): number[] {
  return readEach(t, 'a number (bigints must lie within ±(2^53 - 1); use tensorBigInts())', (v) => {
    if (typeof v === 'number') return v;
    if (typeof v === 'bigint') {
      return v >= Number.MIN_SAFE_INTEGER && v <= Number.MAX_SAFE_INTEGER ? Number(v) : undefined;
    }
    if (typeof v === 'boolean') return v ? 1 : 0;
    return undefined;
  });
}

/** A tensor's elements as bigints; numbers must be integers (an FP64 token id of 5 reads as 5n). */
export function tensorBigInts(t: Tensor): bigint[] {
  return readEach(t, 'an integer', (v) => {
    if (typeof v === 'bigint') return v;
    if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : undefined;
    if (typeof v === 'boolean') return v ? 1n : 0n;
    return undefined;
  });
}

/**
 * A tensor's elements as text: BYTES elements decoded as UTF-8 (invalid sequences become
 * U+FFFD), strings as they are, numbers, bigints and booleans through `String()`.
 */
export function tensorStrings(t: Tensor): string[] {
  return readEach(t, 'text', (v) => {
    if (v instanceof Uint8Array) return utf8Text(v);
    if (typeof v === 'string') return v;
    if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') return String(v);
    return undefined;
  });
}

// A streamed token is a few bytes, usually ASCII: building its string in JavaScript is cheaper
// than a call into the runtime's UTF-8 decoder, which the rest still takes.
const SHORT_TEXT = 24;

function utf8Text(bytes: Uint8Array): string {
  const n = bytes.length;
  if (n > SHORT_TEXT) return TEXT_DECODER.decode(bytes);
  for (let i = 0; i < n; i++) if (bytes[i]! >= 0x80) return TEXT_DECODER.decode(bytes);
  return String.fromCharCode.apply(null, bytes as unknown as number[]);
}

/** A tensor's elements as booleans: BOOL as it is, numbers and bigints true when non-zero. */
export function tensorBooleans(t: Tensor): boolean[] {
  return readEach(t, 'a boolean', (v) => {
    if (typeof v === 'boolean') return v;
    if (typeof v === 'number') return Number.isNaN(v) ? undefined : v !== 0;
    if (typeof v === 'bigint') return v !== 0n;
    return undefined;
  });
}

/** A tensor's elements as byte strings: BYTES elements as they are, strings encoded as UTF-8. */
export function tensorBytes(t: Tensor): Uint8Array[] {
  return readEach(t, 'bytes', (v) => {
    if (v instanceof Uint8Array) return v;
    if (typeof v === 'string') return TEXT_ENCODER.encode(v);
    return undefined;
  });
}
