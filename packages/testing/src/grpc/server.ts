/**
 * The gRPC front end: `inference.GRPCInferenceService` on grpc-js. Connections are accepted by our
 * own listener and injected into grpc-js, so the fake can cut one (the drop fault) and close all.
 */
import { createServer, type Server as NetServer, type Socket } from 'node:net';
import {
  type handleBidiStreamingCall,
  type handleUnaryCall,
  Server,
  ServerCredentials,
  type ServiceDefinition,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { destroyAfterFlush } from '../drop.js';
import type { EngineContext } from '../engine/context.js';
import { findModel, servedModel, statisticsModel } from '../engine/execute.js';
import { asTritonError, grpcStatusOf, modelControlDisabled } from '../errors.js';
import { listen } from '../listen.js';
import {
  modelConfig,
  modelMetadata,
  modelStatistics,
  SERVER_EXTENSIONS,
  SERVER_NAME,
  SERVER_VERSION,
} from '../models/describe.js';
import { inferenceService } from './proto.js';
import type { ProtoInferRequest } from './request.js';
import { handleStreamInfer } from './stream.js';
import { handleModelInfer } from './unary.js';

export interface TlsOptions {
  readonly cert: string | Buffer;
  readonly key: string | Buffer;
  readonly ca?: string | Buffer;
  readonly requireClientCert?: boolean;
}

export interface GrpcFrontEnd {
  readonly port: number;
  close(): Promise<void>;
}

/** The service definition with pass-through serializers for the messages we encode ourselves. */
function serviceDefinition(): ServiceDefinition {
  const base = inferenceService();
  const raw = (name: string) => {
    const method = base[name]!;
    const serialize = method.responseSerialize;
    return { ...method, responseSerialize: (v: unknown) => (Buffer.isBuffer(v) ? v : serialize(v)) };
  };
  return { ...base, ModelInfer: raw('ModelInfer'), ModelStreamInfer: raw('ModelStreamInfer') };
}

type Named = { name: string; version: string };
/** RepositoryModelLoadRequest and RepositoryModelUnloadRequest: the same two fields. */
type RepositoryControl = { repository_name: string; model_name: string };

function unary<Req, Res>(answer: (request: Req) => Res): handleUnaryCall<Req, Res> {
  return (call, callback) => {
    try {
      callback(null, answer(call.request));
    } catch (err) {
      const error = asTritonError(err);
      callback({ code: grpcStatusOf(error), details: error.message });
    }
  };
}

function credentials(tls: TlsOptions | undefined): ServerCredentials {
  if (!tls) return ServerCredentials.createInsecure();
  const buf = (v: string | Buffer) => (typeof v === 'string' ? Buffer.from(v) : v);
  return ServerCredentials.createSsl(
    tls.ca === undefined ? null : buf(tls.ca),
    [{ private_key: buf(tls.key), cert_chain: buf(tls.cert) }],
    tls.requireClientCert ?? false,
  );
}

export async function startGrpcFrontEnd(
  ctx: EngineContext,
  options: {
    host: string;
    port: number;
    tls: TlsOptions | undefined;
    maxConcurrentStreams?: number | undefined;
  },
): Promise<GrpcFrontEnd> {
  const server = new Server({
    'grpc.max_receive_message_length': -1,
    'grpc.max_send_message_length': -1,
    ...(options.maxConcurrentStreams !== undefined
      ? { 'grpc.max_concurrent_streams': options.maxConcurrentStreams }
      : {}),
  });
  const sockets = new Map<string, Socket>();
  const drop = (call: { getPeer(): string }) => destroyAfterFlush(sockets.get(call.getPeer()));

  const implementation: UntypedServiceImplementation = {
    ServerLive: unary(() => ({ live: true })),
    ServerReady: unary(() => ({ ready: true })),
    ModelReady: unary((r: Named) => ({ ready: servedModel(ctx, r.name, r.version) !== undefined })),
    ServerMetadata: unary(() => ({
      name: SERVER_NAME,
      version: SERVER_VERSION,
      extensions: SERVER_EXTENSIONS,
    })),
    ModelMetadata: unary((r: Named) => modelMetadata(findModel(ctx, r.name, r.version))),
    ModelConfig: unary((r: Named) => ({ config: modelConfig(findModel(ctx, r.name, r.version)) })),
    ModelStatistics: unary((r: Named) => {
      const models = r.name === '' ? [...ctx.models.values()] : [statisticsModel(ctx, r.name, r.version)];
      return { model_stats: models.map((m) => modelStatistics(m, ctx.statistics.get(m.name))) };
    }),
    RepositoryIndex: unary(() => ({
      models: ctx.control.index().map((m) => ({
        name: m.name,
        version: m.version ?? '',
        state: m.state ?? '',
        reason: m.reason ?? '',
      })),
    })),
    // Without explicit control the fake serves its whole repository, as Triton does.
    RepositoryModelLoad: unary((r: RepositoryControl) => {
      if (!ctx.control.explicit) throw modelControlDisabled();
      ctx.control.load(r.model_name);
      return {};
    }),
    RepositoryModelUnload: unary((r: RepositoryControl) => {
      if (!ctx.control.explicit) throw modelControlDisabled();
      ctx.control.unload(r.model_name);
      return {};
    }),
    ModelInfer: ((call, callback) => handleModelInfer(call, callback, ctx, drop)) satisfies handleUnaryCall<
      ProtoInferRequest,
      Buffer
    >,
    ModelStreamInfer: ((call) => handleStreamInfer(call, ctx, drop)) satisfies handleBidiStreamingCall<
      ProtoInferRequest,
      Buffer
    >,
  };
  server.addService(serviceDefinition(), implementation);

  const injector = server.createConnectionInjector(credentials(options.tls));
  const listener: NetServer = createServer((socket) => {
    const peer = `${socket.remoteAddress}:${socket.remotePort}`;
    sockets.set(peer, socket);
    socket.once('close', () => sockets.delete(peer));
    injector.injectConnection(socket);
  });
  const port = await listen(listener, options.port, options.host);

  return {
    port,
    close: async () => {
      const closed = new Promise<void>((resolve) => listener.close(() => resolve()));
      injector.destroy();
      server.forceShutdown();
      for (const socket of sockets.values()) socket.destroy();
      await closed;
    },
  };
}
