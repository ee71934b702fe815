import type { DataType, TensorData } from '@trtllm/sdk';
import type { InferTensorContents } from '../gen/inference/grpc_service_pb.js';

/**
 * Typed `InferTensorContents` to core tensor data, for servers that answer with `contents`
 * instead of raw bytes. Returns undefined for FP16 / BF16, which have no typed field.
 */
export function tensorDataFromContents(datatype: DataType, c: InferTensorContents): TensorData | undefined {
  switch (datatype) {
    case 'BOOL':
      return [...c.boolContents];
    case 'INT8':
      return Int8Array.from(c.intContents);
    case 'INT16':
      return Int16Array.from(c.intContents);
    case 'INT32':
      return Int32Array.from(c.intContents);
    case 'INT64':
      return BigInt64Array.from(c.int64Contents);
    case 'UINT8':
      return Uint8Array.from(c.uintContents);
    case 'UINT16':
      return Uint16Array.from(c.uintContents);
    case 'UINT32':
      return Uint32Array.from(c.uintContents);
    case 'UINT64':
      return BigUint64Array.from(c.uint64Contents);
    case 'FP32':
      return Float32Array.from(c.fp32Contents);
    case 'FP64':
      return Float64Array.from(c.fp64Contents);
    case 'BYTES':
      return [...c.bytesContents];
    case 'FP16':
    case 'BF16':
      return undefined;
  }
}
