import type { InferRequest } from '@trtllm/sdk';
import { encodeTensorData } from '@trtllm/sdk/transport';
import { jsonObject, parametersJson } from './json-text.js';

/** A KServe v2 `/infer` request in the binary tensor extension's layout. */
export interface InferBody {
  readonly bytes: Uint8Array<ArrayBuffer>;
  /** Length of the leading JSON header: the `Inference-Header-Content-Length` header. */
  readonly headerLength: number;
}

/**
 * Every input travels as raw bytes after the JSON header (`binary_data_size`), packed like gRPC
 * raw contents: one typed path for all data types, FP16/BF16 and 64-bit integers included.
 * Outputs are asked for in binary too (`binary_data` per named output, else request-level
 * `binary_data_output`), so they come back exactly; a server that answers in JSON is read as well.
 */
export function inferRequestBody(request: InferRequest): InferBody {
  const blobs: Uint8Array[] = [];
  const inputs = request.inputs.map((tensor) => {
    // Also checks that the data fills the shape, naming the tensor when it does not.
    const blob = encodeTensorData(tensor);
    blobs.push(blob);
    return jsonObject([
      ['name', JSON.stringify(tensor.name)],
      ['shape', `[${tensor.shape.join(',')}]`],
      ['datatype', JSON.stringify(tensor.datatype)],
      ['parameters', jsonObject([['binary_data_size', String(blob.byteLength)]])],
    ]);
  });
  const named = request.outputs !== undefined && request.outputs.length > 0 ? request.outputs : undefined;
  const parameters = parametersJson(
    request.parameters,
    'parameters',
    named === undefined ? [['binary_data_output', 'true']] : [],
  );
  const entries: (readonly [string, string])[] = [];
  if (request.id !== '') entries.push(['id', JSON.stringify(request.id)]);
  if (parameters !== undefined) entries.push(['parameters', parameters]);
  entries.push(['inputs', `[${inputs.join(',')}]`]);
  if (named !== undefined) {
    const outputs = named.map((name) =>
      jsonObject([
        ['name', JSON.stringify(name)],
        ['parameters', jsonObject([['binary_data', 'true']])],
      ]),
    );
    entries.push(['outputs', `[${outputs.join(',')}]`]);
  }
  const header = new TextEncoder().encode(jsonObject(entries));
  const bytes = new Uint8Array(header.byteLength + blobs.reduce((sum, blob) => sum + blob.byteLength, 0));
  let offset = 0;
  for (const part of [header, ...blobs]) {
    bytes.set(part, offset);
    offset += part.byteLength;
  }
  return { bytes, headerLength: header.byteLength };
}
