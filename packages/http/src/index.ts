import { type HttpTransportFunction, transportFunction } from './transport/index.js';

export type { FetchFunction, HttpReplicaTransportOptions, HttpTransportOptions } from './options.js';
export type { HttpTransportFunction } from './transport/index.js';

/**
 * A `Transport` over Triton's HTTP/REST API that needs nothing but `fetch`, streams and
 * `TextEncoder`/`TextDecoder`, so it runs in Node 20+, Deno, Bun, browsers and edge workers. On
 * Node (the package's `node` export condition) streams skip fetch: `/generate_stream` goes over
 * keep-alive sockets and its events are read straight from the response bytes, at a fraction of
 * fetch's CPU and memory per stream; a `fetch` given in the options carries every call instead.
 *
 * - `infer()` posts KServe v2 `/infer` with binary tensors, or Triton's `/generate` when the
 *   request's `endpoint` is `'generate'`.
 * - `stream()` posts `/generate_stream` and yields one response per server-sent event, then an
 *   empty response with `final: true` when the server closes the stream. Generate responses have
 *   no types: strings arrive as BYTES, booleans as BOOL, numbers as FP64, shaped `[]` or `[n]`.
 * - Inputs of generate requests are written without their batch dimension of 1; a tensor with
 *   more (a batch above 1, a `[1, 2, N]` word list) fails with `unimplemented`: use gRPC.
 * - Aborting a call's signal, leaving a stream early, the deadline and `close()` all close the
 *   connection, which is how a request is cancelled over HTTP.
 *
 * ```ts
 * const transport = httpTransport({ baseUrl: 'http://localhost:8000', timeoutMs: 30_000 });
 * ```
 *
 * With `baseUrls: [...]` instead of `baseUrl` it balances requests over several replicas (least
 * outstanding requests, health checks, failover before the first response) and returns a
 * `ReplicaTransport`, whose `endpointStats()` reports on each endpoint.
 */
export const httpTransport: HttpTransportFunction = transportFunction(undefined);
