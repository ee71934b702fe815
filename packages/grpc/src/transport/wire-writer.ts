import { type InferRequest, TritonLlmError } from '@trtllm/sdk';
import { encodeTensorData, type Parameters, type ParameterValue } from '@trtllm/sdk/transport';
import { bigintField, parameterTypeError } from './parameters.js';

/**
 * Writes a `ModelInferRequest` straight into one buffer of its exact size: the same bytes as
 * protobuf-es's `toBinary(create(ModelInferRequestSchema, toModelInferRequest(request, extra)))`
 * (fields in number order, proto3 defaults left out, packed shapes), without the message objects
 * and the growing writer. Every streamed request goes through here, and with short answers the
 * request is a good part of a call's cost on the client.
 */
export function writeModelInferRequest(request: InferRequest, extra?: Parameters): Buffer {
  const parameters = parameterEntries(request.parameters, extra);
  const inputs = request.inputs;
  const outputs = request.outputs ?? [];
  const raws: Uint8Array[] = new Array(inputs.length);
  const inputSizes: number[] = new Array(inputs.length);
  const entrySizes: number[] = new Array(parameters.length);
  const valueSizes: number[] = new Array(parameters.length);

  let size = stringField(request.model) + stringField(request.modelVersion ?? '') + stringField(request.id);
  for (let i = 0; i < parameters.length; i++) {
    const [key, value] = parameters[i]!;
    const valueSize = parameterSize(key, value);
    const keySize = Buffer.byteLength(key);
    const entrySize = 1 + varintSize(keySize) + keySize + 1 + varintSize(valueSize) + valueSize;
    valueSizes[i] = valueSize;
    entrySizes[i] = entrySize;
    size += 1 + varintSize(entrySize) + entrySize;
  }
  for (let i = 0; i < inputs.length; i++) {
    const t = inputs[i]!;
    let shape = 0;
    for (const d of t.shape) shape += varintSize(dimension(t.name, d));
    const inputSize =
      stringField(t.name) + stringField(t.datatype) + (shape > 0 ? 1 + varintSize(shape) + shape : 0);
    inputSizes[i] = inputSize;
    size += 1 + varintSize(inputSize) + inputSize;
  }
  for (const name of outputs) {
    const outputSize = stringField(name);
    size += 1 + varintSize(outputSize) + outputSize;
  }
  for (let i = 0; i < inputs.length; i++) {
    const raw = encodeTensorData(inputs[i]!);
    raws[i] = raw;
    size += 1 + varintSize(raw.length) + raw.length;
  }

  const w = new Writer(size);
  w.string(1, request.model);
  w.string(2, request.modelVersion ?? '');
  w.string(3, request.id);
  for (let i = 0; i < parameters.length; i++) {
    const [key, value] = parameters[i]!;
    w.tag(4, LENGTH_DELIMITED);
    w.varint(entrySizes[i]!);
    w.string(1, key, true);
    w.tag(2, LENGTH_DELIMITED);
    w.varint(valueSizes[i]!);
    w.parameter(value);
  }
  for (let i = 0; i < inputs.length; i++) {
    const t = inputs[i]!;
    w.tag(5, LENGTH_DELIMITED);
    w.varint(inputSizes[i]!);
    w.string(1, t.name);
    w.string(2, t.datatype);
    if (t.shape.length > 0) {
      let shape = 0;
      for (const d of t.shape) shape += varintSize(d);
      w.tag(3, LENGTH_DELIMITED);
      w.varint(shape);
      for (const d of t.shape) w.varint(d);
    }
  }
  for (const name of outputs) {
    w.tag(6, LENGTH_DELIMITED);
    w.varint(stringField(name));
    w.string(1, name);
  }
  for (const raw of raws) w.bytes(7, raw);
  if (w.pos !== size) throw new Error(`ModelInferRequest writer: wrote ${w.pos} of ${size} bytes`);
  return w.buf;
}

const VARINT = 0;
const FIXED64 = 1;
const LENGTH_DELIMITED = 2;

/** The request's parameters with the transport's `extra` on top, in the order a spread gives. */
function parameterEntries(
  own: Parameters | undefined,
  extra: Parameters | undefined,
): [string, ParameterValue][] {
  if (own === undefined) return extra === undefined ? [] : Object.entries(extra);
  // A spread, not assignment: a parameter named `__proto__` must stay a parameter.
  return Object.entries(extra === undefined ? own : { ...own, ...extra });
}

/** The size of an `InferParameter` holding `value` (its oneof is written even when zero). */
function parameterSize(name: string, value: ParameterValue): number {
  switch (typeof value) {
    case 'boolean':
      return 2;
    case 'string':
      return 1 + varintSize(Buffer.byteLength(value)) + Buffer.byteLength(value);
    case 'number':
      if (!Number.isSafeInteger(value)) return 9;
      return 1 + (value >= 0 ? varintSize(value) : 10);
    case 'bigint':
      bigintField(name, value);
      return 1 + int64Size(value);
    default:
      throw parameterTypeError(name, value);
  }
}

/** A string field's size with its tag and length, or 0 for the empty string (proto3 leaves it out). */
function stringField(value: string): number {
  if (value === '') return 0;
  const n = Buffer.byteLength(value);
  return 1 + varintSize(n) + n;
}

function dimension(name: string, d: number): number {
  if (!Number.isSafeInteger(d) || d < 0) {
    throw new TritonLlmError(
      'invalid_argument',
      `inputs.${name}.shape: every dimension must be a whole number >= 0 (got ${d})`,
    );
  }
  return d;
}

function varintSize(value: number): number {
  let n = 1;
  let v = value;
  while (v >= 128) {
    v = Math.floor(v / 128);
    n++;
  }
  return n;
}

/** The varint size of a 64-bit integer: negative ones take all ten bytes (two's complement). */
function int64Size(value: bigint): number {
  if (value < 0n) return 10;
  let n = 1;
  let v = value;
  while (v >= 128n) {
    v >>= 7n;
    n++;
  }
  return n;
}

class Writer {
  readonly buf: Buffer;
  pos = 0;

  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(size);
  }

  tag(field: number, type: number): void {
    this.varint((field << 3) | type);
  }

  varint(value: number): void {
    let v = value;
    while (v >= 128) {
      this.buf[this.pos++] = (v % 128) | 0x80;
      v = Math.floor(v / 128);
    }
    this.buf[this.pos++] = v;
  }

  /** A string field; left out when empty unless `always` (a map entry's key). */
  string(field: number, value: string, always = false): void {
    if (value === '' && !always) return;
    this.tag(field, LENGTH_DELIMITED);
    const n = Buffer.byteLength(value);
    this.varint(n);
    this.pos += this.buf.write(value, this.pos, 'utf8');
  }

  bytes(field: number, value: Uint8Array): void {
    this.tag(field, LENGTH_DELIMITED);
    this.varint(value.length);
    this.buf.set(value, this.pos);
    this.pos += value.length;
  }

  parameter(value: ParameterValue): void {
    switch (typeof value) {
      case 'boolean':
        this.tag(1, VARINT);
        this.buf[this.pos++] = value ? 1 : 0;
        return;
      case 'string':
        this.string(3, value, true);
        return;
      case 'number':
        if (Number.isSafeInteger(value)) {
          if (value >= 0) {
            this.tag(2, VARINT);
            this.varint(value);
          } else this.int64(2, BigInt(value));
        } else {
          this.tag(4, FIXED64);
          this.buf.writeDoubleLE(value, this.pos);
          this.pos += 8;
        }
        return;
      case 'bigint':
        // Sizing checked the range: int64_param (2) where it fits, else uint64_param (5).
        this.int64(BigInt.asIntN(64, value) === value ? 2 : 5, value);
        return;
      default:
        throw new Error('unreachable: parameter types are checked when sizing');
    }
  }

  private int64(field: number, value: bigint): void {
    this.tag(field, VARINT);
    let v = BigInt.asUintN(64, value);
    while (v >= 128n) {
      this.buf[this.pos++] = Number(v & 0x7fn) | 0x80;
      v >>= 7n;
    }
    this.buf[this.pos++] = Number(v);
  }
}
