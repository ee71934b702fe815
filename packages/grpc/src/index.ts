export { type GrpcTransport, grpcTransport } from './grpc-transport.js';
export type { GrpcConnectionStats } from './h2/sessions.js';
export type {
  GrpcLogger,
  GrpcReplicaDnsOptions,
  GrpcReplicaListOptions,
  GrpcReplicaTransportOptions,
  GrpcTlsOptions,
  GrpcTransportOptions,
} from './options.js';
