import type { ConnectionOptions } from 'node:tls';
import { type Client, createClient } from '@connectrpc/connect';
import { TritonLlmError } from '@trtllm/sdk';
import { invalidArgument, parseTritonUrl } from '@trtllm/sdk/transport';
import { unaryTransport } from '../call/index.js';
import { GRPCInferenceService } from '../gen/inference/grpc_service_pb.js';
import { createEngine, type GrpcConnectionStats, type H2Engine, type H2EngineName } from '../h2/index.js';
import type { GrpcTlsOptions, GrpcTransportOptions } from './options.js';

// A PING after 5.5 minutes of silence: 10 % above the 300 s that grpc servers (Triton among them:
// --grpc-http2-min-recv-ping-interval-without-data) allow between PINGs before they count strikes
// and close the connection with every stream on it.
const DEFAULT_KEEPALIVE_MS = 330_000;
// How long a keepalive PING may go unanswered (connect-node's default, kept).
const DEFAULT_KEEPALIVE_TIMEOUT_MS = 15_000;
// connect-es refuses larger limits: gRPC's 4-byte message length.
const MAX_MESSAGE_BYTES = 0xffffffff;
// A response message larger than this is refused on its 5-byte prefix, before it is read: room for
// streamed logits of any vocabulary (a 128k-token vocabulary is 0.5 MB a token) and for whole
// ones of a few hundred tokens; grpcTransport({ maxReceiveMessageBytes }) raises it.
export const DEFAULT_MAX_RECEIVE_BYTES = 64 * 1024 * 1024;
// Connections opened to one endpoint when a server limits the streams of each.
const DEFAULT_MAX_CONNECTIONS = 8;

/** The endpoint of one transport: its HTTP/2 engine, the unary calls' client on it, and the way to drop it. */
export interface Endpoint {
  readonly client: Client<typeof GRPCInferenceService>;
  /** The HTTP/2 engine every call of the transport runs on (up to `maxConnections` connections). */
  readonly engine: H2Engine;
  readonly maxReceiveBytes: number;
  readonly maxSendBytes: number | undefined;
  readonly logger: { warn(message: string): void };
  stats(): GrpcConnectionStats;
  close(): void;
}

/**
 * Validates the transport options and builds the connect-es client on the transport's HTTP/2
 * engine, so unary and streamed calls share its connections (the first opened on the first call,
 * more up to `maxConnections` when the server limits the streams of each).
 */
export function openEndpoint(options: GrpcTransportOptions): Endpoint {
  const url = baseUrl(options.baseUrl);
  const keepaliveMs = options.keepaliveMs ?? DEFAULT_KEEPALIVE_MS;
  if (!Number.isFinite(keepaliveMs) || keepaliveMs < 0) {
    throw invalidArgument(
      'keepaliveMs',
      options.keepaliveMs,
      'must be a number of milliseconds >= 0 (0 turns pings off)',
    );
  }
  const keepaliveTimeoutMs = options.keepaliveTimeoutMs ?? DEFAULT_KEEPALIVE_TIMEOUT_MS;
  if (!Number.isFinite(keepaliveTimeoutMs) || keepaliveTimeoutMs <= 0) {
    throw invalidArgument(
      'keepaliveTimeoutMs',
      options.keepaliveTimeoutMs,
      'must be a number of milliseconds > 0',
    );
  }
  if (options.tls !== undefined && url.protocol !== 'https:') {
    throw invalidArgument('baseUrl', options.baseUrl, 'tls options need a grpcs:// or https:// base URL');
  }
  if ((options.tls?.cert === undefined) !== (options.tls?.key === undefined)) {
    throw new TritonLlmError('invalid_argument', 'tls: mutual TLS needs both cert and key');
  }
  const readMaxBytes =
    messageLimit('maxReceiveMessageBytes', options.maxReceiveMessageBytes) ?? DEFAULT_MAX_RECEIVE_BYTES;
  const maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  if (!Number.isSafeInteger(maxConnections) || maxConnections < 1) {
    throw invalidArgument('maxConnections', options.maxConnections, 'must be a whole number >= 1');
  }
  const logger = options.logger ?? console;
  const writeMaxBytes = messageLimit('maxSendMessageBytes', options.maxSendMessageBytes);
  const tls = url.protocol === 'https:' ? tlsOptions(options.tls ?? {}) : undefined;
  const engine = createEngine(engineName(options.engine), {
    url,
    keepaliveMs,
    keepaliveTimeoutMs,
    maxConnections,
    logger,
    ...(tls !== undefined ? { tls } : {}),
  });
  // Unary calls go through connect-es's typed client on the same HTTP/2 engine as the streams.
  const transport = unaryTransport({
    engine,
    gzip: options.gzip === true,
    maxReceiveBytes: readMaxBytes,
    maxSendBytes: writeMaxBytes,
  });
  return {
    client: createClient(GRPCInferenceService, transport),
    engine,
    maxReceiveBytes: readMaxBytes,
    maxSendBytes: writeMaxBytes,
    logger,
    stats: () => engine.stats(),
    close: () => {
      engine.close();
    },
  };
}

/**
 * The endpoint of `baseUrl` by the one rule of Triton addresses (core's `parseTritonUrl`, the one
 * `transportFromUrl` and `--triton` use): `grpc://` and `http://` are plaintext, `grpcs://` and
 * `https://` TLS; no path, query, fragment or credentials.
 */
function baseUrl(value: string): URL {
  const endpoint = parseTritonUrl(value, { protocol: 'grpc', field: 'baseUrl' });
  if (!('baseUrl' in endpoint)) {
    throw invalidArgument(
      'baseUrl',
      value,
      "is a DNS target; give it as grpcTransport({ dns: 'host:port' })",
    );
  }
  return new URL(endpoint.baseUrl);
}

function engineName(value: GrpcTransportOptions['engine']): H2EngineName {
  if (value === undefined) return 'builtin';
  if (value !== 'builtin' && value !== 'node-http2') {
    throw invalidArgument('engine', value, "must be 'builtin' (the default) or 'node-http2'");
  }
  return value;
}

function messageLimit(field: string, value: number | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isSafeInteger(value) || value < 1 || value > MAX_MESSAGE_BYTES) {
    throw invalidArgument(field, value, `must be a whole number of bytes from 1 to ${MAX_MESSAGE_BYTES}`);
  }
  return value;
}

function tlsOptions(tls: GrpcTlsOptions): ConnectionOptions {
  return {
    ...(tls.ca !== undefined ? { ca: pem(tls.ca) } : {}),
    ...(tls.cert !== undefined ? { cert: pem(tls.cert) } : {}),
    ...(tls.key !== undefined ? { key: pem(tls.key) } : {}),
    ...(tls.serverName !== undefined ? { servername: tls.serverName } : {}),
    ...(tls.rejectUnauthorized !== undefined ? { rejectUnauthorized: tls.rejectUnauthorized } : {}),
  };
}

function pem(value: string | Uint8Array): string | Buffer {
  return typeof value === 'string' ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
}
