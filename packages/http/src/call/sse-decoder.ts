import { createParser, type EventSourceParser } from 'eventsource-parser';
import { type ErrorContext, protocolError } from '../errors.js';
import { concat, tooLarge } from './body.js';

const LF = 10;
const CR = 13;
const NON_BLANK = /\S/;
const EVENT = 'an event of the stream';

/**
 * Bytes of an event stream in, the `data` of each complete event out (in `queue`), whatever the
 * read boundaries. Both engines share it: the fetch one feeds it web-stream chunks, the Node one
 * the socket's reads (after Triton's whole one-line events were taken from them directly).
 *
 * An event still arriving is kept as the bytes it came as, and decoded only once its blank line
 * arrived: so its size is counted in bytes as they arrive, one compare per read against `limit`
 * (`maxResponseBytes`), and a stream that never ends an event costs at most the limit, never text
 * twice its size (issue 55: a 1 GiB `data:` line grew the client by 1.4 GiB). Event boundaries are
 * ASCII bytes, which never occur inside a multi-byte UTF-8 character, so decoding whole events
 * needs no streaming decoder. eventsource-parser reads the fields of complete events.
 */
export class SseDecoder {
  readonly queue: string[] = [];
  /** Made on the first event: a reader that only ever hands over whole one-line events never needs one. */
  private parser: EventSourceParser | undefined;
  private readonly text = new TextDecoder('utf-8', { ignoreBOM: true });
  /** Copies of the bytes of the event still arriving (an engine may reuse its read buffer). */
  private pending: Uint8Array[] = [];
  /** Their total: the size of that event so far. */
  private pendingBytes = 0;
  /** The last two bytes fed, for a blank line split across reads; the stream starts as after one. */
  private last1 = LF;
  private last2 = LF;
  private overflow = false;

  constructor(
    private readonly context: ErrorContext,
    private readonly limit: number,
    /** The engine's buffers are never written again (HttpEngine.ownBuffers): kept without a copy. */
    private readonly ownBuffers = false,
  ) {}

  /**
   * Whether every byte fed so far belongs to a complete event: a reader may then hand over whole
   * one-line events itself.
   */
  get idle(): boolean {
    return this.pendingBytes === 0;
  }

  /** Parses `bytes[from, to)`; throws `resource_exhausted` when one event outgrows the limit. */
  feed(bytes: Uint8Array, from: number, to: number): void {
    if (to <= from) return;
    const last1 = this.last1;
    const end = lastEventEnd(bytes, from, to, last1, this.last2, false);
    this.last2 = to - from > 1 ? (bytes[to - 2] as number) : this.last1;
    this.last1 = bytes[to - 1] as number;
    if (end < 0) {
      this.keep(bytes, from, to);
      return;
    }
    // The first event ends in this read: its size is what was kept plus its part here. Looked for
    // only when the events completed here are larger than the limit together (a rare case).
    if (this.pendingBytes > 0 && this.pendingBytes + end - from > this.limit) {
      const first = firstEventEnd(bytes, from, end, last1);
      if (this.pendingBytes + first - from > this.limit) {
        this.pending = [];
        throw tooLarge(this.context, this.limit, EVENT);
      }
    }
    let complete: Uint8Array;
    if (this.pendingBytes === 0) {
      complete = bytes.subarray(from, end);
    } else {
      this.pending.push(bytes.subarray(from, end));
      complete = concat(this.pending, this.pendingBytes + end - from);
      this.pending = [];
      this.pendingBytes = 0;
    }
    this.parse(this.text.decode(complete), bytes[end - 1] === CR);
    if (end < to) this.keep(bytes, end, to);
  }

  /** The body ended: a last event ended by a lone CR is read; fails with `protocol` inside an event. */
  end(): void {
    if (this.pendingBytes === 0) return;
    const bytes = concat(this.pending, this.pendingBytes);
    this.pending = [];
    this.pendingBytes = 0;
    const end = lastEventEnd(bytes, 0, bytes.length, this.last1, this.last2, true);
    if (end > 0) this.parse(this.text.decode(bytes.subarray(0, end)), bytes[end - 1] === CR);
    if (NON_BLANK.test(this.text.decode(bytes.subarray(Math.max(end, 0)))))
      throw protocolError('the event stream ended in the middle of an event', this.context);
  }

  /** Keeps the start of an event, refusing it the moment it outgrows the limit. */
  private keep(bytes: Uint8Array, from: number, to: number): void {
    this.pendingBytes += to - from;
    if (this.pendingBytes > this.limit) {
      this.pending = [];
      throw tooLarge(this.context, this.limit, EVENT);
    }
    // Else copied, as a Uint8Array's slice (a Buffer's is a view): the read buffer is reused.
    this.pending.push(
      this.ownBuffers ? bytes.subarray(from, to) : Uint8Array.prototype.slice.call(bytes, from, to),
    );
  }

  /** Text of whole events; `crEnd` when it ends with a lone CR, which the parser would hold. */
  private parse(text: string, crEnd: boolean): void {
    this.parser ??= createParser({
      onEvent: (event) => {
        // An event that came whole in one large read: its data cannot be smaller than this.
        if (event.data.length > this.limit) this.overflow = true;
        else this.queue.push(event.data);
      },
    });
    // The byte after that CR is known not to be LF, so a LF here ends the same line.
    this.parser.feed(crEnd ? `${text}\n` : text);
    if (this.overflow) throw tooLarge(this.context, this.limit, EVENT);
  }
}

/**
 * Where the last blank line in `bytes[from, to)` ends (the index past it), or -1 when none does:
 * the end of the last complete event. A line ends with CRLF, LF or CR (the SSE grammar); `before1`
 * and `before2` are the two bytes before `from`. A CR as the very last byte may be the first half of
 * a CRLF and is not counted, unless the stream is `final`.
 */
export function lastEventEnd(
  bytes: Uint8Array,
  from: number,
  to: number,
  before1: number,
  before2: number,
  final: boolean,
): number {
  const at = (i: number): number => (i >= from ? (bytes[i] as number) : i === from - 1 ? before1 : before2);
  const search = (byte: number, below: number): number =>
    below < from ? -1 : Math.max(bytes.lastIndexOf(byte, below), from - 1);
  let lf = search(LF, to - 1);
  let cr = search(CR, to - 1);
  for (;;) {
    const i = Math.max(lf, cr);
    if (i < from) return -1;
    // Where the line terminator ending at i starts.
    let start = i;
    if (bytes[i] === CR) {
      if (i === to - 1 && !final) {
        cr = search(CR, i - 1);
        continue;
      }
    } else if (at(i - 1) === CR) {
      start = i - 1;
    }
    const previous = at(start - 1);
    if (previous === LF || previous === CR) return i + 1;
    if (lf >= start) lf = search(LF, start - 1);
    if (cr >= start) cr = search(CR, start - 1);
  }
}

/**
 * Where the first blank line in `bytes[from, to)` ends (the index past it), or `to` when none
 * does; `before1` is the byte before `from`. A byte-by-byte scan, for the rare case that needs it.
 */
function firstEventEnd(bytes: Uint8Array, from: number, to: number, before1: number): number {
  let i = from;
  // A LF right after a CR that ended the previous read completes that CRLF.
  if (before1 === CR && bytes[i] === LF) i++;
  // Whether the line so far is empty (it follows a line end).
  let empty = before1 === LF || before1 === CR;
  for (; i < to; i++) {
    const c = bytes[i];
    if (c !== LF && c !== CR) {
      empty = false;
      continue;
    }
    if (c === CR && i + 1 < to && bytes[i + 1] === LF) i++;
    if (empty) return i + 1;
    empty = true;
  }
  return to;
}
