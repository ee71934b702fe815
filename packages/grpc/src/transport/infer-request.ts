import type { MessageInitShape } from '@bufbuild/protobuf';
import { type InferRequest, TritonLlmError } from '@trtllm/sdk';
import { encodeTensorData, type Parameters } from '@trtllm/sdk/transport';
import type { ModelInferRequestSchema } from '../gen/inference/grpc_service_pb.js';
import { toInferParameters } from './parameters.js';

/** The init shape of a `ModelInferRequest`, as connect-es accepts it. */
export type ModelInferRequestInit = MessageInitShape<typeof ModelInferRequestSchema>;

/**
 * A core request as a gRPC `ModelInferRequest`. Every input travels in `raw_input_contents`, as
 * the official clients send them; `extra` parameters (transport-owned, such as
 * `triton_enable_empty_final_response`) are added to the request's own.
 */
export function toModelInferRequest(request: InferRequest, extra?: Parameters): ModelInferRequestInit {
  return {
    modelName: request.model,
    modelVersion: request.modelVersion ?? '',
    id: request.id,
    parameters: toInferParameters({ ...request.parameters, ...extra }),
    inputs: request.inputs.map((t) => ({
      name: t.name,
      datatype: t.datatype,
      shape: t.shape.map((d) => dimension(t.name, d)),
    })),
    outputs: (request.outputs ?? []).map((name) => ({ name })),
    rawInputContents: request.inputs.map((t) => encodeTensorData(t)),
  };
}

function dimension(name: string, d: number): bigint {
  if (!Number.isSafeInteger(d) || d < 0) {
    throw new TritonLlmError(
      'invalid_argument',
      `inputs.${name}.shape: every dimension must be a whole number >= 0 (got ${d})`,
    );
  }
  return BigInt(d);
}
