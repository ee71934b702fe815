/**
 * `@trtllm/sdk`: the application API. A {@link TritonLlm} client over a transport (from
 * `@trtllm/grpc` or `@trtllm/http`), its request and result types, and the one error type,
 * {@link TritonLlmError}. What transport and adapter authors need besides (status mapping, retry
 * plans, tensor codecs, schema detection, stop-sequence matching, validation) is at
 * `@trtllm/sdk/transport`, outside this API's stability promise.
 *
 * @packageDocumentation
 */
export { TritonLlm } from './client/client.js';
export type { ClientCallOptions, TritonLlmOptions } from './client/options.js';
export type { ErrorCode } from './errors.js';
export { ERROR_CODES, TritonLlmError } from './errors.js';
export type { GenerationEvent } from './generation/events.js';
export type { GenerateOptions } from './generation/options.js';
export type { GenerationStream } from './generation/stream.js';
export type { ModelSchema } from './models/schema.js';
export type { EndpointStats } from './replicas/endpoint.js';
export type {
  NamedTransport,
  ReplicaDiscovery,
  ReplicaOptions,
  ReplicaTransport,
  ReplicaTransportOptions,
} from './replicas/replica-transport.js';
export { replicaTransport } from './replicas/replica-transport.js';
export type {
  BlsRequest,
  EnsembleRequest,
  LlmApiRequest,
  TensorrtLlmRequest,
  VllmRequest,
} from './request/options.js';
export type { GenerateRequest, ImageInput, LoraOptions, Matrix, ModelFlavor } from './request/request.js';
export type {
  DeltaChunk,
  EarlyStopReport,
  FinalChunk,
  FinishReason,
  GenerateResult,
  Logits,
  PerfMetrics,
  SequenceResult,
  StreamChunk,
  Timings,
  TokenLogProb,
  Usage,
} from './result.js';
export type { RetryOptions } from './retry.js';
export type { TelemetryOptions } from './telemetry/telemetry.js';
export type { DataType } from './tensors/data-types.js';
export {
  tensorBigInts,
  tensorBooleans,
  tensorBytes,
  tensorNumbers,
  tensorStrings,
} from './tensors/readers.js';
export type { Tensor, TensorData } from './tensors/tensor.js';
export { createTensor } from './tensors/tensor.js';
export type { IncrementalDetokenizerOptions } from './text/detokenizer.js';
export { IncrementalDetokenizer } from './text/detokenizer.js';
export type { Tokenizer } from './text/tokenizer.js';
export type {
  InferRequest,
  InferResponse,
  ModelConfig,
  ModelMetadata,
  ModelStatistics,
  ServerMetadata,
  Transport,
} from './transport.js';
