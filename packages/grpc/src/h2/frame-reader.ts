import { notGrpcEndpoint, violation } from './errors.js';
import { ACK, FRAME_HEADER, H2_FRAME_SIZE_ERROR, MAX_STREAM_ID, PADDED, SETTINGS } from './frames.js';

/** Called for every whole frame; `buf[start..end)` is its payload, valid only during the call. */
export type FrameHandler = (
  type: number,
  flags: number,
  streamId: number,
  buf: Buffer,
  start: number,
  end: number,
) => void;

/**
 * Cuts the bytes of a socket into HTTP/2 frames. The frames of one read are handled in one loop
 * (views of the read, no copy); only a frame cut by a read's end is copied, once, into a buffer
 * of its own size. Each frame's length is checked on its 9-byte header against the most we allow,
 * so a peer that announces more is refused at once instead of buffered; the first frame must be
 * SETTINGS, which tells a wrong port (HTTP/1.x, random bytes) from an HTTP/2 server.
 */
export class H2FrameReader {
  private partial: Buffer | undefined;
  private partialLength = 0;
  private first = true;

  constructor(
    private readonly url: URL,
    private readonly maxFrame: number,
  ) {}

  /**
   * Hands every whole frame of `chunk` to `handle`, in order; `stop()` ends the loop (the
   * connection closed under it). Throws an `H2Violation` or a `TritonLlmError` for what cannot be HTTP/2.
   */
  push(chunk: Buffer, handle: FrameHandler, stop: () => boolean): void {
    let at = 0;
    if (this.partial !== undefined) {
      at = this.completePartial(chunk, handle);
      if (this.partial !== undefined || stop()) return;
    }
    while (chunk.length - at >= FRAME_HEADER) {
      const end = at + FRAME_HEADER + this.frameLength(chunk, at);
      if (end > chunk.length) break;
      handle(
        chunk[at + 3]!,
        chunk[at + 4]!,
        chunk.readUInt32BE(at + 5) & MAX_STREAM_ID,
        chunk,
        at + FRAME_HEADER,
        end,
      );
      if (stop()) return;
      at = end;
    }
    if (at < chunk.length) this.keepPartial(chunk, at);
  }

  private frameLength(buf: Buffer, at: number): number {
    if (this.first) this.checkFirstFrame(buf, at);
    const length = (buf[at]! << 16) | (buf[at + 1]! << 8) | buf[at + 2]!;
    if (length > this.maxFrame) {
      throw violation(
        `a frame of type 0x${buf[at + 3]!.toString(16)} announces ${length} bytes, more than the ${this.maxFrame} we allow (SETTINGS_MAX_FRAME_SIZE)`,
        H2_FRAME_SIZE_ERROR,
      );
    }
    return length;
  }

  private checkFirstFrame(buf: Buffer, at: number): void {
    if (buf.toString('latin1', at, at + 5) === 'HTTP/') {
      const line = buf.toString('latin1', at, Math.min(buf.length, at + 80)).split('\r\n')[0] ?? '';
      const version = /^HTTP\/[\d.]+/.exec(line)?.[0] ?? 'HTTP/1.x';
      throw notGrpcEndpoint(this.url, `answered ${version} ("${line}")`);
    }
    if (buf[at + 3] !== SETTINGS || (buf[at + 4]! & ACK) !== 0) {
      throw violation(
        `its first frame is not SETTINGS (first bytes 0x${buf.toString('hex', at, at + FRAME_HEADER)}): the peer does not speak HTTP/2 or broke it`,
      );
    }
    this.first = false;
  }

  private keepPartial(chunk: Buffer, at: number): void {
    const have = chunk.length - at;
    const total = have >= FRAME_HEADER ? FRAME_HEADER + this.frameLength(chunk, at) : FRAME_HEADER;
    this.partial = Buffer.allocUnsafe(total);
    chunk.copy(this.partial, 0, at);
    this.partialLength = have;
  }

  /** Completes the kept frame from `chunk` and hands it on when whole; returns the bytes used. */
  private completePartial(chunk: Buffer, handle: FrameHandler): number {
    let partial = this.partial!;
    let used = 0;
    if (this.partialLength < FRAME_HEADER) {
      used = Math.min(FRAME_HEADER - this.partialLength, chunk.length);
      chunk.copy(partial, this.partialLength, 0, used);
      this.partialLength += used;
      if (this.partialLength < FRAME_HEADER) return used;
      const total = FRAME_HEADER + this.frameLength(partial, 0);
      if (total > partial.length) {
        const grown = Buffer.allocUnsafe(total);
        partial.copy(grown, 0, 0, FRAME_HEADER);
        partial = grown;
        this.partial = grown;
      }
    }
    const take = Math.min(partial.length - this.partialLength, chunk.length - used);
    chunk.copy(partial, this.partialLength, used, used + take);
    this.partialLength += take;
    used += take;
    if (this.partialLength < partial.length) return used;
    this.partial = undefined;
    this.partialLength = 0;
    handle(
      partial[3]!,
      partial[4]!,
      partial.readUInt32BE(5) & MAX_STREAM_ID,
      partial,
      FRAME_HEADER,
      partial.length,
    );
    return used;
  }
}

/** A frame's payload bounds without its padding. */
export function unpad(flags: number, buf: Buffer, start: number, end: number): [number, number] {
  if ((flags & PADDED) === 0) return [start, end];
  if (end === start) throw violation('a PADDED frame without its pad length', H2_FRAME_SIZE_ERROR);
  const padding = buf[start]!;
  if (padding >= end - start) throw violation('padding longer than the frame');
  return [start + 1, end - padding];
}
