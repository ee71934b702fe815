/** Tensors as the fake's models see them: decoded values, whatever the wire form was. */
import type { DataType } from './models/tensor-spec.js';

/**
 * Values, flattened row-major: `bigint[]` for INT64/UINT64, `boolean[]` for BOOL, `Uint8Array[]` for
 * BYTES, numbers for the rest (FP16/BF16 widened).
 */
export type TensorData = number[] | bigint[] | boolean[] | Uint8Array[];

export interface Tensor {
  readonly name: string;
  readonly datatype: DataType;
  readonly shape: readonly number[];
  readonly data: TensorData;
}

/** Bytes per element, or 0 for BYTES. */
export function elementSize(datatype: DataType): number {
  switch (datatype) {
    case 'BOOL':
    case 'INT8':
    case 'UINT8':
      return 1;
    case 'INT16':
    case 'UINT16':
    case 'FP16':
    case 'BF16':
      return 2;
    case 'INT32':
    case 'UINT32':
    case 'FP32':
      return 4;
    case 'INT64':
    case 'UINT64':
    case 'FP64':
      return 8;
    case 'BYTES':
      return 0;
  }
}

export function elementCount(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

const utf8 = new TextEncoder();

/** A BYTES element from text. */
export function textBytes(text: string): Uint8Array {
  return utf8.encode(text);
}

export function int32Tensor(name: string, shape: readonly number[], data: number[]): Tensor {
  return { name, datatype: 'INT32', shape, data };
}

export function fp32Tensor(name: string, shape: readonly number[], data: number[]): Tensor {
  return { name, datatype: 'FP32', shape, data };
}

export function int64Tensor(name: string, shape: readonly number[], data: bigint[]): Tensor {
  return { name, datatype: 'INT64', shape, data };
}

export function textTensor(name: string, shape: readonly number[], texts: readonly string[]): Tensor {
  return { name, datatype: 'BYTES', shape, data: texts.map(textBytes) };
}
