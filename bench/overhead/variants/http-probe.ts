import { connect, type Socket } from 'node:net';
import type { Endpoints, Variant } from './variant.js';

/** One request in flight on a connection. */
interface Call {
  tokens: number;
  text: string;
  readonly onFirstToken: (() => void) | undefined;
  readonly resolve: (tokens: number) => void;
  readonly reject: (err: Error) => void;
}

/** A keep-alive connection and where its answer's parse stands. */
interface Connection {
  readonly socket: Socket;
  call: Call | undefined;
  /** Bytes of the answer not yet parsed (a head, chunk-size line or event cut by a read). */
  carry: Buffer | undefined;
  headDone: boolean;
  /** Bytes of the current chunk still to come; -1 while its size line is awaited. */
  remaining: number;
  /** Bytes of the CRLF after a chunk's data still to skip. */
  skip: number;
  /** The start of an event cut by a chunk or read boundary. */
  event: Buffer | undefined;
}

// One read buffer for every connection, as the SDK's Node engine has: a read is parsed before the next lands.
const READ_BUFFER = Buffer.allocUnsafe(64 * 1024);
const HEAD_END = Buffer.from('\r\n\r\n');
const EVENT_END = Buffer.from('\n\n');

/**
 * A probe, not a client: how little CPU per token Node needs to stream Triton's
 * `generate_stream` over HTTP/1.1 when the bytes are read in JavaScript from plain `node:net`
 * sockets (one keep-alive connection per stream in flight, as HTTP/1.1 allows, a shared read
 * buffer, chunked framing and `data:` events found by byte search, one `JSON.parse` per event).
 * It skips what a real client must do: no status or header checks (an error answer goes unseen),
 * no SSE fields besides one-line `data:`, no limits, no TLS, no deadlines, no cancellation, no
 * retry of a request a closing keep-alive connection lost. Its figures bound what an HTTP client
 * written on sockets could reach, as the socket probe's do for HTTP/2.
 */
export function httpProbeVariant(endpoints: Endpoints): Variant {
  const url = new URL(endpoints.httpUrl);
  const idle: Connection[] = [];
  const open = new Set<Connection>();
  const head =
    `POST /v2/models/ensemble/generate_stream HTTP/1.1\r\nhost: ${url.host}\r\n` +
    'content-type: application/json\r\n';

  const fail = (c: Connection, err: Error): void => {
    open.delete(c);
    const call = c.call;
    c.call = undefined;
    call?.reject(err);
  };

  const connection = (): Connection => {
    const pooled = idle.pop();
    if (pooled !== undefined) return pooled;
    const c: Connection = {
      socket: undefined as unknown as Socket,
      call: undefined,
      carry: undefined,
      headDone: false,
      remaining: -1,
      skip: 0,
      event: undefined,
    };
    const socket = connect({
      host: url.hostname,
      port: Number(url.port),
      onread: {
        buffer: READ_BUFFER,
        callback: (n: number, buf: Uint8Array) => {
          onBytes(c, (buf as Buffer).subarray(0, n));
          return true;
        },
      },
    });
    socket.setNoDelay(true);
    socket.on('error', (err) => fail(c, err));
    socket.on('close', () => {
      const i = idle.indexOf(c);
      if (i >= 0) idle.splice(i, 1);
      fail(c, new Error('the connection closed'));
    });
    (c as { socket: Socket }).socket = socket;
    open.add(c);
    return c;
  };

  const onEvent = (call: Call, bytes: Buffer, from: number, to: number): void => {
    // `data: ` then the JSON of one response.
    const json = JSON.parse(bytes.toString('utf8', from + 6, to)) as { text_output?: unknown };
    if (typeof json.text_output !== 'string') return;
    if (call.tokens === 0) call.onFirstToken?.();
    call.tokens += 1;
    call.text += json.text_output;
  };

  /** The body's bytes of one chunk, in order: whole events are parsed, a cut one is kept. */
  const onData = (c: Connection, bytes: Buffer, from: number, to: number): void => {
    const call = c.call!;
    let buf = bytes;
    let at = from;
    let end = to;
    if (c.event !== undefined) {
      buf = Buffer.concat([c.event, bytes.subarray(from, to)]);
      c.event = undefined;
      at = 0;
      end = buf.length;
    }
    for (;;) {
      const stop = buf.indexOf(EVENT_END, at);
      if (stop < 0 || stop + 2 > end) break;
      onEvent(call, buf, at, stop);
      at = stop + 2;
    }
    if (at < end) c.event = Buffer.from(buf.subarray(at, end));
  };

  const done = (c: Connection): void => {
    const call = c.call!;
    c.call = undefined;
    c.headDone = false;
    c.remaining = -1;
    c.skip = 0;
    c.event = undefined;
    idle.push(c);
    call.resolve(call.tokens);
  };

  const onBytes = (c: Connection, read: Buffer): void => {
    if (c.call === undefined) return;
    let buf = read;
    if (c.carry !== undefined) {
      buf = Buffer.concat([c.carry, read]);
      c.carry = undefined;
    }
    let at = 0;
    if (!c.headDone) {
      const i = buf.indexOf(HEAD_END);
      if (i < 0) {
        c.carry = Buffer.from(buf);
        return;
      }
      c.headDone = true;
      at = i + 4;
    }
    while (at < buf.length) {
      if (c.skip > 0) {
        const n = Math.min(c.skip, buf.length - at);
        c.skip -= n;
        at += n;
        continue;
      }
      if (c.remaining < 0) {
        const lf = buf.indexOf(10, at);
        if (lf < 0) {
          c.carry = Buffer.from(buf.subarray(at));
          return;
        }
        const size = Number.parseInt(buf.toString('latin1', at, lf), 16);
        at = lf + 1;
        if (size === 0) {
          // The last chunk (no trailers): the answer is over and the connection free.
          done(c);
          return;
        }
        c.remaining = size;
        continue;
      }
      const n = Math.min(c.remaining, buf.length - at);
      onData(c, buf, at, at + n);
      c.remaining -= n;
      at += n;
      if (c.remaining === 0) {
        c.remaining = -1;
        c.skip = 2;
      }
    }
  };

  return {
    stream(prompt, maxTokens, id, onFirstToken) {
      const body = `{"id":"${id}","text_input":${JSON.stringify(prompt)},"max_tokens":${maxTokens},"stream":true}`;
      const c = connection();
      return new Promise<number>((resolve, reject) => {
        c.call = { tokens: 0, text: '', onFirstToken, resolve, reject };
        c.socket.write(`${head}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      });
    },
    close: async () => {
      for (const c of open) c.socket.destroy();
      open.clear();
      idle.length = 0;
    },
  };
}
