import type { Socket } from 'node:net';
import {
  ASSUMED_MAX_STREAMS,
  type H2ConnectionEvents,
  type H2ConnectionOptions,
  MAX_HEADER_LIST,
  MAX_UNSENT_BYTES,
  STREAM_WINDOW,
} from './connection-options.js';
import { connectionLost, H2Violation, NO_ALPN_H2, noAlpnH2, notGrpcEndpoint, violation } from './errors.js';
import { floodViolation, MAX_UNSENT_ANSWERS } from './flood.js';
import {
  DATA,
  DEFAULT_MAX_FRAME,
  DEFAULT_WINDOW,
  END_STREAM,
  frame,
  goawayFrame,
  H2_CANCEL,
  H2_ENHANCE_YOUR_CALM,
  headerFrames,
  MAX_STREAM_ID,
  MAX_WINDOW,
  PING,
  PREFACE,
  RST_STREAM,
  SETTINGS_ENABLE_PUSH,
  SETTINGS_INITIAL_WINDOW_SIZE,
  SETTINGS_MAX_HEADER_LIST_SIZE,
  settingsFrame,
  uint32,
  WINDOW_UPDATE,
} from './frames.js';
import { Keepalive } from './keepalive.js';
import { openSocket } from './socket.js';
import type { H2Stream, H2StreamHost } from './stream.js';

/**
 * The stream side of one HTTP/2 connection: which streams run on it and which wait for the
 * server's MAX_CONCURRENT_STREAMS, their ids, the request bytes they send as far as the peer's
 * windows allow, resets, and the end of the connection (every stream hears why). What the peer
 * sends is read by the `H2Connection` built on it (`connection.ts`).
 */
export abstract class H2StreamTable implements H2StreamHost {
  protected readonly socket: Socket;
  protected readonly streams = new Map<number, H2Stream>();
  protected readonly keepalive: Keepalive;
  protected nextStreamId = 1;
  /** Streams waiting for the server's MAX_CONCURRENT_STREAMS to allow them, in order. */
  protected readonly waiting: H2Stream[] = [];
  protected peerInitialWindow = DEFAULT_WINDOW;
  protected peerMaxFrame = DEFAULT_MAX_FRAME;
  /** @internal */
  peerMaxStreams: number;
  /** @internal Whether the peer's first SETTINGS came. */
  settingsSeen = false;
  protected sendWindow = DEFAULT_WINDOW;
  protected goaway = false;
  protected dead = false;
  protected failure: unknown;
  private closing = false;
  private startScheduled = false;
  /** Writes wait in the corked socket until `flushWrites` runs (see `send`). */
  private corked = false;
  /** PING and SETTINGS acknowledgements written since the socket last had nothing left to send. */
  private unsentAnswers = 0;
  /** Streams here that carry a call (running or waiting for a slot): the socket is referenced while there are any. */
  private held = 0;

  constructor(
    protected readonly options: H2ConnectionOptions,
    protected readonly events: H2ConnectionEvents<H2StreamTable>,
  ) {
    const { url } = options;
    this.peerMaxStreams = options.assumedMaxStreams ?? ASSUMED_MAX_STREAMS;
    this.keepalive = new Keepalive(
      options.keepaliveMs,
      options.keepaliveTimeoutMs,
      () => this.socket.write(frame(PING, 0, 0, Buffer.alloc(8))),
      (timeoutMs) =>
        this.destroy(connectionLost(url, `no answer to a keepalive PING within ${timeoutMs} ms`)),
    );
    this.socket = openSocket(
      url,
      options.tls,
      (err) => this.destroy(err),
      (chunk) => this.onData(chunk),
    );
    const socket = this.socket;
    // Like fetch's keep-alive sockets: an idle connection never keeps the process alive; the
    // streams that carry calls reference it (`hold`), from the connect on.
    socket.unref();
    socket.setNoDelay(true);
    socket.on('error', (err) => {
      this.failure ??= noAlpnH2(err) ? notGrpcEndpoint(url, NO_ALPN_H2) : err;
    });
    socket.on('close', () => this.onClose());
    socket.on('drain', () => {
      this.unsentAnswers = 0;
    });
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

  /** What the peer sent: one socket read, every frame in it. */
  protected abstract onData(chunk: Buffer): void;

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
    this.hold(stream);
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
    this.send(headerFrames(id, stream.headerBlock, this.peerMaxFrame));
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
      this.send(frame(DATA, piece.last ? END_STREAM : 0, stream.id, piece.bytes));
      if (piece.last) return;
    }
  }

  windowUpdate(stream: H2Stream, increment: number): void {
    if (this.dead || this.streams.get(stream.id) !== stream) return;
    stream.recvWindow += increment;
    this.send(frame(WINDOW_UPDATE, 0, stream.id, uint32(increment)));
  }

  idleChanged(stream: H2Stream): void {
    if (stream.done || stream.host !== this) return;
    if (stream.idle) this.release(stream);
    else this.hold(stream);
  }

  /**
   * A call runs on `stream` here: the process stays alive until it ends. Only on a stream's way in
   * and out (and a shared call's first request and last), never per frame: `ref` and `unref` cost
   * a system call's worth each.
   */
  private hold(stream: H2Stream): void {
    if (stream.idle || stream.heldBy === this) return;
    stream.heldBy?.release(stream);
    stream.heldBy = this;
    if (this.held++ === 0) this.socket.ref();
  }

  /** @internal `stream` leaves this connection, or stops carrying a call. */
  release(stream: H2Stream): void {
    if (stream.heldBy !== this) return;
    stream.heldBy = undefined;
    if (--this.held === 0) this.socket.unref();
  }

  /** Streams handed to another connection (or to a later start) stop holding this one. */
  protected releaseAll(streams: readonly H2Stream[]): void {
    for (const stream of streams) this.release(stream);
  }

  reset(stream: H2Stream, code: number): void {
    const started = stream.id !== 0 && this.streams.get(stream.id) === stream;
    this.forget(stream);
    // A stream still waiting for MAX_CONCURRENT_STREAMS was never sent: resetting it would be an error.
    if (started && !this.dead) this.send(frame(RST_STREAM, 0, stream.id, uint32(code)));
  }

  /** Ends the connection; open streams hear `err` (a failure) or a lost connection (undefined). */
  destroy(err: unknown, goaway?: number): void {
    if (err !== undefined) this.failure ??= err;
    if (this.dead) return;
    this.dead = true;
    // What was written before (resets, a GOAWAY's reason) leaves before the socket closes.
    this.flushWrites();
    if (goaway === undefined) this.socket.destroy();
    else {
      // A peer that does not read the GOAWAY is not waited for long.
      this.socket.end(goawayFrame(0, goaway));
      setTimeout(() => this.socket.destroy(), 1_000).unref();
    }
    // The streams fail now, not when the peer closes its side too.
    this.closeStreams();
  }

  protected forget(stream: H2Stream): void {
    if (stream.done) return;
    stream.done = true;
    this.release(stream);
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
    this.releaseAll(streams);
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
  protected ownerThrew(stream: H2Stream, err: unknown): void {
    if (!stream.done) this.reset(stream, H2_CANCEL);
    try {
      stream.owner.streamFailed(err);
    } catch {
      // The owner failed twice over; the stream is gone either way and others must go on.
    }
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
  protected startWaiting(): void {
    while (!this.goaway && !this.dead && this.waiting.length > 0 && this.streams.size < this.peerMaxStreams) {
      const next = this.waiting.shift()!;
      if (!next.done) this.start(next);
    }
  }

  /**
   * The stream a stream-level frame is for: undefined for one that is closed (reset by us, or
   * ended), a violation for stream 0 and for streams we never opened.
   */
  protected streamFrame(streamId: number, what: string): H2Stream | undefined {
    if (streamId === 0) throw violation(`${what} on stream 0`);
    if (streamId % 2 === 0 || streamId >= this.nextStreamId) {
      throw violation(`${what} on stream ${streamId}, which this client never opened`);
    }
    return this.streams.get(streamId);
  }

  protected connectionFrame(streamId: number, what: string): void {
    if (streamId !== 0) throw violation(`${what} on stream ${streamId} (it belongs to stream 0)`);
  }

  /** Writes an answer the peer asked for; a peer that asks without reading is flooding us. */
  protected control(bytes: Buffer): void {
    // Counted, not only measured in bytes: each answer waiting in the socket costs a write request
    // (some 400 bytes for a 17-byte PING ACK), so 100,000 of them were +43 MiB (issue 55).
    if (++this.unsentAnswers > MAX_UNSENT_ANSWERS) {
      throw floodViolation(
        `a PING or SETTINGS flood: more than ${MAX_UNSENT_ANSWERS} acknowledgements waiting to be sent (it reads them slower than it asks)`,
      );
    }
    if (this.socket.writableLength > MAX_UNSENT_BYTES) {
      throw new H2Violation(
        H2_ENHANCE_YOUR_CALM,
        `it sent control frames faster than it read our answers (more than ${MAX_UNSENT_BYTES} bytes unsent)`,
        'resource_exhausted',
      );
    }
    this.send(bytes);
  }

  /**
   * Writes `bytes` to the socket. Everything written until the event loop's check phase leaves
   * in one system call: the frames a socket read makes us write (window updates, half-closes),
   * and the requests the consumers start in the promise jobs that follow it, for every stream of
   * the connection at once.
   */
  protected send(bytes: Buffer): void {
    if (!this.corked) {
      this.corked = true;
      this.socket.cork();
      setImmediate(flushWrites, this);
    }
    this.socket.write(bytes);
  }

  /** @internal Sends what `send` kept in the corked socket. */
  flushWrites(): void {
    if (!this.corked) return;
    this.corked = false;
    this.socket.uncork();
    if (this.socket.writableLength === 0) this.unsentAnswers = 0;
  }
}

function flushWrites(table: H2StreamTable): void {
  table.flushWrites();
}
