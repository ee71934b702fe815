/**
 * The HTTP/2 engine's door: nothing else in this folder is imported from outside it. An engine
 * speaks bytes and header fields, encodes its own headers and raises its own errors; it knows
 * nothing of gRPC calls or of the transport above it.
 */
export type {
  GrpcConnectionStats,
  H2Engine,
  H2EngineName,
  H2EngineOptions,
  H2PreparedRequest,
  H2RequestHeaders,
  H2StreamHandle,
} from './engine.js';
export { createEngine } from './engines.js';
export {
  H2_CANCEL,
  H2_ENHANCE_YOUR_CALM,
  H2_HTTP_1_1_REQUIRED,
  H2_INADEQUATE_SECURITY,
  H2_NO_ERROR,
  H2_REFUSED_STREAM,
  h2ErrorName,
} from './frames.js';
export type { H2Headers, H2StreamOwner } from './stream.js';
