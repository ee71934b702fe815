import { Code, ConnectError } from '@connectrpc/connect';

/** gRPC's 5-byte message prefix: a compressed flag, then the length as a 32-bit big-endian number. */
const PREFIX = 5;

/** A request message framed for the wire; `compressed` sets the prefix's flag. */
export function frameMessage(message: Uint8Array, compressed: boolean): Buffer {
  const frame = Buffer.allocUnsafe(PREFIX + message.length);
  frame[0] = compressed ? 1 : 0;
  frame.writeUInt32BE(message.length, 1);
  frame.set(message, PREFIX);
  return frame;
}

/** Where the reader hands complete messages; `message` returns false to stop reading. */
export interface MessageSink {
  message(message: Buffer, compressed: boolean): boolean;
}

/**
 * Cuts the DATA chunks of a gRPC response into messages. A chunk usually holds whole messages, so
 * they are handed on as views of it; only a message split across chunks is copied together.
 */
export class FrameReader {
  private pending: Buffer | undefined;

  constructor(private readonly maxBytes: number | undefined) {}

  /**
   * Calls `sink.message` for each complete message in order; it returns false to stop reading (the
   * call failed). Throws a `resource_exhausted` ConnectError for a message over the limit.
   */
  push(chunk: Buffer, sink: MessageSink): void {
    let buf = chunk;
    if (this.pending !== undefined) {
      buf = Buffer.concat([this.pending, chunk]);
      this.pending = undefined;
    }
    let at = 0;
    while (buf.length - at >= PREFIX) {
      const length = buf.readUInt32BE(at + 1);
      if (this.maxBytes !== undefined && length > this.maxBytes) {
        throw new ConnectError(
          `message size ${length} is larger than configured readMaxBytes ${this.maxBytes}`,
          Code.ResourceExhausted,
        );
      }
      const end = at + PREFIX + length;
      if (end > buf.length) break;
      const flags = buf[at]!;
      if (!sink.message(buf.subarray(at + PREFIX, end), (flags & 1) === 1)) return;
      at = end;
    }
    if (at < buf.length) this.pending = buf.subarray(at);
  }

  /** Whether a message was cut off: bytes left over that never became a whole message. */
  get incomplete(): boolean {
    return this.pending !== undefined;
  }
}
