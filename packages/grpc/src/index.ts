export type { GrpcConnectionStats } from './h2/index.js';
export {
  type GrpcLogger,
  type GrpcReplicaDnsOptions,
  type GrpcReplicaListOptions,
  type GrpcReplicaTransportOptions,
  type GrpcTlsOptions,
  type GrpcTransport,
  type GrpcTransportOptions,
  grpcTransport,
} from './transport/index.js';
