import { invalidArgument, TritonLlmError } from '../errors.js';

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
export function countOrProblem(shape: readonly number[]): number | string {
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

export function formatShape(shape: readonly number[]): string {
  return Array.isArray(shape) ? `[${shape.join(', ')}]` : String(shape);
}
