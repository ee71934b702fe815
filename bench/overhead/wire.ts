import type { MessageInitShape } from '@bufbuild/protobuf';
import type { ModelInferRequestSchema } from '../../packages/grpc/src/gen/inference/grpc_service_pb.js';

/**
 * Packing of the three ensemble inputs the bare clients send, and unpacking of `text_output`:
 * Triton's raw tensor contents (little-endian; BYTES as a 4-byte length then the bytes).
 */
const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function bytesTensor(text: string): Uint8Array {
  const body = encoder.encode(text);
  const out = new Uint8Array(4 + body.length);
  new DataView(out.buffer).setUint32(0, body.length, true);
  out.set(body, 4);
  return out;
}

export function int32Tensor(value: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setInt32(0, value, true);
  return out;
}

export function boolTensor(value: boolean): Uint8Array {
  return Uint8Array.of(value ? 1 : 0);
}

/** The first element of a BYTES tensor as text. */
export function firstString(raw: Uint8Array): string {
  if (raw.length < 4) return '';
  const length = new DataView(raw.buffer, raw.byteOffset, raw.byteLength).getUint32(0, true);
  return decoder.decode(raw.subarray(4, 4 + length));
}

export const ENSEMBLE_INPUTS = [
  { name: 'text_input', datatype: 'BYTES' },
  { name: 'max_tokens', datatype: 'INT32' },
  { name: 'stream', datatype: 'BOOL' },
] as const;

/** The `ModelInferRequest` every bare protobuf-es variant sends: the three ensemble inputs, raw. */
export function ensembleRequestInit(
  prompt: string,
  maxTokens: number,
  id: number,
): MessageInitShape<typeof ModelInferRequestSchema> {
  return {
    modelName: 'ensemble',
    id: String(id),
    parameters: {
      triton_enable_empty_final_response: { parameterChoice: { case: 'boolParam', value: true } },
    },
    inputs: ENSEMBLE_INPUTS.map((t) => ({ name: t.name, datatype: t.datatype, shape: [1n, 1n] })),
    rawInputContents: [bytesTensor(prompt), int32Tensor(maxTokens), boolTensor(true)],
  };
}
