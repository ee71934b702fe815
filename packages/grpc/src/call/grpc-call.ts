import { Code, ConnectError } from '@connectrpc/connect';
import {
  H2_NO_ERROR,
  type H2Engine,
  type H2Headers,
  type H2PreparedRequest,
  type H2StreamHandle,
  type H2StreamOwner,
} from '../h2/index.js';
import { AsyncInflate, checkEncoding, inflateNow, inflatesAtOnce, refusedBySize } from './inflate.js';
import { FrameReader, type MessageSink } from './messages.js';
import { CallStatus, resetError } from './status.js';

// How much of a body that is not gRPC (a proxy's error page) is kept to quote in the error.
const QUOTE_BYTES = 200;

/** What one gRPC call tells the shape that owns it (a streamed request, a shared call, a unary call). */
export interface CallListener {
  /**
   * One response message, `buf[start..end)`: a view valid only during the call (inflated first when
   * it came compressed). Returns false to stop reading: the shape failed the call.
   */
  message(buf: Buffer, start: number, end: number): boolean;
  /**
   * The call is over, not at the shape's own asking (`cancel`): `error` is undefined when the
   * server ended it with status OK after whole messages (whether every message the shape expected
   * came is the shape's to say), else why it failed, as thrown (a `ConnectError`, an engine's
   * `TritonLlmError`, a socket error).
   */
  ended(error: unknown): void;
}

/** What a call needs: where it goes, and the limits of what it reads. */
export interface CallSetup {
  readonly engine: H2Engine;
  readonly request: H2PreparedRequest;
  /** Largest response message, checked on its 5-byte prefix (and the bound of an inflated one). */
  readonly maxReceiveBytes: number;
  /** The call's deadline in milliseconds: the call fails `deadline_exceeded` past it. */
  readonly timeoutMs?: number | undefined;
}

/**
 * One gRPC call over one HTTP/2 stream, whatever its shape: the status from the headers and
 * trailers, the response messages out of the DATA (5-byte prefixes, the receive limit, inflate),
 * the guard against answers that are not gRPC (quoted in the error), the deadline, and a failure
 * of the shape's own callbacks (fail-on-throw) ending this call alone. The streamed request on a
 * call of its own, the shared calls of `multiplex` and the unary calls all run on it.
 */
export class GrpcCall implements H2StreamOwner, MessageSink {
  private readonly h2: H2StreamHandle;
  private readonly status = new CallStatus();
  private readonly frames: FrameReader;
  private readonly maxReceiveBytes: number;
  /** The start of a body that is not gRPC, to quote. */
  private quoted: Buffer | undefined;
  private deadline: ReturnType<typeof setTimeout> | undefined;
  private done = false;
  /** A large compressed message inflating off the event loop; what comes after it waits. */
  private inflating: AsyncInflate | undefined;
  /** Messages (copies) behind the one inflating, in order, with their compressed flags. */
  private readonly behind: { bytes: Buffer; compressed: boolean }[] = [];
  /** The stream closed while messages were still to deliver: its RST code, delivered after them. */
  private closeBehind: { rstCode: number | undefined } | undefined;
  /** The shape paused the call (an inflate pauses it too, and resumes only what it paused). */
  private shapePaused = false;

  constructor(
    setup: CallSetup,
    private readonly listener: CallListener,
  ) {
    this.maxReceiveBytes = setup.maxReceiveBytes;
    this.frames = new FrameReader(setup.maxReceiveBytes);
    this.h2 = setup.engine.open(setup.request, this);
    const timeoutMs = setup.timeoutMs;
    if (timeoutMs !== undefined) {
      this.deadline = setTimeout(() => {
        // Whole milliseconds: what is left of a caller's deadline after the schema read or an
        // earlier attempt is fractional, and `19.331367000000682 ms` reads as noise.
        this.end(
          new ConnectError(`the deadline of ${Math.ceil(timeoutMs)} ms passed`, Code.DeadlineExceeded),
          true,
        );
      }, timeoutMs);
    }
  }

  /** Sends a request message (framed already). */
  send(bytes: Buffer): void {
    this.h2.write(bytes);
  }

  /** Half-closes: the server ends the call once it has nothing more for it. */
  halfClose(): void {
    this.h2.end();
  }

  /** Reads no more for now: flow control holds the server back. */
  pause(): void {
    this.shapePaused = true;
    this.h2.pause();
  }

  resume(): void {
    this.shapePaused = false;
    if (this.inflating === undefined) this.h2.resume();
  }

  /** Whether a request runs on the call (see `H2StreamHandle.setIdle`): only on transitions. */
  setIdle(idle: boolean): void {
    this.h2.setIdle(idle);
  }

  /** The shape ends the call (RST_STREAM CANCEL); the listener hears nothing more. */
  cancel(): void {
    if (this.done) return;
    this.finish();
    this.h2.cancel();
  }

  /** @internal */
  headersArrived(headers: H2Headers): void {
    this.status.headers(headers);
  }

  /** @internal */
  trailersArrived(trailers: H2Headers): void {
    this.status.trailers(trailers);
  }

  /** @internal */
  dataArrived(buf: Buffer, start: number, end: number): void {
    if (this.done) return;
    if (this.status.notGrpc !== undefined) {
      // Not gRPC at all (an HTML error page of a proxy): keep its start for the error, parse nothing.
      const have = this.quoted?.length ?? 0;
      if (have < QUOTE_BYTES) {
        const part = buf.subarray(start, Math.min(end, start + QUOTE_BYTES - have));
        this.quoted = this.quoted === undefined ? Buffer.from(part) : Buffer.concat([this.quoted, part]);
      }
      return;
    }
    try {
      this.frames.push(buf, start, end, this);
    } catch (err) {
      this.end(err, true);
    }
  }

  /** @internal One message of the frame reader; false stops it. */
  message(buf: Buffer, start: number, end: number, compressed: boolean, owned: boolean): boolean {
    if (this.done) return false;
    if (this.inflating !== undefined) {
      // Behind a message still inflating: kept (a copy, the view is the socket's) so the order holds.
      // The stream is paused meanwhile, so at most a window's worth (64 KiB) waits here.
      const bytes = owned ? buf.subarray(start, end) : Buffer.from(buf.subarray(start, end));
      this.behind.push({ bytes, compressed });
      return true;
    }
    // The per-token path: an uncompressed message goes straight on, no hop, no copy.
    if (!compressed) return this.listener.message(buf, start, end);
    checkEncoding(this.status.encoding);
    const view = buf.subarray(start, end);
    const refused = refusedBySize(view, this.maxReceiveBytes);
    if (refused !== undefined) throw refused;
    if (inflatesAtOnce(view)) {
      const inflated = inflateNow(view, this.maxReceiveBytes);
      return this.listener.message(inflated, 0, inflated.length);
    }
    // Inflated off the event loop: the server is held back (no window updates) until it is done.
    this.h2.pause();
    this.inflating = new AsyncInflate(
      owned ? view : Buffer.from(view),
      this.maxReceiveBytes,
      (err, inflated) => this.inflated(err, inflated),
    );
    return true;
  }

  /** A message inflated off the event loop: delivered, then what waited behind it, in order. */
  private inflated(err: unknown, inflated: Buffer | undefined): void {
    this.inflating = undefined;
    if (this.done) return;
    if (err !== undefined) {
      this.end(err, true);
      return;
    }
    try {
      if (!this.listener.message(inflated!, 0, inflated!.length)) return;
      while (this.behind.length > 0 && this.inflating === undefined && !this.done) {
        const next = this.behind.shift()!;
        if (!this.message(next.bytes, 0, next.bytes.length, next.compressed, true)) return;
      }
    } catch (err) {
      this.end(err, true);
      return;
    }
    if (this.inflating !== undefined || this.done) return;
    const close = this.closeBehind;
    if (close !== undefined) this.end(this.callError(close.rstCode), false);
    else if (!this.shapePaused) this.h2.resume();
  }

  /** @internal The HTTP/2 stream closed: a clean end, or the reason the call failed. */
  closed(rstCode: number | undefined): void {
    if (this.done) return;
    // Messages still inflating (or waiting behind one) come first, as they would have in sync.
    if (this.inflating !== undefined) {
      this.closeBehind = { rstCode };
      return;
    }
    this.end(this.callError(rstCode), false);
  }

  /** @internal */
  streamFailed(err: unknown): void {
    this.end(err, false);
  }

  /** Why the call failed, or undefined when it ended with status OK after whole messages. */
  private callError(rstCode: number | undefined): unknown {
    // A response that is not gRPC at all (HTTP status, content type) says so before any status.
    const notGrpc = this.status.notGrpc;
    if (notGrpc !== undefined) return this.quote(notGrpc);
    const status = this.status.error;
    if (status !== undefined) return status;
    if (!this.status.statusSeen) {
      if (rstCode !== undefined && rstCode !== H2_NO_ERROR) return resetError(rstCode);
      if (this.h2.endReceived) {
        // The stream ended (END_STREAM) with no status: not something a gRPC server does, but what
        // a proxy does when its idle timeout cuts a call (HAProxy's `timeout server`).
        return new ConnectError(
          'the stream ended without a gRPC status: the server, or a proxy in front of it (an idle timeout), cut the call short',
          Code.Unavailable,
        );
      }
      // No status at all: the connection went away under the call.
      return new ConnectError('the connection closed before the call ended', Code.Unavailable);
    }
    if (this.frames.incomplete) {
      return new ConnectError('protocol error: the call ended inside a message', Code.Internal);
    }
    return undefined;
  }

  /** The header error of an answer that is not gRPC, with the start of its body quoted. */
  private quote(error: ConnectError): ConnectError {
    const body = this.quoted;
    if (body === undefined || body.length === 0) return error;
    const text = body.toString('utf8').replace(/\s+/g, ' ').trim();
    const cut = body.length >= QUOTE_BYTES ? '...' : '';
    return new ConnectError(`${error.rawMessage}: the answer is not gRPC: "${text}${cut}"`, error.code);
  }

  /** The call is over: reset the stream when `reset`, and tell the listener. */
  private end(error: unknown, reset: boolean): void {
    if (this.done) return;
    this.finish();
    if (reset) this.h2.cancel();
    this.listener.ended(error);
  }

  private finish(): void {
    this.done = true;
    if (this.deadline !== undefined) clearTimeout(this.deadline);
    this.inflating?.cancel();
    this.inflating = undefined;
    this.behind.length = 0;
  }
}
