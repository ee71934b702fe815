/**
 * KServe v2 `/infer`, with Triton's binary tensor extension both ways (Inference-Header-Content-Length,
 * `binary_data_size`, `binary_data` / `binary_data_output`). Decoupled models are refused (501).
 */
import { findTarget, prepareRequest } from '../engine/admit.js';
import type { EngineContext } from '../engine/context.js';
import { execute } from '../engine/execute.js';
import type { Delivery, InferenceRequest, ModelResponse, ParameterValue } from '../engine/request.js';
import type { InputHeader } from '../engine/validate.js';
import { asTritonError, TritonError } from '../errors.js';
import { MODEL_VERSION } from '../models/repository.js';
import { isDataType } from '../models/tensor-spec.js';
import { decodeRaw, encodeRaw } from '../raw-tensor.js';
import { elementCount, type Tensor } from '../tensor.js';
import { withTraceparent } from '../trace-context.js';
import type { Exchange } from './exchange.js';
import {
  flatData,
  flattenNested,
  isObject,
  jsonValues,
  parseJsonBody,
  shapeMismatch,
  stringify,
} from './json.js';
import { unaryFault } from './unary-fault.js';

export const DECOUPLED_HTTP_INFER = "HTTP end point doesn't support models with decoupled transaction policy";
export const HEADER_LENGTH = 'inference-header-content-length';

interface InferBody {
  readonly id: string;
  readonly inputs: readonly (InputHeader & { readonly data?: unknown; readonly binarySize?: number })[];
  readonly outputs: readonly { readonly name: string; readonly binary: boolean | undefined }[];
  readonly binaryOutput: boolean;
  readonly parameters: Map<string, ParameterValue>;
}

function invalid(message: string): TritonError {
  return new TritonError('INVALID_ARG', message);
}

function readInferBody(json: unknown): InferBody {
  if (!isObject(json)) throw invalid('failed to parse the request JSON buffer: expected a JSON object');
  const parameters = new Map<string, ParameterValue>();
  let binaryOutput = false;
  if (isObject(json.parameters)) {
    for (const [k, v] of Object.entries(json.parameters)) {
      if (k === 'binary_data_output') binaryOutput = v === true;
      else if (typeof v === 'boolean' || typeof v === 'number' || typeof v === 'string') parameters.set(k, v);
    }
  }
  if (!Array.isArray(json.inputs)) throw invalid("Unable to find 'inputs' in the request JSON");
  const inputs = json.inputs.map((i: unknown) => {
    if (
      !isObject(i) ||
      typeof i.name !== 'string' ||
      typeof i.datatype !== 'string' ||
      !Array.isArray(i.shape)
    ) {
      throw invalid("each input needs 'name', 'datatype' and 'shape'");
    }
    const size = isObject(i.parameters) ? i.parameters.binary_data_size : undefined;
    return {
      name: i.name,
      datatype: i.datatype,
      shape: i.shape.map(Number),
      data: i.data,
      ...(typeof size === 'number' ? { binarySize: size } : {}),
    };
  });
  const outputs = (Array.isArray(json.outputs) ? json.outputs : []).filter(isObject).map((o) => ({
    name: String(o.name),
    binary:
      isObject(o.parameters) && typeof o.parameters.binary_data === 'boolean'
        ? o.parameters.binary_data
        : undefined,
  }));
  return { id: typeof json.id === 'string' ? json.id : '', inputs, outputs, binaryOutput, parameters };
}

function decodeInferInputs(body: InferBody, blobs: Buffer, model: string): Map<string, Tensor> {
  const out = new Map<string, Tensor>();
  let at = 0;
  for (const input of body.inputs) {
    if (!isDataType(input.datatype))
      throw invalid(`invalid datatype '${input.datatype}' for input '${input.name}'`);
    const count = elementCount(input.shape);
    if (input.binarySize !== undefined) {
      if (at + input.binarySize > blobs.length) {
        throw invalid(
          `unexpected total byte size for input '${input.name}': the body ends before its binary data`,
        );
      }
      const data = decodeRaw(
        input.datatype,
        blobs.subarray(at, at + input.binarySize),
        count,
        input.name,
        model,
      );
      at += input.binarySize;
      out.set(input.name, { name: input.name, datatype: input.datatype, shape: input.shape, data });
      continue;
    }
    const flat = flattenNested(input.data ?? []);
    const data = flatData(flat, input.datatype, 'INVALID_ARG');
    if (data.length !== count) throw shapeMismatch('INVALID_ARG');
    out.set(input.name, { name: input.name, datatype: input.datatype, shape: input.shape, data });
  }
  return out;
}

function inferResponse(
  req: InferenceRequest,
  body: InferBody,
  r: ModelResponse,
): { header: string; blobs: Buffer[] } {
  const blobs: Buffer[] = [];
  const outputs = r.outputs.map((t) => {
    const asked = body.outputs.find((o) => o.name === t.name);
    const binary = asked?.binary ?? body.binaryOutput;
    const base = { name: t.name, datatype: t.datatype, shape: t.shape };
    if (!binary) return { ...base, data: jsonValues(t) };
    const blob = encodeRaw(t);
    blobs.push(blob);
    return { ...base, parameters: { binary_data_size: blob.length } };
  });
  const json = {
    ...(req.id !== '' ? { id: req.id } : {}),
    model_name: req.model.name,
    model_version: MODEL_VERSION,
    outputs,
  };
  return { header: stringify(json), blobs };
}

export async function handleInfer(
  ex: Exchange,
  ctx: EngineContext,
  modelName: string,
  version: string,
): Promise<void> {
  let req: InferenceRequest;
  let body: InferBody;
  try {
    const target = findTarget(ctx, modelName, version, DECOUPLED_HTTP_INFER);
    const raw = await ex.body();
    const headerLength = Number(ex.req.headers[HEADER_LENGTH] ?? raw.length);
    if (!Number.isInteger(headerLength) || headerLength < 0 || headerLength > raw.length) {
      throw invalid(`invalid Inference-Header-Content-Length: ${String(ex.req.headers[HEADER_LENGTH])}`);
    }
    const parsed = readInferBody(parseJsonBody(raw.subarray(0, headerLength), 'INVALID_ARG'));
    body = parsed;
    req = prepareRequest(target, {
      protocol: 'http',
      id: parsed.id,
      headers: parsed.inputs,
      decode: () => decodeInferInputs(parsed, raw.subarray(headerLength), modelName),
      parameters: parsed.parameters,
      outputs: parsed.outputs.map((o) => o.name),
    });
  } catch (err) {
    return ex.error(asTritonError(err));
  }
  let response: ModelResponse | undefined;
  let delivered = 0;
  await execute(
    req,
    {
      signal: new AbortController().signal,
      async send(r): Promise<Delivery> {
        const faulted = await unaryFault(ex, req, delivered, r, () => '{"model_name":');
        if (faulted !== undefined) return faulted;
        delivered += r.tokens;
        response = r;
        return 'ok';
      },
      complete() {
        if (req.faults.omitFinal) return void ex.destroy();
        if (ex.gone) return;
        const { header, blobs } = inferResponse(
          req,
          body,
          response ?? { outputs: [], tokens: 0, final: true },
        );
        if (blobs.length === 0) return ex.send(200, 'application/json', header);
        const headerBytes = Buffer.from(header, 'utf8');
        const payload = Buffer.concat([headerBytes, ...blobs]);
        ex.res.writeHead(200, {
          'Content-Type': 'application/octet-stream',
          'Content-Length': payload.length,
          'Inference-Header-Content-Length': headerBytes.length,
        });
        ex.res.end(payload);
      },
      fail: (error) => ex.error(error),
    },
    withTraceparent(ctx, ex.req.headers.traceparent),
    body.outputs.map((o) => o.name),
  );
}
