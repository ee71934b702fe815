import type { OutgoingHttpHeaders } from 'node:http2';
import type {
  GrpcConnectionStats,
  H2Engine,
  H2EngineOptions,
  H2PreparedRequest,
  H2RequestHeaders,
  H2StreamHandle,
} from './engine.js';
import { tooManyPingsWarning } from './keepalive.js';
import { NodeSession, type NodeSessionHost } from './node-http2-session.js';
import { NodeStream } from './node-http2-stream.js';
import type { H2StreamOwner } from './stream.js';

/**
 * The engine on Node's own `node:http2` (nghttp2), behind the same door as the package's own:
 * `grpcTransport({ engine: 'node-http2' })`. As the own engine does, streams go to the session
 * with room under the server's MAX_CONCURRENT_STREAMS, a new one opens (up to `maxConnections`)
 * when none has room, and a stream the server refused unprocessed (REFUSED_STREAM, or past a
 * GOAWAY's last stream) starts again elsewhere. Past the limit of all of them nghttp2 queues the
 * streams of a session. A session is referenced only while a call runs on it, keepalive PINGs go
 * out only on a silent connection with calls, and failures are the same `TritonLlmError`s (wrong
 * port, TLS without h2, a lost connection, GOAWAY, a broken frame).
 */
export class NodeH2Sessions implements H2Engine, NodeSessionHost {
  /** Every session not closed yet, oldest first: the usable ones and those finishing after GOAWAY. */
  private readonly sessions: NodeSession[] = [];
  private closed = false;
  private keepaliveMs: number;
  private warnedPings = false;
  /** The endpoint's MAX_CONCURRENT_STREAMS as the newest SETTINGS said (Infinity: no limit). */
  private learnedMaxStreams: number | undefined;
  /** Streams the server refused unprocessed, started again. */
  refusedStreams = 0;
  /** Refused streams waiting to start again (on no session meanwhile). */
  restarting = 0;

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
    return new NodeStream(this, (request as NodePrepared).headers, owner);
  }

  /** @internal Whether `close()` ran: a refused stream then ends instead of starting again. */
  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * @internal The session for a new stream: the first with room; else a new one while fewer than
   * `maxConnections` are usable; else the least loaded (nghttp2 queues the stream there).
   */
  pick(): NodeSession {
    let least: NodeSession | undefined;
    let usable = 0;
    for (const session of this.sessions) {
      if (!session.usable) continue;
      usable += 1;
      if (session.hasRoom) return session;
      if (least === undefined || session.streams < least.streams) least = session;
    }
    if (least !== undefined && usable >= this.options.maxConnections) return least;
    // Until a session has told us the endpoint's limit, the first one takes the burst (as on the
    // own engine); once the limit is known, a new session takes that many and the next opens.
    if ((this.learnedMaxStreams ?? 0) === 0) {
      const pending = this.sessions.find((s) => s.usable && !s.settingsSeen);
      if (pending !== undefined) return pending;
    }
    const created = new NodeSession(this, this.keepaliveMs, this.learnedMaxStreams);
    this.sessions.push(created);
    return created;
  }

  /** @internal A session's SETTINGS said the endpoint's MAX_CONCURRENT_STREAMS. */
  learned(maxStreams: number): void {
    this.learnedMaxStreams = maxStreams;
  }

  /** @internal The session closed: it takes no streams and is forgotten. */
  gone(session: NodeSession): void {
    const at = this.sessions.indexOf(session);
    if (at >= 0) this.sessions.splice(at, 1);
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
    let waitingStreams = this.restarting;
    for (const session of this.sessions) {
      openStreams += session.streams - session.waiting;
      waitingStreams += session.waiting;
    }
    const newest = this.sessions[this.sessions.length - 1];
    const max = newest?.settingsSeen === true ? newest.maxStreams : this.learnedMaxStreams;
    return {
      connections: this.sessions.length,
      openStreams,
      waitingStreams,
      refusedStreams: this.refusedStreams,
      peerMaxConcurrentStreams: max === undefined || max === Number.POSITIVE_INFINITY ? undefined : max,
      keepaliveMs: this.keepaliveMs,
    };
  }

  close(): void {
    this.closed = true;
    for (const session of this.sessions.splice(0)) session.destroy();
  }
}

/** A request of this engine: node:http2's header object. */
interface NodePrepared extends H2PreparedRequest {
  readonly headers: OutgoingHttpHeaders;
}
