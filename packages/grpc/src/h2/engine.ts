import type { ConnectionOptions } from 'node:tls';
import type { H2StreamOwner } from './stream.js';

/**
 * What the layers above see of an HTTP/2 engine: streams opened with plain header fields, driven
 * by bytes, and reported to their owner (`H2StreamOwner`). Two engines stand behind it: this
 * package's own (`H2Sessions`, the default) and Node's `node:http2` (`NodeH2Sessions`).
 */
export interface H2Engine {
  /**
   * A request's headers made ready to send, once (the engine's own header encoding stays inside
   * it): `open` sends them as often as needed. `headers` are plain fields, names in lower case.
   */
  prepare(path: string, headers: H2RequestHeaders): H2PreparedRequest;
  /** Opens a stream with a request `prepare` made; `owner` hears everything the server sends on it. */
  open(request: H2PreparedRequest, owner: H2StreamOwner): H2StreamHandle;
  /** The engine's connections now, for operators and tests. */
  stats(): GrpcConnectionStats;
  /** Drops every connection; their streams fail as a lost connection does. */
  close(): void;
}

/** Request header fields by lowercase name: the pseudo-headers are the engine's to add. */
export type H2RequestHeaders = Readonly<Record<string, string>>;

/** A request's headers as an engine keeps them ready to send (made by `H2Engine.prepare`). */
export interface H2PreparedRequest {
  readonly path: string;
}

/** One stream, as the call that owns it drives it. */
export interface H2StreamHandle {
  /** Sends request bytes (DATA), as far as flow control allows now, the rest when it allows. */
  write(bytes: Buffer): void;
  /** Half-closes: END_STREAM after the bytes already written. */
  end(): void;
  /** Resets the stream (RST_STREAM CANCEL); its owner hears nothing more. */
  cancel(): void;
  /** Stops opening the stream's window: the server stops once 64 KiB are unread. */
  pause(): void;
  resume(): void;
  /**
   * Says whether a call runs on the stream: an idle one (a shared call between requests) lets the
   * process exit. Call it on the owner's transitions only, never per message.
   */
  setIdle(idle: boolean): void;
  /** The server ended its side (END_STREAM). */
  readonly endReceived: boolean;
}

/** How an engine connects to its endpoint. */
export interface H2EngineOptions {
  readonly url: URL;
  /** Options of `tls.connect` for an `https://` URL (certificates, server name). */
  readonly tls?: ConnectionOptions;
  /** PING after this long without a frame from the server while streams are open, in ms; 0 for none. */
  readonly keepaliveMs: number;
  /** How long a PING may go unanswered before the connection is given up, in milliseconds. */
  readonly keepaliveTimeoutMs: number;
  /**
   * Connections to open to the endpoint when the server's MAX_CONCURRENT_STREAMS is reached on the
   * ones there are (streams past the limit of all of them wait for a free slot).
   */
  readonly maxConnections: number;
  /** Where the warnings go (the keepalive back-off). */
  readonly logger: { warn(message: string): void };
}

/** The state of a transport's streaming connections, for operators and tests. */
export interface GrpcConnectionStats {
  /** Connections open now (including those finishing their streams after GOAWAY). */
  readonly connections: number;
  /** Streams running on them. */
  readonly openStreams: number;
  /** Streams waiting for a free slot under the server's MAX_CONCURRENT_STREAMS. */
  readonly waitingStreams: number;
  /** Streams the server refused (REFUSED_STREAM, or unprocessed at GOAWAY) and that started again. */
  readonly refusedStreams: number;
  /** The server's MAX_CONCURRENT_STREAMS on the newest connection; undefined when it sets none. */
  readonly peerMaxConcurrentStreams: number | undefined;
  /** The PING interval new connections use, after any back-off; 0 when keepalive is off. */
  readonly keepaliveMs: number;
}

/** The engines `grpcTransport({ engine })` chooses from. */
export type H2EngineName = 'builtin' | 'node-http2';
