import { TritonLlmError } from '@trtllm/sdk';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { H2Violation } from '../src/h2/errors.js';
import { H2FrameReader, unpad } from '../src/h2/frame-reader.js';
import { DATA, frame, PADDED, PING, SETTINGS } from '../src/h2/frames.js';

const URL_ = new URL('http://127.0.0.1:8001');
const MAX = 16_384;

/** Feeds `wire` to a reader in pieces cut at `cuts`; returns the frames it handed on. */
function readAll(wire: Buffer, cuts: number[]): { type: number; streamId: number; payload: number[] }[] {
  const reader = new H2FrameReader(URL_, MAX);
  const got: { type: number; streamId: number; payload: number[] }[] = [];
  let at = 0;
  for (const p of [...cuts, wire.length]) {
    reader.push(
      wire.subarray(at, p),
      (type, _flags, streamId, buf, start, end) =>
        got.push({ type, streamId, payload: [...buf.subarray(start, end)] }),
      () => false,
    );
    at = p;
  }
  return got;
}

describe('H2FrameReader', () => {
  it('hands on every frame whole and in order, however the socket reads cut them', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            streamId: fc.integer({ min: 1, max: 99 }),
            payload: fc.uint8Array({ maxLength: 300 }),
          }),
          {
            maxLength: 8,
          },
        ),
        fc.array(fc.nat(), { maxLength: 12 }),
        (frames, cuts) => {
          const wire = Buffer.concat([
            frame(SETTINGS, 0, 0),
            ...frames.map((f) => frame(DATA, 0, f.streamId, Buffer.from(f.payload))),
          ]);
          const points = [...new Set(cuts.map((c) => c % (wire.length + 1)))].sort((a, b) => a - b);
          const got = readAll(wire, points);
          expect(got).toEqual([
            { type: SETTINGS, streamId: 0, payload: [] },
            ...frames.map((f) => ({ type: DATA, streamId: f.streamId, payload: [...f.payload] })),
          ]);
        },
      ),
    );
  });

  it('refuses a frame longer than it allows on its 9-byte header, before any payload arrives', () => {
    const header = frame(DATA, 0, 1).subarray(0, 9);
    header.writeUIntBE(16 * 1024 * 1024 - 1, 0, 3);
    const reader = new H2FrameReader(URL_, MAX);
    reader.push(
      frame(SETTINGS, 0, 0),
      () => undefined,
      () => false,
    );
    let error: unknown;
    try {
      reader.push(
        header,
        () => undefined,
        () => false,
      );
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(H2Violation);
    expect((error as H2Violation).h2Code).toBe(0x6);
    expect((error as H2Violation).message).toContain(
      'announces 16777215 bytes, more than the 16384 we allow',
    );
  });

  it('names an HTTP/1.1 answer as not a gRPC endpoint, not retryable', () => {
    const reader = new H2FrameReader(URL_, MAX);
    let error: unknown;
    try {
      reader.push(
        Buffer.from('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n'),
        () => undefined,
        () => false,
      );
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(TritonLlmError);
    expect((error as TritonLlmError).code).toBe('unavailable');
    expect((error as TritonLlmError).retryable).toBe(false);
    expect((error as TritonLlmError).message).toContain('answered HTTP/1.1 ("HTTP/1.1 400 Bad Request")');
  });

  it('refuses a first frame other than SETTINGS as a protocol violation', () => {
    const reader = new H2FrameReader(URL_, MAX);
    expect(() =>
      reader.push(
        frame(PING, 0, 0, Buffer.alloc(8)),
        () => undefined,
        () => false,
      ),
    ).toThrow(/first frame is not SETTINGS/);
  });

  it('strips padding and refuses padding as long as the frame', () => {
    const payload = Buffer.from([3, 0x61, 0x62, 0, 0, 0]);
    expect(unpad(PADDED, payload, 0, payload.length)).toEqual([1, 3]);
    expect(unpad(0, payload, 0, payload.length)).toEqual([0, 6]);
    expect(() => unpad(PADDED, Buffer.from([5, 0, 0]), 0, 3)).toThrow(/padding longer than the frame/);
    expect(() => unpad(PADDED, Buffer.alloc(0), 0, 0)).toThrow(/without its pad length/);
  });
});
