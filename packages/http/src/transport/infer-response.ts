import {
  createTensor,
  type DataType,
  type InferRequest,
  type InferResponse,
  type Tensor,
  type TensorData,
} from '@trtllm/sdk';
import { decodeTensorData, elementCount } from '@trtllm/sdk/transport';
import { type ErrorContext, protocolError } from '../errors.js';
import {
  arrayAt,
  dataTypeAt,
  type JsonObject,
  numberAt,
  objectAt,
  parametersAt,
  stringAt,
} from './wire-json.js';

/**
 * A KServe v2 `/infer` response body: with `Inference-Header-Content-Length` a JSON header
 * followed by the binary outputs in order, else plain JSON with `data` arrays.
 */
export function inferResponse(
  bytes: Uint8Array,
  headerLength: number | undefined,
  request: InferRequest,
  context: ErrorContext,
): InferResponse {
  const jsonEnd = headerLength ?? bytes.byteLength;
  if (!Number.isSafeInteger(jsonEnd) || jsonEnd < 0 || jsonEnd > bytes.byteLength) {
    throw protocolError(
      `Inference-Header-Content-Length ${headerLength} does not fit a ${bytes.byteLength}-byte body`,
      context,
    );
  }
  const header = parseHeader(bytes.subarray(0, jsonEnd), context);
  let offset = jsonEnd;
  const outputs = arrayAt(header.outputs, 'outputs', context).map((raw, index): Tensor => {
    const path = `outputs[${index}]`;
    const output = objectAt(raw, path, context);
    const name = stringAt(output.name, `${path}.name`, context);
    const dt = dataTypeAt(output.datatype, `${path}.datatype`, context);
    const shape = arrayAt(output.shape, `${path}.shape`, context).map((d, i) => {
      const n = numberAt(d, `${path}.shape[${i}]`, context);
      if (!Number.isSafeInteger(n) || n < 0) throw protocolError(`${path}.shape[${i}] is ${n}`, context);
      return n;
    });
    const parameters =
      output.parameters === undefined ? {} : objectAt(output.parameters, `${path}.parameters`, context);
    const size = parameters.binary_data_size;
    if (size !== undefined) {
      if (
        typeof size !== 'number' ||
        !Number.isSafeInteger(size) ||
        size < 0 ||
        offset + size > bytes.byteLength
      ) {
        throw protocolError(`output '${name}' declares binary_data_size ${size} beyond the body`, context);
      }
      // A copy: typed-array views need an aligned offset, and the body's offsets are arbitrary.
      const raw = bytes.slice(offset, offset + size);
      offset += size;
      return { name, datatype: dt, shape, data: decode(dt, shape, raw, name, context) };
    }
    return { name, datatype: dt, shape, data: jsonData(dt, shape, output.data, name, context) };
  });
  if (offset !== bytes.byteLength) {
    throw protocolError(`${bytes.byteLength - offset} bytes after the last binary output`, context);
  }
  return {
    model: typeof header.model_name === 'string' ? header.model_name : request.model,
    modelVersion:
      typeof header.model_version === 'string' ? header.model_version : (request.modelVersion ?? ''),
    id: typeof header.id === 'string' ? header.id : request.id,
    outputs,
    parameters: parametersAt(header.parameters),
    final: true,
  };
}

function parseHeader(bytes: Uint8Array, context: ErrorContext): JsonObject {
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(bytes));
  } catch (err) {
    throw protocolError('the infer response header is not JSON', context, err);
  }
  return objectAt(parsed, 'infer response', context);
}

function decode(
  datatype: DataType,
  shape: readonly number[],
  raw: Uint8Array,
  name: string,
  context: ErrorContext,
): TensorData {
  try {
    return decodeTensorData(datatype, shape, raw);
  } catch (err) {
    throw protocolError(`output '${name}' holds bytes that do not decode as ${datatype}`, context, err);
  }
}

function jsonData(
  datatype: DataType,
  shape: readonly number[],
  data: unknown,
  name: string,
  context: ErrorContext,
): TensorData {
  if (data === undefined) throw protocolError(`output '${name}' has neither binary data nor data`, context);
  const values = Array.isArray(data) ? data.flat(Number.POSITIVE_INFINITY) : [data];
  const scalar = (v: unknown) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
  if (!values.every(scalar) || values.length !== elementCount(shape)) {
    throw protocolError(`output '${name}' data does not fill its shape [${shape.join(',')}]`, context);
  }
  try {
    return createTensor(name, datatype, shape, values as (string | number | boolean)[]).data;
  } catch (err) {
    throw protocolError(`output '${name}' holds JSON data that is not ${datatype}`, context, err);
  }
}
