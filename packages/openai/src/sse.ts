import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { toOpenAiError } from './api-error.js';

/**
 * Responses of `createOpenAiServer`'s own node:http server, which an {@link SseWriter} may frame
 * itself; `server.handler` mounted elsewhere never is.
 */
export const ownResponses = new WeakSet<ServerResponse>();

declare const utf8Bytes: unique symbol;

/**
 * SSE text as it goes on the wire: its UTF-8 bytes, one per character (a latin1 string), written
 * without an encoding pass and sized by its length. V8 keeps a string with any character past
 * U+00FF at two bytes a character and encodes it to UTF-8 one character at a time, so one such
 * token (an ensemble's U+FFFD for a partial character, any CJK text) sent the whole write, the
 * ASCII of every chunk around it included, down that slow path. Only non-ASCII text is converted,
 * where it is made (docs/PERFORMANCE.md has the measurement).
 */
export type SseText = string & { readonly [utf8Bytes]: true };

// biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range, control characters included
const NOT_ASCII = /[^\x00-\x7f]/;

/** `text` as {@link SseText}: itself when ASCII, else its UTF-8 bytes. */
export function sseText(text: string): SseText {
  return (NOT_ASCII.test(text) ? Buffer.from(text, 'utf8').toString('latin1') : text) as SseText;
}

/** SSE texts one after another. */
export function joinSse(parts: readonly SseText[]): SseText {
  let text = '';
  for (const part of parts) text += part;
  return text as SseText;
}

/** No events. */
export const NO_EVENTS = '' as SseText;
const DONE_EVENT = sseText('data: [DONE]\n\n');

/** One HTTP/1.1 chunk of `text`, whose length is its size in bytes. */
function chunk(text: SseText): string {
  return `${text.length.toString(16)}\r\n${text}\r\n`;
}

/** One `data:` block of the event stream, for a JSON text. */
export function sseEvent(json: string): SseText {
  return sseText(`data: ${json}\n\n`);
}

/** The `data:` blocks of several chunk objects, in order, as one text. */
export function sseEvents(chunks: readonly unknown[]): SseText {
  return joinSse(chunks.map((c) => sseEvent(JSON.stringify(c))));
}

/**
 * Server-sent events as OpenAI clients parse them: `data: <json>` blocks and a final
 * `data: [DONE]`. Writes wait for the socket to drain, so a slow reader slows the upstream
 * iteration instead of growing a buffer.
 *
 * Events given while the event loop handles one round of I/O (the tokens of every upstream read
 * that round) go out as one write per response once that round is done (`setImmediate`), not one
 * per event or per tick: each write is an HTTP chunk and a system call (docs/PERFORMANCE.md has
 * what it saved). An event waits at most for the rest of that round, as a Rust server's tasks wait
 * for their reactor. The first write goes through `res.write`, which sends the headers with it; later
 * ones may go to the socket framed here (see {@link takeChunks}).
 */
export class SseWriter {
  private opened = false;
  /** The response's socket, once this writer frames the chunks itself (see {@link takeChunks}). */
  private socket: Socket | undefined;
  /** Events of this turn, not yet handed to the response. */
  private pending = NO_EVENTS;
  private flushScheduled = false;
  /** The last write found the socket full: the next send waits for it to drain. */
  private full = false;
  private readonly flush = (): void => {
    this.flushScheduled = false;
    this.writePending();
  };

  /** Whether the response is one of our own server's, looked up once (see {@link takeChunks}). */
  private readonly own: boolean;

  constructor(
    private readonly res: ServerResponse,
    private readonly headers: Readonly<Record<string, string>> = {},
  ) {
    this.own = ownResponses.has(res);
  }

  /** True once the client has gone away. */
  get closed(): boolean {
    return this.res.destroyed || this.res.writableEnded || this.socket?.destroyed === true;
  }

  get started(): boolean {
    return this.opened;
  }

  /**
   * Sets the status line and headers; called by the first send. They leave with the first events
   * (node:http puts them in front of the first write), not in a packet of their own.
   */
  open(): void {
    if (this.opened) return;
    this.opened = true;
    this.res.writeHead(200, {
      ...this.headers,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      // Proxies such as nginx buffer responses unless told not to, which would hold every token back.
      'x-accel-buffering': 'no',
    });
  }

  /**
   * Queues SSE text (one or more `data:` blocks, see {@link sseEvent}) for this turn's write.
   * Undefined unless the socket is full: the caller awaits only then, which saves a microtask per
   * chunk.
   */
  send(events: SseText): Promise<void> | undefined {
    this.open();
    if (this.closed || events === '') return undefined;
    this.pending = (this.pending + events) as SseText;
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(this.flush);
    }
    return this.full ? this.drained() : undefined;
  }

  /** Ends a successful stream with the sentinel OpenAI clients stop on. */
  async done(): Promise<void> {
    await this.send(DONE_EVENT);
    this.end();
  }

  /**
   * Reports an error after the stream has begun. The status line is already gone, so the error
   * travels as a data event, which the official clients raise as an API error.
   */
  async fail(err: unknown): Promise<void> {
    await this.send(sseEvent(JSON.stringify(toOpenAiError(err).body)));
    this.end();
  }

  private end(): void {
    const text = this.pending;
    this.pending = NO_EVENTS;
    // One write for the last events and the terminating chunk, through node:http even once the
    // socket takes the chunks: it writes to that same socket, in order.
    if (text !== '' && !this.closed) this.res.end(Buffer.from(text, 'latin1'));
    else this.res.end();
  }

  private writePending(): void {
    const text = this.pending;
    if (text === '') return;
    this.pending = NO_EVENTS;
    if (this.closed) return;
    if (this.socket !== undefined) {
      this.full = !this.socket.write(chunk(text), 'latin1');
      return;
    }
    // A buffer, not a latin1 string: a middleware wrapping `res.write` may not pass an encoding on.
    this.full = !this.res.write(Buffer.from(text, 'latin1'));
    this.takeChunks();
  }

  /**
   * After the first write has put the status line and headers on the wire, the chunks of this
   * response go to its socket as one write each, framed here: node:http would frame each as four
   * writes and a writev. Only on a response of our own server (not one mounted in another, whose
   * middleware may wrap `res.write`), in chunked encoding, that owns its socket (a pipelined
   * response has none until the ones before it end; node:http flushes it in order when it gets one).
   */
  private takeChunks(): void {
    const socket = this.res.socket;
    if (this.own && this.res.chunkedEncoding && socket !== null) {
      this.socket = socket;
    }
  }

  private async drained(): Promise<void> {
    // The queued text goes out now, so the wait is for the socket, not for the tick.
    this.writePending();
    // Once the chunks go to the socket, it is the socket that fills and drains.
    const writable = this.socket ?? this.res;
    if (!writable.writableNeedDrain || this.closed) {
      this.full = false;
      return;
    }
    const settle = new AbortController();
    try {
      await Promise.race([
        once(writable, 'drain', { signal: settle.signal }),
        once(this.res, 'close', { signal: settle.signal }),
      ]);
    } finally {
      // Removes the listener that lost the race; its rejection is absorbed by the race.
      settle.abort();
      this.full = false;
    }
  }
}
