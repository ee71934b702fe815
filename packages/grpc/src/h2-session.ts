import { isIP, connect as netConnect, type Socket } from 'node:net';
import { type ConnectionOptions, type TLSSocket, connect as tlsConnect } from 'node:tls';
import HPACK from 'hpack';

/**
 * HTTP/2 for the streaming calls, framed in JavaScript on a `node:net` / `node:tls` socket.
 *
 * `node:http2` calls into JavaScript once per frame (an nghttp2 callback, a `Readable` push and a
 * `data` event per streamed token); here every frame of one socket read is handled in one loop,
 * which halves the client's CPU per token (docs/PERFORMANCE.md, "Where it stands"). It is a
 * client of the protocol's core only, which is what gRPC uses: no server push (refused in our
 * SETTINGS), no priorities, no upgrade from HTTP/1.1 (prior knowledge on `http://`, ALPN `h2` on
 * `https://`). Header blocks are decoded with the `hpack` package; ours are sent as literals
 * without indexing, so the peer's table size never matters.
 */

// Frame types and flags (RFC 9113, section 6).
const DATA = 0x0;
const HEADERS = 0x1;
const RST_STREAM = 0x3;
const SETTINGS = 0x4;
const PUSH_PROMISE = 0x5;
const PING = 0x6;
const GOAWAY = 0x7;
const WINDOW_UPDATE = 0x8;
const CONTINUATION = 0x9;
const END_STREAM = 0x1;
const ACK = 0x1;
const END_HEADERS = 0x4;
const PADDED = 0x8;
const PRIORITY = 0x20;

// SETTINGS parameters.
const SETTINGS_HEADER_TABLE_SIZE = 0x1;
const SETTINGS_ENABLE_PUSH = 0x2;
const SETTINGS_MAX_CONCURRENT_STREAMS = 0x3;
const SETTINGS_INITIAL_WINDOW_SIZE = 0x4;
const SETTINGS_MAX_FRAME_SIZE = 0x5;

// Error codes.
export const H2_NO_ERROR = 0x0;
const PROTOCOL_ERROR = 0x1;
const FLOW_CONTROL_ERROR = 0x3;
const FRAME_SIZE_ERROR = 0x6;
export const H2_REFUSED_STREAM = 0x7;
export const H2_CANCEL = 0x8;
const COMPRESSION_ERROR = 0x9;

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
const FRAME_HEADER = 9;
const DEFAULT_WINDOW = 65_535;
const MAX_WINDOW = 0x7fffffff;
const DEFAULT_MAX_FRAME = 16_384;
const MAX_STREAM_ID = 0x7fffffff;
// Each stream may run this far ahead of its reader: HTTP/2's default, as with node:http2, so a
// paused stream holds the server back after 64 KiB.
const STREAM_WINDOW = DEFAULT_WINDOW;
// Stream windows are topped up once half is used: one WINDOW_UPDATE per 32 KiB read.
const STREAM_UPDATE_AT = STREAM_WINDOW >>> 1;
// The connection window only bounds the sum of the stream windows, which bound memory already: it
// is opened wide once and topped up as data arrives.
const CONNECTION_UPDATE_AT = 1 << 30;

/** What a stream reports to the call that owns it; every method runs inside the socket's read. */
export interface H2StreamOwner {
  /** The response headers (for a trailers-only answer, the only headers). */
  headersArrived(headers: H2Headers): void;
  /** The trailers, which end the stream. */
  trailersArrived(trailers: H2Headers): void;
  dataArrived(chunk: Buffer): void;
  /** The stream ended: `undefined` after the server's END_STREAM, its error code after a reset. */
  closed(rstCode: number | undefined): void;
  /** The connection failed under the stream (socket error, TLS, keepalive timeout). */
  streamFailed(err: unknown): void;
}

/** Decoded header fields by lowercase name; a repeated name's values are joined with ", ". */
export type H2Headers = Readonly<Record<string, string | undefined>>;

/** Where and how to connect. */
export interface H2SessionOptions {
  readonly url: URL;
  /** Options of `tls.connect` for an `https://` URL (certificates, server name). */
  readonly tls?: ConnectionOptions;
  /** PING interval while streams are open, in milliseconds; 0 for none. */
  readonly keepaliveMs: number;
  /** How long a PING may go unanswered before the connection is given up, in milliseconds. */
  readonly keepaliveTimeoutMs: number;
}

/**
 * The streaming calls' connection of one transport: opened on first use, opened again after it
 * was lost or the server sent GOAWAY (streams already running on the old one finish there).
 */
export class H2Sessions {
  private connection: H2Connection | undefined;
  /** Every connection not closed yet: the current one and those finishing their streams after GOAWAY. */
  private readonly live = new Set<H2Connection>();
  private closed = false;

  constructor(private readonly options: H2SessionOptions) {}

  /** Opens a stream with the encoded request `headers` (see {@link encodeHeaderBlock}). */
  open(headers: Buffer, owner: H2StreamOwner): H2Stream {
    if (this.closed) throw new Error('the HTTP/2 session is closed');
    let connection = this.connection;
    if (connection === undefined || !connection.usable) {
      const created = new H2Connection(this.options, () => this.live.delete(created));
      this.live.add(created);
      connection = created;
      this.connection = connection;
    }
    return connection.open(headers, owner);
  }

  /** Drops every connection; their streams fail as a lost connection does. */
  close(): void {
    this.closed = true;
    this.connection = undefined;
    for (const connection of [...this.live]) connection.destroy(undefined);
    this.live.clear();
  }
}

/** One stream of a connection, as the call that owns it drives it. */
export class H2Stream {
  /** Request bytes not yet sent (flow control), and whether END_STREAM follows them. */
  private queue: Buffer[] = [];
  private ending = false;
  /** @internal END_STREAM went out. */
  endSent = false;
  sendWindow: number;
  private unacked = 0;
  private paused = false;
  /** The response headers came (the next HEADERS are trailers). */
  headersSeen = false;
  done = false;

  constructor(
    readonly id: number,
    readonly owner: H2StreamOwner,
    private readonly connection: H2Connection,
    initialWindow: number,
  ) {
    this.sendWindow = initialWindow;
  }

  /** Sends request bytes (DATA), as far as flow control allows now, the rest when it allows. */
  write(bytes: Buffer): void {
    if (this.done || this.ending) return;
    this.queue.push(bytes);
    this.connection.flush(this);
  }

  /** Half-closes: END_STREAM after the bytes already written. */
  end(): void {
    if (this.done || this.ending) return;
    this.ending = true;
    this.connection.flush(this);
  }

  /** Resets the stream (RST_STREAM CANCEL); its owner hears nothing more. */
  cancel(): void {
    if (this.done) return;
    this.connection.reset(this, H2_CANCEL);
  }

  /** Stops opening the stream's window: the server stops once 64 KiB are unread. */
  pause(): void {
    this.paused = true;
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    if (this.unacked > 0) this.acknowledge();
  }

  /** @internal Counts received DATA bytes against the window; tops it up unless paused. */
  received(bytes: number): void {
    this.unacked += bytes;
    if (!this.paused && this.unacked >= STREAM_UPDATE_AT) this.acknowledge();
  }

  private acknowledge(): void {
    const n = this.unacked;
    this.unacked = 0;
    if (!this.done && !this.endReceived) this.connection.windowUpdate(this.id, n);
  }

  /** @internal The server ended its side. */
  endReceived = false;

  /** @internal The next piece of request bytes that fits in `room`, or undefined. */
  take(room: number): { bytes: Buffer; last: boolean } | undefined {
    if (this.endSent) return undefined;
    if (this.queue.length === 0) {
      if (!this.ending) return undefined;
      this.endSent = true;
      return { bytes: EMPTY, last: true };
    }
    const head = this.queue[0]!;
    if (room <= 0 && head.length > 0) return undefined;
    let bytes = head;
    if (head.length > room) {
      bytes = head.subarray(0, room);
      this.queue[0] = head.subarray(room);
    } else this.queue.shift();
    const last = this.ending && this.queue.length === 0;
    if (last) this.endSent = true;
    return { bytes, last };
  }

  /** @internal Whether request bytes wait for window. */
  get blocked(): boolean {
    return !this.endSent && (this.queue.length > 0 || this.ending);
  }
}

const EMPTY = Buffer.alloc(0);

/** One HTTP/2 connection: the socket, the frames both ways, flow control, keepalive, GOAWAY. */
class H2Connection {
  private readonly socket: Socket;
  private readonly streams = new Map<number, H2Stream>();
  private readonly decoder = new HPACK();
  private nextStreamId = 1;
  /** Streams waiting for the server's MAX_CONCURRENT_STREAMS to allow them. */
  private readonly waiting: { stream: H2Stream; headers: Buffer }[] = [];
  private peerInitialWindow = DEFAULT_WINDOW;
  private peerMaxFrame = DEFAULT_MAX_FRAME;
  private peerMaxStreams = Number.POSITIVE_INFINITY;
  private sendWindow = DEFAULT_WINDOW;
  private unackedBytes = 0;
  private unread: Buffer | undefined;
  /** A header block split over CONTINUATION frames. */
  private block: { streamId: number; endStream: boolean; parts: Buffer[] } | undefined;
  private goaway = false;
  private dead = false;
  private failure: unknown;
  private pingTimer: ReturnType<typeof setInterval> | undefined;
  private pingDeadline: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly options: H2SessionOptions,
    private readonly onGone: () => void,
  ) {
    const { url } = options;
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    // URL brackets IPv6 literals; sockets want them bare.
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    if (url.protocol === 'https:') {
      const tls: TLSSocket = tlsConnect({
        host,
        port,
        ALPNProtocols: ['h2'],
        ...(isIP(host) === 0 ? { servername: host } : {}),
        ...options.tls,
      });
      tls.once('secureConnect', () => {
        if (tls.alpnProtocol !== 'h2') {
          const err = Object.assign(new Error('the server does not speak HTTP/2 over TLS (ALPN h2)'), {
            code: 'ERR_HTTP2_SESSION_ERROR',
          });
          this.destroy(err);
        }
      });
      this.socket = tls;
    } else {
      this.socket = netConnect({ host, port });
    }
    const socket = this.socket;
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (err) => {
      this.failure ??= err;
    });
    socket.on('close', () => this.onClose());
    // Writes before the connection is up wait in the socket, in order.
    socket.write(
      Buffer.concat([
        PREFACE,
        settingsFrame([
          [SETTINGS_ENABLE_PUSH, 0],
          [SETTINGS_INITIAL_WINDOW_SIZE, STREAM_WINDOW],
        ]),
        frame(WINDOW_UPDATE, 0, 0, uint32(MAX_WINDOW - DEFAULT_WINDOW)),
      ]),
    );
  }

  /** Whether new streams may start here. */
  get usable(): boolean {
    return !this.dead && !this.goaway && this.nextStreamId <= MAX_STREAM_ID;
  }

  open(headers: Buffer, owner: H2StreamOwner): H2Stream {
    const id = this.nextStreamId;
    this.nextStreamId += 2;
    const stream = new H2Stream(id, owner, this, this.peerInitialWindow);
    // Streams start in the order of their ids: behind any that wait already.
    if (this.streams.size >= this.peerMaxStreams || this.waiting.length > 0) {
      this.waiting.push({ stream, headers });
      return stream;
    }
    this.start(stream, headers);
    return stream;
  }

  private start(stream: H2Stream, headers: Buffer): void {
    this.streams.set(stream.id, stream);
    this.socket.write(headerFrames(stream.id, headers, this.peerMaxFrame));
    if (this.streams.size === 1) this.startPings();
    if (stream.blocked) this.flush(stream);
  }

  /** Sends what `stream` has queued, as far as both windows allow. */
  flush(stream: H2Stream): void {
    // A stream still waiting to start is sent when it does; a dead connection sends nothing.
    if (this.dead || !this.streams.has(stream.id)) return;
    for (;;) {
      const room = Math.min(stream.sendWindow, this.sendWindow, this.peerMaxFrame);
      const piece = stream.take(room);
      if (piece === undefined) return;
      const n = piece.bytes.length;
      stream.sendWindow -= n;
      this.sendWindow -= n;
      this.socket.write(frame(DATA, piece.last ? END_STREAM : 0, stream.id, piece.bytes));
      if (piece.last) return;
    }
  }

  windowUpdate(streamId: number, increment: number): void {
    if (!this.dead) this.socket.write(frame(WINDOW_UPDATE, 0, streamId, uint32(increment)));
  }

  reset(stream: H2Stream, code: number): void {
    const started = this.streams.has(stream.id);
    this.forget(stream);
    // A stream still waiting for MAX_CONCURRENT_STREAMS was never sent: resetting it would be an error.
    if (started && !this.dead) this.socket.write(frame(RST_STREAM, 0, stream.id, uint32(code)));
  }

  /** Ends the connection; open streams hear `err` (a failure) or a lost connection (undefined). */
  destroy(err: unknown): void {
    if (err !== undefined) this.failure ??= err;
    this.dead = true;
    this.stopPings();
    this.socket.destroy();
    // 'close' follows and fails the streams.
  }

  private forget(stream: H2Stream): void {
    if (stream.done) return;
    stream.done = true;
    if (!this.streams.delete(stream.id)) return; // It was still waiting; start() skips it.
    this.startWaiting();
    if (this.streams.size === 0) {
      this.stopPings();
      // After GOAWAY the connection only serves the streams it had; the last one closes it.
      if (this.goaway) this.destroy(undefined);
    }
  }

  private onClose(): void {
    this.dead = true;
    this.onGone();
    this.stopPings();
    const err = this.failure;
    const streams = [...this.streams.values(), ...this.waiting.map((w) => w.stream)];
    this.streams.clear();
    this.waiting.length = 0;
    for (const stream of streams) {
      if (stream.done) continue;
      stream.done = true;
      if (err !== undefined) stream.owner.streamFailed(err);
      else stream.owner.closed(undefined);
    }
  }

  private onData(chunk: Buffer): void {
    const buf = this.unread === undefined ? chunk : Buffer.concat([this.unread, chunk]);
    this.unread = undefined;
    // What the frames of this read make us write (window updates, the owners' half-closes and
    // resets) leaves in one write.
    this.socket.cork();
    try {
      let at = 0;
      while (buf.length - at >= FRAME_HEADER) {
        const length = (buf[at]! << 16) | (buf[at + 1]! << 8) | buf[at + 2]!;
        const end = at + FRAME_HEADER + length;
        if (end > buf.length) break;
        const type = buf[at + 3]!;
        const flags = buf[at + 4]!;
        const streamId = buf.readUInt32BE(at + 5) & MAX_STREAM_ID;
        this.onFrame(type, flags, streamId, buf, at + FRAME_HEADER, end);
        if (this.dead) return;
        at = end;
      }
      if (at < buf.length) this.unread = buf.subarray(at);
    } catch (err) {
      this.protocolError(err instanceof H2Error ? err.code : PROTOCOL_ERROR, err);
    } finally {
      this.socket.uncork();
    }
  }

  private onFrame(
    type: number,
    flags: number,
    streamId: number,
    buf: Buffer,
    start: number,
    end: number,
  ): void {
    if (this.block !== undefined && type !== CONTINUATION) {
      throw new H2Error(PROTOCOL_ERROR, 'a header block was interrupted');
    }
    switch (type) {
      case DATA: {
        const length = end - start;
        this.connectionReceived(length);
        const stream = this.streams.get(streamId);
        if (stream === undefined) return; // Reset by us; its data is counted and dropped.
        const [from, to] = unpad(flags, buf, start, end);
        stream.received(length);
        if (to > from) stream.owner.dataArrived(buf.subarray(from, to));
        if ((flags & END_STREAM) !== 0) this.ended(stream);
        return;
      }
      case HEADERS: {
        let [from, to] = unpad(flags, buf, start, end);
        if ((flags & PRIORITY) !== 0) from += 5;
        if (from > to) throw new H2Error(FRAME_SIZE_ERROR, 'HEADERS frame too short');
        const part = buf.subarray(from, to);
        const endStream = (flags & END_STREAM) !== 0;
        if ((flags & END_HEADERS) !== 0) this.headerBlock(streamId, endStream, part);
        else this.block = { streamId, endStream, parts: [Buffer.from(part)] };
        return;
      }
      case CONTINUATION: {
        const block = this.block;
        if (block === undefined || block.streamId !== streamId) {
          throw new H2Error(PROTOCOL_ERROR, 'an unexpected CONTINUATION frame');
        }
        block.parts.push(Buffer.from(buf.subarray(start, end)));
        if ((flags & END_HEADERS) !== 0) {
          this.block = undefined;
          this.headerBlock(streamId, block.endStream, Buffer.concat(block.parts));
        }
        return;
      }
      case RST_STREAM: {
        if (end - start !== 4) throw new H2Error(FRAME_SIZE_ERROR, 'RST_STREAM frame of the wrong size');
        const stream = this.streams.get(streamId);
        if (stream === undefined) return;
        this.forget(stream);
        stream.owner.closed(buf.readUInt32BE(start));
        return;
      }
      case SETTINGS:
        if ((flags & ACK) === 0) this.settings(buf, start, end);
        return;
      case PING:
        if (end - start !== 8) throw new H2Error(FRAME_SIZE_ERROR, 'PING frame of the wrong size');
        if ((flags & ACK) !== 0) {
          if (this.pingDeadline !== undefined) clearTimeout(this.pingDeadline);
          this.pingDeadline = undefined;
        } else this.socket.write(frame(PING, ACK, 0, buf.subarray(start, end)));
        return;
      case GOAWAY:
        this.onGoaway(buf.readUInt32BE(start) & MAX_STREAM_ID, buf.readUInt32BE(start + 4));
        return;
      case WINDOW_UPDATE:
        this.onWindowUpdate(streamId, buf.readUInt32BE(start) & MAX_WINDOW);
        return;
      case PUSH_PROMISE:
        throw new H2Error(PROTOCOL_ERROR, 'PUSH_PROMISE after SETTINGS_ENABLE_PUSH 0');
      default:
      // PRIORITY and unknown frame types are ignored (RFC 9113, 4.1 and 5.5).
    }
  }

  private headerBlock(streamId: number, endStream: boolean, block: Buffer): void {
    // Decoded even for a stream we reset: the decoder's table must follow every block.
    let fields: [string, string][];
    try {
      fields = this.decoder.decode(block);
    } catch (err) {
      throw new H2Error(COMPRESSION_ERROR, `a header block cannot be decoded: ${String(err)}`);
    }
    const stream = this.streams.get(streamId);
    if (stream === undefined) return;
    const headers: Record<string, string> = {};
    for (const [name, value] of fields) {
      const before = headers[name];
      headers[name] = before === undefined ? value : `${before}, ${value}`;
    }
    const status = headers[':status'];
    // Informational (1xx) headers come before the real ones.
    if (!stream.headersSeen && status !== undefined && status.startsWith('1') && !endStream) return;
    if (stream.headersSeen) stream.owner.trailersArrived(headers);
    else {
      stream.headersSeen = true;
      stream.owner.headersArrived(headers);
    }
    if (endStream && !stream.done) this.ended(stream);
  }

  /** The server ended its side of `stream`: the call is over (ours ended before, or is moot). */
  private ended(stream: H2Stream): void {
    stream.endReceived = true;
    // Our side still open (the server answered before the request ended): RST_STREAM NO_ERROR
    // closes it, so the server does not keep a half-closed stream.
    if (!stream.endSent) this.reset(stream, H2_NO_ERROR);
    else this.forget(stream);
    stream.owner.closed(undefined);
  }

  private settings(buf: Buffer, start: number, end: number): void {
    if ((end - start) % 6 !== 0) throw new H2Error(FRAME_SIZE_ERROR, 'SETTINGS frame of the wrong size');
    for (let at = start; at < end; at += 6) {
      const id = buf.readUInt16BE(at);
      const value = buf.readUInt32BE(at + 2);
      if (id === SETTINGS_INITIAL_WINDOW_SIZE) {
        if (value > MAX_WINDOW) throw new H2Error(FLOW_CONTROL_ERROR, 'initial window too large');
        const delta = value - this.peerInitialWindow;
        this.peerInitialWindow = value;
        for (const stream of this.streams.values()) stream.sendWindow += delta;
      } else if (id === SETTINGS_MAX_FRAME_SIZE) {
        if (value < DEFAULT_MAX_FRAME || value > 0xffffff) {
          throw new H2Error(PROTOCOL_ERROR, `max frame size ${value}`);
        }
        this.peerMaxFrame = value;
      } else if (id === SETTINGS_MAX_CONCURRENT_STREAMS) this.peerMaxStreams = value;
      // SETTINGS_HEADER_TABLE_SIZE limits the table of the peer's decoder, which our literals never use.
      else if (id === SETTINGS_HEADER_TABLE_SIZE) continue;
    }
    this.socket.write(frame(SETTINGS, ACK, 0, EMPTY));
    for (const stream of this.streams.values()) if (stream.blocked) this.flush(stream);
    this.startWaiting();
  }

  /** Starts waiting streams, in order, as far as MAX_CONCURRENT_STREAMS allows. */
  private startWaiting(): void {
    while (!this.goaway && !this.dead && this.waiting.length > 0 && this.streams.size < this.peerMaxStreams) {
      const next = this.waiting.shift()!;
      if (!next.stream.done) this.start(next.stream, next.headers);
    }
  }

  private onWindowUpdate(streamId: number, increment: number): void {
    if (streamId === 0) {
      this.sendWindow += increment;
      for (const stream of this.streams.values()) if (stream.blocked) this.flush(stream);
      return;
    }
    const stream = this.streams.get(streamId);
    if (stream === undefined) return;
    stream.sendWindow += increment;
    if (stream.blocked) this.flush(stream);
  }

  private onGoaway(lastStreamId: number, code: number): void {
    this.goaway = true;
    // Streams the server never saw can safely go elsewhere: they are refused, which is retryable.
    for (const { stream } of this.waiting.splice(0)) {
      if (stream.done) continue;
      stream.done = true;
      stream.owner.closed(H2_REFUSED_STREAM);
    }
    for (const stream of [...this.streams.values()]) {
      if (stream.id <= lastStreamId) continue;
      this.forget(stream);
      stream.owner.closed(H2_REFUSED_STREAM);
    }
    if (code !== H2_NO_ERROR) this.failure ??= goawayError(code);
    if (this.streams.size === 0) this.destroy(undefined);
  }

  private connectionReceived(bytes: number): void {
    this.unackedBytes += bytes;
    if (this.unackedBytes >= CONNECTION_UPDATE_AT) {
      this.socket.write(frame(WINDOW_UPDATE, 0, 0, uint32(this.unackedBytes)));
      this.unackedBytes = 0;
    }
  }

  private protocolError(code: number, err: unknown): void {
    if (this.dead) return;
    this.socket.write(frame(GOAWAY, 0, 0, Buffer.concat([uint32(0), uint32(code)])));
    this.destroy(err);
  }

  private startPings(): void {
    const { keepaliveMs: every, keepaliveTimeoutMs } = this.options;
    if (every <= 0 || this.pingTimer !== undefined) return;
    this.pingTimer = setInterval(() => {
      if (this.pingDeadline !== undefined) return; // The last one is still unanswered.
      this.socket.write(frame(PING, 0, 0, Buffer.alloc(8)));
      this.pingDeadline = setTimeout(() => {
        this.destroy(
          Object.assign(new Error(`no answer to a keepalive PING within ${keepaliveTimeoutMs} ms`), {
            code: 'ETIMEDOUT',
          }),
        );
      }, keepaliveTimeoutMs);
      this.pingDeadline.unref();
    }, every);
    this.pingTimer.unref();
  }

  private stopPings(): void {
    if (this.pingTimer !== undefined) clearInterval(this.pingTimer);
    if (this.pingDeadline !== undefined) clearTimeout(this.pingDeadline);
    this.pingTimer = undefined;
    this.pingDeadline = undefined;
  }
}

/** A connection-level protocol failure, with the HTTP/2 error code to send in GOAWAY. */
class H2Error extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

function goawayError(code: number): Error {
  return Object.assign(
    new Error(`the server ended the connection (GOAWAY, HTTP/2 error 0x${code.toString(16)})`),
    {
      code: 'ERR_HTTP2_GOAWAY_SESSION',
    },
  );
}

/** A frame's payload bounds without its padding. */
function unpad(flags: number, buf: Buffer, start: number, end: number): [number, number] {
  if ((flags & PADDED) === 0) return [start, end];
  const padding = buf[start]!;
  if (padding >= end - start) throw new H2Error(PROTOCOL_ERROR, 'padding longer than the frame');
  return [start + 1, end - padding];
}

function frame(type: number, flags: number, streamId: number, payload: Buffer): Buffer {
  const out = Buffer.allocUnsafe(FRAME_HEADER + payload.length);
  out[0] = (payload.length >>> 16) & 0xff;
  out[1] = (payload.length >>> 8) & 0xff;
  out[2] = payload.length & 0xff;
  out[3] = type;
  out[4] = flags;
  out.writeUInt32BE(streamId, 5);
  payload.copy(out, FRAME_HEADER);
  return out;
}

/** HEADERS, and CONTINUATION frames for a block larger than the peer's frame size. */
function headerFrames(streamId: number, block: Buffer, maxFrame: number): Buffer {
  if (block.length <= maxFrame) return frame(HEADERS, END_HEADERS, streamId, block);
  const frames: Buffer[] = [];
  for (let at = 0; at < block.length; at += maxFrame) {
    const part = block.subarray(at, at + maxFrame);
    const last = at + maxFrame >= block.length;
    frames.push(frame(at === 0 ? HEADERS : CONTINUATION, last ? END_HEADERS : 0, streamId, part));
  }
  return Buffer.concat(frames);
}

function settingsFrame(entries: readonly [number, number][]): Buffer {
  const payload = Buffer.allocUnsafe(entries.length * 6);
  entries.forEach(([id, value], i) => {
    payload.writeUInt16BE(id, i * 6);
    payload.writeUInt32BE(value, i * 6 + 2);
  });
  return frame(SETTINGS, 0, 0, payload);
}

function uint32(value: number): Buffer {
  const out = Buffer.allocUnsafe(4);
  out.writeUInt32BE(value, 0);
  return out;
}

/**
 * A request's header block: `:method POST`, `:scheme`, `:path`, `:authority`, then `fields`
 * (lowercase names), each as an HPACK literal without indexing (RFC 7541, 6.2.2).
 */
export function encodeHeaderBlock(
  url: URL,
  path: string,
  fields: Readonly<Record<string, string | number | readonly string[] | undefined>>,
): Buffer {
  const parts: Buffer[] = [];
  const add = (name: string, value: string) => {
    const n = Buffer.from(name, 'latin1');
    const v = Buffer.from(value, 'latin1');
    parts.push(Buffer.of(0), hpackInteger(n.length, 7), n, hpackInteger(v.length, 7), v);
  };
  add(':method', 'POST');
  add(':scheme', url.protocol === 'https:' ? 'https' : 'http');
  add(':path', path);
  add(':authority', url.host);
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) add(name, String(v));
    else add(name, String(value));
  }
  return Buffer.concat(parts);
}

/** An HPACK integer with an `n`-bit prefix (RFC 7541, 5.1); the prefix's other bits are 0. */
function hpackInteger(value: number, n: number): Buffer {
  const max = (1 << n) - 1;
  if (value < max) return Buffer.of(value);
  const bytes = [max];
  let rest = value - max;
  while (rest >= 128) {
    bytes.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  bytes.push(rest);
  return Buffer.from(bytes);
}
