/**
 * A hand-written encoder for the one hot message, `ModelInferResponse` (alone or inside
 * `ModelStreamInferResponse`): at tens of thousands of tokens per second the generic
 * object-to-protobuf path is the bottleneck, and most of each response (tensor names, types,
 * shapes, constant outputs) can be encoded once. Field numbers are grpc_service.proto's.
 */
import { encodeRaw } from '../raw-tensor.js';
import type { Tensor } from '../tensor.js';

function varint(value: number): Buffer {
  const bytes: number[] = [];
  let v = value;
  while (v > 0x7f) {
    bytes.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  bytes.push(v);
  return Buffer.from(bytes);
}

const LEN = 2;
const VARINT = 0;

function key(field: number, wire: number): Buffer {
  return varint((field << 3) | wire);
}

function lengthDelimited(field: number, body: Buffer): Buffer {
  return Buffer.concat([key(field, LEN), varint(body.length), body]);
}

function stringField(field: number, value: string): Buffer {
  return value === '' ? Buffer.alloc(0) : lengthDelimited(field, Buffer.from(value, 'utf8'));
}

/** A `map<string, InferParameter>` entry holding a bool (InferParameter.bool_param = 1). */
function boolParameter(field: number, name: string, value: boolean): Buffer {
  const param = Buffer.concat([key(1, VARINT), varint(value ? 1 : 0)]);
  return lengthDelimited(field, Buffer.concat([stringField(1, name), lengthDelimited(2, param)]));
}

const FINAL = [false, true].map((v) => boolParameter(4, 'triton_final_response', v)) as [Buffer, Buffer];

const headerCache = new Map<string, Buffer>();

/** InferOutputTensor { name = 1, datatype = 2, shape = 3 (packed) }, as the `outputs` field (5). */
function outputHeader(tensor: Tensor): Buffer {
  const cacheKey = `${tensor.name}\u0000${tensor.datatype}\u0000${tensor.shape.join(',')}`;
  let header = headerCache.get(cacheKey);
  if (!header) {
    const shape = Buffer.concat(tensor.shape.map(varint));
    header = lengthDelimited(
      5,
      Buffer.concat([
        stringField(1, tensor.name),
        stringField(2, tensor.datatype),
        shape.length > 0 ? lengthDelimited(3, shape) : Buffer.alloc(0),
      ]),
    );
    headerCache.set(cacheKey, header);
  }
  return header;
}

// Frozen tensors are the shared constant outputs: they encode once.
const contentCache = new WeakMap<Tensor, Buffer>();

function rawContents(tensor: Tensor): Buffer {
  if (!Object.isFrozen(tensor)) return lengthDelimited(6, encodeRaw(tensor));
  let encoded = contentCache.get(tensor);
  if (!encoded) {
    encoded = lengthDelimited(6, encodeRaw(tensor));
    contentCache.set(tensor, encoded);
  }
  return encoded;
}

export interface ResponseFields {
  readonly model: string;
  readonly version: string;
  readonly id: string;
  readonly outputs: readonly Tensor[];
  /** `triton_final_response`; omitted for unary ModelInfer answers. */
  readonly final: boolean | undefined;
}

/** ModelInferResponse bytes. */
export function encodeInferResponse(r: ResponseFields): Buffer {
  const parts: Buffer[] = [stringField(1, r.model), stringField(2, r.version), stringField(3, r.id)];
  if (r.final !== undefined) parts.push(FINAL[r.final ? 1 : 0]);
  for (const t of r.outputs) parts.push(outputHeader(t));
  for (const t of r.outputs) parts.push(rawContents(t));
  return Buffer.concat(parts);
}

/** ModelStreamInferResponse { infer_response = 2 } bytes. */
export function encodeStreamResponse(r: ResponseFields): Buffer {
  return lengthDelimited(2, encodeInferResponse(r));
}

/**
 * ModelStreamInferResponse { error_message = 1, infer_response = 2 } bytes. Triton keeps the request
 * id (and, for errors the model sent, name, version and the final flag) in `infer_response`.
 */
export function encodeStreamError(message: string, r: ResponseFields): Buffer {
  return Buffer.concat([stringField(1, message), lengthDelimited(2, encodeInferResponse(r))]);
}

/** Not a protobuf message: a length-delimited field 2 whose length runs past the end. */
export const MALFORMED_MESSAGE = Buffer.from([0x12, 0x7f, 0x01]);
