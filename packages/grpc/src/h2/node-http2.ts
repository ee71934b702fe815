import {
  type ClientHttp2Session,
  type ClientHttp2Stream,
  connect,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
} from 'node:http2';
import { isIP } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type {
  GrpcConnectionStats,
  H2Engine,
  H2EngineOptions,
  H2PreparedRequest,
  H2RequestHeaders,
  H2StreamHandle,
} from './engine.js';
import { connectionLost, goawayError, NO_ALPN_H2, noAlpnH2, notGrpcEndpoint } from './errors.js';
import { H2_CANCEL, H2_ENHANCE_YOUR_CALM, H2_NO_ERROR } from './frames.js';
import { Keepalive, tooManyPingsWarning } from './keepalive.js';
import type { H2Headers, H2StreamOwner } from './stream.js';

// What we advertise, as the package's own engine does (connection-options.ts): windows of 64 KiB
// per stream, so a paused stream holds the server back, and header lists of 64 KiB at most.
const SETTINGS = { enablePush: false, initialWindowSize: 65_535, maxHeaderListSize: 64 * 1024 };

/**
 * The engine on Node's own `node:http2` (nghttp2), behind the same door as the package's own:
 * `grpcTransport({ engine: 'node-http2' })`. One session to the endpoint at a time (a new one
 * after GOAWAY or a loss); nghttp2 queues streams past the server's MAX_CONCURRENT_STREAMS, so
 * `maxConnections` does not apply. As with the own engine, a session is referenced only while a
 * call runs on it, keepalive PINGs go out only on a silent connection with calls, and failures are
 * the same `TritonLlmError`s (wrong port, TLS without h2, a lost connection, GOAWAY).
 */
export class NodeH2Sessions implements H2Engine {
  private current: NodeSession | undefined;
  private readonly live = new Set<NodeSession>();
  private closed = false;
  private keepaliveMs: number;
  private warnedPings = false;
  /** The server's MAX_CONCURRENT_STREAMS as the newest session's SETTINGS said. */
  peerMaxStreams: number | undefined;

  constructor(readonly options: H2EngineOptions) {
    this.keepaliveMs = options.keepaliveMs;
  }

  prepare(path: string, headers: H2RequestHeaders): H2PreparedRequest {
    // node:http2 adds :scheme and :authority from the session's origin.
    const prepared: NodePrepared = { path, headers: { ':method': 'POST', ':path': path, ...headers } };
    return prepared;
  }

  open(request: H2PreparedRequest, owner: H2StreamOwner): H2StreamHandle {
    if (this.closed) throw new Error('the HTTP/2 session is closed');
    let session = this.current;
    if (session === undefined || !session.usable) {
      session = new NodeSession(this, this.keepaliveMs);
      this.current = session;
      this.live.add(session);
    }
    return new NodeStream(session, (request as NodePrepared).headers, owner);
  }

  /** @internal The session closed: it takes no streams and is forgotten. */
  gone(session: NodeSession): void {
    this.live.delete(session);
    if (this.current === session) this.current = undefined;
  }

  /** @internal GOAWAY "too_many_pings": halve the PING rate of later sessions, as grpc clients do. */
  backOff(): void {
    if (this.keepaliveMs <= 0) return;
    this.keepaliveMs *= 2;
    if (this.warnedPings) return;
    this.warnedPings = true;
    this.options.logger.warn(tooManyPingsWarning(this.options.url, this.keepaliveMs));
  }

  stats(): GrpcConnectionStats {
    let openStreams = 0;
    for (const session of this.live) openStreams += session.streams;
    return {
      connections: this.live.size,
      openStreams,
      waitingStreams: 0,
      refusedStreams: 0,
      peerMaxConcurrentStreams: this.peerMaxStreams,
      keepaliveMs: this.keepaliveMs,
    };
  }

  close(): void {
    this.closed = true;
    for (const session of [...this.live]) session.destroy();
    this.live.clear();
    this.current = undefined;
  }
}

/** A request of this engine: node:http2's header object. */
interface NodePrepared extends H2PreparedRequest {
  readonly headers: OutgoingHttpHeaders;
}

/** One `ClientHttp2Session`, with what its streams need to report a failure as the own engine does. */
class NodeSession {
  readonly session: ClientHttp2Session;
  readonly keepalive: Keepalive;
  /** Streams open on it, and those of them that carry a call (the session is referenced while any do). */
  streams = 0;
  private held = 0;
  private settingsSeen = false;
  private goaway = false;
  private closedByUs = false;
  /** Why the session failed, as the streams on it are told. */
  private failure: unknown;

  constructor(
    private readonly engine: NodeH2Sessions,
    keepaliveMs: number,
  ) {
    const { url, tls, keepaliveTimeoutMs } = engine.options;
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const session = connect(url.origin, {
      settings: SETTINGS,
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
      engine.peerMaxStreams = max === undefined || max >= 0xffffffff ? undefined : max;
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

  /** A session error as the own engine names it: a peer that does not speak HTTP/2 is not gRPC. */
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

/** One stream of a `NodeSession`, as the call that owns it drives it. */
class NodeStream implements H2StreamHandle {
  endReceived = false;
  private readonly stream: ClientHttp2Stream;
  private done = false;
  private idle = false;
  private holding = false;
  private error: unknown;

  constructor(
    private readonly home: NodeSession,
    headers: OutgoingHttpHeaders,
    private readonly owner: H2StreamOwner,
  ) {
    const stream = home.session.request(headers, { endStream: false });
    this.stream = stream;
    home.opened();
    this.hold();
    // Informational (1xx) headers come as 'headers'; 'response' is the answer's.
    stream.on('response', (fields: IncomingHttpHeaders) => {
      if (this.done) return;
      try {
        owner.headersArrived(plain(fields));
      } catch (err) {
        this.ownerThrew(err);
      }
    });
    stream.on('trailers', (fields: IncomingHttpHeaders) => {
      if (this.done) return;
      try {
        owner.trailersArrived(plain(fields));
      } catch (err) {
        this.ownerThrew(err);
      }
    });
    stream.on('data', (chunk: Buffer) => {
      if (this.done) return;
      home.keepalive.received(Date.now());
      try {
        owner.dataArrived(chunk, 0, chunk.length);
      } catch (err) {
        this.ownerThrew(err);
      }
    });
    stream.on('end', () => this.onEnd());
    // The 'close' that follows reports it.
    stream.on('error', (err: unknown) => {
      this.error ??= err;
    });
    stream.on('close', () => this.onClose());
  }

  write(bytes: Buffer): void {
    if (!this.done) this.stream.write(bytes);
  }

  end(): void {
    if (!this.done) this.stream.end();
  }

  cancel(): void {
    if (this.done) return;
    this.finish();
    this.stream.close(H2_CANCEL);
  }

  pause(): void {
    this.stream.pause();
  }

  resume(): void {
    this.stream.resume();
  }

  setIdle(idle: boolean): void {
    if (this.idle === idle || this.done) return;
    this.idle = idle;
    if (idle) this.release();
    else this.hold();
  }

  /**
   * The server ended its side: the call is over. Our side still open (the server answered before
   * the request ended) is closed with RST_STREAM NO_ERROR, as the own engine does; node:http2
   * would otherwise keep the stream, and the call, open.
   */
  private onEnd(): void {
    this.endReceived = true;
    if (this.done) return;
    this.finish();
    if (!this.stream.writableEnded) this.stream.close(H2_NO_ERROR);
    try {
      this.owner.closed(undefined);
    } catch (err) {
      this.ownerThrew(err);
    }
  }

  private onClose(): void {
    if (this.done) return;
    this.finish();
    const code = this.stream.rstCode;
    const reset = code !== undefined && code !== H2_NO_ERROR;
    try {
      if (this.endReceived && !reset) {
        this.owner.closed(undefined);
        return;
      }
      // A reset of this stream alone (RST_STREAM from the peer) is the call's to read; anything
      // else that ended it is the session's failure.
      const streamOnly =
        (this.error === undefined || (this.error as { code?: unknown }).code === 'ERR_HTTP2_STREAM_ERROR') &&
        !this.stream.session?.destroyed;
      const failure = streamOnly ? undefined : this.home.closeError(this.error);
      if (failure !== undefined) this.owner.streamFailed(failure);
      else this.owner.closed(streamOnly && reset ? code : undefined);
    } catch (err) {
      try {
        this.owner.streamFailed(err);
      } catch {
        // The owner failed twice over; the stream is gone either way.
      }
    }
  }

  /** What an owner's callback threw ends this stream alone, never the session or the process. */
  private ownerThrew(err: unknown): void {
    if (!this.done) {
      this.finish();
      this.stream.close(H2_CANCEL);
    }
    try {
      this.owner.streamFailed(err);
    } catch {
      // The owner failed twice over; the stream is gone either way and others must go on.
    }
  }

  private finish(): void {
    this.done = true;
    this.release();
    this.home.ended();
  }

  private hold(): void {
    if (this.holding || this.idle) return;
    this.holding = true;
    this.home.hold();
  }

  private release(): void {
    if (!this.holding) return;
    this.holding = false;
    this.home.release();
  }
}

/** node:http2's header object as the engines report headers: values as strings, repeats joined. */
function plain(fields: IncomingHttpHeaders): H2Headers {
  const out: Record<string, string> = {};
  for (const name of Object.keys(fields)) {
    const value = fields[name];
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  return out;
}
