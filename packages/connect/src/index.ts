export type { TransportFromUrlOptions } from './transport-from-url.js';
export { transportFromUrl } from './transport-from-url.js';
export type { TritonEndpoint, TritonProtocol, TritonUrlOptions } from './triton-url.js';
export { parseTritonUrl } from './triton-url.js';
