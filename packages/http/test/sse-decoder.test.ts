import { TritonLlmError } from '@trtllm/sdk';
import { createParser } from 'eventsource-parser';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lastEventEnd, SseDecoder } from '../src/call/sse-decoder.js';

const CONTEXT = { what: 'POST /generate_stream' };
const encoder = new TextEncoder();

/** The data of every event eventsource-parser reads from the whole text, ending it as the decoder does. */
function reference(text: string): string[] {
  const out: string[] = [];
  const parser = createParser({ onEvent: (e) => out.push(e.data) });
  parser.feed(text);
  // A lone CR at the very end ends its line once the stream is known to be over.
  if (text.endsWith('\r')) parser.feed('\n');
  return out;
}

/** Feeds `bytes` cut at `cuts`, through a read buffer that is overwritten after each read. */
function decode(bytes: Uint8Array, cuts: readonly number[], limit = 1 << 20): string[] {
  const decoder = new SseDecoder(CONTEXT, limit);
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1))), bytes.length].sort((a, b) => a - b);
  const buffer = new Uint8Array(bytes.length + 8);
  let at = 0;
  for (const p of points) {
    // Each read lands at a different offset of a reused buffer, with stale bytes around it.
    const offset = p % 5;
    buffer.fill(10);
    buffer.set(bytes.subarray(at, p), offset);
    decoder.feed(buffer, offset, offset + p - at);
    at = p;
  }
  decoder.end();
  return decoder.queue;
}

const line = fc.oneof(
  fc.string({ maxLength: 12 }).map((s) => `data: ${s.replace(/[\r\n]/g, '')}`),
  fc.string({ maxLength: 12 }).map((s) => `data:${s.replace(/[\r\n]/g, '')}`),
  fc.constant(': keep-alive'),
  fc.constant('event: message'),
  fc.constant('id: 7'),
  fc.constant('data: ünïcödé €'),
);
const terminator = fc.constantFrom('\n', '\r', '\r\n');
/** A stream of complete events, each of lines and a blank line, with any line terminators. */
const stream = fc
  .array(fc.tuple(fc.array(fc.tuple(line, terminator), { minLength: 1, maxLength: 4 }), terminator), {
    maxLength: 6,
  })
  .map((events) =>
    events
      .map(([lines, end]) => {
        const text = lines.map(([l, t]) => l + t).join('');
        // A CR then LF is one line end, not a blank line: such an event would not be complete.
        return text + (text.endsWith('\r') && end === '\n' ? '\r\n' : end);
      })
      .join(''),
  );

describe('the SSE decoder (bytes in, the data of complete events out)', () => {
  it('reads what eventsource-parser reads from the whole text, however the bytes are cut', () => {
    fc.assert(
      fc.property(stream, fc.array(fc.nat(), { maxLength: 8 }), (text, cuts) => {
        expect(decode(encoder.encode(text), cuts)).toEqual(reference(text));
      }),
      { numRuns: 500 },
    );
  });

  it('finds the end of the last complete event with the two bytes before the read', () => {
    const at = (text: string, before = '\n\n', final = false) => {
      const b = encoder.encode(text);
      return lastEventEnd(b, 0, b.length, before.charCodeAt(1), before.charCodeAt(0), final);
    };
    expect(at('data: a\n\ndata: b')).toBe(9);
    expect(at('data: a\r\n\r\ndata: b\n')).toBe(11);
    expect(at('\n', 'x\n')).toBe(1);
    expect(at('\ndata', 'x\r')).toBe(-1); // the LF completes the CRLF before the read
    expect(at('\r\n', 'x\r')).toBe(2);
    expect(at('data: a\r\r')).toBe(-1); // the last CR may be the first half of a CRLF
    expect(at('data: a\r\r', '\n\n', true)).toBe(9);
    expect(at('data: a\n')).toBe(-1);
  });

  it('refuses an event larger than the limit while its bytes arrive, holding no more than the limit', () => {
    const limit = 64 * 1024;
    const decoder = new SseDecoder(CONTEXT, limit);
    const read = encoder.encode(`data: ${'a'.repeat(16 * 1024 - 6)}`);
    let error: unknown;
    let reads = 0;
    try {
      for (reads = 1; reads < 100; reads++) decoder.feed(read, 0, read.length);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(TritonLlmError);
    expect((error as TritonLlmError).code).toBe('resource_exhausted');
    expect((error as TritonLlmError).message).toMatch(
      /an event of the stream exceeds maxResponseBytes \(65536 bytes\)/,
    );
    expect((error as TritonLlmError).message).toMatch(/httpTransport\(\{ maxResponseBytes \}\)/);
    // The fifth read of 16 KiB is the first past 64 KiB: refused then, not at the event's end.
    expect(reads).toBe(5);
  });

  it('takes an event of exactly the limit, and refuses one byte more', () => {
    const limit = 1000;
    const exact = encoder.encode(`data: ${'a'.repeat(limit - 8)}\n\n`);
    expect(exact.length).toBe(limit);
    expect(decode(exact, [500], limit)).toEqual(['a'.repeat(limit - 8)]);
    const over = encoder.encode(`data: ${'a'.repeat(limit - 7)}\n\n`);
    expect(() => decode(over, [500], limit)).toThrow(/exceeds maxResponseBytes/);
    // Whole in one read, too large: refused by its data's size.
    const whole = encoder.encode(`data: ${'a'.repeat(limit + 1)}\n\n`);
    expect(() => decode(whole, [], limit)).toThrow(/exceeds maxResponseBytes/);
  });

  it('fails a body that ends inside an event, and takes one that ends after blank lines', () => {
    expect(() => decode(encoder.encode('data: a\n\ndata: b'), [3])).toThrow(/in the middle of an event/);
    expect(decode(encoder.encode('data: a\n\n\n\n'), [9])).toEqual(['a']);
  });
});
