/**
 * A plain @grpc/grpc-js client of our proto for driving the fake (not the SDK, which is built on
 * top of it). Tensors are packed here independently of the fake's own code.
 */
import { fileURLToPath } from 'node:url';
import {
  type ClientDuplexStream,
  credentials,
  loadPackageDefinition,
  type ServiceError,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';

const PROTO_DIR = fileURLToPath(new URL('../../../../proto', import.meta.url));

const definition = loadSync('inference/grpc_service.proto', {
  includeDirs: [PROTO_DIR],
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
});

export type TestDataType = 'INT32' | 'BOOL' | 'BYTES' | 'UINT64' | 'UINT32' | 'FP32' | 'INT64';
export type Value = number | boolean | string | bigint;

export interface TestTensor {
  readonly name: string;
  readonly datatype: TestDataType;
  readonly shape: readonly number[];
  readonly data: readonly Value[];
}

export function pack(t: TestTensor): Buffer {
  const parts = t.data.map((v): Buffer => {
    switch (t.datatype) {
      case 'INT32': {
        const b = Buffer.alloc(4);
        b.writeInt32LE(Number(v));
        return b;
      }
      case 'UINT32': {
        const b = Buffer.alloc(4);
        b.writeUInt32LE(Number(v));
        return b;
      }
      case 'FP32': {
        const b = Buffer.alloc(4);
        b.writeFloatLE(Number(v));
        return b;
      }
      case 'INT64': {
        const b = Buffer.alloc(8);
        b.writeBigInt64LE(BigInt(v));
        return b;
      }
      case 'UINT64': {
        const b = Buffer.alloc(8);
        b.writeBigUInt64LE(BigInt(v));
        return b;
      }
      case 'BOOL':
        return Buffer.from([v ? 1 : 0]);
      case 'BYTES': {
        const s = Buffer.from(String(v), 'utf8');
        const len = Buffer.alloc(4);
        len.writeUInt32LE(s.length);
        return Buffer.concat([len, s]);
      }
      default:
        throw new Error(`test client cannot pack ${String(t.datatype)}`);
    }
  });
  return Buffer.concat(parts);
}

export interface OutputTensor {
  readonly name: string;
  readonly datatype: string;
  readonly shape: number[];
  readonly values: (number | string | bigint | boolean)[];
}

/** Values of a raw (binary) tensor, row-major. */
export function unpack(datatype: string, raw: Buffer): (number | string | bigint | boolean)[] {
  const out: (number | string | bigint | boolean)[] = [];
  let at = 0;
  while (at < raw.length) {
    switch (datatype) {
      case 'INT32':
        out.push(raw.readInt32LE(at));
        at += 4;
        break;
      case 'FP32':
        out.push(raw.readFloatLE(at));
        at += 4;
        break;
      case 'INT64':
        out.push(raw.readBigInt64LE(at));
        at += 8;
        break;
      case 'BOOL':
        out.push(raw[at] !== 0);
        at += 1;
        break;
      case 'BYTES': {
        const len = raw.readUInt32LE(at);
        out.push(raw.subarray(at + 4, at + 4 + len).toString('utf8'));
        at += 4 + len;
        break;
      }
      default:
        throw new Error(`test client cannot unpack ${datatype}`);
    }
  }
  return out;
}

export interface ParameterObject {
  readonly parameter_choice?: string;
  readonly bool_param?: boolean;
  readonly string_param?: string;
  readonly int64_param?: string;
}

export interface InferResponseObject {
  readonly model_name: string;
  readonly model_version: string;
  readonly id: string;
  readonly parameters: Record<string, ParameterObject>;
  readonly outputs: { name: string; datatype: string; shape: string[] }[];
  readonly raw_output_contents: Buffer[];
}

export interface StreamMessage {
  readonly error_message: string;
  readonly infer_response: InferResponseObject | null;
}

/** Outputs of a response by name. */
export function outputsOf(r: InferResponseObject): Map<string, OutputTensor> {
  return new Map(
    r.outputs.map((o, i) => [
      o.name,
      {
        name: o.name,
        datatype: o.datatype,
        shape: o.shape.map(Number),
        values: unpack(o.datatype, r.raw_output_contents[i] ?? Buffer.alloc(0)),
      },
    ]),
  );
}

export function output(r: InferResponseObject, name: string): OutputTensor {
  const t = outputsOf(r).get(name);
  if (!t)
    throw new Error(`response has no output '${name}' (has ${r.outputs.map((o) => o.name).join(', ')})`);
  return t;
}

export function isFinal(r: InferResponseObject): boolean | undefined {
  return r.parameters.triton_final_response?.bool_param;
}

/** A response with outputs (the last of them may carry the final flag too). */
export function carriesTensors(r: InferResponseObject): boolean {
  return r.outputs.length > 0;
}

export interface RequestOptions {
  readonly id?: string;
  readonly emptyFinal?: boolean;
  readonly outputs?: readonly string[];
  readonly typed?: boolean;
}

/** A ModelInferRequest with raw input contents (or typed `contents` with `typed`). */
export function inferRequest(model: string, inputs: readonly TestTensor[], options: RequestOptions = {}) {
  const typed = options.typed ?? false;
  return {
    model_name: model,
    model_version: '',
    id: options.id ?? '',
    parameters:
      options.emptyFinal === false ? {} : { triton_enable_empty_final_response: { bool_param: true } },
    inputs: inputs.map((t) => ({
      name: t.name,
      datatype: t.datatype,
      shape: t.shape.map(String),
      ...(typed ? { contents: typedContents(t) } : {}),
    })),
    outputs: (options.outputs ?? []).map((name) => ({ name })),
    raw_input_contents: typed ? [] : inputs.map(pack),
  };
}

function typedContents(t: TestTensor) {
  switch (t.datatype) {
    case 'INT32':
      return { int_contents: t.data.map(Number) };
    case 'UINT32':
      return { uint_contents: t.data.map(Number) };
    case 'FP32':
      return { fp32_contents: t.data.map(Number) };
    case 'INT64':
      return { int64_contents: t.data.map(String) };
    case 'UINT64':
      return { uint64_contents: t.data.map(String) };
    case 'BOOL':
      return { bool_contents: t.data.map(Boolean) };
    case 'BYTES':
      return { bytes_contents: t.data.map((v) => Buffer.from(String(v))) };
  }
}

// biome-ignore lint/suspicious/noExplicitAny: grpc-js builds the client type at run time.
type AnyClient = any;

export interface TestClient {
  readonly raw: AnyClient;
  unary<T>(method: string, request: object): Promise<T>;
  stream(): ClientDuplexStream<object, StreamMessage>;
  close(): void;
}

export function connect(url: string, creds = credentials.createInsecure(), options: object = {}): TestClient {
  const pkg = loadPackageDefinition(definition) as AnyClient;
  const raw = new pkg.inference.GRPCInferenceService(url.replace(/^https?:\/\//, ''), creds, options);
  return {
    raw,
    unary: <T>(method: string, request: object) =>
      new Promise<T>((resolve, reject) => {
        raw[method](request, (err: ServiceError | null, res: T) => (err ? reject(err) : resolve(res)));
      }),
    stream: () => raw.ModelStreamInfer(),
    close: () => raw.close(),
  };
}

/** Sends `requests` on one stream, half-closes, and collects every message until the call ends. */
export function streamAll(
  client: TestClient,
  requests: readonly object[],
): Promise<{ messages: StreamMessage[]; error: ServiceError | undefined }> {
  return new Promise((resolve) => {
    const call = client.stream();
    const messages: StreamMessage[] = [];
    call.on('data', (m: StreamMessage) => messages.push(m));
    call.on('error', (error: ServiceError) => resolve({ messages, error }));
    call.on('end', () => resolve({ messages, error: undefined }));
    for (const r of requests) call.write(r);
    call.end();
  });
}

export function int32(name: string, values: readonly number[], shape = [1, values.length]): TestTensor {
  return { name, datatype: 'INT32', shape, data: values };
}

export function bool(name: string, value: boolean): TestTensor {
  return { name, datatype: 'BOOL', shape: [1, 1], data: [value] };
}

export function text(name: string, values: readonly string[], shape = [1, values.length]): TestTensor {
  return { name, datatype: 'BYTES', shape, data: values };
}

/** Inputs of a raw `tensorrt_llm` request for `ids`. */
export function rawInputs(
  ids: readonly number[],
  maxTokens: number,
  extra: readonly TestTensor[] = [],
): TestTensor[] {
  return [
    int32('input_ids', ids),
    int32('input_lengths', [ids.length]),
    int32('request_output_len', [maxTokens]),
    ...extra,
  ];
}

/** Inputs of an ensemble / BLS request. */
export function textInputs(
  prompt: string,
  maxTokens: number,
  extra: readonly TestTensor[] = [],
): TestTensor[] {
  return [text('text_input', [prompt]), int32('max_tokens', [maxTokens]), ...extra];
}
