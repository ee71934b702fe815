import type { CallOptions as ConnectCallOptions } from '@connectrpc/connect';
import { type InferRequest, type ReplicaTransport, type Transport, TritonLlmError } from '@trtllm/sdk';
import { asyncDispose, type CallOptions, invalidArgument } from '@trtllm/sdk/transport';
import { callHeaders, requestHeaders } from '../call/index.js';
import type { GrpcConnectionStats } from '../h2/index.js';
import { CallStream } from './call-stream.js';
import { openEndpoint } from './endpoint.js';
import { toTritonLlmError } from './error-mapping.js';
import { toModelInferRequest } from './infer-request.js';
import { fromModelInferResponse } from './infer-response.js';
import { fromModelConfig } from './model-config.js';
import { fromModelMetadata, fromModelStatistics } from './model-metadata.js';
import {
  checkGrpcOptionNames,
  type GrpcReplicaTransportOptions,
  type GrpcTransportOptions,
} from './options.js';
import { grpcReplicaTransport, isReplicaOptions } from './replicas.js';
import { DEFAULT_MULTIPLEX_CALLS, SharedCalls } from './shared-calls.js';
import { type StreamConfig, streamRequest } from './stream-config.js';

/** A {@link Transport} over gRPC, with the state of its connections. */
export interface GrpcTransport extends Transport, AsyncDisposable {
  /**
   * The streamed calls' connections now: how many, the streams running and waiting for a slot under
   * the server's MAX_CONCURRENT_STREAMS, streams the server refused and that started again, and the
   * keepalive interval after any back-off.
   */
  connectionStats(): GrpcConnectionStats;
}

/**
 * A {@link Transport} over Triton's gRPC API (`inference.GRPCInferenceService`), for
 * `new TritonLlm({ transport: grpcTransport({ baseUrl: 'http://localhost:8001' }) })`.
 *
 * A connection with no call in flight never keeps the process alive, as with `fetch`: a script ends
 * when its last call does. `close()` (or `await using`) ends the connections at once.
 *
 * All calls share the transport's HTTP/2 connections: one, or up to `maxConnections` (8) when
 * the server limits the streams of each. Each streamed request gets its own `ModelStreamInfer`
 * call, so cancelling one (break, or its `signal`) cancels it on the server without touching the
 * others. `engine: 'node-http2'` runs the calls on Node's own HTTP/2 stack instead of this
 * package's. `timeoutMs` travels as the gRPC deadline; failures are `TritonLlmError`s.
 *
 * With `baseUrls: [...]` or `dns: 'host:port'` instead of `baseUrl` it balances requests over
 * several replicas (least outstanding requests, health checks, failover before the first
 * response) and returns a `ReplicaTransport`, whose `endpointStats()` reports on each endpoint.
 */
export function grpcTransport(options: GrpcReplicaTransportOptions): ReplicaTransport;
export function grpcTransport(options: GrpcTransportOptions): GrpcTransport;
export function grpcTransport(
  options: GrpcTransportOptions | GrpcReplicaTransportOptions,
): GrpcTransport | ReplicaTransport {
  checkGrpcOptionNames(options);
  if (isReplicaOptions(options)) return grpcReplicaTransport(options, grpcTransport);
  const gzip = options.gzip === true;
  // Checked with the other options, before the transport is built (connections open on first use).
  const sharedCalls = multiplexCalls(options.multiplex);
  // The headers of every streamed call without headers of its own, built once: bad static headers
  // fail here, once, instead of on every call.
  const streamHeaders = requestHeaders(callHeaders(options.headers, undefined, 'options.headers'), gzip);
  const connection = openEndpoint(options);
  const client = connection.client;
  const engine = connection.engine;
  // Shared by every streamed call without headers or a deadline of its own.
  const streamConfig: StreamConfig = {
    engine,
    headers: streamHeaders,
    request: streamRequest(engine, streamHeaders, undefined),
    timeoutMs: undefined,
    maxReceiveBytes: connection.maxReceiveBytes,
    maxSendBytes: connection.maxSendBytes,
    gzip,
    logger: connection.logger,
  };
  let closed = false;
  const mux = sharedCalls !== undefined ? new SharedCalls(streamConfig, sharedCalls) : undefined;

  /** Refuses a call on a closed transport or with a bad deadline; returns the deadline. */
  function checkCall(call: CallOptions | undefined): number | undefined {
    if (closed) {
      throw new TritonLlmError('unavailable', 'this gRPC transport is closed', { retryable: false });
    }
    const timeoutMs = call?.timeoutMs;
    if (timeoutMs !== undefined && !(Number.isFinite(timeoutMs) && timeoutMs > 0)) {
      throw invalidArgument('timeoutMs', timeoutMs, 'must be a number of milliseconds > 0');
    }
    return timeoutMs;
  }

  function connectOptions(
    call: CallOptions | undefined,
    signal: AbortSignal | undefined,
  ): ConnectCallOptions {
    const timeoutMs = checkCall(call);
    return {
      headers: callHeaders(options.headers, call?.headers, 'options.headers'),
      ...(timeoutMs !== undefined ? { timeoutMs: Math.ceil(timeoutMs) } : {}),
      ...(signal !== undefined ? { signal } : {}),
    };
  }

  async function unary<T>(
    method: string,
    context: { model?: string; requestId?: string },
    call: CallOptions | undefined,
    run: (o: ConnectCallOptions) => Promise<T>,
  ): Promise<T> {
    try {
      if (call?.signal?.aborted === true) throw call.signal.reason;
      return await run(connectOptions(call, call?.signal));
    } catch (err) {
      throw toTritonLlmError(err, { method, ...context, signal: call?.signal });
    }
  }

  return {
    protocol: 'grpc',
    connectionStats: () => connection.stats(),

    infer: (request: InferRequest, call?: CallOptions) =>
      unary('ModelInfer', { model: request.model, requestId: request.id }, call, async (o) => {
        const message = toModelInferRequest(request);
        return fromModelInferResponse(await client.modelInfer(message, o), true);
      }),

    // A call with its own headers or deadline needs its own ModelStreamInfer call.
    stream: (request: InferRequest, call?: CallOptions) => {
      if (mux !== undefined && call?.headers === undefined && call?.timeoutMs === undefined) {
        return mux.stream(request, call?.signal);
      }
      const timeoutMs = checkCall(call);
      let config = streamConfig;
      if (call?.headers !== undefined) {
        const headers = requestHeaders(callHeaders(options.headers, call.headers, 'options.headers'), gzip);
        config = { ...streamConfig, headers, request: streamRequest(engine, headers, undefined) };
      }
      if (timeoutMs !== undefined) config = { ...config, timeoutMs };
      return new CallStream(request, call?.signal, config);
    },

    serverLive: (call?: CallOptions) =>
      unary('ServerLive', {}, call, async (o) => (await client.serverLive({}, o)).live),

    serverReady: (call?: CallOptions) =>
      unary('ServerReady', {}, call, async (o) => (await client.serverReady({}, o)).ready),

    modelReady: (model: string, version?: string, call?: CallOptions) =>
      unary('ModelReady', { model }, call, async (o) => {
        return (await client.modelReady({ name: model, version: version ?? '' }, o)).ready;
      }),

    serverMetadata: (call?: CallOptions) =>
      unary('ServerMetadata', {}, call, async (o) => {
        const r = await client.serverMetadata({}, o);
        return { name: r.name, version: r.version, extensions: [...r.extensions] };
      }),

    repositoryIndex: (call?: CallOptions) =>
      unary('RepositoryIndex', {}, call, async (o) => {
        const r = await client.repositoryIndex({ ready: false }, o);
        return r.models.map(({ name, version, state, reason }) => ({ name, version, state, reason }));
      }),

    modelMetadata: (model: string, version?: string, call?: CallOptions) =>
      unary('ModelMetadata', { model }, call, async (o) => {
        return fromModelMetadata(await client.modelMetadata({ name: model, version: version ?? '' }, o));
      }),

    modelConfig: (model: string, version?: string, call?: CallOptions) =>
      unary('ModelConfig', { model }, call, async (o) => {
        const r = await client.modelConfig({ name: model, version: version ?? '' }, o);
        if (r.config === undefined) {
          throw new TritonLlmError('protocol', `ModelConfig '${model}': the answer holds no config`);
        }
        return fromModelConfig(r.config);
      }),

    modelStatistics: (model?: string, version?: string, call?: CallOptions) =>
      unary('ModelStatistics', model !== undefined ? { model } : {}, call, async (o) => {
        const r = await client.modelStatistics({ name: model ?? '', version: version ?? '' }, o);
        return r.modelStats.map(fromModelStatistics);
      }),

    close,
    [asyncDispose]: close,
  };

  async function close(): Promise<void> {
    closed = true;
    mux?.close();
    connection.close();
  }
}

// More shared calls than this gain nothing (responses already leave many to a write) and only
// cost the server a handler each.
const MAX_MULTIPLEX_CALLS = 1024;

/** The shared calls `multiplex` asks for, or undefined when each streamed request gets its own call. */
function multiplexCalls(multiplex: GrpcTransportOptions['multiplex']): number | undefined {
  if (multiplex === undefined || multiplex === false) return undefined;
  if (multiplex === true) return DEFAULT_MULTIPLEX_CALLS;
  if (typeof multiplex !== 'object' || multiplex === null) {
    throw invalidArgument('multiplex', multiplex, 'must be true, false or { calls }');
  }
  const calls = multiplex.calls ?? DEFAULT_MULTIPLEX_CALLS;
  if (!Number.isSafeInteger(calls) || calls < 1 || calls > MAX_MULTIPLEX_CALLS) {
    throw invalidArgument(
      'multiplex.calls',
      multiplex.calls,
      `must be a whole number from 1 to ${MAX_MULTIPLEX_CALLS}`,
    );
  }
  return calls;
}
