export type { FetchFunction, HttpTransportOptions } from './options.js';
export { httpTransport } from './transport.js';
