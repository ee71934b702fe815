import type { InferRequest, InferResponse, Tensor } from '@trtllm/sdk';
import type { JsonStrings } from '../call/index.js';
import { type ErrorContext, protocolError } from '../errors.js';
import { parametersAt } from './wire-json.js';

const utf8 = new TextEncoder();
const utf8Text = new TextDecoder();

/**
 * UTF-8 bytes of a string. A streamed token is a few ASCII characters, which a loop copies for a
 * fraction of what a call into `TextEncoder` costs; anything else goes to the encoder.
 */
function utf8Bytes(text: string): Uint8Array {
  const n = text.length;
  if (n > 32) return utf8.encode(text);
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c > 0x7f) return utf8.encode(text);
    out[i] = c;
  }
  return out;
}

/** The bytes of a string whose characters are bytes (see {@link JsonStrings}). */
function charBytes(chars: string): Uint8Array {
  const n = chars.length;
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = chars.charCodeAt(i);
  return out;
}

/** The text of a string whose characters are UTF-8 bytes. */
function charText(chars: string): string {
  return isAscii(chars) ? chars : utf8Text.decode(charBytes(chars));
}

/** A text's UTF-8 bytes as characters: how a key is spelled in a body read as bytes. */
function textChars(text: string): string {
  return isAscii(text) ? text : String.fromCharCode(...utf8.encode(text));
}

function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
  return true;
}

/** A parameters object read as bytes, with its strings as text. */
function parametersText(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) out[charText(key)] = typeof v === 'string' ? charText(v) : v;
  return out;
}

/**
 * What a response falls back on when the server leaves it out: the request's model, version and
 * id (and the outputs it asked for). A stream keeps this rather than its request, whose inputs an
 * idle stream need not hold.
 */
export type RequestIdentity = Pick<InferRequest, 'model' | 'modelVersion' | 'id' | 'outputs'>;

/** The {@link RequestIdentity} of a request, without its inputs. */
export function requestIdentity(request: InferRequest): RequestIdentity {
  const { model, modelVersion, id } = request;
  return modelVersion === undefined ? { model, id } : { model, modelVersion, id };
}

// Keys of a generate response that describe it rather than being outputs.
const ENVELOPE_KEYS = new Set(['model_name', 'model_version', 'id', 'parameters']);

/**
 * One `/generate` body or `/generate_stream` event as a core response. The generate extension
 * sends no types or shapes, so every other key becomes a tensor by its JSON type: strings BYTES,
 * booleans BOOL, numbers FP64, with shape `[]` for a scalar and `[n]` (or the nesting's shape) for
 * an array. Integers above 2^53 lose precision in JSON numbers; read them over `/infer` or gRPC.
 */
export function generateResponse(
  json: unknown,
  request: RequestIdentity,
  final: boolean,
  context: ErrorContext,
  wanted: WantedOutputs | undefined = wantedOutputs(request),
  strings: JsonStrings = 'text',
): InferResponse {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw protocolError('a generate response must be a JSON object', context);
  }
  const body = json as Record<string, unknown>;
  const outputs: Tensor[] = [];
  const bytesOf = strings === 'bytes' ? charBytes : utf8Bytes;
  if (wanted !== undefined) {
    // A server answers with every output (some 20 per TRT-LLM event): look up the few asked for.
    for (const { name, spelled } of wanted) {
      const key = strings === 'bytes' ? spelled : name;
      if (Object.hasOwn(body, key)) outputs.push(jsonTensor(name, body[key], context, bytesOf));
    }
  } else {
    for (const key in body) {
      if (!Object.hasOwn(body, key) || ENVELOPE_KEYS.has(key)) continue;
      outputs.push(jsonTensor(strings === 'bytes' ? charText(key) : key, body[key], context, bytesOf));
    }
  }
  const textOf = strings === 'bytes' ? charText : (s: string) => s;
  return {
    model: typeof body.model_name === 'string' ? textOf(body.model_name) : request.model,
    modelVersion:
      typeof body.model_version === 'string' ? textOf(body.model_version) : (request.modelVersion ?? ''),
    id: typeof body.id === 'string' ? textOf(body.id) : request.id,
    outputs,
    parameters: parametersAt(strings === 'bytes' ? parametersText(body.parameters) : body.parameters),
    final,
  };
}

/** An output asked for: its name, and its UTF-8 bytes as characters (its key in a body read as bytes). */
export interface WantedOutput {
  readonly name: string;
  readonly spelled: string;
}

/** Outputs a request asked for, each once and none of the envelope's keys. */
export type WantedOutputs = readonly WantedOutput[];

/**
 * The outputs a request asked for, once per stream rather than per event (with their spelling in
 * a body read as bytes); undefined for all.
 */
export function wantedOutputs(request: Pick<InferRequest, 'outputs'>): WantedOutputs | undefined {
  const names = request.outputs;
  if (names === undefined || names.length === 0) return undefined;
  return [...new Set(names)]
    .filter((name) => !ENVELOPE_KEYS.has(name))
    .map((name) => ({ name, spelled: textChars(name) }));
}

// The shape of every scalar output, shared rather than allocated per output and event (a tensor's
// shape is read-only).
const SCALAR: readonly number[] = Object.freeze([]);

function jsonTensor(
  name: string,
  value: unknown,
  context: ErrorContext,
  bytesOf: (s: string) => Uint8Array,
): Tensor {
  // Scalars, the usual case of a streamed token, skip the general walk.
  switch (typeof value) {
    case 'string':
      return { name, datatype: 'BYTES', shape: SCALAR, data: [bytesOf(value)] };
    case 'boolean':
      return { name, datatype: 'BOOL', shape: SCALAR, data: [value] };
    case 'number':
      return { name, datatype: 'FP64', shape: SCALAR, data: Float64Array.of(value) };
  }
  const shape: number[] = [];
  const flat: unknown[] = [];
  flatten(value, 0, shape, flat, name, context);
  const kinds = new Set(flat.map((v) => typeof v));
  const kind = kinds.size === 0 ? 'number' : kinds.size === 1 ? [...kinds][0] : 'mixed';
  switch (kind) {
    case 'string':
      return { name, datatype: 'BYTES', shape, data: flat.map((v) => bytesOf(v as string)) };
    case 'boolean':
      return { name, datatype: 'BOOL', shape, data: flat as boolean[] };
    case 'number':
      return { name, datatype: 'FP64', shape, data: Float64Array.from(flat as number[]) };
    default:
      throw protocolError(`output '${name}' mixes JSON types or holds objects or null`, context);
  }
}

// Arrays nest as a tensor's dimensions do; a ragged nesting has no shape and is refused.
function flatten(
  value: unknown,
  depth: number,
  shape: number[],
  flat: unknown[],
  name: string,
  context: ErrorContext,
): void {
  if (!Array.isArray(value)) {
    if (depth < shape.length) throw protocolError(`output '${name}' is a ragged array`, context);
    flat.push(value);
    return;
  }
  if (depth === shape.length && flat.length === 0) shape.push(value.length);
  else if (shape[depth] !== value.length) throw protocolError(`output '${name}' is a ragged array`, context);
  for (const item of value) flatten(item, depth + 1, shape, flat, name, context);
}
