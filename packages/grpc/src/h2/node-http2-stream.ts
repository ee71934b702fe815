import type { ClientHttp2Stream, IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http2';
import { MAX_RESTARTS, REFUSED_RETRY_MS } from './connection-options.js';
import type { H2StreamHandle } from './engine.js';
import { H2_CANCEL, H2_ENHANCE_YOUR_CALM, H2_NO_ERROR, H2_REFUSED_STREAM } from './frames.js';
import type { NodeSession, NodeSessionHost } from './node-http2-session.js';
import type { H2Headers, H2StreamOwner } from './stream.js';

/**
 * One stream of the node:http2 engine, as the call that owns it drives it. It runs on one
 * `ClientHttp2Stream` at a time: one the server refused unprocessed starts again on another.
 */
export class NodeStream implements H2StreamHandle {
  endReceived = false;
  private stream!: ClientHttp2Stream;
  private home!: NodeSession;
  /**
   * Request bytes written before any answer: a stream the server refused (REFUSED_STREAM, or past
   * a GOAWAY's last stream) was never processed, so they are sent again on the next one.
   */
  private sent: Buffer[] | undefined = [];
  private ending = false;
  private paused = false;
  private done = false;
  /** Whether `stream` runs on `home` now (not between a refusal and the next start). */
  private attached = false;
  private restarts = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  private idle = false;
  private holding = false;
  private error: unknown;

  constructor(
    private readonly engine: NodeSessionHost,
    private readonly headers: OutgoingHttpHeaders,
    private readonly owner: H2StreamOwner,
  ) {
    this.start(engine.pick());
  }

  private start(home: NodeSession): void {
    this.home = home;
    this.error = undefined;
    const stream = home.session.request(this.headers, { endStream: false });
    this.stream = stream;
    this.attached = true;
    home.opened();
    this.hold();
    for (const bytes of this.sent ?? []) stream.write(bytes);
    if (this.ending) stream.end();
    if (this.paused) stream.pause();
    // Listeners of a stream given up for another hear nothing more (`current`).
    const current = () => this.stream === stream && !this.done;
    // Informational (1xx) headers come as 'headers'; 'response' is the answer's.
    stream.on('response', (fields: IncomingHttpHeaders) => {
      if (!current()) return;
      this.sent = undefined;
      try {
        this.owner.headersArrived(plain(fields));
      } catch (err) {
        this.ownerThrew(err);
      }
    });
    stream.on('trailers', (fields: IncomingHttpHeaders) => {
      if (!current()) return;
      try {
        this.owner.trailersArrived(plain(fields));
      } catch (err) {
        this.ownerThrew(err);
      }
    });
    stream.on('data', (chunk: Buffer) => {
      if (!current()) return;
      home.keepalive.received(Date.now());
      try {
        this.owner.dataArrived(chunk, 0, chunk.length);
      } catch (err) {
        this.ownerThrew(err);
      }
    });
    stream.on('end', () => {
      if (this.stream === stream) this.onEnd();
    });
    // The 'close' that follows reports it.
    stream.on('error', (err: unknown) => {
      if (this.stream === stream) this.error ??= err;
    });
    stream.on('close', () => {
      if (this.stream === stream) this.onClose();
    });
  }

  write(bytes: Buffer): void {
    if (this.done) return;
    this.sent?.push(bytes);
    // Between a refusal and the next start, the bytes wait in `sent`.
    if (this.attached) this.stream.write(bytes);
  }

  end(): void {
    if (this.done) return;
    this.ending = true;
    if (this.attached) this.stream.end();
  }

  cancel(): void {
    if (this.done) return;
    const running = this.attached;
    this.finish();
    if (running) this.stream.close(H2_CANCEL);
  }

  pause(): void {
    this.paused = true;
    if (this.attached) this.stream.pause();
  }

  resume(): void {
    this.paused = false;
    if (this.attached) this.stream.resume();
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
    const code = this.stream.rstCode;
    if (
      this.sent !== undefined &&
      !this.endReceived &&
      this.unprocessed(code) &&
      this.restarts < MAX_RESTARTS
    ) {
      this.restart();
      return;
    }
    this.finish();
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

  /**
   * Whether the server never processed the stream: it refused it (REFUSED_STREAM; nghttp2 closes
   * so the streams past a GOAWAY's last stream id too; Node's own server refuses a stream over its
   * limit with ENHANCE_YOUR_CALM), or the session went away with GOAWAY before the request left.
   */
  private unprocessed(code: number | undefined): boolean {
    if (code === H2_REFUSED_STREAM || code === H2_ENHANCE_YOUR_CALM) return true;
    return (this.error as { code?: unknown } | undefined)?.code === 'ERR_HTTP2_GOAWAY_SESSION';
  }

  /**
   * Starts the request again, a moment later, on a session with room (the owner sees one stream
   * throughout): a server that counts a closed stream a little longer has let it go by then. The
   * call is still in flight: the timer keeps the process alive meanwhile.
   */
  private restart(): void {
    this.release();
    this.attached = false;
    this.home.ended();
    this.restarts += 1;
    this.engine.refusedStreams += 1;
    this.engine.restarting += 1;
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      this.engine.restarting -= 1;
      if (this.done) return;
      if (this.engine.isClosed) {
        this.done = true;
        this.sent = undefined;
        try {
          this.owner.closed(H2_REFUSED_STREAM);
        } catch {
          // The transport is closed: nothing is left to tell.
        }
        return;
      }
      this.start(this.engine.pick());
    }, REFUSED_RETRY_MS);
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
    this.sent = undefined;
    if (this.restartTimer !== undefined) {
      clearTimeout(this.restartTimer);
      this.restartTimer = undefined;
      this.engine.restarting -= 1;
    }
    if (!this.attached) return;
    this.attached = false;
    this.release();
    this.home.ended();
  }

  private hold(): void {
    if (this.holding || this.idle || !this.attached) return;
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
