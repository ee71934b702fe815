/**
 * Triton's raw tensor packing, shared by gRPC `raw_*_contents` and the HTTP binary extension:
 * little-endian, row-major, BOOL one byte, BYTES as a 4-byte length before each element.
 */
import { TritonError } from './errors.js';
import type { DataType } from './models/tensor-spec.js';
import { elementSize, type Tensor, type TensorData } from './tensor.js';

function halfToNumber(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * 2 ** -14 * (frac / 1024);
  if (exp === 0x1f) return frac ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * 2 ** (exp - 15) * (1 + frac / 1024);
}

function bf16ToNumber(b: number): number {
  const view = new DataView(new ArrayBuffer(4));
  view.setUint32(0, b << 16);
  return view.getFloat32(0);
}

/** Splits BYTES raw contents; throws when a length runs past the end. */
function decodeBytesElements(bytes: Uint8Array, name: string): Uint8Array[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: Uint8Array[] = [];
  let at = 0;
  while (at < bytes.length) {
    if (at + 4 > bytes.length) {
      throw new TritonError(
        'INVALID_ARG',
        `element byte size indicator exceeds the end of the buffer for '${name}'`,
      );
    }
    const len = view.getUint32(at, true);
    at += 4;
    if (at + len > bytes.length) {
      throw new TritonError(
        'INVALID_ARG',
        `element byte size indicator exceeds the end of the buffer for '${name}'`,
      );
    }
    out.push(bytes.subarray(at, at + len));
    at += len;
  }
  return out;
}

/**
 * Decodes raw contents of `count` elements. Size mismatches get Triton's messages, naming the input
 * and the model.
 */
export function decodeRaw(
  datatype: DataType,
  bytes: Uint8Array,
  count: number,
  name: string,
  model: string,
): TensorData {
  if (datatype === 'BYTES') {
    const elements = decodeBytesElements(bytes, name);
    if (elements.length !== count) {
      throw new TritonError(
        'INVALID_ARG',
        `expected ${count} string elements for inference input '${name}' for model '${model}', got ${elements.length}`,
      );
    }
    return elements;
  }
  const size = elementSize(datatype);
  if (bytes.length !== count * size) {
    throw new TritonError(
      'INVALID_ARG',
      `input byte size mismatch for input '${name}' for model '${model}'. Expected ${count * size}, got ${bytes.length}`,
    );
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const read = (fn: (at: number) => number): number[] =>
    Array.from({ length: count }, (_, i) => fn(i * size));
  switch (datatype) {
    case 'BOOL':
      return Array.from({ length: count }, (_, i) => view.getUint8(i) !== 0);
    case 'INT8':
      return read((at) => view.getInt8(at));
    case 'UINT8':
      return read((at) => view.getUint8(at));
    case 'INT16':
      return read((at) => view.getInt16(at, true));
    case 'UINT16':
      return read((at) => view.getUint16(at, true));
    case 'INT32':
      return read((at) => view.getInt32(at, true));
    case 'UINT32':
      return read((at) => view.getUint32(at, true));
    case 'FP16':
      return read((at) => halfToNumber(view.getUint16(at, true)));
    case 'BF16':
      return read((at) => bf16ToNumber(view.getUint16(at, true)));
    case 'FP32':
      return read((at) => view.getFloat32(at, true));
    case 'FP64':
      return read((at) => view.getFloat64(at, true));
    case 'INT64':
      return Array.from({ length: count }, (_, i) => view.getBigInt64(i * 8, true));
    case 'UINT64':
      return Array.from({ length: count }, (_, i) => view.getBigUint64(i * 8, true));
  }
}

function numberAt(data: TensorData, i: number): number {
  const v = data[i];
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'boolean') return v ? 1 : 0;
  return 0;
}

function bigintAt(data: TensorData, i: number): bigint {
  const v = data[i];
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number') return BigInt(Math.trunc(v));
  if (typeof v === 'boolean') return v ? 1n : 0n;
  return 0n;
}

/** Bytes of a tensor's raw contents. */
export function rawSize(tensor: Tensor): number {
  if (tensor.datatype !== 'BYTES') return tensor.data.length * elementSize(tensor.datatype);
  let size = 0;
  for (const e of tensor.data as Uint8Array[]) size += 4 + e.length;
  return size;
}

/**
 * Writes a tensor's raw contents into `out` at `at` (the fake only produces BOOL, INT32, INT64, FP32,
 * UINT8 and BYTES, but every fixed-size type is handled); returns the offset after them.
 */
export function writeRaw(tensor: Tensor, out: Buffer, at: number): number {
  const { datatype, data } = tensor;
  if (datatype === 'BYTES') {
    for (const e of data as Uint8Array[]) {
      out.writeUInt32LE(e.length, at);
      out.set(e, at + 4);
      at += 4 + e.length;
    }
    return at;
  }
  const size = elementSize(datatype);
  for (let i = 0; i < data.length; i++, at += size) {
    switch (datatype) {
      case 'BOOL':
      case 'UINT8':
        out.writeUInt8(numberAt(data, i) & 0xff, at);
        break;
      case 'INT8':
        out.writeInt8(numberAt(data, i), at);
        break;
      case 'INT16':
        out.writeInt16LE(numberAt(data, i), at);
        break;
      case 'UINT16':
        out.writeUInt16LE(numberAt(data, i), at);
        break;
      case 'INT32':
        out.writeInt32LE(numberAt(data, i), at);
        break;
      case 'UINT32':
        out.writeUInt32LE(numberAt(data, i), at);
        break;
      case 'FP32':
        out.writeFloatLE(numberAt(data, i), at);
        break;
      case 'FP64':
        out.writeDoubleLE(numberAt(data, i), at);
        break;
      case 'INT64':
        out.writeBigInt64LE(bigintAt(data, i), at);
        break;
      case 'UINT64':
        out.writeBigUInt64LE(bigintAt(data, i), at);
        break;
      case 'FP16':
      case 'BF16':
        throw new TritonError('INTERNAL', `the fake does not produce ${datatype} outputs`);
    }
  }
  return at;
}

/** Raw contents of a tensor as a new buffer. */
export function encodeRaw(tensor: Tensor): Buffer {
  const out = Buffer.allocUnsafe(rawSize(tensor));
  writeRaw(tensor, out, 0);
  return out;
}
