/** The HTTP front end on node:http (or node:https): KServe v2 routes plus the generate extension. */
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { EngineContext } from '../engine/context.js';
import { findModel, servedModel, statisticsModel } from '../engine/execute.js';
import { asTritonError, modelControlDisabled, TritonError } from '../errors.js';
import type { TlsOptions } from '../grpc/server.js';
import { listen } from '../listen.js';
import {
  modelConfig,
  modelMetadata,
  modelStatistics,
  SERVER_EXTENSIONS,
  SERVER_NAME,
  SERVER_VERSION,
} from '../models/describe.js';
import { Exchange } from './exchange.js';
import { handleGenerate } from './generate.js';
import { HEADER_LENGTH, handleInfer } from './infer.js';

export interface HttpFrontEnd {
  readonly port: number;
  close(): Promise<void>;
}

/** Triton's model control: `POST /v2/repository/models/<name>/load` and `.../unload`. */
const REPOSITORY_CONTROL = /^\/v2\/repository\/models\/([^/]+)\/(load|unload)$/;
const MODEL_ROUTE =
  /^\/v2\/models\/([^/]+)(?:\/versions\/([^/]+))?(?:\/(ready|config|stats|infer|generate|generate_stream))?$/;

function corsHeaders(req: IncomingMessage): Record<string, string> {
  return {
    'Access-Control-Allow-Origin': req.headers.origin ?? '*',
    'Access-Control-Allow-Methods': 'GET, POST, OPTIONS',
    'Access-Control-Allow-Headers':
      req.headers['access-control-request-headers'] ?? `Content-Type, Accept, ${HEADER_LENGTH}`,
    'Access-Control-Expose-Headers': HEADER_LENGTH,
    'Access-Control-Max-Age': '600',
    Vary: 'Origin',
  };
}

/**
 * Triton's answer to a known path asked with another method: 405 and this body, typed text/plain
 * on its health, readiness and infer handlers and application/json on the others.
 */
function methodNotAllowed(ex: Exchange, plain: boolean): void {
  ex.send(405, plain ? 'text/plain' : 'application/json', '{"error":"Method Not Allowed"}');
}

async function route(ex: Exchange, ctx: EngineContext): Promise<void> {
  const { req } = ex;
  const path = new URL(req.url ?? '/', 'http://fake').pathname;
  const method = req.method ?? 'GET';
  const get = method === 'GET';
  if (path === '/v2/health/live' || path === '/v2/health/ready') {
    return get ? ex.empty(200) : methodNotAllowed(ex, true);
  }
  if (path === '/v2') {
    if (!get) return methodNotAllowed(ex, false);
    return ex.json(200, { name: SERVER_NAME, version: SERVER_VERSION, extensions: SERVER_EXTENSIONS });
  }
  if (path === '/v2/models/stats') {
    if (!get) return methodNotAllowed(ex, false);
    const stats = [...ctx.models.values()].map((m) => modelStatistics(m, ctx.statistics.get(m.name)));
    return ex.json(200, { model_stats: stats });
  }
  if (path === '/v2/repository/index') {
    if (method !== 'POST') return methodNotAllowed(ex, false);
    return ex.json(200, ctx.control.index());
  }
  const control = REPOSITORY_CONTROL.exec(path);
  if (control) {
    if (method !== 'POST') return methodNotAllowed(ex, false);
    // Without explicit control the fake serves its whole repository, as Triton does.
    if (!ctx.control.explicit) throw modelControlDisabled();
    const name = decodeURIComponent(control[1]!);
    if (control[2] === 'load') ctx.control.load(name);
    else ctx.control.unload(name);
    return ex.send(200, 'application/json', '');
  }
  const m = MODEL_ROUTE.exec(path);
  if (!m) return ex.send(404, 'text/plain', '{"error":"Not Found"}');
  const name = decodeURIComponent(m[1]!);
  const version = m[2] === undefined ? '' : decodeURIComponent(m[2]);
  const action = m[3];
  const wants = action === 'infer' || action === 'generate' || action === 'generate_stream' ? 'POST' : 'GET';
  if (method !== wants) return methodNotAllowed(ex, action === 'infer' || action === 'ready');
  switch (action) {
    case 'infer':
      return handleInfer(ex, ctx, name, version);
    case 'generate':
      return handleGenerate(ex, ctx, name, version, false);
    case 'generate_stream':
      return handleGenerate(ex, ctx, name, version, true);
    case 'ready':
      // Triton answers a ready model with an empty 200, and any other (unknown, not loaded, another
      // version) with this error, both typed text/plain.
      if (servedModel(ctx, name, version) !== undefined) return ex.empty(200);
      return ex.send(400, 'text/plain', '{"error":"Model version not ready"}');
    case 'config':
      return ex.json(200, modelConfig(findModel(ctx, name, version)));
    case 'stats': {
      const model = statisticsModel(ctx, name, version);
      return ex.json(200, { model_stats: [modelStatistics(model, ctx.statistics.get(model.name))] });
    }
    default:
      return ex.json(200, modelMetadata(findModel(ctx, name, version)));
  }
}

export async function startHttpFrontEnd(
  ctx: EngineContext,
  options: { host: string; port: number; tls: TlsOptions | undefined; cors: boolean },
): Promise<HttpFrontEnd> {
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    if (options.cors) {
      for (const [k, v] of Object.entries(corsHeaders(req))) res.setHeader(k, v);
      if (req.method === 'OPTIONS') {
        res.writeHead(204);
        res.end();
        return;
      }
    }
    const ex = new Exchange(req, res);
    route(ex, ctx).catch((err: unknown) => {
      const error = err instanceof TritonError ? err : asTritonError(err);
      if (!res.headersSent) ex.error(error);
      else res.destroy();
    });
  };
  const tls = options.tls;
  const server: Server = tls
    ? createHttpsServer(
        {
          cert: tls.cert,
          key: tls.key,
          ...(tls.ca !== undefined ? { ca: tls.ca } : {}),
          requestCert: tls.requireClientCert ?? false,
          rejectUnauthorized: tls.requireClientCert ?? false,
        },
        handler,
      )
    : createHttpServer(handler);
  const port = await listen(server, options.port, options.host);
  return {
    port,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
