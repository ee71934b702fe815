/**
 * The gRPC call layer's door: nothing else in this folder is imported from outside it. It speaks
 * messages: one gRPC call over one HTTP/2 stream (status, the 5-byte framing, compression, limits,
 * trailers), the request headers of a call, and connect-es's unary transport; it knows nothing of
 * core's requests and responses.
 */
export { type CallListener, type CallSetup, GrpcCall } from './grpc-call.js';
export { type CallMetadata, callHeaders, grpcTimeout, requestHeaders } from './headers.js';
export { encodeFramed, isOwnLimitError } from './messages.js';
export { type UnaryConfig, unaryTransport } from './unary.js';
