import { type ClientHttp2Session, connect } from 'node:http2';
import { isIP } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { TritonLlmError } from '@trtllm/sdk';
import type { H2EngineOptions } from './engine.js';
import { connectionLost, goawayError, NO_ALPN_H2, noAlpnH2, notGrpcEndpoint, origin } from './errors.js';
import { H2_ENHANCE_YOUR_CALM, H2_FLOW_CONTROL_ERROR, H2_NO_ERROR, h2ErrorName } from './frames.js';
import { Keepalive } from './keepalive.js';

// What we advertise, as the package's own engine does (connection-options.ts): windows of 64 KiB
// per stream, so a paused stream holds the server back, and header lists of 64 KiB at most.
const SETTINGS = { enablePush: false, initialWindowSize: 65_535, maxHeaderListSize: 64 * 1024 };
// The server's MAX_CONCURRENT_STREAMS assumed until its SETTINGS say (Node's default, and the own
// engine's): a burst on a fresh session runs this many, nghttp2 queues the rest.
const ASSUMED_MAX_STREAMS = 100;

/**
 * nghttp2's errors for a peer that broke HTTP/2 (its `errno`, as node:http2's `NghttpError`
 * carries it) whose GOAWAY code is certain. nghttp2 reports most violations as "Protocol error"
 * whatever code its GOAWAY carried, so those messages name none; the own engine names the frame.
 */
const NGHTTP2_GOAWAY: ReadonlyMap<number, number> = new Map([
  [-524, H2_FLOW_CONTROL_ERROR], // NGHTTP2_ERR_FLOW_CONTROL
]);
/** nghttp2's errors for a peer that only went past a limit of ours: floods, endless CONTINUATION. */
const NGHTTP2_LIMITS: ReadonlySet<number> = new Set([
  -904, // NGHTTP2_ERR_FLOODED
  -905, // NGHTTP2_ERR_TOO_MANY_CONTINUATIONS
]);

/** nghttp2 found the peer breaking HTTP/2 (or a limit of ours) after its SETTINGS: not retried. */
function brokeHttp2(url: URL, err: Error): TritonLlmError {
  const errno = (err as { errno?: unknown }).errno;
  // Node's own count of frames nghttp2 rejected (maxSessionInvalidFrames): a flood of them.
  const limit =
    (err as { code?: unknown }).code === 'ERR_HTTP2_TOO_MANY_INVALID_FRAMES' ||
    (typeof errno === 'number' && NGHTTP2_LIMITS.has(errno));
  const h2Code = typeof errno === 'number' ? NGHTTP2_GOAWAY.get(errno) : undefined;
  const what = limit ? 'went past a limit of this client' : 'broke the HTTP/2 protocol';
  const goaway = h2Code !== undefined ? ` (GOAWAY ${h2ErrorName(h2Code)})` : '';
  return new TritonLlmError(
    limit ? 'resource_exhausted' : 'protocol',
    `the server at ${origin(url)} ${what}: ${err.message} (node:http2); the connection was closed${goaway}`,
    { retryable: false, cause: err },
  );
}

/** What a session and its streams need of the engine that made them (`NodeH2Sessions`). */
export interface NodeSessionHost {
  readonly options: H2EngineOptions;
  /** Whether the engine was closed: a refused stream then ends instead of starting again. */
  readonly isClosed: boolean;
  /** Streams the server refused unprocessed and that started again. */
  refusedStreams: number;
  /** Refused streams waiting to start again (on no session meanwhile). */
  restarting: number;
  /** The session for a new stream. */
  pick(): NodeSession;
  /** A session's SETTINGS said the endpoint's MAX_CONCURRENT_STREAMS. */
  learned(maxStreams: number): void;
  /** The session closed. */
  gone(session: NodeSession): void;
  /** GOAWAY "too_many_pings". */
  backOff(): void;
}

/** One `ClientHttp2Session`, with what its streams need to report a failure as the own engine does. */
export class NodeSession {
  readonly session: ClientHttp2Session;
  readonly keepalive: Keepalive;
  /** Streams on it, running or queued; the session is referenced while any of them carries a call. */
  streams = 0;
  /** The server's MAX_CONCURRENT_STREAMS (Infinity: no limit); until its SETTINGS, the one assumed. */
  maxStreams: number;
  settingsSeen = false;
  private held = 0;
  private goaway = false;
  private closedByUs = false;
  /** Why the session failed, as the streams on it are told. */
  private failure: unknown;

  constructor(
    private readonly engine: NodeSessionHost,
    keepaliveMs: number,
    assumedMaxStreams: number | undefined,
  ) {
    // A limit learned from an earlier session stands until this one's SETTINGS (0 would queue all).
    this.maxStreams =
      assumedMaxStreams !== undefined && assumedMaxStreams > 0 ? assumedMaxStreams : ASSUMED_MAX_STREAMS;
    const { url, tls, keepaliveTimeoutMs } = engine.options;
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const session = connect(url.origin, {
      settings: SETTINGS,
      ...(Number.isFinite(this.maxStreams) ? { peerMaxConcurrentStreams: this.maxStreams } : {}),
      ...(url.protocol === 'https:' ? { ...(isIP(host) === 0 ? { servername: host } : {}), ...tls } : {}),
    });
    this.session = session;
    // Like fetch's keep-alive sockets: an idle session never keeps the process alive (see `hold`).
    session.unref();
    this.keepalive = new Keepalive(
      keepaliveMs,
      keepaliveTimeoutMs,
      () => {
        session.ping((err) => {
          if (err === null) this.keepalive.answered();
        });
      },
      (timeoutMs) =>
        session.destroy(connectionLost(url, `no answer to a keepalive PING within ${timeoutMs} ms`)),
    );
    // node:http2 goes on over a TLS connection whose server chose no protocol (an HTTP/1.1-only
    // endpoint), which then never answers: it is not a gRPC endpoint, as the own engine says.
    session.on('connect', (_session: ClientHttp2Session, socket: TLSSocket) => {
      if (url.protocol !== 'https:' || socket.alpnProtocol === 'h2') return;
      const chose = socket.alpnProtocol === false ? 'no protocol' : `'${String(socket.alpnProtocol)}'`;
      // The socket first: node:http2 would only end it, and a server that reads nothing never
      // sees the end (nor closes its side).
      socket.destroy();
      session.destroy(notGrpcEndpoint(url, `answered TLS without HTTP/2 (ALPN h2; it chose ${chose})`));
    });
    session.on('remoteSettings', (settings) => {
      this.settingsSeen = true;
      const max = settings.maxConcurrentStreams;
      // node:http2 reports 2^32-1 where the server set no limit.
      const known = max === undefined || max >= 0xffffffff ? Number.POSITIVE_INFINITY : max;
      this.maxStreams = known;
      engine.learned(known);
    });
    session.on('error', (err: unknown) => {
      this.failure ??= this.named(err);
    });
    session.on('goaway', (code: number, _lastStreamId: number, data?: Buffer) => {
      this.goaway = true;
      // Debug data is opaque; servers put ASCII there ("too_many_pings"), shown as such, cut short.
      const debug = (data ?? Buffer.alloc(0)).toString('latin1', 0, 200).replace(/[^\x20-\x7e]/g, '?');
      if (code === H2_ENHANCE_YOUR_CALM && debug === 'too_many_pings') engine.backOff();
      if (code !== H2_NO_ERROR) this.failure ??= goawayError(url, code, debug);
    });
    session.on('close', () => {
      this.keepalive.stop();
      engine.gone(this);
    });
  }

  /** Whether new streams may start here. */
  get usable(): boolean {
    return !this.goaway && !this.session.closed && !this.session.destroyed;
  }

  /** Whether a new stream would run at once (nghttp2 queues those past the server's limit). */
  get hasRoom(): boolean {
    return this.streams < this.maxStreams;
  }

  /** Streams nghttp2 holds back under the server's MAX_CONCURRENT_STREAMS. */
  get waiting(): number {
    return Math.max(0, this.streams - this.maxStreams);
  }

  /** Why the streams still open failed, or undefined when they hear a plain close (ours, clean). */
  closeError(streamError: unknown): unknown {
    if (this.failure !== undefined) return this.failure;
    if (this.closedByUs) return undefined;
    if (streamError !== undefined) return this.named(streamError);
    if (!this.settingsSeen) {
      return connectionLost(this.engine.options.url, 'it closed before the server sent its HTTP/2 SETTINGS');
    }
    return undefined;
  }

  /**
   * A session error as the own engine names it: a peer that does not speak HTTP/2 is not gRPC, one
   * that broke HTTP/2 after its SETTINGS made a protocol error (or went past a limit of ours).
   */
  private named(thrown: unknown): unknown {
    const url = this.engine.options.url;
    let err = thrown;
    // A stream that never started is cancelled with the session's error as its cause.
    if ((err as { code?: unknown } | undefined)?.code === 'ERR_HTTP2_STREAM_CANCEL') {
      err = (err as Error).cause ?? err;
    }
    if (noAlpnH2(err)) return notGrpcEndpoint(url, NO_ALPN_H2);
    const code = (err as { code?: unknown } | undefined)?.code;
    if (!this.settingsSeen && (code === 'ERR_HTTP2_ERROR' || code === 'ERR_HTTP2_SESSION_ERROR')) {
      return notGrpcEndpoint(url, `did not answer in HTTP/2 (${(err as Error).message})`);
    }
    if (code === 'ERR_HTTP2_ERROR' || code === 'ERR_HTTP2_TOO_MANY_INVALID_FRAMES') {
      return brokeHttp2(url, err as Error);
    }
    return err;
  }

  /** A stream started here. */
  opened(): void {
    if (this.streams++ === 0) this.keepalive.start();
  }

  /** A stream here ended. */
  ended(): void {
    if (--this.streams === 0) this.keepalive.stop();
  }

  /** A call runs on a stream here: the process stays alive until it ends (only on transitions). */
  hold(): void {
    if (this.held++ === 0) this.session.ref();
  }

  release(): void {
    if (--this.held === 0) this.session.unref();
  }

  destroy(): void {
    this.closedByUs = true;
    this.session.destroy();
  }
}
