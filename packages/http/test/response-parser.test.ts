import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ChunkTooLarge, MalformedResponse, NotHttp1Response } from '../src/engine/index.js';
import { type ResponseHead, ResponseParser } from '../src/node/response-parser.js';

/** Feeds `pieces` to a parser and reports what it read. */
function parse(pieces: readonly Buffer[], closeAtEnd: boolean, maxChunkBytes?: number) {
  const heads: ResponseHead[] = [];
  const body: Buffer[] = [];
  let completions = 0;
  const parser = new ResponseParser(
    {
      onHead: (head) => heads.push(head),
      // Copied: views are valid only during the call.
      onBody: (bytes, from, to) => body.push(Buffer.from(bytes.subarray(from, to))),
      onComplete: () => completions++,
    },
    maxChunkBytes,
  );
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
    ['bytes that are not HTTP at all', Buffer.from('SSH-2.0-OpenSSH_9.6\r\n'), /status line, got "SSH-2/],
    [
      'both Transfer-Encoding and Content-Length (a smuggling shape)',
      Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n5\r\nabcde\r\n'),
      /both transfer-encoding and content-length/,
    ],
    [
      'a chunk size of more than 12 hex digits',
      Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1000000000000\r\n'),
      /chunk size/,
    ],
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
    // Only an HTTP/2 answer is reported as one (issue 55).
    expect(() => parse([wire], false)).not.toThrow(NotHttp1Response);
  });

  it('tells an HTTP/2 server (the gRPC port) by its SETTINGS frame, even when it arrives a byte at a time', () => {
    // The SETTINGS frame Node's HTTP/2 server sends first: 18 bytes of settings on stream 0.
    const settings = Buffer.from([0, 0, 18, 4, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 100, 0, 4, 0, 1, 0, 0]);
    const bytewise = [...settings].map((b) => Buffer.of(b));
    for (const pieces of [[settings], bytewise]) {
      expect(() => parse(pieces, false)).toThrow(NotHttp1Response);
      expect(() => parse(pieces, false)).toThrow(/answered HTTP\/2/);
    }
  });

  it('refuses a chunk announced larger than maxChunkBytes at its size line, on either read path', () => {
    const head = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n';
    // A whole size line in one read, and one cut in two (the slow path), each one past the limit.
    for (const pieces of [[`${head}401\r\n`], [`${head}4`, '01\r\n'], [`${head}FFFFFFFFFF\r\n`]]) {
      const wire = pieces.map((p) => Buffer.from(p));
      expect(() => parse(wire, false, 1024)).toThrow(ChunkTooLarge);
    }
    const fits = parse([Buffer.from(`${head}400\r\n${'a'.repeat(1024)}\r\n0\r\n\r\n`)], false, 1024);
    expect({ bytes: fits.body.length, completions: fits.completions }).toEqual({
      bytes: 1024,
      completions: 1,
    });
  });
});
