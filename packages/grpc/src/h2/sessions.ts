import { H2Connection, type H2ConnectionEvents } from './connection.js';
import type {
  GrpcConnectionStats,
  H2Engine,
  H2EngineOptions,
  H2PreparedRequest,
  H2RequestHeaders,
} from './engine.js';
import { encodeHeaderBlock } from './frames.js';
import { tooManyPingsWarning } from './keepalive.js';
import { H2Stream, type H2StreamHost, type H2StreamOwner } from './stream.js';
import type { H2StreamTable } from './stream-table.js';

/**
 * The streaming calls' connections of one transport, opened on first use: streams go to the
 * connection with room under the server's MAX_CONCURRENT_STREAMS, a new one is opened (up to
 * `maxConnections`) when none has room, and connections lost or past GOAWAY are replaced (streams
 * already running there finish there).
 */
export class H2Sessions implements H2Engine {
  private readonly connections: H2StreamTable[] = [];
  /** Every connection not closed yet: the usable ones and those finishing after GOAWAY. */
  private readonly live = new Set<H2StreamTable>();
  private closed = false;
  private refusedStreams = 0;
  private keepaliveMs: number;
  private warnedPings = false;
  /** The endpoint's MAX_CONCURRENT_STREAMS as the last connection's SETTINGS said. */
  private learnedMaxStreams: number | undefined;
  private readonly events: H2ConnectionEvents<H2StreamTable>;
  /** Stands in as the host of a stream before it has a connection (writes wait in the stream). */
  private readonly unplaced: H2StreamHost = {
    flush: () => undefined,
    reset: () => undefined,
    windowUpdate: () => undefined,
    // The stream holds the connection it is placed on, as its idle flag then says.
    idleChanged: () => undefined,
  };

  constructor(private readonly options: H2EngineOptions) {
    this.keepaliveMs = options.keepaliveMs;
    this.events = {
      gone: (connection) => this.forget(connection),
      unprocessed: (streams) => {
        this.refusedStreams += streams.length;
        for (const stream of streams) this.place(stream);
      },
      overflow: (streams) => {
        for (const stream of streams) this.place(stream);
      },
      tooManyPings: () => this.backOff(),
      refused: () => {
        this.refusedStreams += 1;
      },
      ready: (connection) => {
        const max = connection.peerMaxStreams;
        this.learnedMaxStreams = Number.isFinite(max) ? max : undefined;
      },
    };
  }

  /** The request's header block, encoded once (HPACK literals: see `encodeHeaderBlock`). */
  prepare(path: string, headers: H2RequestHeaders): H2PreparedRequest {
    const prepared: PreparedBlock = { path, block: encodeHeaderBlock(this.options.url, path, headers) };
    return prepared;
  }

  open(request: H2PreparedRequest, owner: H2StreamOwner): H2Stream {
    if (this.closed) throw new Error('the HTTP/2 session is closed');
    const stream = new H2Stream(owner, this.unplaced);
    stream.headerBlock = (request as PreparedBlock).block;
    this.place(stream);
    return stream;
  }

  private place(stream: H2Stream): void {
    if (stream.done) return;
    if (this.closed) {
      stream.done = true;
      stream.owner.closed(0x7);
      return;
    }
    this.pick().open(stream, stream.headerBlock);
  }

  /**
   * The connection for a new stream: the first with room; else a new one while fewer than
   * `maxConnections` are usable; else the least loaded (the stream waits there for a slot).
   */
  private pick(): H2StreamTable {
    let least: H2StreamTable | undefined;
    let usable = 0;
    for (const connection of this.connections) {
      if (!connection.usable) continue;
      usable += 1;
      if (connection.hasRoom) return connection;
      if (least === undefined || connection.load < least.load) least = connection;
    }
    if (least !== undefined && usable >= this.options.maxConnections) return least;
    // Before any connection has told us the endpoint's limit, the one whose SETTINGS have not
    // come yet takes the burst: its real room is known only then, and what does not fit comes
    // back here (`overflow`) to go elsewhere. Once a limit is known, a new connection takes only
    // that many (the loop above sees it full) and the next one opens at once: under load a
    // connection's SETTINGS can take long to come, and a burst queued behind one connection at a
    // time would wait for each in turn (docs/PERFORMANCE.md). A limit of 0 (a server refusing
    // streams for now) opens no more connections than before.
    if ((this.learnedMaxStreams ?? 0) === 0) {
      const pending = this.connections.find((c) => c.usable && !c.settingsSeen);
      if (pending !== undefined) return pending;
    }
    const created = new H2Connection(
      {
        ...this.options,
        keepaliveMs: this.keepaliveMs,
        ...(this.learnedMaxStreams !== undefined ? { assumedMaxStreams: this.learnedMaxStreams } : {}),
      },
      this.events,
    );
    this.live.add(created);
    this.connections.push(created);
    return created;
  }

  private forget(connection: H2StreamTable): void {
    this.live.delete(connection);
    const at = this.connections.indexOf(connection);
    if (at >= 0) this.connections.splice(at, 1);
  }

  /** GOAWAY "too_many_pings": PINGs came faster than the server allows; halve their rate, as grpc clients do. */
  private backOff(): void {
    if (this.keepaliveMs <= 0) return;
    this.keepaliveMs *= 2;
    if (this.warnedPings) return;
    this.warnedPings = true;
    this.options.logger.warn(tooManyPingsWarning(this.options.url, this.keepaliveMs));
  }

  stats(): GrpcConnectionStats {
    let openStreams = 0;
    let waitingStreams = 0;
    for (const connection of this.live) {
      openStreams += connection.openStreams;
      waitingStreams += connection.waitingStreams;
    }
    const newest = this.connections[this.connections.length - 1];
    const max = newest?.peerMaxStreams;
    return {
      connections: this.live.size,
      openStreams,
      waitingStreams,
      refusedStreams: this.refusedStreams,
      peerMaxConcurrentStreams: max === undefined || max === Number.POSITIVE_INFINITY ? undefined : max,
      keepaliveMs: this.keepaliveMs,
    };
  }

  /** Drops every connection; their streams fail as a lost connection does. */
  close(): void {
    this.closed = true;
    for (const connection of [...this.live]) connection.destroy(undefined);
    this.connections.length = 0;
    this.live.clear();
  }
}

/** A request of this engine, ready to send: its encoded header block. */
interface PreparedBlock extends H2PreparedRequest {
  readonly block: Buffer;
}
