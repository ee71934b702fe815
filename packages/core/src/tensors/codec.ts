import { invalidArgument, TritonLlmError } from '../errors.js';
import {
  bytesPerElement,
  countOrProblem,
  DATA_TYPES,
  type DataType,
  formatShape,
  isDataType,
} from './data-types.js';
import {
  booleansOf,
  byteStringsOf,
  type FixedWidthArray,
  type FixedWidthType,
  fixedWidthOf,
  floatsOf,
  HALF_CODECS,
  shapeCount,
  sized,
  type Tensor,
  type TensorData,
  type TypedArrayClass,
} from './tensor.js';

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

const LITTLE_ENDIAN_HOST = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Swaps each element's bytes in place; only big-endian hosts need it, the wire is little-endian. */
function swapEach<B extends Uint8Array>(bytes: B, size: number): B {
  if (LITTLE_ENDIAN_HOST || size === 1) return bytes;
  for (let start = 0; start < bytes.length; start += size) bytes.subarray(start, start + size).reverse();
  return bytes;
}

/**
 * Packs a tensor's data the way gRPC `raw_input_contents` and the HTTP binary extension carry it:
 * little-endian, row-major, no padding; BOOL as one byte 0/1; FP16/BF16 as 2 bytes rounded to
 * nearest even; BYTES as a 4-byte little-endian length before each element. Data not in the
 * type's own form is converted with the checks of `createTensor` (`@trtllm/sdk`).
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
  const size = bytesPerElement(datatype)!;
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
  if (datatype === 'INT32') {
    // The counters' own type, built with one constructor V8 sees here alone (no lookup by name)
    // and read without the scratch buffer: cheaper than the general loop below.
    const ints = new Int32Array(count);
    for (let i = 0; i < count; i++) {
      const at = start + i * 4;
      ints[i] = bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24);
    }
    return ints;
  }
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
