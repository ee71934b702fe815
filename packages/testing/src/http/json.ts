/**
 * JSON in and out of the HTTP front end, the way Triton's (RapidJSON-based) parser reports
 * problems, and tensors as the generate and infer endpoints print them.
 */
import { type TritonCode, TritonError } from '../errors.js';
import type { DataType } from '../models/tensor-spec.js';
import type { Tensor, TensorData } from '../tensor.js';

/** Parses a request body; `code` is how this endpoint reports a parse failure. */
export function parseJsonBody(body: Buffer, code: TritonCode): unknown {
  const text = body.toString('utf8');
  if (text.trim() === '') {
    throw new TritonError(code, 'failed to parse the request JSON buffer: The document is empty. at 0');
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    const message = err instanceof Error ? err.message : '';
    const position = /position (\d+)/.exec(message)?.[1];
    const token = /Unexpected token '?(.)/.exec(message)?.[1];
    const at = position ?? (token === undefined ? text.length : Math.max(0, text.indexOf(token)));
    throw new TritonError(code, `failed to parse the request JSON buffer: Invalid value. at ${at}`);
  }
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const SHAPE_MISMATCH = "Unable to parse 'data': Shape does not match true shape of 'data' field";

/** One JSON value as an element of `datatype`, or Triton's complaint. */
function element(v: unknown, datatype: DataType, code: TritonCode): TensorData[number] {
  const fail = (what: string, as: string): never => {
    throw new TritonError(code, `Unable to parse 'data': attempt to access JSON non-${what} as ${as}`);
  };
  switch (datatype) {
    case 'BOOL':
      return typeof v === 'boolean' ? v : fail('boolean', 'boolean');
    case 'BYTES':
      return typeof v === 'string' ? new TextEncoder().encode(v) : fail('string', 'string');
    case 'INT8':
    case 'INT16':
    case 'INT32':
      return typeof v === 'number' && Number.isInteger(v) ? v : fail('signed-integer', 'signed-integer');
    case 'INT64':
      return typeof v === 'number' && Number.isInteger(v)
        ? BigInt(v)
        : fail('signed-integer', 'signed-integer');
    case 'UINT8':
    case 'UINT16':
    case 'UINT32':
      return typeof v === 'number' && Number.isInteger(v) && v >= 0
        ? v
        : fail('unsigned-integer', 'unsigned-integer');
    case 'UINT64':
      return typeof v === 'number' && Number.isInteger(v) && v >= 0
        ? BigInt(v)
        : fail('unsigned-integer', 'unsigned-integer');
    case 'FP16':
    case 'BF16':
    case 'FP32':
    case 'FP64':
      return typeof v === 'number' ? v : fail('number', 'double');
  }
}

/** Flat JSON values (nested arrays refused) as tensor data. */
export function flatData(values: readonly unknown[], datatype: DataType, code: TritonCode): TensorData {
  if (values.some((v) => Array.isArray(v) || isObject(v))) throw new TritonError(code, SHAPE_MISMATCH);
  return values.map((v) => element(v, datatype, code)) as TensorData;
}

/** Row-major flattening of (possibly nested) JSON arrays, as /infer accepts them. */
export function flattenNested(value: unknown): unknown[] {
  return Array.isArray(value) ? value.flatMap(flattenNested) : [value];
}

export function shapeMismatch(code: TritonCode): TritonError {
  return new TritonError(code, SHAPE_MISMATCH);
}

const utf8 = new TextDecoder('utf-8');

/** One tensor element as a JSON-ready value: text for BYTES, FP32 at its own precision, bigints kept. */
function jsonValue(datatype: DataType, v: TensorData[number]): number | bigint | boolean | string {
  if (datatype === 'BYTES') return utf8.decode(v as Uint8Array);
  if (datatype === 'FP32') return Math.fround(v as number);
  return v as number | bigint | boolean;
}

/** Tensor values as JSON-ready values (INT64/UINT64 stay bigint for {@link stringify}). */
export function jsonValues(t: Tensor): (number | bigint | boolean | string)[] {
  return (t.data as TensorData[number][]).map((v) => jsonValue(t.datatype, v));
}

/**
 * A tensor's values as JSON text: one element as a scalar, more as a flat array, 64-bit integers in
 * full. Written without {@link stringify}'s replacer, which takes JSON.stringify off its fast path
 * (a call per key and value): a generate_stream event has seven INT64 outputs, and the replacer was
 * about a fifth of the fake's CPU per streamed token.
 */
export function tensorJson(t: Tensor): string {
  const wide = t.datatype === 'INT64' || t.datatype === 'UINT64';
  if (t.data.length === 1) {
    // Most outputs of a streamed token are one element: no array is built for them.
    const v = t.data[0]!;
    return wide ? String(v) : JSON.stringify(jsonValue(t.datatype, v));
  }
  const values = jsonValues(t);
  return wide ? `[${values.join(',')}]` : JSON.stringify(values);
}

/** JSON text, printing bigints as exact integers (Triton prints 64-bit values in full). */
export function stringify(value: unknown): string {
  const marks: string[] = [];
  const text = JSON.stringify(value, (_k, v: unknown) => {
    if (typeof v !== 'bigint') return v;
    marks.push(v.toString());
    return `\u0000${marks.length - 1}\u0000`;
  });
  return marks.length === 0
    ? text
    : text.replace(/"\\u0000(\d+)\\u0000"/g, (_m, i: string) => marks[Number(i)]!);
}
