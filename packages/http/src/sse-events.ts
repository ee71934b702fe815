import { createParser } from 'eventsource-parser';
import { tooLarge } from './body.js';
import type { Call } from './call.js';
import { protocolError } from './errors.js';

// A blank line ends an event; `\r(?!\n)` keeps a lone CRLF from counting as two line ends.
const EVENT_END = /(?:\r\n|\r(?!\n)|\n)(?:\r\n|\r(?!\n)|\n)/g;

/**
 * The `data` of each server-sent event of a body, read from the network only when the consumer
 * asks for the next one (one network chunk at a time). The body must end cleanly after a
 * complete event: a connection that breaks fails with the call's network error, and a body that
 * stops inside an event with `protocol`. Leaving early (break, throw) closes the connection.
 * `limit` caps the size of a single event.
 */
export async function* sseData(
  body: ReadableStream<Uint8Array>,
  call: Call,
  limit: number | undefined,
): AsyncGenerator<string, void, undefined> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const queue: string[] = [];
  let overflow = false;
  const parser = createParser({
    onEvent: (event) => {
      queue.push(event.data);
    },
    onError: (error) => {
      if (error.type === 'max-buffer-size-exceeded') overflow = true;
    },
    ...(limit !== undefined ? { maxBufferSize: limit } : {}),
  });
  // Whether text has arrived since the last blank line, i.e. an event is still incomplete.
  let inEvent = false;
  let tail = '';
  const feed = (text: string): void => {
    const joined = tail + text;
    let end = -1;
    for (const match of joined.matchAll(EVENT_END)) end = match.index + match[0].length;
    inEvent = end >= 0 ? /\S/.test(joined.slice(end)) : inEvent || /\S/.test(text);
    tail = joined.slice(-3);
    parser.feed(text);
    if (overflow && limit !== undefined) throw tooLarge(call, limit);
  };
  let finished = false;
  try {
    for (;;) {
      while (queue.length > 0) yield queue.shift() as string;
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (err) {
        throw call.failure(err);
      }
      if (chunk.done) {
        feed(decoder.decode());
        while (queue.length > 0) yield queue.shift() as string;
        if (inEvent) throw protocolError('the event stream ended in the middle of an event', call.context);
        finished = true;
        return;
      }
      feed(decoder.decode(chunk.value, { stream: true }));
    }
  } finally {
    // Not awaited: the caller aborts the call right after, which closes the connection anyway.
    if (!finished) reader.cancel().catch(() => undefined);
  }
}
