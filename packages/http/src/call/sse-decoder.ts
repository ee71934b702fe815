import { createParser, type EventSourceParser } from 'eventsource-parser';
import { protocolError } from '../errors.js';
import { tooLarge } from './body.js';
import type { Call } from './call.js';

// A blank line ends an event; `\r(?!\n)` keeps a lone CRLF from counting as two line ends.
const EVENT_END = /(?:\r\n|\r(?!\n)|\n)(?:\r\n|\r(?!\n)|\n)/g;
const NON_BLANK = /\S/;

/**
 * Text of an event stream in, the `data` of each complete event out (in `queue`), whatever the
 * chunk boundaries. Both engines share it: the fetch one feeds it decoded web-stream chunks, the
 * Node one decoded socket reads. `limit` caps the size of one event (`maxResponseBytes`).
 */
export class SseDecoder {
  readonly queue: string[] = [];
  /** Made on the first text: a reader that only ever hands over whole events never needs one. */
  private parser: EventSourceParser | undefined;
  private overflow = false;
  // Whether text has arrived since the last blank line, i.e. an event is still incomplete.
  private inEvent = false;
  private tail = '';
  /**
   * The text so far ended exactly at the end of an event with LF (`\n\n` or `\r\n\r\n`): the
   * parser holds nothing, so a reader may hand over whole one-line events itself ({@link push}).
   */
  idle = true;

  constructor(
    private readonly call: Call,
    private readonly limit: number | undefined,
  ) {}

  /** Parses more text; throws `resource_exhausted` when one event outgrows the limit. */
  feed(text: string): void {
    const joined = this.tail + text;
    let end = -1;
    EVENT_END.lastIndex = 0;
    for (let m = EVENT_END.exec(joined); m !== null; m = EVENT_END.exec(joined)) end = m.index + m[0].length;
    this.inEvent = end >= 0 ? NON_BLANK.test(joined.slice(end)) : this.inEvent || NON_BLANK.test(text);
    this.tail = joined.length > 3 ? joined.slice(-3) : joined;
    this.idle = end === joined.length && joined.endsWith('\n');
    this.parser ??= createParser({
      onEvent: (event) => {
        this.queue.push(event.data);
      },
      onError: (error) => {
        if (error.type === 'max-buffer-size-exceeded') this.overflow = true;
      },
      ...(this.limit !== undefined ? { maxBufferSize: this.limit } : {}),
    });
    this.parser.feed(text);
    if (this.overflow && this.limit !== undefined) throw tooLarge(this.call, this.limit);
  }

  /** The data of a whole event a reader found itself, while {@link idle}. */
  push(data: string): void {
    if (this.limit !== undefined && data.length > this.limit) throw tooLarge(this.call, this.limit);
    this.queue.push(data);
  }

  /** The body ended: fails with `protocol` when it stopped inside an event. */
  end(): void {
    if (this.inEvent)
      throw protocolError('the event stream ended in the middle of an event', this.call.context);
  }
}
