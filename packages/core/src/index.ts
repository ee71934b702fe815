export { TritonLlm } from './client/client.js';
export type { ClientCallOptions, TritonLlmOptions } from './client/options.js';
export type { ErrorCode, TritonLlmErrorOptions } from './errors.js';
export {
  codeFromGrpcStatus,
  codeFromServerError,
  ERROR_CODES,
  invalidArgument,
  TritonLlmError,
} from './errors.js';
export type { GenerationEvent } from './generation/events.js';
export type { GenerateOptions } from './generation/options.js';
export type { GenerationStream } from './generation/stream.js';
export type { ModelSchema } from './models/schema.js';
export { detectSchema } from './models/schema.js';
export type { EndpointState, EndpointStats } from './replicas/endpoint.js';
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
  OptionType,
  RequestOption,
  RequestOptions,
  TensorrtLlmRequest,
} from './request/options.js';
export { REQUEST_OPTIONS } from './request/options.js';
export type { GenerateRequest, LoraOptions, Matrix, ModelFlavor } from './request/request.js';
export { checkOptionNames, unknownOption, validateRequest } from './request/validate.js';
export type {
  DeltaChunk,
  EarlyStopReport,
  FinalChunk,
  FinishReason,
  GenerateResult,
  Logits,
  PerfMetrics,
  SequenceResult,
  StopMeans,
  StreamChunk,
  Timings,
  Usage,
} from './result.js';
export type { AttemptSituation, RetryCall, RetryDecision, RetryOptions, RetryPlan } from './retry.js';
export { DEFAULT_RETRY, isConnectionFailure } from './retry.js';
export type {
  TelemetryAttributes,
  TelemetryAttributeValue,
  TelemetryHistogram,
  TelemetryMeter,
  TelemetrySpan,
  TelemetrySpanContext,
  TelemetryTracer,
  TelemetryTraceState,
} from './telemetry/api.js';
export type { TelemetryOptions } from './telemetry/telemetry.js';
export type { TraceContextInjector } from './telemetry/trace-context.js';
export { injectW3cTraceContext } from './telemetry/trace-context.js';
export { decodeTensorData, encodeTensorData } from './tensors/codec.js';
export type { DataType } from './tensors/data-types.js';
export {
  bytesPerElement,
  DATA_TYPES,
  dataTypeFromConfig,
  elementCount,
  isDataType,
} from './tensors/data-types.js';
export {
  bfloat16BitsToFloat32,
  float16BitsToFloat32,
  float32ToBfloat16Bits,
  float32ToFloat16Bits,
} from './tensors/half-float.js';
export {
  tensorBigInts,
  tensorBooleans,
  tensorBytes,
  tensorNumbers,
  tensorStrings,
} from './tensors/readers.js';
export type { Tensor, TensorData } from './tensors/tensor.js';
export { createTensor } from './tensors/tensor.js';
export type { EncodedWordList } from './tensors/word-list.js';
export { decodeWordList, encodeWordList, wordListTensor } from './tensors/word-list.js';
export type { IncrementalDetokenizerOptions } from './text/detokenizer.js';
export { IncrementalDetokenizer } from './text/detokenizer.js';
export type { StopSequenceStep } from './text/stop-sequences.js';
export { StopSequenceMatcher } from './text/stop-sequences.js';
export type { TextDeltaDecoderOptions, TextDeltaMode } from './text/text-delta.js';
export { TextDeltaDecoder } from './text/text-delta.js';
export type { Tokenizer } from './text/tokenizer.js';
export type {
  CallOptions,
  EnsembleStep,
  InferRequest,
  InferResponse,
  InferSink,
  InferStream,
  ModelConfig,
  ModelMetadata,
  ModelStatistics,
  Parameters,
  ParameterValue,
  RepositoryModel,
  ServerMetadata,
  StatisticDuration,
  TensorMetadata,
  TensorSpec,
  Transport,
} from './transport.js';
export type { TritonEndpoint, TritonProtocol, TritonUrlOptions } from './triton-url.js';
export { parseTritonUrl } from './triton-url.js';
