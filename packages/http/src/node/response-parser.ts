import {
  ChunkTooLarge,
  type ResponseHead as EngineHead,
  isHttp2Start,
  MalformedResponse,
  NotHttp1Response,
} from '../engine/index.js';

/** Where {@link ResponseParser} hands what it reads; body views are valid only during the call. */
export interface ResponseSink {
  onHead(head: ResponseHead): void;
  /** The body bytes `bytes[from, to)`: a range rather than a view, which would be a Buffer per chunk. */
  onBody(bytes: Buffer, from: number, to: number): void;
  /** The body ended where its framing says it does. */
  onComplete(): void;
}

/** Status line and headers of a response (names in lower case, repeated ones joined by `, `). */
export interface ResponseHead extends EngineHead {
  readonly headers: ReadonlyMap<string, string>;
  /** The connection may carry another request once this body is read. */
  readonly keepAlive: boolean;
}

// Status line and headers larger than this are not a Triton (or proxy) answer worth waiting for.
const MAX_HEAD_BYTES = 64 * 1024;
const MAX_LINE_BYTES = 4 * 1024;
const CRLF_CRLF = Buffer.from('\r\n\r\n');
const LF_LF = Buffer.from('\n\n');

type State = 'head' | 'size' | 'data' | 'data-end' | 'trailer' | 'length' | 'close' | 'done';

/**
 * Reads one HTTP/1.1 response from the bytes of a connection, as they arrive: the head, then the
 * body by its framing (chunked, Content-Length, or until the connection closes), skipping 1xx
 * interim answers and chunk extensions and trailers. What it does not need (compression, upgrades,
 * pipelining) it refuses by not asking for it: the request carries no Accept-Encoding and waits
 * for its answer before the next one goes out.
 */
export class ResponseParser {
  private state: State = 'head';
  private pending: Buffer | undefined;
  private line = '';
  private remaining = 0;
  /** Bytes arrived after the response ended: the connection is not reusable. */
  trailing = false;

  constructor(
    private readonly sink: ResponseSink,
    /** Chunks announced larger are refused at their size line (see EngineRequest.maxChunkBytes). */
    private readonly maxChunkBytes = Number.POSITIVE_INFINITY,
  ) {}

  get done(): boolean {
    return this.state === 'done';
  }

  /** Whether any byte of a response arrived (a reused connection that fails before may be retried). */
  get started(): boolean {
    return this.state !== 'head' || this.pending !== undefined;
  }

  /** Parses the next bytes of the connection; throws {@link MalformedResponse}. */
  push(bytes: Buffer): void {
    let at = 0;
    while (at < bytes.length) {
      switch (this.state) {
        case 'head':
          at = this.readHead(bytes, at);
          break;
        case 'size':
        case 'data-end':
        case 'trailer':
          at = this.readLine(bytes, at);
          break;
        case 'data':
        case 'length': {
          const take = Math.min(this.remaining, bytes.length - at);
          this.remaining -= take;
          const from = at;
          at += take;
          if (this.remaining === 0) this.state = this.state === 'data' ? 'data-end' : 'done';
          this.sink.onBody(bytes, from, at);
          if (this.state === 'done') this.sink.onComplete();
          break;
        }
        case 'close':
          this.sink.onBody(bytes, at, bytes.length);
          return;
        case 'done':
          this.trailing = true;
          return;
      }
    }
  }

  /** The connection closed. True when that ends the response (a body delimited by the close). */
  end(): boolean {
    if (this.state === 'close') {
      this.state = 'done';
      this.sink.onComplete();
      return true;
    }
    return this.state === 'done';
  }

  private readHead(bytes: Buffer, at: number): number {
    const joined =
      this.pending === undefined ? bytes.subarray(at) : Buffer.concat([this.pending, bytes.subarray(at)]);
    if (joined.length >= 5 && joined.toString('latin1', 0, 5) !== 'HTTP/') {
      // An HTTP/2 server's SETTINGS needs 9 bytes to be told from garbage; until then, wait.
      const http2 = isHttp2Start(joined);
      if (http2 !== undefined) throw notHttp1(joined, http2);
    }
    let end = joined.indexOf(CRLF_CRLF);
    let sep = 4;
    if (end < 0) {
      end = joined.indexOf(LF_LF);
      sep = 2;
    }
    if (end < 0) {
      if (joined.length > MAX_HEAD_BYTES) throw new MalformedResponse('the response head exceeds 64 KiB');
      // Copied: the caller's buffer is reused for the next read.
      this.pending = Buffer.from(joined);
      return bytes.length;
    }
    const consumed = end + sep - (this.pending?.length ?? 0);
    this.pending = undefined;
    this.startBody(parseHead(joined.toString('latin1', 0, end)));
    return at + consumed;
  }

  private startBody(head: ResponseHead): void {
    const { status, headers } = head;
    // Interim answers (100 Continue, 103 Early Hints) precede the real one.
    if (status >= 100 && status < 200 && status !== 101) return;
    if (status === 101)
      throw new MalformedResponse('the server switched protocols (101), which was not asked for');
    const coding = headers.get('transfer-encoding');
    const length = headers.get('content-length');
    if (status === 204 || status === 304) {
      this.state = 'done';
    } else if (coding !== undefined) {
      // Both framings at once is how responses are smuggled past proxies (RFC 9112, 6.3): refused,
      // as undici refuses it, rather than guessing which one the sender meant.
      if (length !== undefined)
        throw new MalformedResponse('both transfer-encoding and content-length are set');
      if (!/(?:^|,)\s*chunked\s*$/i.test(coding)) {
        throw new MalformedResponse(`unsupported transfer-encoding '${coding}'`);
      }
      this.state = 'size';
    } else if (length !== undefined) {
      if (!/^\d{1,15}$/.test(length)) throw new MalformedResponse(`bad content-length '${length}'`);
      this.remaining = Number(length);
      this.state = this.remaining === 0 ? 'done' : 'length';
    } else {
      this.state = 'close';
    }
    const keepAlive = head.keepAlive && this.state !== 'close';
    this.sink.onHead(keepAlive === head.keepAlive ? head : { ...head, keepAlive });
    if (this.state === 'done') this.sink.onComplete();
  }

  /** One line of chunked framing: a size, the CRLF after a chunk's data, or a trailer. */
  private readLine(bytes: Buffer, at: number): number {
    // The usual case, a whole size line or CRLF in this read, is read from the bytes themselves.
    if (this.line === '') {
      if (this.state === 'data-end' && bytes[at] === 13 && bytes[at + 1] === 10) {
        this.state = 'size';
        return at + 2;
      }
      if (this.state === 'size') {
        const end = sizeLineEnd(bytes, at);
        if (end > 0) {
          this.chunk(hexValue(bytes, at, end - 2));
          return end;
        }
      }
    }
    const lf = bytes.indexOf(10, at);
    const stop = lf < 0 ? bytes.length : lf;
    this.line += bytes.toString('latin1', at, stop);
    if (this.line.length > MAX_LINE_BYTES) throw new MalformedResponse('a chunk framing line exceeds 4 KiB');
    if (lf < 0) return bytes.length;
    const line = this.line.endsWith('\r') ? this.line.slice(0, -1) : this.line;
    this.line = '';
    switch (this.state) {
      case 'size': {
        const hex = /^([0-9a-fA-F]{1,12})[ \t]*(?:;.*)?$/.exec(line)?.[1];
        if (hex === undefined)
          throw new MalformedResponse(`bad chunk size line ${JSON.stringify(line.slice(0, 40))}`);
        this.chunk(Number.parseInt(hex, 16));
        break;
      }
      case 'data-end':
        if (line !== '') throw new MalformedResponse('a chunk is longer than its size');
        this.state = 'size';
        break;
      default:
        // Trailer fields are not used; the empty line ends the body.
        if (line === '') {
          this.state = 'done';
          this.sink.onComplete();
        }
    }
    return lf + 1;
  }

  /** A chunk's size line was read: its data follows, or the body's end (size 0). */
  private chunk(size: number): void {
    // Refused before any of it is read: its size alone says it cannot be taken (issue 55).
    if (size > this.maxChunkBytes) throw new ChunkTooLarge(size, this.maxChunkBytes);
    this.remaining = size;
    this.state = size === 0 ? 'trailer' : 'data';
  }
}

function parseHead(text: string): ResponseHead {
  const lines = text.split(/\r?\n/);
  const statusLine = lines[0] ?? '';
  const match = /^HTTP\/1\.([01]) (\d{3})(?: |$)/.exec(statusLine);
  if (match === null)
    throw new MalformedResponse(
      `expected an HTTP/1.1 status line, got ${JSON.stringify(statusLine.slice(0, 40))}`,
    );
  const headers = new Map<string, string>();
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i] as string;
    const colon = line.indexOf(':');
    if (colon <= 0) throw new MalformedResponse(`bad header line ${JSON.stringify(line.slice(0, 40))}`);
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    const previous = headers.get(name);
    headers.set(name, previous === undefined ? value : `${previous}, ${value}`);
  }
  const connection = headers.get('connection')?.toLowerCase() ?? '';
  const http10 = match[1] === '0';
  const keepAlive = http10 ? /\bkeep-alive\b/.test(connection) : !/\bclose\b/.test(connection);
  return { status: Number(match[2]), headers, keepAlive };
}

/** The error for an answer that does not start with a status line; an HTTP/2 server's says so. */
function notHttp1(start: Buffer, http2: boolean): MalformedResponse {
  const shown = JSON.stringify(start.toString('latin1', 0, 40));
  return http2
    ? new NotHttp1Response(`the server answered HTTP/2 (a SETTINGS frame), not HTTP/1.1: ${shown}`)
    : new MalformedResponse(`expected an HTTP/1.1 status line, got ${shown}`);
}

/** Where a plain `<hex>\r\n` size line starting at `at` ends (past its LF), or -1 if it is not one. */
function sizeLineEnd(bytes: Buffer, at: number): number {
  let i = at;
  while (i < bytes.length && i - at < 12 && isHexDigit(bytes[i] as number)) i++;
  return i > at && bytes[i] === 13 && bytes[i + 1] === 10 ? i + 2 : -1;
}

function isHexDigit(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);
}

function hexValue(bytes: Buffer, from: number, to: number): number {
  let value = 0;
  for (let i = from; i < to; i++) {
    const c = bytes[i] as number;
    value = value * 16 + (c <= 57 ? c - 48 : (c | 0x20) - 87);
  }
  return value;
}
