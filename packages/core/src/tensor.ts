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
