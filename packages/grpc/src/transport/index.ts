/**
 * The transport layer's door: nothing else in this folder is imported from outside it. It speaks
 * core's types: `grpcTransport()`, its options, replicas, and the mapping of core's requests and
 * responses to the wire, on the calls of the call layer.
 */
export { type GrpcTransport, grpcTransport } from './grpc-transport.js';
export type {
  GrpcLogger,
  GrpcReplicaDnsOptions,
  GrpcReplicaListOptions,
  GrpcReplicaTransportOptions,
  GrpcTlsOptions,
  GrpcTransportOptions,
} from './options.js';
