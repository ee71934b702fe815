import { nodeEngine } from './node/index.js';
import { type HttpTransportFunction, transportFunction } from './transport/index.js';

// The Node entry point (export condition `node`): the API of index.ts, with streams carried by
// Node's sockets instead of fetch. Bundles for browsers and edge runtimes never load this file.
export type { FetchFunction, HttpReplicaTransportOptions, HttpTransportOptions } from './options.js';
export type { HttpTransportFunction } from './transport/index.js';

/** A `Transport` over Triton's HTTP/REST API; see the package's main entry for the details. */
export const httpTransport: HttpTransportFunction = transportFunction(nodeEngine);
