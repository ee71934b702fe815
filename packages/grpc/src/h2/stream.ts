import type { FloodCounter } from './flood.js';

/** What a stream reports to the call that owns it; every method runs inside the socket's read. */
export interface H2StreamOwner {
  /** The response headers (for a trailers-only answer, the only headers). */
  headersArrived(headers: H2Headers): void;
  /** The trailers, which end the stream. */
  trailersArrived(trailers: H2Headers): void;
  /** DATA: `buf[start..end)`, a view of a socket read valid only during the call (no copy per frame). */
  dataArrived(buf: Buffer, start: number, end: number): void;
  /** The stream ended: `undefined` after the server's END_STREAM, its error code after a reset. */
  closed(rstCode: number | undefined): void;
  /**
   * The stream failed under its owner: the connection was lost or broken (a `TritonLlmError` or a
   * socket error), or one of the owner's own callbacks threw (that error).
   */
  streamFailed(err: unknown): void;
}

/** Decoded header fields by lowercase name; a repeated name's values are joined with ", ". */
export type H2Headers = Readonly<Record<string, string | undefined>>;

/** What a stream needs from the connection it runs on (the connection may change before it starts). */
export interface H2StreamHost {
  flush(stream: H2Stream): void;
  reset(stream: H2Stream, code: number): void;
  windowUpdate(stream: H2Stream, increment: number): void;
  /** The stream's owner began or stopped carrying a call (see `H2Stream.setIdle`). */
  idleChanged(stream: H2Stream): void;
}

const EMPTY = Buffer.alloc(0);

/** One stream, as the call that owns it drives it. */
export class H2Stream {
  /** 0 until the stream starts on a connection (ids go out in the order streams start). */
  id = 0;
  /** @internal The request's header block, kept to start the stream again after a refusal. */
  headerBlock: Buffer = EMPTY;
  /** Request bytes not yet sent (flow control), and whether END_STREAM follows them. */
  private queue: Buffer[] = [];
  /**
   * Request bytes sent before any answer: a stream the server refused (REFUSED_STREAM, or past a
   * GOAWAY's last stream) was never processed, so it is sent again, elsewhere or later.
   */
  private sent: Buffer[] | undefined = [];
  private ending = false;
  /** @internal END_STREAM went out. */
  endSent = false;
  /** @internal */
  sendWindow = 0;
  /** @internal What the server may still send before we open the window again. */
  recvWindow = 0;
  private unacked = 0;
  private paused = false;
  /** @internal The response headers came (the next HEADERS are trailers). */
  headersSeen = false;
  /** @internal The server ended its side. */
  endReceived = false;
  /** @internal */
  done = false;
  /** @internal Times the stream was refused and started again. */
  restarts = 0;
  /**
   * @internal Open while no call is on it (a shared call of `multiplex` between requests): it
   * does not keep the process alive.
   */
  idle = false;
  /** @internal Frames without payload on this stream (see `MAX_EMPTY_FRAMES_PER_STREAM`), made at the first. */
  empties: FloodCounter | undefined;
  /** @internal The connection whose socket this stream keeps referenced (see `H2StreamTable.hold`). */
  heldBy: { release(stream: H2Stream): void } | undefined;

  constructor(
    readonly owner: H2StreamOwner,
    /** @internal */
    public host: H2StreamHost,
  ) {}

  /** Sends request bytes (DATA), as far as flow control allows now, the rest when it allows. */
  write(bytes: Buffer): void {
    if (this.done || this.ending) return;
    this.queue.push(bytes);
    this.host.flush(this);
  }

  /** Half-closes: END_STREAM after the bytes already written. */
  end(): void {
    if (this.done || this.ending) return;
    this.ending = true;
    this.host.flush(this);
  }

  /** Resets the stream (RST_STREAM CANCEL); its owner hears nothing more. */
  cancel(): void {
    if (this.done) return;
    this.host.reset(this, 0x8);
  }

  /**
   * Says whether a call runs on the stream: an idle one (a shared call between requests) lets the
   * process exit, as an idle keep-alive socket of `fetch` does. Call it on the owner's transitions
   * only (first request in, last one out), never per message.
   */
  setIdle(idle: boolean): void {
    if (this.idle === idle || this.done) return;
    this.idle = idle;
    this.host.idleChanged(this);
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

  /** @internal Counts DATA bytes read by the owner; tops the window up unless paused. */
  received(bytes: number, updateAt: number): void {
    this.unacked += bytes;
    if (!this.paused && this.unacked >= updateAt) this.acknowledge();
  }

  private acknowledge(): void {
    const n = this.unacked;
    this.unacked = 0;
    if (!this.done && !this.endReceived) this.host.windowUpdate(this, n);
  }

  /** @internal The answer began: nothing will be sent again, so the copies can go. */
  answered(): void {
    this.sent = undefined;
  }

  /** @internal Whether the stream can start again after a refusal (nothing of it was processed). */
  get restartable(): boolean {
    return this.sent !== undefined && !this.headersSeen && !this.done;
  }

  /** @internal Puts what was sent back in front of the queue, for a new start. */
  rewind(): void {
    if (this.sent !== undefined) this.queue = [...this.sent, ...this.queue];
    this.sent = [];
    this.endSent = false;
    this.id = 0;
    this.restarts += 1;
  }

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
    this.sent?.push(bytes);
    const last = this.ending && this.queue.length === 0;
    if (last) this.endSent = true;
    return { bytes, last };
  }

  /** @internal Whether request bytes wait for window. */
  get blocked(): boolean {
    return !this.endSent && (this.queue.length > 0 || this.ending);
  }
}
