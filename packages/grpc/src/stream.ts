import type { ModelInferResponse, ModelStreamInferResponse } from './gen/inference/grpc_service_pb.js';
import type { ModelInferRequestInit } from './infer-request.js';

/** Starts one `ModelStreamInfer` call that sends `requests` and is cancelled by `signal` (the multiplexer's shared call). */
export type OpenStreamCall = (
  requests: AsyncIterable<ModelInferRequestInit>,
  signal: AbortSignal,
) => AsyncIterable<ModelStreamInferResponse>;

// Without it a decoupled model that ends without data sends nothing, and the end of a request
// cannot be told (tensorrtllm_backend #552); with it every request ends on a flagged response.
export const STREAM_PARAMETERS = { triton_enable_empty_final_response: true } as const;

/** Whether a streamed response carries `triton_final_response: true`. */
export function isFinal(r: ModelInferResponse): boolean {
  const p = r.parameters.triton_final_response?.parameterChoice;
  return p?.case === 'boolParam' && p.value;
}
