export type { FetchFunction, HttpReplicaTransportOptions, HttpTransportOptions } from './options.js';
export { httpTransport } from './transport.js';
