export { type GrpcConnectionStats, type GrpcTransport, grpcTransport } from './grpc-transport.js';
export type {
  GrpcReplicaDnsOptions,
  GrpcReplicaListOptions,
  GrpcReplicaTransportOptions,
  GrpcTlsOptions,
  GrpcTransportOptions,
} from './options.js';
