import type { Socket } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import { TritonLlmError } from '@trtllm/sdk';
import {
  connectionLost,
  goawayError,
  H2Violation,
  NO_ALPN_H2,
  noAlpnH2,
  notGrpcEndpoint,
  violation,
  violationError,
} from './errors.js';
import { H2FrameReader, unpad } from './frame-reader.js';
import {
  ACK,
  CONTINUATION,
  DATA,
  DEFAULT_MAX_FRAME,
  DEFAULT_WINDOW,
  END_HEADERS,
  END_STREAM,
  frame,
  GOAWAY,
  goawayFrame,
  H2_CANCEL,
  H2_ENHANCE_YOUR_CALM,
  H2_FLOW_CONTROL_ERROR,
  H2_FRAME_SIZE_ERROR,
  H2_INTERNAL_ERROR,
  H2_NO_ERROR,
  H2_REFUSED_STREAM,
  HEADERS,
  headerFrames,
  MAX_STREAM_ID,
  MAX_WINDOW,
  PING,
  PREFACE,
  PRIORITY_FLAG,
  PRIORITY_FRAME,
  PUSH_PROMISE,
  RST_STREAM,
  SETTINGS,
  SETTINGS_ENABLE_PUSH,
  SETTINGS_INITIAL_WINDOW_SIZE,
  SETTINGS_MAX_CONCURRENT_STREAMS,
  SETTINGS_MAX_FRAME_SIZE,
  SETTINGS_MAX_HEADER_LIST_SIZE,
  settingsFrame,
  uint32,
  WINDOW_UPDATE,
} from './frames.js';
import { type HeaderBlock, HeaderBlocks } from './header-blocks.js';
import { Keepalive } from './keepalive.js';
import { openSocket } from './socket.js';
import type { H2Stream, H2StreamHost } from './stream.js';

// What we advertise, and so what bounds the memory a peer can make us hold:
// - frames up to the protocol's minimum size (a larger one is refused on its 9-byte header);
const MAX_FRAME_IN = DEFAULT_MAX_FRAME;
// - each stream may run 64 KiB ahead of its reader (HTTP/2's default, as with node:http2), so a
//   paused stream holds the server back; windows are topped up once half is used;
const STREAM_WINDOW = DEFAULT_WINDOW;
const STREAM_UPDATE_AT = STREAM_WINDOW >>> 1;
// - the connection window only bounds the sum of the stream windows, which bound memory already:
//   it is opened wide once and topped up as data arrives;
const CONNECTION_UPDATE_AT = 1 << 30;
// - a header block (compressed while it arrives, and decoded) of at most 64 KiB: Triton's are a
//   few hundred bytes; grpc-message of a long error fits many times over;
export const MAX_HEADER_LIST = 64 * 1024;
// - the HPACK table of our decoder: the protocol's default, so nothing needs to be sent for it.
const HEADER_TABLE = 4096;
// Until the peer's SETTINGS say otherwise (see H2ConnectionOptions.assumedMaxStreams).
const ASSUMED_MAX_STREAMS = 100;
// Control frames we answer (PING and SETTINGS acknowledgements) while the peer reads nothing back
// pile up in the socket: past this, the peer is flooding us.
const MAX_UNSENT_BYTES = 16 * 1024 * 1024;
// A refused stream starts again at most this often before the refusal is the caller's to see.
const MAX_RESTARTS = 8;
// How long a refused stream waits when no other stream of its connection can end first.
const REFUSED_RETRY_MS = 10;

/** Where and how to connect. */
export interface H2ConnectionOptions {
  readonly url: URL;
  /** Options of `tls.connect` for an `https://` URL (certificates, server name). */
  readonly tls?: ConnectionOptions;
  /** PING after this long without a frame from the peer while streams are open, in ms; 0 for none. */
  readonly keepaliveMs: number;
  /** How long a PING may go unanswered before the connection is given up, in milliseconds. */
  readonly keepaliveTimeoutMs: number;
  /**
   * Streams started before the server's SETTINGS say how many it takes: what an earlier
   * connection to the endpoint learned, else 100, as grpc clients assume (a burst on a fresh
   * connection stays under common limits: HAProxy 100, nginx 128, instead of being refused).
   */
  readonly assumedMaxStreams?: number;
}

/** What the connection tells the pool that owns it. */
export interface H2ConnectionEvents {
  /** The connection closed: it takes no streams and is forgotten. */
  gone(connection: H2Connection): void;
  /** Streams the server never processed (past a GOAWAY's last stream id): start them elsewhere. */
  unprocessed(streams: H2Stream[]): void;
  /**
   * Streams that waited here for the server's SETTINGS and found no room under its
   * MAX_CONCURRENT_STREAMS: the pool may start them on another connection.
   */
  overflow(streams: H2Stream[]): void;
  /** GOAWAY ENHANCE_YOUR_CALM "too_many_pings": our PINGs came faster than the server allows. */
  tooManyPings(): void;
  /** A stream was refused (it waits to start again): for the stats. */
  refused(): void;
  /** The peer's first SETTINGS came: it speaks HTTP/2. */
  ready(connection: H2Connection): void;
}

/** One HTTP/2 connection: the socket, the frames both ways, flow control, keepalive, GOAWAY. */
export class H2Connection implements H2StreamHost {
  private readonly socket: Socket;
  private readonly streams = new Map<number, H2Stream>();
  private readonly blocks = new HeaderBlocks(MAX_HEADER_LIST, HEADER_TABLE);
  private readonly reader: H2FrameReader;
  private readonly keepalive: Keepalive;
  private nextStreamId = 1;
  /** Streams waiting for the server's MAX_CONCURRENT_STREAMS to allow them, in order. */
  private readonly waiting: H2Stream[] = [];
  private peerInitialWindow = DEFAULT_WINDOW;
  private peerMaxFrame = DEFAULT_MAX_FRAME;
  /** @internal */
  peerMaxStreams: number;
  /** @internal Whether the peer's first SETTINGS came. */
  settingsSeen = false;
  private sendWindow = DEFAULT_WINDOW;
  private recvWindow = MAX_WINDOW;
  private unackedBytes = 0;
  private goaway = false;
  private dead = false;
  private failure: unknown;
  private closing = false;
  private startScheduled = false;

  constructor(
    private readonly options: H2ConnectionOptions,
    private readonly events: H2ConnectionEvents,
  ) {
    const { url } = options;
    this.peerMaxStreams = options.assumedMaxStreams ?? ASSUMED_MAX_STREAMS;
    this.reader = new H2FrameReader(url, MAX_FRAME_IN);
    this.keepalive = new Keepalive(
      options.keepaliveMs,
      options.keepaliveTimeoutMs,
      () => this.socket.write(frame(PING, 0, 0, Buffer.alloc(8))),
      (timeoutMs) =>
        this.destroy(connectionLost(url, `no answer to a keepalive PING within ${timeoutMs} ms`)),
    );
    this.socket = openSocket(url, options.tls, (err) => this.destroy(err));
    const socket = this.socket;
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (err) => {
      this.failure ??= noAlpnH2(err) ? notGrpcEndpoint(url, NO_ALPN_H2) : err;
    });
    socket.on('close', () => this.onClose());
    // Writes before the connection is up wait in the socket, in order.
    socket.write(
      Buffer.concat([
        PREFACE,
        settingsFrame([
          [SETTINGS_ENABLE_PUSH, 0],
          [SETTINGS_INITIAL_WINDOW_SIZE, STREAM_WINDOW],
          [SETTINGS_MAX_HEADER_LIST_SIZE, MAX_HEADER_LIST],
        ]),
        frame(WINDOW_UPDATE, 0, 0, uint32(MAX_WINDOW - DEFAULT_WINDOW)),
      ]),
    );
  }

  /** Whether new streams may start here. */
  get usable(): boolean {
    return !this.dead && !this.goaway && this.nextStreamId <= MAX_STREAM_ID;
  }

  /** Streams running, and waiting for a slot. */
  get load(): number {
    return this.streams.size + this.waiting.length;
  }

  get openStreams(): number {
    return this.streams.size;
  }

  get waitingStreams(): number {
    return this.waiting.length;
  }

  /** Whether a new stream would start at once rather than wait. */
  get hasRoom(): boolean {
    return this.usable && this.waiting.length === 0 && this.streams.size < this.peerMaxStreams;
  }

  /** Starts `stream` here (or queues it behind the ones waiting for MAX_CONCURRENT_STREAMS). */
  open(stream: H2Stream, headers: Buffer): void {
    stream.host = this;
    stream.headerBlock = headers;
    if (this.streams.size >= this.peerMaxStreams || this.waiting.length > 0) {
      this.waiting.push(stream);
      return;
    }
    this.start(stream);
  }

  private start(stream: H2Stream): void {
    const id = this.nextStreamId;
    this.nextStreamId += 2;
    stream.id = id;
    stream.sendWindow = this.peerInitialWindow;
    stream.recvWindow = STREAM_WINDOW;
    this.streams.set(id, stream);
    this.socket.write(headerFrames(id, stream.headerBlock, this.peerMaxFrame));
    if (this.streams.size === 1) this.keepalive.start();
    if (stream.blocked) this.flush(stream);
  }

  /** Sends what `stream` has queued, as far as both windows allow. */
  flush(stream: H2Stream): void {
    // A stream still waiting to start is sent when it does; a dead connection sends nothing.
    if (this.dead || stream.id === 0 || this.streams.get(stream.id) !== stream) return;
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

  windowUpdate(stream: H2Stream, increment: number): void {
    if (this.dead || this.streams.get(stream.id) !== stream) return;
    stream.recvWindow += increment;
    this.socket.write(frame(WINDOW_UPDATE, 0, stream.id, uint32(increment)));
  }

  reset(stream: H2Stream, code: number): void {
    const started = stream.id !== 0 && this.streams.get(stream.id) === stream;
    this.forget(stream);
    // A stream still waiting for MAX_CONCURRENT_STREAMS was never sent: resetting it would be an error.
    if (started && !this.dead) this.socket.write(frame(RST_STREAM, 0, stream.id, uint32(code)));
  }

  /** Ends the connection; open streams hear `err` (a failure) or a lost connection (undefined). */
  destroy(err: unknown, goaway?: number): void {
    if (err !== undefined) this.failure ??= err;
    if (this.dead) return;
    this.dead = true;
    if (goaway === undefined) this.socket.destroy();
    else {
      // GOAWAY must leave before the socket closes (we may be inside a corked read); a peer that
      // does not read it is not waited for long.
      this.socket.uncork();
      this.socket.end(goawayFrame(0, goaway));
      setTimeout(() => this.socket.destroy(), 1_000).unref();
    }
    // The streams fail now, not when the peer closes its side too.
    this.closeStreams();
  }

  private forget(stream: H2Stream): void {
    if (stream.done) return;
    stream.done = true;
    if (stream.id === 0 || this.streams.get(stream.id) !== stream) {
      const at = this.waiting.indexOf(stream);
      if (at >= 0) this.waiting.splice(at, 1);
      return;
    }
    this.streams.delete(stream.id);
    if (this.waiting.length > 0) this.startWaitingSoon();
    if (this.streams.size === 0 && this.waiting.length === 0) {
      this.keepalive.stop();
      // After GOAWAY the connection only serves the streams it had; the last one closes it.
      if (this.goaway) this.destroy(undefined);
    }
  }

  private onClose(): void {
    this.dead = true;
    this.closeStreams();
  }

  /** Once, when the connection ends: the pool forgets it, and its streams hear why. */
  private closeStreams(): void {
    if (this.closing) return;
    this.closing = true;
    this.keepalive.stop();
    const err = this.closeError();
    this.events.gone(this);
    const streams = [...this.streams.values(), ...this.waiting];
    this.streams.clear();
    this.waiting.length = 0;
    for (const stream of streams) {
      if (stream.done) continue;
      stream.done = true;
      if (err !== undefined)
        try {
          stream.owner.streamFailed(err);
        } catch (err) {
          this.ownerThrew(stream, err);
        }
      else
        try {
          stream.owner.closed(undefined);
        } catch (err) {
          this.ownerThrew(stream, err);
        }
    }
  }

  /** Why the streams still open when the socket closed failed (undefined: closed by us, cleanly). */
  private closeError(): unknown {
    const err = this.failure;
    if (err !== undefined || this.settingsSeen) return err;
    // Closed before the server said anything in HTTP/2: name that, not only the socket's error.
    if (err === undefined && this.goaway) return undefined;
    return connectionLost(this.options.url, 'it closed before the server sent its HTTP/2 SETTINGS');
  }

  /**
   * What a stream owner's callback threw (a bug, or a user's hook further up) ends that stream
   * alone, never the connection or the process.
   */
  // Each call sits in its own try (no closure per call: data arrives once per token).
  private ownerThrew(stream: H2Stream, err: unknown): void {
    if (!stream.done) this.reset(stream, H2_CANCEL);
    try {
      stream.owner.streamFailed(err);
    } catch {
      // The owner failed twice over; the stream is gone either way and others must go on.
    }
  }

  private onData(chunk: Buffer): void {
    this.keepalive.received(Date.now());
    // What the frames of this read make us write (window updates, the owners' half-closes and
    // resets) leaves in one write.
    this.socket.cork();
    try {
      this.reader.push(chunk, this.onFrame, this.isDead);
    } catch (err) {
      this.fatal(err);
    } finally {
      this.socket.uncork();
    }
  }

  /** A violation found while reading, or a bug of ours: the connection cannot go on. */
  private fatal(err: unknown): void {
    if (this.dead) return;
    // The last stream id in our GOAWAY is 0: the server opens none (push is off).
    if (err instanceof H2Violation) this.destroy(violationError(this.options.url, err), err.h2Code);
    else if (err instanceof TritonLlmError) this.destroy(err);
    else this.destroy(err, H2_INTERNAL_ERROR);
  }

  private readonly isDead = (): boolean => this.dead;

  private readonly onFrame = (
    type: number,
    flags: number,
    streamId: number,
    buf: Buffer,
    start: number,
    end: number,
  ): void => {
    if (this.blocks.open && type !== CONTINUATION) {
      throw violation(`a header block was interrupted by a frame of type 0x${type.toString(16)}`);
    }
    if (!this.settingsSeen && type !== SETTINGS) throw violation('the first frame is not SETTINGS');
    switch (type) {
      case DATA:
        this.onDataFrame(flags, streamId, buf, start, end);
        return;
      case HEADERS:
        this.onHeaders(flags, streamId, buf, start, end);
        return;
      case CONTINUATION:
        this.onContinuation(flags, streamId, buf, start, end);
        return;
      case PRIORITY_FRAME:
        this.streamFrame(streamId, 'PRIORITY');
        if (end - start !== 5) throw violation('a PRIORITY frame is not 5 bytes long', H2_FRAME_SIZE_ERROR);
        return;
      case RST_STREAM:
        this.onReset(streamId, buf, start, end);
        return;
      case SETTINGS:
        this.onSettings(flags, streamId, buf, start, end);
        return;
      case PING:
        this.onPing(flags, streamId, buf, start, end);
        return;
      case GOAWAY:
        this.onGoaway(streamId, buf, start, end);
        return;
      case WINDOW_UPDATE:
        this.onWindowUpdate(streamId, buf, start, end);
        return;
      case PUSH_PROMISE:
        throw violation('PUSH_PROMISE after SETTINGS_ENABLE_PUSH 0');
      default:
      // Unknown frame types are ignored (RFC 9113, 4.1 and 5.5).
    }
  };

  /**
   * The stream a stream-level frame is for: undefined for one that is closed (reset by us, or
   * ended), a violation for stream 0 and for streams we never opened.
   */
  private streamFrame(streamId: number, what: string): H2Stream | undefined {
    if (streamId === 0) throw violation(`${what} on stream 0`);
    if (streamId % 2 === 0 || streamId >= this.nextStreamId) {
      throw violation(`${what} on stream ${streamId}, which this client never opened`);
    }
    return this.streams.get(streamId);
  }

  private connectionFrame(streamId: number, what: string): void {
    if (streamId !== 0) throw violation(`${what} on stream ${streamId} (it belongs to stream 0)`);
  }

  private onDataFrame(flags: number, streamId: number, buf: Buffer, start: number, end: number): void {
    const stream = this.streamFrame(streamId, 'DATA');
    const length = end - start;
    // Flow control counts the whole payload, padding included (RFC 9113, 6.9).
    this.recvWindow -= length;
    if (this.recvWindow < 0) {
      throw violation('DATA beyond the connection window', H2_FLOW_CONTROL_ERROR);
    }
    this.connectionReceived(length);
    const [from, to] = unpad(flags, buf, start, end);
    if (stream === undefined) return; // Reset by us: counted, then dropped.
    stream.recvWindow -= length;
    if (stream.recvWindow < 0) {
      throw violation(
        `DATA beyond the window of stream ${streamId} (${length} bytes with ${stream.recvWindow + length} left)`,
        H2_FLOW_CONTROL_ERROR,
      );
    }
    if (!stream.headersSeen) throw violation(`DATA before the response headers on stream ${streamId}`);
    stream.received(length, STREAM_UPDATE_AT);
    if (to > from)
      try {
        stream.owner.dataArrived(buf.subarray(from, to));
      } catch (err) {
        this.ownerThrew(stream, err);
      }
    if ((flags & END_STREAM) !== 0 && !stream.done) this.ended(stream);
  }

  private onHeaders(flags: number, streamId: number, buf: Buffer, start: number, end: number): void {
    this.streamFrame(streamId, 'HEADERS');
    let [from, to] = unpad(flags, buf, start, end);
    if ((flags & PRIORITY_FLAG) !== 0) from += 5;
    if (from > to) throw violation('a HEADERS frame too short for its flags', H2_FRAME_SIZE_ERROR);
    const fragment = buf.subarray(from, to);
    const endStream = (flags & END_STREAM) !== 0;
    const block = this.blocks.begin(streamId, endStream, (flags & END_HEADERS) !== 0, fragment);
    if (block !== undefined) this.headerBlock(block);
  }

  private onContinuation(flags: number, streamId: number, buf: Buffer, start: number, end: number): void {
    const block = this.blocks.continue(streamId, (flags & END_HEADERS) !== 0, buf.subarray(start, end));
    if (block !== undefined) this.headerBlock(block);
  }

  private headerBlock({ streamId, endStream, headers }: HeaderBlock): void {
    const stream = this.streams.get(streamId);
    if (stream === undefined) return;
    if (!stream.headersSeen) {
      // Informational (1xx) headers come before the real ones.
      if (headers[':status']?.startsWith('1') === true && !endStream) return;
      stream.headersSeen = true;
      stream.answered();
      try {
        stream.owner.headersArrived(headers);
      } catch (err) {
        this.ownerThrew(stream, err);
      }
    } else {
      if (!endStream) throw violation(`a second header block without END_STREAM on stream ${streamId}`);
      try {
        stream.owner.trailersArrived(headers);
      } catch (err) {
        this.ownerThrew(stream, err);
      }
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
    try {
      stream.owner.closed(undefined);
    } catch (err) {
      this.ownerThrew(stream, err);
    }
  }

  private onReset(streamId: number, buf: Buffer, start: number, end: number): void {
    const stream = this.streamFrame(streamId, 'RST_STREAM');
    if (end - start !== 4) throw violation('an RST_STREAM frame is not 4 bytes long', H2_FRAME_SIZE_ERROR);
    if (stream === undefined) return;
    const code = buf.readUInt32BE(start);
    // Refused: the server did not process it, so it starts again where there is a free slot
    // (here once one frees, or on another connection), a few times at most. Node's own HTTP/2
    // server (22 and later) refuses a stream over its limit with ENHANCE_YOUR_CALM instead of
    // REFUSED_STREAM, and counts a stream until its JS object is gone, a moment after it closed.
    if (refusal(code) && stream.restartable && stream.restarts < MAX_RESTARTS) {
      this.streams.delete(streamId);
      stream.rewind();
      this.events.refused();
      if (this.streams.size > 0) {
        // It starts here once a stream ends: by then the server counts one stream less.
        this.waiting.unshift(stream);
      } else {
        // Nothing here to end first: a moment's wait, then wherever there is room.
        this.keepalive.stop();
        setTimeout(() => this.events.overflow([stream]), REFUSED_RETRY_MS).unref();
      }
      return;
    }
    this.forget(stream);
    try {
      stream.owner.closed(code);
    } catch (err) {
      this.ownerThrew(stream, err);
    }
  }

  private onSettings(flags: number, streamId: number, buf: Buffer, start: number, end: number): void {
    this.connectionFrame(streamId, 'SETTINGS');
    if ((flags & ACK) !== 0) {
      if (end !== start) throw violation('a SETTINGS acknowledgement with a payload', H2_FRAME_SIZE_ERROR);
      return;
    }
    if ((end - start) % 6 !== 0)
      throw violation('a SETTINGS frame whose length is not a multiple of 6', H2_FRAME_SIZE_ERROR);
    const first = !this.settingsSeen;
    this.settingsSeen = true;
    // What was assumed before the peer spoke no longer holds: no limit unless it sets one.
    if (first) this.peerMaxStreams = Number.POSITIVE_INFINITY;
    for (let at = start; at < end; at += 6) {
      const id = buf.readUInt16BE(at);
      const value = buf.readUInt32BE(at + 2);
      if (id === SETTINGS_INITIAL_WINDOW_SIZE) {
        if (value > MAX_WINDOW)
          throw violation(`SETTINGS_INITIAL_WINDOW_SIZE ${value}`, H2_FLOW_CONTROL_ERROR);
        const delta = value - this.peerInitialWindow;
        this.peerInitialWindow = value;
        for (const stream of this.streams.values()) {
          stream.sendWindow += delta;
          if (stream.sendWindow > MAX_WINDOW) {
            throw violation(
              `SETTINGS_INITIAL_WINDOW_SIZE ${value} overflows a stream window`,
              H2_FLOW_CONTROL_ERROR,
            );
          }
        }
      } else if (id === SETTINGS_MAX_FRAME_SIZE) {
        if (value < DEFAULT_MAX_FRAME || value > 0xffffff)
          throw violation(`SETTINGS_MAX_FRAME_SIZE ${value}`);
        this.peerMaxFrame = value;
      } else if (id === SETTINGS_MAX_CONCURRENT_STREAMS) this.peerMaxStreams = value;
      else if (id === SETTINGS_ENABLE_PUSH) {
        // A server may only repeat that push is off (RFC 9113, 6.5.2).
        if (value !== 0) throw violation(`SETTINGS_ENABLE_PUSH ${value} from a server`);
      }
      // SETTINGS_HEADER_TABLE_SIZE bounds the table of the peer's decoder, which our literals
      // never fill; SETTINGS_MAX_HEADER_LIST_SIZE is far above our request headers; unknown
      // settings are ignored (RFC 9113, 6.5.2).
    }
    this.control(frame(SETTINGS, ACK, 0));
    for (const stream of this.streams.values()) if (stream.blocked) this.flush(stream);
    this.startWaiting();
    if (first) this.events.ready(this);
    if (first && this.waiting.length > 0) {
      const overflow = this.waiting.splice(0);
      this.events.overflow(overflow);
    }
  }

  private onPing(flags: number, streamId: number, buf: Buffer, start: number, end: number): void {
    this.connectionFrame(streamId, 'PING');
    if (end - start !== 8) throw violation('a PING frame is not 8 bytes long', H2_FRAME_SIZE_ERROR);
    if ((flags & ACK) !== 0) this.keepalive.answered();
    else this.control(frame(PING, ACK, 0, buf.subarray(start, end)));
  }

  /** Writes an answer the peer asked for; a peer that asks without reading is flooding us. */
  private control(bytes: Buffer): void {
    if (this.socket.writableLength > MAX_UNSENT_BYTES) {
      throw new H2Violation(
        H2_ENHANCE_YOUR_CALM,
        `it sent control frames faster than it read our answers (more than ${MAX_UNSENT_BYTES} bytes unsent)`,
        'resource_exhausted',
      );
    }
    this.socket.write(bytes);
  }

  /**
   * Starts waiting streams once the current read is handled, not in it: the server learns that
   * the stream that freed the slot is gone first (and a server that frees a slot late, as Node's
   * own does, has a moment to do so).
   */
  private startWaitingSoon(): void {
    if (this.startScheduled) return;
    this.startScheduled = true;
    setImmediate(() => {
      this.startScheduled = false;
      this.startWaiting();
    });
  }

  /** Starts waiting streams, in order, as far as MAX_CONCURRENT_STREAMS allows. */
  private startWaiting(): void {
    while (!this.goaway && !this.dead && this.waiting.length > 0 && this.streams.size < this.peerMaxStreams) {
      const next = this.waiting.shift()!;
      if (!next.done) this.start(next);
    }
  }

  private onWindowUpdate(streamId: number, buf: Buffer, start: number, end: number): void {
    if (end - start !== 4) throw violation('a WINDOW_UPDATE frame is not 4 bytes long', H2_FRAME_SIZE_ERROR);
    const increment = buf.readUInt32BE(start) & MAX_WINDOW;
    if (streamId === 0) {
      if (increment === 0) throw violation('WINDOW_UPDATE of 0 for the connection');
      this.sendWindow += increment;
      if (this.sendWindow > MAX_WINDOW)
        throw violation('WINDOW_UPDATE past 2^31-1 for the connection', H2_FLOW_CONTROL_ERROR);
      for (const stream of this.streams.values()) if (stream.blocked) this.flush(stream);
      return;
    }
    const stream = this.streamFrame(streamId, 'WINDOW_UPDATE');
    if (increment === 0) throw violation(`WINDOW_UPDATE of 0 for stream ${streamId}`);
    if (stream === undefined) return;
    stream.sendWindow += increment;
    if (stream.sendWindow > MAX_WINDOW) {
      throw violation(`WINDOW_UPDATE past 2^31-1 for stream ${streamId}`, H2_FLOW_CONTROL_ERROR);
    }
    if (stream.blocked) this.flush(stream);
  }

  private onGoaway(streamId: number, buf: Buffer, start: number, end: number): void {
    this.connectionFrame(streamId, 'GOAWAY');
    if (end - start < 8) throw violation('a GOAWAY frame shorter than 8 bytes', H2_FRAME_SIZE_ERROR);
    const lastStreamId = buf.readUInt32BE(start) & MAX_STREAM_ID;
    const code = buf.readUInt32BE(start + 4);
    // Debug data is opaque; servers put ASCII there ("too_many_pings"), shown as such, cut short.
    const debug = buf
      .toString('latin1', start + 8, Math.min(end, start + 8 + 200))
      .replace(/[^\x20-\x7e]/g, '?');
    this.goaway = true;
    if (code === H2_ENHANCE_YOUR_CALM && debug === 'too_many_pings') this.events.tooManyPings();
    if (code !== H2_NO_ERROR) this.failure ??= goawayError(this.options.url, code, debug);
    // Streams the server never saw can safely go elsewhere: it says it did not process them.
    const moved = this.waiting.splice(0);
    for (const stream of [...this.streams.values()]) {
      if (stream.id <= lastStreamId) continue;
      this.streams.delete(stream.id);
      if (stream.restartable && stream.restarts < MAX_RESTARTS) {
        stream.rewind();
        moved.push(stream);
      } else {
        stream.done = true;
        try {
          stream.owner.closed(H2_REFUSED_STREAM);
        } catch (err) {
          this.ownerThrew(stream, err);
        }
      }
    }
    if (moved.length > 0) this.events.unprocessed(moved);
    if (this.streams.size === 0) this.destroy(undefined);
  }

  private connectionReceived(bytes: number): void {
    this.unackedBytes += bytes;
    if (this.unackedBytes >= CONNECTION_UPDATE_AT) {
      this.socket.write(frame(WINDOW_UPDATE, 0, 0, uint32(this.unackedBytes)));
      this.recvWindow += this.unackedBytes;
      this.unackedBytes = 0;
    }
  }
}

/**
 * Whether a reset of a stream that got no answer yet means the server did not take it:
 * REFUSED_STREAM, or ENHANCE_YOUR_CALM, which Node's server sends for a stream over its limit.
 */
function refusal(code: number): boolean {
  return code === H2_REFUSED_STREAM || code === H2_ENHANCE_YOUR_CALM;
}
