import { describe, expect, it } from 'vitest';
import { takeDataLines } from '../src/call/data-lines.js';

/** What takeDataLines hands over of `bytes[from, to)`, and where it stops. */
function take(text: string, from = 0, to = Buffer.byteLength(text), limit?: number) {
  const bytes = Buffer.from(text);
  const events: { data: string; escapes: boolean }[] = [];
  const rest = takeDataLines(bytes, from, to, limit, {
    onDataLine: (b, start, end, escapes) =>
      events.push({
        data: Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('utf8', start, end),
        escapes,
      }),
  });
  return { events, rest };
}

describe('takeDataLines', () => {
  it('takes every whole one-line event of a read, in order', () => {
    const { events, rest } = take('data: {"a":1}\n\ndata: {"a":2}\n\n');
    expect(events.map((e) => e.data)).toEqual(['{"a":1}', '{"a":2}']);
    expect(rest).toBe(30);
  });

  it('stops at an event with a CR and leaves it to the SSE decoder', () => {
    const text = 'data: {"a":1}\n\ndata: {"a":2}\r\n\r\ndata: {"a":3}\n\n';
    const { events, rest } = take(text);
    expect(events.map((e) => e.data)).toEqual(['{"a":1}']);
    expect(rest).toBe(15);
  });

  it('reads only the range it is given: bytes past its end are not part of the body', () => {
    // Chunked framing follows a chunk's data: its CRLF must not stop the events before it.
    const text = 'XXdata: {"a":1}\n\ndata: {"a":2}\n\n\r\n1e\r\n';
    const { events, rest } = take(text, 2, 32);
    expect(events.map((e) => e.data)).toEqual(['{"a":1}', '{"a":2}']);
    expect(rest).toBe(32);
  });

  it('leaves an event cut by the end of the range', () => {
    const text = 'data: {"a":1}\n\ndata: {"a":2}\n\n';
    const { events, rest } = take(text, 0, 29);
    expect(events.map((e) => e.data)).toEqual(['{"a":1}']);
    expect(rest).toBe(15);
  });

  it('marks only the events that hold a \\u escape', () => {
    const { events } = take('data: {"a":"x"}\n\ndata: {"a":"\\u00e9"}\n\ndata: {"a":"y"}\n\n');
    expect(events.map((e) => e.escapes)).toEqual([false, true, false]);
  });

  it('answers -1 for an event over the size limit', () => {
    expect(take('data: {"a":"0123456789"}\n\n', 0, 26, 10).rest).toBe(-1);
  });
});
