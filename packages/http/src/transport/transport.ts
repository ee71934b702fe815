import type { ReplicaTransport, Transport } from '@trtllm/sdk';
import { asyncDispose } from '@trtllm/sdk/transport';
import { type EngineFactory, EventStream, HttpClient } from '../call/index.js';
import {
  checkHttpOptionNames,
  type HttpReplicaTransportOptions,
  type HttpTransportOptions,
} from '../options.js';
import { infer } from './infer.js';
import { modelMetadataFromJson, repositoryIndexFromJson, serverMetadataFromJson } from './metadata.js';
import { modelConfigFromJson } from './model-config.js';
import { modelPath } from './paths.js';
import { httpReplicaTransport, isReplicaOptions } from './replicas.js';
import { statisticsFromJson } from './statistics.js';
import { GenerateStream } from './stream.js';

/**
 * The signature of `httpTransport`: one base URL gives a {@link Transport}, several
 * (`baseUrls`) a {@link ReplicaTransport} that balances over them. Either supports `await using`
 * (it closes the transport); idle connections never keep the process alive.
 */
export interface HttpTransportFunction {
  /** Several endpoints (`baseUrls`): requests balanced over them. */
  (options: HttpReplicaTransportOptions): ReplicaTransport;
  /** One endpoint (`baseUrl`). */
  (options: HttpTransportOptions): Transport & AsyncDisposable;
}

/** `httpTransport` of an entry point, with its stream engine (none: fetch only). */
export function transportFunction(engine: EngineFactory | undefined): HttpTransportFunction {
  return ((options: HttpTransportOptions | HttpReplicaTransportOptions) =>
    createHttpTransport(options, engine)) as HttpTransportFunction;
}

/**
 * The transport of both entry points: `engine` carries streams on Node (see `node.ts`); without
 * one, or when the caller brings a `fetch`, everything goes through the fetch engine.
 */
export function createHttpTransport(
  options: HttpTransportOptions | HttpReplicaTransportOptions,
  engine: EngineFactory | undefined,
): Transport & AsyncDisposable {
  checkHttpOptionNames(options);
  if (isReplicaOptions(options)) {
    return httpReplicaTransport(options, (single) => createHttpTransport(single, engine));
  }
  const client = new HttpClient(options, engine);
  const get = (path: string) => ({ method: 'GET', path }) as const;
  const close = async (): Promise<void> => client.close();
  return {
    protocol: 'http',
    infer: (request, callOptions) => infer(client, request, callOptions),
    stream: (request, callOptions) => new EventStream(client, new GenerateStream(request), callOptions),
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
    repositoryIndex: async (callOptions) => {
      const context = { what: 'POST /v2/repository/index' };
      const send = { method: 'POST', path: '/v2/repository/index', body: '{}' } as const;
      return repositoryIndexFromJson(await client.json(send, callOptions, context), context);
    },
    close,
    [asyncDispose]: close,
  };
}
