/**
 * `@trtllm/sdk/transport`: the kit for transport and adapter authors (`@trtllm/grpc`,
 * `@trtllm/http`, the OpenAI server, the AI SDK and LangChain adapters, a tokenizer adapter):
 * error-code mapping, the retry plan a transport is handed, the `Transport` contract's parts,
 * tensor codecs and data types, schema detection, text deltas, stop-sequence matching and request
 * validation. Not covered by the application API's stability: it may change in a minor release.
 * Applications import from `@trtllm/sdk`.
 *
 * @packageDocumentation
 */
export { asyncDispose } from './async-dispose.js';
export { callerError } from './client/caller-error.js';
export type { TritonLlmErrorOptions } from './errors.js';
export { callerAbortError, codeFromGrpcStatus, codeFromServerError, invalidArgument } from './errors.js';
export { detectSchema } from './models/schema.js';
export type { FlavorKeys, OptionType, RequestOption, RequestOptions } from './request/options.js';
export { REQUEST_OPTIONS } from './request/options.js';
export { checkOptionNames, unknownOption, validateRequest } from './request/validate.js';
export type { AttemptSituation, RetryCall, RetryDecision, RetryPlan, RetryPolicy } from './retry.js';
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
export type { TraceContextInjector } from './telemetry/trace-context.js';
export { injectW3cTraceContext } from './telemetry/trace-context.js';
export { decodeTensorData, encodeTensorData } from './tensors/codec.js';
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
export type { EncodedWordList } from './tensors/word-list.js';
export { decodeWordList, encodeWordList, wordListTensor } from './tensors/word-list.js';
export type { StopSequenceStep } from './text/stop-sequences.js';
export { StopSequenceMatcher } from './text/stop-sequences.js';
export type { TextDeltaDecoderOptions, TextDeltaMode } from './text/text-delta.js';
export { TextDeltaDecoder } from './text/text-delta.js';
export type {
  CallOptions,
  EnsembleStep,
  InferSink,
  InferStream,
  Parameters,
  ParameterValue,
  RepositoryModel,
  StatisticDuration,
  TensorMetadata,
  TensorSpec,
} from './transport.js';
export type { TritonEndpoint, TritonProtocol, TritonUrlOptions } from './triton-url.js';
export { parseTritonUrl } from './triton-url.js';
