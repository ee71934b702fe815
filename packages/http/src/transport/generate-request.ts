import { type InferRequest, type Tensor, TritonLlmError } from '@trtllm/sdk';
import { elementCount, invalidArgument } from '@trtllm/sdk/transport';
import { jsonObject, jsonScalar, parametersJson } from './json-text.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The body of `/generate` and `/generate_stream`: `id`, then one top-level key per input tensor
 * in the request's order, then `parameters`.
 *
 * The generate extension has no types or shapes: the server adds the batch dimension and
 * converts each JSON value to the input's declared type. So a tensor is written without its
 * batch dimension of 1: one element as a JSON scalar, more as a flat array. BYTES become UTF-8
 * strings, BOOL `true`/`false`, 64-bit integers every digit, floats JSON numbers.
 */
export function generateRequestJson(request: InferRequest): string {
  const entries: (readonly [string, string])[] = [];
  const reserved = new Set(['id', 'parameters']);
  if (request.id !== '') entries.push(['id', JSON.stringify(request.id)]);
  request.inputs.forEach((tensor, index) => {
    if (reserved.has(tensor.name)) {
      const why =
        tensor.name === 'id' || tensor.name === 'parameters'
          ? 'is a key of the generate request itself and cannot name an input over HTTP'
          : 'appears twice';
      throw invalidArgument(`inputs[${index}].name`, tensor.name, why);
    }
    reserved.add(tensor.name);
    entries.push([tensor.name, tensorJson(tensor, `inputs.${tensor.name}`)]);
  });
  const parameters = parametersJson(request.parameters, 'parameters');
  if (parameters !== undefined) entries.push(['parameters', parameters]);
  return jsonObject(entries);
}

function tensorJson(tensor: Tensor, field: string): string {
  const { shape } = tensor;
  const count = elementCount(shape);
  if (shape.length >= 2 && shape[0] !== 1) {
    throw notExpressible(tensor, `its batch dimension is ${shape[0]}; the generate extension takes one`);
  }
  const dims = shape.length >= 2 ? shape.slice(1) : shape;
  // The extension turns a JSON array into a 1-D tensor: a tensor of higher rank (the raw model's
  // [1, 2, N] word lists, a prompt table) would reach the model with another shape, even where a
  // lenient server accepts it, so it is refused whatever its sizes.
  if (dims.length > 1) {
    throw notExpressible(tensor, `it has ${dims.length} dimensions besides the batch dimension`);
  }
  const values = elementsJson(tensor, field);
  if (values.length !== count) {
    throw invalidArgument(field, shape, `shape holds ${count} elements but the data has ${values.length}`);
  }
  const scalar = dims.every((d) => d === 1);
  return scalar ? (values[0] as string) : `[${values.join(',')}]`;
}

function elementsJson(tensor: Tensor, field: string): string[] {
  const { data, datatype } = tensor;
  const out: string[] = [];
  for (let i = 0; i < data.length; i++) {
    const value = data[i];
    const where = `${field}[${i}]`;
    if (datatype === 'BYTES') {
      if (!(value instanceof Uint8Array))
        throw invalidArgument(where, value, 'BYTES elements must be Uint8Array');
      out.push(JSON.stringify(utf8Text(value, where)));
    } else if (datatype === 'BOOL') {
      if (typeof value !== 'boolean') throw invalidArgument(where, value, 'BOOL elements must be booleans');
      out.push(value ? 'true' : 'false');
    } else {
      if (typeof value !== 'number' && typeof value !== 'bigint') {
        throw invalidArgument(where, value, `${datatype} elements must be numbers`);
      }
      out.push(jsonScalar(value, where));
    }
  }
  return out;
}

function utf8Text(bytes: Uint8Array, field: string): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw invalidArgument(
      field,
      `${bytes.byteLength} bytes`,
      'is not valid UTF-8 and cannot travel as JSON text; use the infer endpoint or gRPC',
    );
  }
}

function notExpressible(tensor: Tensor, why: string): TritonLlmError {
  return new TritonLlmError(
    'unimplemented',
    `input '${tensor.name}' with shape [${tensor.shape.join(',')}] cannot be sent over HTTP generate: ${why}. ` +
      'Use the gRPC transport, or a request without such tensors (e.g. no token-id word lists: ' +
      'the ensemble and BLS models take stop_words/bad_words as strings).',
  );
}
