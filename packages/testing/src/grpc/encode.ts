/**
 * A hand-written encoder for the one hot message, `ModelInferResponse` (alone or inside
 * `ModelStreamInferResponse`): at tens of thousands of tokens per second the generic
 * object-to-protobuf path is the bottleneck. Everything constant (tensor names, types, shapes, the
 * request's id, shared zero outputs) is encoded once, and each response is written into a single
 * buffer. Field numbers are grpc_service.proto's.
 */
import { rawSize, writeRaw } from '../raw-tensor.js';
import type { Tensor } from '../tensor.js';

const LEN = 2;
const VARINT = 0;

function varintSize(v: number): number {
  let n = 1;
  while (v > 0x7f) {
    v = Math.floor(v / 0x80);
    n++;
  }
  return n;
}

function writeVarint(out: Buffer, at: number, value: number): number {
  let v = value;
  while (v > 0x7f) {
    out[at++] = (v % 0x80) | 0x80;
    v = Math.floor(v / 0x80);
  }
  out[at++] = v;
  return at;
}

function varint(value: number): Buffer {
  const out = Buffer.allocUnsafe(varintSize(value));
  writeVarint(out, 0, value);
  return out;
}

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

const FINAL_FALSE = boolParameter(4, 'triton_final_response', false);
const FINAL_TRUE = boolParameter(4, 'triton_final_response', true);
const NO_BYTES = Buffer.alloc(0);

interface CachedHeader {
  readonly datatype: string;
  readonly shape: readonly number[];
  readonly bytes: Buffer;
}

// name -> the few (datatype, shape) headers seen under it; a scan beats building string keys.
const headers = new Map<string, CachedHeader[]>();

/** InferOutputTensor { name = 1, datatype = 2, shape = 3 (packed) }, as the `outputs` field (5). */
function outputHeader(t: Tensor): Buffer {
  let list = headers.get(t.name);
  if (!list) {
    list = [];
    headers.set(t.name, list);
  }
  for (const h of list) {
    if (h.datatype !== t.datatype || h.shape.length !== t.shape.length) continue;
    let same = true;
    for (let i = 0; i < h.shape.length; i++) if (h.shape[i] !== t.shape[i]) same = false;
    if (same) return h.bytes;
  }
  const shape = Buffer.concat(t.shape.map(varint));
  const bytes = lengthDelimited(
    5,
    Buffer.concat([
      stringField(1, t.name),
      stringField(2, t.datatype),
      shape.length > 0 ? lengthDelimited(3, shape) : NO_BYTES,
    ]),
  );
  // Unbounded shapes (non-streaming lengths) would grow the cache forever; keep the common ones.
  if (list.length < 16) list.push({ datatype: t.datatype, shape: [...t.shape], bytes });
  return bytes;
}

// Frozen tensors are the shared constant outputs: their raw_output_contents field encodes once.
const contentCache = new WeakMap<Tensor, Buffer>();

function constantContents(t: Tensor): Buffer | undefined {
  if (!Object.isFrozen(t)) return undefined;
  let encoded = contentCache.get(t);
  if (!encoded) {
    const raw = Buffer.allocUnsafe(rawSize(t));
    writeRaw(t, raw, 0);
    encoded = lengthDelimited(6, raw);
    contentCache.set(t, encoded);
  }
  return encoded;
}

/**
 * Encodes the responses of one request: model name, version and id are written once, each
 * response adds its final flag and outputs.
 */
export class ResponseEncoder {
  private readonly prefix: Buffer;

  constructor(model: string, version: string, id: string) {
    this.prefix = Buffer.concat([stringField(1, model), stringField(2, version), stringField(3, id)]);
  }

  /** ModelInferResponse bytes; `final` undefined leaves out `triton_final_response` (unary answers). */
  response(outputs: readonly Tensor[], final: boolean | undefined): Buffer {
    return this.encode(outputs, final, false);
  }

  /** ModelStreamInferResponse { infer_response = 2 } bytes. */
  streamResponse(outputs: readonly Tensor[], final: boolean): Buffer {
    return this.encode(outputs, final, true);
  }

  /**
   * ModelStreamInferResponse { error_message = 1, infer_response = 2 } bytes. Triton keeps the
   * request id (and, for errors the model sent, name, version and the final flag) in
   * `infer_response`.
   */
  streamError(message: string, final: boolean | undefined): Buffer {
    return Buffer.concat([stringField(1, message), lengthDelimited(2, this.response([], final))]);
  }

  private encode(outputs: readonly Tensor[], final: boolean | undefined, wrap: boolean): Buffer {
    const flag = final === undefined ? NO_BYTES : final ? FINAL_TRUE : FINAL_FALSE;
    let size = this.prefix.length + flag.length;
    const heads: Buffer[] = [];
    const constants: (Buffer | undefined)[] = [];
    const sizes: number[] = [];
    for (const t of outputs) {
      const head = outputHeader(t);
      heads.push(head);
      const constant = constantContents(t);
      constants.push(constant);
      const raw = constant ? 0 : rawSize(t);
      sizes.push(raw);
      size += head.length + (constant ? constant.length : 1 + varintSize(raw) + raw);
    }
    const wrapper = wrap ? 1 + varintSize(size) : 0;
    const out = Buffer.allocUnsafe(wrapper + size);
    let at = 0;
    if (wrap) {
      out[at++] = (2 << 3) | LEN;
      at = writeVarint(out, at, size);
    }
    at += this.prefix.copy(out, at);
    at += flag.copy(out, at);
    for (const head of heads) at += head.copy(out, at);
    outputs.forEach((t, i) => {
      const constant = constants[i];
      if (constant) {
        at += constant.copy(out, at);
        return;
      }
      out[at++] = (6 << 3) | LEN;
      at = writeVarint(out, at, sizes[i]!);
      at = writeRaw(t, out, at);
    });
    return out;
  }
}

/** Not a protobuf message: a length-delimited field 2 whose length runs past the end. */
export const MALFORMED_MESSAGE = Buffer.from([0x12, 0x7f, 0x01]);
