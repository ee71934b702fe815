/** From a decoded `ModelInferRequest` (proto-loader objects) to the engine's inputs and parameters. */

import type { ParameterValue } from '../engine/request.js';
import type { InputHeader } from '../engine/validate.js';
import { TritonError } from '../errors.js';
import { type DataType, isDataType } from '../models/tensor-spec.js';
import { decodeRaw } from '../raw-tensor.js';
import { elementCount, type Tensor, type TensorData } from '../tensor.js';

export interface ProtoParameter {
  readonly parameter_choice?: string;
  readonly bool_param?: boolean;
  readonly int64_param?: string;
  readonly string_param?: string;
  readonly double_param?: number;
  readonly uint64_param?: string;
}

export interface ProtoContents {
  readonly bool_contents?: boolean[];
  readonly int_contents?: number[];
  readonly int64_contents?: string[];
  readonly uint_contents?: number[];
  readonly uint64_contents?: string[];
  readonly fp32_contents?: number[];
  readonly fp64_contents?: number[];
  readonly bytes_contents?: Buffer[];
}

export interface ProtoInferRequest {
  readonly model_name: string;
  readonly model_version: string;
  readonly id: string;
  readonly parameters?: Record<string, ProtoParameter>;
  readonly inputs?: {
    readonly name: string;
    readonly datatype: string;
    readonly shape: string[];
    readonly contents?: ProtoContents | null;
  }[];
  readonly outputs?: { readonly name: string }[];
  readonly raw_input_contents?: Buffer[];
}

export function requestParameters(req: ProtoInferRequest): Map<string, ParameterValue> {
  const out = new Map<string, ParameterValue>();
  for (const [name, p] of Object.entries(req.parameters ?? {})) {
    switch (p.parameter_choice) {
      case 'bool_param':
        out.set(name, p.bool_param ?? false);
        break;
      case 'int64_param':
        out.set(name, BigInt(p.int64_param ?? '0'));
        break;
      case 'uint64_param':
        out.set(name, BigInt(p.uint64_param ?? '0'));
        break;
      case 'double_param':
        out.set(name, p.double_param ?? 0);
        break;
      case 'string_param':
        out.set(name, p.string_param ?? '');
        break;
    }
  }
  return out;
}

export function inputHeaders(req: ProtoInferRequest): InputHeader[] {
  return (req.inputs ?? []).map((i) => ({ name: i.name, datatype: i.datatype, shape: i.shape.map(Number) }));
}

function typedContents(datatype: DataType, c: ProtoContents): TensorData | undefined {
  switch (datatype) {
    case 'BOOL':
      return c.bool_contents;
    case 'INT8':
    case 'INT16':
    case 'INT32':
      return c.int_contents;
    case 'UINT8':
    case 'UINT16':
    case 'UINT32':
      return c.uint_contents;
    case 'INT64':
      return c.int64_contents?.map(BigInt);
    case 'UINT64':
      return c.uint64_contents?.map(BigInt);
    case 'FP32':
      return c.fp32_contents;
    case 'FP64':
      return c.fp64_contents;
    case 'BYTES':
      return c.bytes_contents;
    case 'FP16':
    case 'BF16':
      return undefined;
  }
}

function contentsCount(c: ProtoContents | null | undefined): number {
  if (!c) return 0;
  return Object.values(c).reduce((n: number, v) => n + (Array.isArray(v) ? v.length : 0), 0);
}

/** Decodes every input from `raw_input_contents` (all of them) or typed `contents`, never a mix. */
export function decodeInputs(req: ProtoInferRequest, model: string): Map<string, Tensor> {
  const inputs = req.inputs ?? [];
  const raw = req.raw_input_contents ?? [];
  if (raw.length > 0 && raw.length !== inputs.length) {
    throw new TritonError(
      'INVALID_ARG',
      `expected ${inputs.length} raw_input_contents for model '${model}', got ${raw.length}`,
    );
  }
  const out = new Map<string, Tensor>();
  inputs.forEach((input, i) => {
    const datatype = input.datatype;
    if (!isDataType(datatype))
      throw new TritonError('INVALID_ARG', `invalid datatype '${datatype}' for input '${input.name}'`);
    const shape = input.shape.map(Number);
    const count = elementCount(shape);
    let data: TensorData | undefined;
    if (raw.length > 0) {
      if (contentsCount(input.contents) > 0) {
        throw new TritonError(
          'INVALID_ARG',
          `contents field must not be specified when using raw_input_contents for '${input.name}' for model '${model}'`,
        );
      }
      data = decodeRaw(datatype, raw[i]!, count, input.name, model);
    } else {
      data = input.contents ? typedContents(datatype, input.contents) : undefined;
      if (data === undefined && (datatype === 'FP16' || datatype === 'BF16')) {
        throw new TritonError(
          'INVALID_ARG',
          `${datatype} input '${input.name}' must be sent in raw_input_contents`,
        );
      }
      data ??= [];
      if (data.length !== count) {
        throw new TritonError(
          'INVALID_ARG',
          `unexpected number of elements for input '${input.name}' for model '${model}': shape ${JSON.stringify(shape)} needs ${count}, contents has ${data.length}`,
        );
      }
    }
    out.set(input.name, { name: input.name, datatype, shape, data });
  });
  return out;
}
