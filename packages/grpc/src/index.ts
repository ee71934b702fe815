export type { ErrorContext } from './errors.js';
export { toTritonLlmError } from './errors.js';
export { grpcTransport } from './grpc-transport.js';
export type { GrpcTlsOptions, GrpcTransportOptions } from './options.js';
