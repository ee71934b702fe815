import { invalidArgument } from '../errors.js';
import { countOrProblem, DATA_TYPES, type DataType, formatShape, isDataType } from './data-types.js';
import {
  bfloat16BitsToFloat32,
  float16BitsToFloat32,
  float32ToBfloat16Bits,
  float32ToFloat16Bits,
} from './half-float.js';

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

type SmallIntType = 'INT8' | 'UINT8' | 'INT16' | 'UINT16' | 'INT32' | 'UINT32';
type SmallIntArray = Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array;
type BigIntArray = BigInt64Array | BigUint64Array;
export type FixedWidthType = SmallIntType | 'INT64' | 'UINT64' | 'FP32' | 'FP64';
export type FixedWidthArray = SmallIntArray | BigIntArray | Float32Array | Float64Array;

export interface TypedArrayClass<A> {
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

export const TEXT_ENCODER = new TextEncoder();

/**
 * What `createTensor` packs: typed data as is, or plain elements of the tensor's data type. Its
 * declaration spells the type out, so that the public API names no type the SDK does not export.
 */
type Values = Parameters<typeof createTensor>[3];

export function isArrayLike(values: unknown): values is ArrayLike<unknown> {
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

export function floatsOf(name: string, datatype: DataType, values: Values): ArrayLike<number> {
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

export const HALF_CODECS = {
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

export function booleansOf(name: string, values: Values): boolean[] {
  const items = arrayLike(name, values);
  const out = new Array<boolean>(items.length);
  for (let i = 0; i < items.length; i++) {
    const v = items[i];
    if (typeof v !== 'boolean') throw badElement(name, 'BOOL', i, v, 'a boolean');
    out[i] = v;
  }
  return out;
}

export function byteStringsOf(name: string, values: Values): Uint8Array[] {
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

export function fixedWidthOf(name: string, datatype: FixedWidthType, values: Values): FixedWidthArray {
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

export function shapeCount(name: string, shape: readonly number[]): number {
  const count = countOrProblem(shape);
  if (typeof count === 'string') throw invalidArgument(name, shape, `invalid shape: ${count}`);
  return count;
}

export function sized<T extends { readonly length: number }>(
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
  values: TensorData | readonly (number | bigint | boolean | string | Uint8Array)[],
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
