export { grpcTransport } from './grpc-transport.js';
export type { GrpcTlsOptions, GrpcTransportOptions } from './options.js';
