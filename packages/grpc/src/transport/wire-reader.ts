import { fromBinary } from '@bufbuild/protobuf';
import { type InferResponse, type Tensor, TritonLlmError } from '@trtllm/sdk';
import { decodeTensorData, type Parameters, type ParameterValue } from '@trtllm/sdk/transport';
import { ModelStreamInferResponseSchema } from '../gen/inference/grpc_service_pb.js';
import { wireDataType } from './datatype.js';
import { fromModelInferResponse, malformedResponse } from './infer-response.js';
import { KnownRuns, OUTPUTS_KEY, PARAMETERS_KEY } from './known-runs.js';
import { FIXED64, LENGTH_DELIMITED, Truncated, VARINT, Walker } from './wire-walker.js';

/**
 * A streamed response as the lean path reads it: the core response plus the wire's own final flag
 * (the stream decides what `final` means for the consumer, see `call-stream.ts`).
 */
export interface WireResponse extends InferResponse {
  final: boolean;
  readonly wireFinal: boolean;
}

// Field numbers of proto/inference/grpc_service.proto.
const STREAM_ERROR_MESSAGE = 1;
const STREAM_INFER_RESPONSE = 2;
const RESPONSE_MODEL_NAME = 1;
const RESPONSE_MODEL_VERSION = 2;
const RESPONSE_ID = 3;
const RESPONSE_PARAMETERS = 4;
const RESPONSE_OUTPUTS = 5;
const RESPONSE_RAW_OUTPUT_CONTENTS = 6;
const OUTPUT_NAME = 1;
const OUTPUT_DATATYPE = 2;
const OUTPUT_SHAPE = 3;
const PARAMETER_BOOL = 1;
const PARAMETER_INT64 = 2;
const PARAMETER_STRING = 3;
const PARAMETER_DOUBLE = 4;
const PARAMETER_UINT64 = 5;

/**
 * Reads one `ModelStreamInferResponse` by walking its wire fields, without building protobuf
 * message objects: this runs once per streamed token, and the generated decoder allocates a
 * message per output, per parameter and per map entry. It reads what a core response holds and
 * nothing else (output `parameters` are skipped). A response whose outputs come in typed
 * `contents` instead of `raw_output_contents` is rare (Triton sends raw contents) and goes
 * through the generated decoder. Returns the server's `error_message` as a string. Reads
 * `bytes[start..end)` (a message in a socket read, without a copy of it). `knownIds` (a shared
 * call's decimal request ids by value) lets the response carry the registered id string.
 */
export function readStreamResponse(
  bytes: Buffer,
  expectedId?: string,
  start = 0,
  end = bytes.length,
  knownIds?: ReadonlyMap<number, string>,
): WireResponse | string {
  const w = WALKER.reset(bytes, start, end, expectedId, knownIds);
  let error = '';
  let response: WireResponse | undefined;
  try {
    while (w.pos < w.end) {
      const tag = w.varint();
      const field = tag >>> 3;
      const type = tag & 7;
      if (field === STREAM_ERROR_MESSAGE && type === LENGTH_DELIMITED) error = w.string();
      else if (field === STREAM_INFER_RESPONSE && type === LENGTH_DELIMITED) {
        const length = w.varint();
        response = readInferResponse(w, w.pos, w.take(length)) ?? slowPath(bytes.subarray(start, end));
      } else w.skip(type);
    }
  } catch (err) {
    if (err instanceof TritonLlmError) throw err;
    throw new TritonLlmError('protocol', `a ModelStreamInfer message cannot be read: ${describe(err)}`, {
      cause: err,
    });
  }
  if (error !== '') return error;
  if (response === undefined) {
    throw new TritonLlmError('protocol', 'a ModelStreamInfer message with neither a response nor an error');
  }
  return response;
}

// Scratch space of the response being read (reading is synchronous, one response at a time): the
// outputs' fields come before their raw contents, and keeping them here instead of in an object
// per output spares the garbage collector a few allocations per token.
const outputNames: string[] = [];
const outputTypes: string[] = [];
const outputShapes: (readonly number[])[] = [];
const rawStarts: number[] = [];
const rawEnds: number[] = [];

// The parameters nearly every streamed response carries, and nothing else: shared, not rebuilt.
const FINAL: Parameters = Object.freeze({ triton_final_response: true });
const NOT_FINAL: Parameters = Object.freeze({ triton_final_response: false });

/** `undefined` when the outputs carry no raw contents: the caller then takes the slow path. */
function readInferResponse(w: Walker, start: number, end: number): WireResponse | undefined {
  let model = '';
  let version = '';
  let id = '';
  let parameters: Record<string, ParameterValue> | undefined;
  let firstKey: string | undefined;
  let firstValue: ParameterValue | undefined;
  let outputs = 0;
  let raws = 0;
  // Where the run of parameters and outputs began (see KnownRuns); -1 before it, -2 once settled.
  let runStart = -1;
  w.pos = start;
  while (w.pos < end) {
    const at = w.pos;
    if (runStart === -1 && (w.buf[at] === PARAMETERS_KEY || w.buf[at] === OUTPUTS_KEY)) {
      const known = KNOWN_RUNS.find(w.buf, at, end);
      if (known !== undefined) {
        firstKey = known.key;
        firstValue = known.value;
        outputs = known.names.length;
        for (let i = 0; i < outputs; i++) {
          outputNames[i] = known.names[i]!;
          outputTypes[i] = known.types[i]!;
          outputShapes[i] = known.shapes[i]!;
        }
        w.pos = at + known.bytes.length;
        runStart = -2;
        continue;
      }
      runStart = at;
    }
    const tag = w.varint();
    const field = tag >>> 3;
    const type = tag & 7;
    if (type !== LENGTH_DELIMITED) {
      if (runStart >= 0) runStart = -2;
      w.skip(type);
      continue;
    }
    switch (field) {
      case RESPONSE_RAW_OUTPUT_CONTENTS: {
        if (runStart >= 0) {
          if (parameters === undefined) remember(w.buf, runStart, at, firstKey, firstValue, outputs);
          runStart = -2;
        }
        const stop = w.take(w.varint());
        rawStarts[raws] = w.pos;
        rawEnds[raws] = stop;
        raws += 1;
        w.pos = stop;
        break;
      }
      case RESPONSE_OUTPUTS: {
        const length = w.varint();
        readOutput(w, w.pos, w.take(length), outputs);
        outputs += 1;
        break;
      }
      case RESPONSE_PARAMETERS: {
        const length = w.varint();
        readParameterEntry(w, w.pos, w.take(length));
        if (entryValue === undefined) break;
        if (firstKey === undefined && parameters === undefined) {
          firstKey = entryKey;
          firstValue = entryValue;
          break;
        }
        if (parameters === undefined) {
          parameters = {};
          setParameter(parameters, firstKey!, firstValue!);
        }
        setParameter(parameters, entryKey, entryValue);
        break;
      }
      case RESPONSE_MODEL_NAME:
        if (runStart >= 0) runStart = -2;
        model = w.name();
        break;
      case RESPONSE_MODEL_VERSION:
        if (runStart >= 0) runStart = -2;
        version = w.name();
        break;
      case RESPONSE_ID:
        if (runStart >= 0) runStart = -2;
        id = w.id();
        break;
      default:
        if (runStart >= 0) runStart = -2;
        w.skip(type);
    }
  }
  w.pos = end;
  // Outputs without raw contents (typed `contents`, or none at all) are read by the generated decoder.
  if (raws === 0 && outputs > 0) return undefined;
  if (raws > 0 && raws !== outputs) {
    throw malformedResponse(model, id, `${outputs} outputs but ${raws} raw output contents`);
  }
  const tensors: Tensor[] = new Array(outputs);
  for (let i = 0; i < outputs; i++) {
    const name = outputNames[i]!;
    const shape = outputShapes[i]!;
    const datatype = wireDataType(outputTypes[i]!);
    if (datatype === undefined) {
      throw malformedResponse(
        model,
        id,
        `output '${name}' has unknown datatype ${JSON.stringify(outputTypes[i])}`,
      );
    }
    let data: Tensor['data'];
    try {
      data = decodeTensorData(datatype, shape, w.buf, rawStarts[i]!, rawEnds[i]!);
    } catch (err) {
      throw malformedResponse(model, id, `output '${name}' cannot be decoded`, err);
    }
    tensors[i] = { name, datatype, shape, data };
  }
  let params: Parameters = parameters ?? EMPTY;
  if (parameters === undefined && firstKey !== undefined) {
    if (firstKey === 'triton_final_response' && firstValue === true) params = FINAL;
    else if (firstKey === 'triton_final_response' && firstValue === false) params = NOT_FINAL;
    else {
      const one: Record<string, ParameterValue> = {};
      setParameter(one, firstKey, firstValue!);
      params = one;
    }
  }
  return {
    model,
    modelVersion: version,
    id,
    outputs: tensors,
    parameters: params,
    final: false,
    wireFinal: params.triton_final_response === true,
  };
}

function setParameter(into: Record<string, ParameterValue>, key: string, value: ParameterValue): void {
  // `__proto__` must stay a parameter.
  if (key === '__proto__') Object.defineProperty(into, key, { value, enumerable: true, writable: true });
  else into[key] = value;
}

const EMPTY: Parameters = Object.freeze({});

function readOutput(w: Walker, start: number, end: number, index: number): void {
  let name = '';
  let datatype = '';
  const dims = DIMS;
  // Pops keep the scratch's backing store; `length = 0` would drop it for every output read.
  while (dims.length > 0) dims.pop();
  w.pos = start;
  while (w.pos < end) {
    const tag = w.varint();
    const field = tag >>> 3;
    const type = tag & 7;
    if (field === OUTPUT_NAME && type === LENGTH_DELIMITED) name = w.name();
    else if (field === OUTPUT_DATATYPE && type === LENGTH_DELIMITED) datatype = w.name();
    else if (field === OUTPUT_SHAPE && type === LENGTH_DELIMITED) {
      // Packed, as proto3 writes repeated scalars.
      const stop = w.take(w.varint());
      while (w.pos < stop) dims.push(w.dimension());
    } else if (field === OUTPUT_SHAPE && type === VARINT) dims.push(w.dimension());
    else w.skip(type);
  }
  w.pos = end;
  outputNames[index] = name;
  outputTypes[index] = datatype;
  outputShapes[index] = sharedShape(dims);
}

// The dimensions of the output being read (scratch), and the shapes nearly every streamed output
// has, shared instead of allocated per output and token (a tensor's shape is read-only).
const DIMS: number[] = [];
const SHAPE_1: readonly number[] = Object.freeze([1]);
const SHAPE_1_1: readonly number[] = Object.freeze([1, 1]);
const SHAPE_1_1_1: readonly number[] = Object.freeze([1, 1, 1]);

function sharedShape(dims: readonly number[]): readonly number[] {
  const n = dims.length;
  if (n >= 1 && n <= 3 && dims[0] === 1 && (n < 2 || dims[1] === 1) && (n < 3 || dims[2] === 1)) {
    return n === 1 ? SHAPE_1 : n === 2 ? SHAPE_1_1 : SHAPE_1_1_1;
  }
  return dims.slice();
}

const KNOWN_RUNS = new KnownRuns();

/** Keeps a run of fields (see KnownRuns) whose state no two responses can share by mistake. */
function remember(
  buf: Buffer,
  start: number,
  end: number,
  key: string | undefined,
  value: ParameterValue | undefined,
  outputs: number,
): void {
  for (let i = 0; i < outputs; i++) if (!isSharedShape(outputShapes[i]!)) return;
  KNOWN_RUNS.add(buf, start, end, {
    key,
    value,
    names: outputNames.slice(0, outputs),
    types: outputTypes.slice(0, outputs),
    shapes: outputShapes.slice(0, outputs),
  });
}

function isSharedShape(shape: readonly number[]): boolean {
  return shape === SHAPE_1 || shape === SHAPE_1_1 || shape === SHAPE_1_1_1;
}

// The entry `readParameterEntry` read last (module state, like the scratch above).
let entryKey = '';
let entryValue: ParameterValue | undefined;

/** One `map<string, InferParameter>` entry: key (1), value (2) with a oneof of five kinds. */
function readParameterEntry(w: Walker, start: number, end: number): void {
  entryKey = '';
  entryValue = undefined;
  w.pos = start;
  while (w.pos < end) {
    const tag = w.varint();
    const field = tag >>> 3;
    const type = tag & 7;
    if (field === 1 && type === LENGTH_DELIMITED) entryKey = w.name();
    else if (field === 2 && type === LENGTH_DELIMITED) {
      const stop = w.take(w.varint());
      while (w.pos < stop) {
        const t = w.varint();
        const f = t >>> 3;
        const wt = t & 7;
        if (f === PARAMETER_BOOL && wt === VARINT) entryValue = w.varint() !== 0;
        else if (f === PARAMETER_INT64 && wt === VARINT) entryValue = w.int64(true);
        else if (f === PARAMETER_UINT64 && wt === VARINT) entryValue = w.int64(false);
        else if (f === PARAMETER_STRING && wt === LENGTH_DELIMITED) entryValue = w.string();
        else if (f === PARAMETER_DOUBLE && wt === FIXED64) entryValue = w.double();
        else w.skip(wt);
      }
      w.pos = stop;
    } else w.skip(type);
  }
  w.pos = end;
}

function slowPath(bytes: Buffer): WireResponse {
  const message = fromBinary(ModelStreamInferResponseSchema, bytes);
  if (message.inferResponse === undefined) {
    throw new TritonLlmError('protocol', 'a ModelStreamInfer message with neither a response nor an error');
  }
  const r = fromModelInferResponse(message.inferResponse, false);
  return { ...r, final: false, wireFinal: r.parameters.triton_final_response === true };
}

function describe(err: unknown): string {
  return err instanceof Truncated
    ? 'it ends inside a field'
    : err instanceof Error
      ? err.message
      : String(err);
}

// One walker for every response: reading is synchronous and never nested.
const WALKER = new Walker();
