import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MalformedResponse } from '../src/engine/index.js';
import { type ResponseHead, ResponseParser } from '../src/node/response-parser.js';

/** Feeds `pieces` to a parser and reports what it read. */
function parse(pieces: readonly Buffer[], closeAtEnd: boolean) {
  const heads: ResponseHead[] = [];
  const body: Buffer[] = [];
  let completions = 0;
  const parser = new ResponseParser({
    onHead: (head) => heads.push(head),
    // Copied: views are valid only during the call.
    onBody: (bytes, from, to) => body.push(Buffer.from(bytes.subarray(from, to))),
    onComplete: () => completions++,
  });
  for (const piece of pieces) parser.push(piece);
  const ended = closeAtEnd ? parser.end() : parser.done;
  return { heads, body: Buffer.concat(body), completions, ended, trailing: parser.trailing };
}

function cut(wire: Buffer, offsets: readonly number[]): Buffer[] {
  const points = [...new Set(offsets.map((o) => o % (wire.length + 1)))].sort((a, b) => a - b);
  const pieces: Buffer[] = [];
  let at = 0;
  for (const p of [...points, wire.length]) {
    if (p > at) pieces.push(wire.subarray(at, p));
    at = Math.max(at, p);
  }
  return pieces;
}

const framing = fc.constantFrom('chunked', 'length', 'close');

describe('HTTP/1.1 response framing (Node sockets)', () => {
  it('reads head and body whatever the framing, chunk sizes and read boundaries', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 600 }),
        framing,
        fc.array(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 20 }),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 30 }),
        (bytes, kind, sizes, extras, offsets) => {
          const body = Buffer.from(bytes);
          let head = 'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nX-Twice: a\r\nx-twice: b\r\n';
          let payload: Buffer;
          if (kind === 'chunked') {
            head += 'Transfer-Encoding: chunked\r\n';
            const parts: Buffer[] = [];
            for (let at = 0, i = 0; at < body.length; i++) {
              const size = Math.min(sizes[i % sizes.length] as number, body.length - at);
              const ext = extras ? ';name=value' : '';
              parts.push(
                Buffer.from(`${size.toString(16)}${ext}\r\n`),
                body.subarray(at, at + size),
                Buffer.from('\r\n'),
              );
              at += size;
            }
            parts.push(Buffer.from(extras ? '0\r\nX-Trailer: t\r\n\r\n' : '0\r\n\r\n'));
            payload = Buffer.concat(parts);
          } else if (kind === 'length') {
            head += `Content-Length: ${body.length}\r\n`;
            payload = body;
          } else {
            head += 'Connection: close\r\n';
            payload = body;
          }
          // An interim 100 Continue before the answer is skipped.
          const interim = extras ? 'HTTP/1.1 100 Continue\r\n\r\n' : '';
          const wire = Buffer.concat([Buffer.from(`${interim}${head}\r\n`), payload]);
          const got = parse(cut(wire, offsets), kind === 'close');
          expect(got.heads).toHaveLength(1);
          expect(got.heads[0]?.status).toBe(200);
          expect(got.heads[0]?.headers.get('content-type')).toBe('text/event-stream');
          expect(got.heads[0]?.headers.get('x-twice')).toBe('a, b');
          expect(got.heads[0]?.keepAlive).toBe(kind !== 'close');
          expect(got.body.equals(body)).toBe(true);
          expect(got.completions).toBe(1);
          expect(got.ended).toBe(true);
          expect(got.trailing).toBe(false);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('marks bytes after the end of the response, so the connection is not reused', () => {
    const got = parse([Buffer.from('HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 200 OK\r\n')], false);
    expect(got.completions).toBe(1);
    expect(got.trailing).toBe(true);
  });

  it('reads HTTP/1.0 as closing unless it says keep-alive', () => {
    const close = parse([Buffer.from('HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n')], false);
    const kept = parse(
      [Buffer.from('HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n')],
      false,
    );
    expect(close.heads[0]?.keepAlive).toBe(false);
    expect(kept.heads[0]?.keepAlive).toBe(true);
  });

  it.each([
    ['an HTTP/2 server (the gRPC port)', Buffer.from([0, 0, 18, 4, 0, 0, 0, 0, 0, 0, 3]), /gRPC port/],
    [
      'a bad chunk size',
      Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n'),
      /chunk size/,
    ],
    [
      'a chunk longer than its size',
      Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n'),
      /longer/,
    ],
    ['a bad Content-Length', Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n'), /content-length/],
    [
      'a compressed body',
      Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n'),
      /transfer-encoding/,
    ],
    ['a header line without a colon', Buffer.from('HTTP/1.1 200 OK\r\nnonsense\r\n\r\n'), /header line/],
  ])('refuses %s', (_name, wire, message) => {
    expect(() => parse([wire], false)).toThrow(MalformedResponse);
    expect(() => parse([wire], false)).toThrow(message);
  });
});
