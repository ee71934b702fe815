import type { ReplicaOptions } from '@trtllm/sdk';
import { checkOptionNames } from '@trtllm/sdk/transport';

/**
 * TLS material for an `https://` base URL. PEM strings or their bytes; everything is optional, so
 * `{}` means "TLS with the system's trusted roots".
 */
export interface GrpcTlsOptions {
  /** Trusted root certificate(s) for the server, replacing the system roots (private CA). */
  readonly ca?: string | Uint8Array;
  /** Client certificate chain, for mutual TLS (with `key`). */
  readonly cert?: string | Uint8Array;
  /** Client private key, for mutual TLS (with `cert`). */
  readonly key?: string | Uint8Array;
  /** Name the server certificate must carry, when it differs from the URL's host. */
  readonly serverName?: string;
  /** `false` accepts any server certificate. For local experiments only; default `true`. */
  readonly rejectUnauthorized?: boolean;
}

/**
 * Options of {@link grpcTransport}. A transport opens its first HTTP/2 connection on its first call and
 * shares it among all of its calls; when the server (or a proxy) limits the streams of a connection,
 * the calls open more, up to `maxConnections` (default 8).
 */
export interface GrpcTransportOptions {
  /**
   * `grpc://host:port` or `http://host:port` for plaintext HTTP/2, `grpcs://host:port` or
   * `https://host:port` for TLS (Triton's gRPC port is 8001 by default): the addresses
   * `transportFromUrl` takes, without a path.
   */
  readonly baseUrl: string;
  /** Certificates for TLS and mutual TLS; only meaningful with a `grpcs://` or `https://` base URL. */
  readonly tls?: GrpcTlsOptions;
  /** Metadata sent with every call, such as `authorization`. Per-call headers override it by name. */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * Keepalive: a PING after this long without a frame from the server while calls are in flight, in
   * milliseconds; `0` turns it off. Default 330 000 (5.5 min): grpc servers, Triton among them, close
   * a connection, with every call on it, whose PINGs come more often than
   * `--grpc-http2-min-recv-ping-interval-without-data` (300 s by default) allows, past
   * `--grpc-http2-max-ping-strikes` (2). Lower it only as far as the server's flags allow. When a
   * server still answers GOAWAY "too_many_pings", the interval doubles for later connections and
   * `logger` is told once.
   */
  readonly keepaliveMs?: number;
  /**
   * How long a keepalive PING may go unanswered before the connection is given up, in
   * milliseconds; its calls then fail `unavailable` (retryable). Default 15 000.
   */
  readonly keepaliveTimeoutMs?: number;
  /** Compress requests of 1 KiB and more with gzip, and ask the server for gzip responses. Default `false`. */
  readonly gzip?: boolean;
  /**
   * Largest response message accepted, in bytes; a larger one fails `resource_exhausted` on its
   * 5-byte prefix, before it is read, and gzip output is bounded by it too. Default 64 MiB: streamed
   * logits of any vocabulary, whole ones for a few hundred tokens (vocabulary x tokens x 4 bytes).
   */
  readonly maxReceiveMessageBytes?: number;
  /** Largest request message sent, in bytes (default: no limit below 4 GiB). */
  readonly maxSendMessageBytes?: number;
  /**
   * Carry the streamed requests on a few shared `ModelStreamInfer` calls, many requests each, as
   * Triton's own clients do (on the same HTTP/2 engine as the default, which drives one HTTP/2
   * stream per request); it keeps the HTTP/2 streams at `calls` or fewer whatever the
   * concurrency, for proxies or servers that limit them. `true` means 32 calls; `{ calls: 1 }`
   * puts every request on one call, at more client CPU per token under load: a server
   * writes one call's responses one at a time, so the client wakes for each. A request joins the
   * call with the fewest requests. The trade-off: ending one request early cannot cancel its
   * shared call, so it only stops listening, and the SDK sends the model's in-band stop where the
   * model has one (raw and LLM-API models); responses are buffered per request. Calls with
   * per-call headers or `timeoutMs` still get their own call. Default `false`.
   */
  readonly multiplex?: boolean | { readonly calls?: number };
  /**
   * Connections the streamed calls may open to the endpoint when the server (or a proxy: nginx
   * allows 128 streams per connection, HAProxy 100) limits the streams of each; streams past the
   * limit of all of them wait for a free slot. Triton sets no limit, so one connection serves all.
   * Default 8.
   */
  readonly maxConnections?: number;
  /** Where the transport's warnings go (keepalive back-off, a consumer that threw). Default `console`. */
  readonly logger?: GrpcLogger;
  /**
   * The HTTP/2 stack the calls run on: `'builtin'`, this package's own engine (the default: the
   * least CPU per token, and every frame of the server checked), or `'node-http2'`, Node's
   * `node:http2`, for those who prefer Node's own stack. Both carry every call and option alike
   * (`maxConnections` too); `node-http2` answers a broken frame in nghttp2's words, without naming
   * the frame.
   */
  readonly engine?: 'builtin' | 'node-http2';
}

interface GrpcReplicaCommonOptions extends Omit<GrpcTransportOptions, 'baseUrl'>, ReplicaOptions {
  readonly baseUrl?: never;
}

/** {@link grpcTransport} over several Triton replicas: one connection each, requests balanced over them. */
export interface GrpcReplicaListOptions extends GrpcReplicaCommonOptions {
  /** The replicas' gRPC endpoints, `grpc(s)://host:port` or `http(s)://host:port` each; statistics are named by them. */
  readonly baseUrls: readonly string[];
  readonly dns?: never;
}

/**
 * {@link grpcTransport} over every address of a DNS name, such as a Kubernetes headless service:
 * one endpoint per address, looked up again every `refreshIntervalMs` (default 30 s).
 */
export interface GrpcReplicaDnsOptions extends GrpcReplicaCommonOptions {
  /** `host:port` (`[v6]:port` for an IPv6 literal); `https://` is used when `tls` is given, and the
   * certificate is checked against `host` unless `tls.serverName` says otherwise. */
  readonly dns: string;
  /** Turns the host into addresses; default: every address `node:dns` `lookup` returns for it. */
  readonly lookup?: (host: string) => Promise<readonly string[]>;
  readonly baseUrls?: never;
}

/** Options of {@link grpcTransport} with several endpoints. */
export type GrpcReplicaTransportOptions = GrpcReplicaListOptions | GrpcReplicaDnsOptions;

/** Where {@link GrpcTransportOptions.logger} sends the transport's warnings (`console` fits). */
export interface GrpcLogger {
  /** One warning, a sentence that says what happened and what to change. */
  warn(message: string): void;
}

// Every option's name, typed against the interfaces so that none can be left out: a key that is
// none of these (`baseURL`, `keepAliveMs`) is refused with the closest name (issue 53).
const REPLICA_NAMES: Readonly<Record<keyof ReplicaOptions, true>> = {
  healthIntervalMs: true,
  healthTimeoutMs: true,
  model: true,
  modelVersion: true,
  ejectAfterFailures: true,
  failoverAttempts: true,
  refreshIntervalMs: true,
};
const OPTION_NAMES: Readonly<
  Record<keyof GrpcTransportOptions | keyof GrpcReplicaListOptions | keyof GrpcReplicaDnsOptions, true>
> = {
  baseUrl: true,
  tls: true,
  headers: true,
  keepaliveMs: true,
  keepaliveTimeoutMs: true,
  gzip: true,
  maxReceiveMessageBytes: true,
  maxSendMessageBytes: true,
  multiplex: true,
  maxConnections: true,
  logger: true,
  engine: true,
  baseUrls: true,
  dns: true,
  lookup: true,
  ...REPLICA_NAMES,
};
const TLS_NAMES: Readonly<Record<keyof GrpcTlsOptions, true>> = {
  ca: true,
  cert: true,
  key: true,
  serverName: true,
  rejectUnauthorized: true,
};

/** The options of {@link grpcTransport} (and of its `tls`) have only known names. */
export function checkGrpcOptionNames(options: GrpcTransportOptions | GrpcReplicaTransportOptions): void {
  if (typeof options !== 'object' || options === null) return;
  checkOptionNames(options, OPTION_NAMES);
  if (typeof options.tls === 'object' && options.tls !== null)
    checkOptionNames(options.tls, TLS_NAMES, 'tls.');
}
