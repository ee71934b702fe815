// The transport layer: core's types in and out. Requests and responses mapped to Triton's JSON and
// binary bodies, the `Transport` object and its replicas; the call layer below carries the messages.
export { type HttpTransportFunction, transportFunction } from './transport.js';
