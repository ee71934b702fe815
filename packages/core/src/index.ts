export type { ErrorCode, TritonLlmErrorOptions } from './errors.js';
export { codeFromGrpcStatus, ERROR_CODES, invalidArgument, TritonLlmError } from './errors.js';
export type { DataType, Tensor, TensorData } from './tensor.js';
export type { Tokenizer } from './tokenizer.js';
export type {
  CallOptions,
  EnsembleStep,
  InferRequest,
  InferResponse,
  InferStream,
  ModelConfig,
  ModelMetadata,
  ModelStatistics,
  Parameters,
  ParameterValue,
  ServerMetadata,
  StatisticDuration,
  TensorMetadata,
  TensorSpec,
  Transport,
} from './transport.js';
