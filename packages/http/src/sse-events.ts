import type { Call } from './call.js';
import { SseDecoder } from './sse-decoder.js';

/**
 * The `data` of each server-sent event of a fetch body, read from the network only when the
 * consumer asks for the next one (one network chunk at a time). The body must end cleanly after a
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
  const sse = new SseDecoder(call, limit);
  const { queue } = sse;
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
        sse.feed(decoder.decode());
        while (queue.length > 0) yield queue.shift() as string;
        sse.end();
        finished = true;
        return;
      }
      sse.feed(decoder.decode(chunk.value, { stream: true }));
    }
  } finally {
    // Not awaited: the caller aborts the call right after, which closes the connection anyway.
    if (!finished) reader.cancel().catch(() => undefined);
  }
}
