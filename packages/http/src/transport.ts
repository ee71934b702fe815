import type { ReplicaTransport, Transport } from '@trtllm/sdk';
import { HttpClient } from './client.js';
import { infer } from './infer.js';
import { modelMetadataFromJson, serverMetadataFromJson } from './metadata.js';
import { modelConfigFromJson } from './model-config.js';
import type { HttpReplicaTransportOptions, HttpTransportOptions } from './options.js';
import { modelPath } from './paths.js';
import { httpReplicaTransport, isReplicaOptions } from './replicas.js';
import { statisticsFromJson } from './statistics.js';
import { openStream } from './stream.js';

/**
 * A {@link Transport} over Triton's HTTP/REST API that needs nothing but `fetch`, streams and
 * `TextEncoder`/`TextDecoder`, so it runs in Node 20+, Deno, Bun, browsers and edge workers.
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
export function httpTransport(options: HttpReplicaTransportOptions): ReplicaTransport;
export function httpTransport(options: HttpTransportOptions): Transport;
export function httpTransport(options: HttpTransportOptions | HttpReplicaTransportOptions): Transport {
  if (isReplicaOptions(options)) return httpReplicaTransport(options, httpTransport);
  const client = new HttpClient(options);
  const get = (path: string) => ({ method: 'GET', path }) as const;
  return {
    protocol: 'http',
    infer: (request, callOptions) => infer(client, request, callOptions),
    stream: (request, callOptions) => openStream(client, request, callOptions),
    serverLive: (callOptions) => client.probe('/v2/health/live', callOptions),
    serverReady: (callOptions) => client.probe('/v2/health/ready', callOptions),
    modelReady: async (model, version, callOptions) =>
      client.probe(`${modelPath(model, version)}/ready`, callOptions),
    serverMetadata: async (callOptions) => {
      const context = { what: 'GET /v2' };
      return serverMetadataFromJson(await client.json(get('/v2'), callOptions, context), context);
    },
    modelMetadata: async (model, version, callOptions) => {
      const path = modelPath(model, version);
      const context = { what: `GET ${path}`, model };
      return modelMetadataFromJson(await client.json(get(path), callOptions, context), context);
    },
    modelConfig: async (model, version, callOptions) => {
      const path = `${modelPath(model, version)}/config`;
      const context = { what: `GET ${path}`, model };
      return modelConfigFromJson(await client.json(get(path), callOptions, context), context);
    },
    modelStatistics: async (model, version, callOptions) => {
      const path = model === undefined ? '/v2/models/stats' : `${modelPath(model, version)}/stats`;
      const context = { what: `GET ${path}`, ...(model !== undefined ? { model } : {}) };
      return statisticsFromJson(await client.json(get(path), callOptions, context), context);
    },
    close: async () => client.close(),
  };
}
