import { gzipSync } from 'node:zlib';
import { Code, ConnectError } from '@connectrpc/connect';

// Requests this size and up are compressed when gzip is on (small ones would only grow).
const COMPRESS_MIN_BYTES = 1024;

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

/**
 * Where the reader hands complete messages, as `buf[start..end)` (a view valid only during the
 * call, unless `owned`: a buffer of the message alone, which the reader lets go of); `message`
 * returns false to stop reading.
 */
export interface MessageSink {
  message(buf: Buffer, start: number, end: number, compressed: boolean, owned: boolean): boolean;
}

const OWN_LIMITS = new WeakSet<ConnectError>();

/**
 * A `resource_exhausted` raised by a limit of this client (`maxReceiveMessageBytes`,
 * `maxSendMessageBytes`), told apart from a server's RESOURCE_EXHAUSTED: the same message is over
 * the same limit on every attempt, so it is not retryable, while an overloaded server's is.
 */
export function ownLimitError(message: string): ConnectError {
  const error = new ConnectError(message, Code.ResourceExhausted);
  OWN_LIMITS.add(error);
  return error;
}

/** True for an error of {@link ownLimitError}. */
export function isOwnLimitError(err: unknown): boolean {
  return err instanceof ConnectError && OWN_LIMITS.has(err);
}

/** The error for a message longer than the receive limit, raised on its prefix. */
export function messageTooLarge(length: number, limit: number): ConnectError {
  return ownLimitError(
    `the server sent a message of ${length} bytes, more than maxReceiveMessageBytes ${limit}; raise ` +
      'grpcTransport({ maxReceiveMessageBytes }) for larger answers (logits are vocabulary x tokens x 4 bytes)',
  );
}

/**
 * Cuts the DATA chunks of a gRPC response into messages. A chunk usually holds whole messages, so
 * they are handed on as views of it; a message split across chunks is copied once into a buffer of
 * its own size, known from its prefix, which is checked against the limit before anything is kept
 * (so a long message costs one copy, not one per chunk).
 */
export class FrameReader {
  /** The bytes of a prefix cut by a chunk's end (fewer than 5). */
  private head: Buffer | undefined;
  /** A message being filled: its buffer, how much is in, and its flags. */
  private body: Buffer | undefined;
  private filled = 0;
  private flags = 0;

  constructor(private readonly maxBytes: number) {}

  /**
   * Calls `sink.message` for each complete message in order; it returns false to stop reading (the
   * call failed). Throws a `resource_exhausted` ConnectError for a message over the limit.
   */
  push(chunk: Buffer, start: number, end: number, sink: MessageSink): void {
    let at = start;
    if (this.head !== undefined) {
      // A prefix cut short by the last chunk.
      const need = PREFIX - this.head.length;
      if (end - at < need) {
        this.head = Buffer.concat([this.head, chunk.subarray(at, end)]);
        return;
      }
      const prefix = Buffer.concat([this.head, chunk.subarray(at, at + need)]);
      this.head = undefined;
      at += need;
      this.begin(prefix[0]!, prefix.readUInt32BE(1));
    }
    if (this.body !== undefined) {
      // A message cut short by the last chunk.
      const take = Math.min(end - at, this.body.length - this.filled);
      chunk.copy(this.body, this.filled, at, at + take);
      this.filled += take;
      at += take;
      if (this.filled < this.body.length) return;
      const message = this.body;
      this.body = undefined;
      if (!sink.message(message, 0, message.length, (this.flags & 1) === 1, true)) return;
    }
    while (end - at >= PREFIX) {
      const length = chunk.readUInt32BE(at + 1);
      const stop = at + PREFIX + length;
      if (stop > end) {
        this.begin(chunk[at]!, length);
        chunk.copy(this.body!, 0, at + PREFIX, end);
        this.filled = end - at - PREFIX;
        return;
      }
      this.check(length);
      if (!sink.message(chunk, at + PREFIX, stop, (chunk[at]! & 1) === 1, false)) return;
      at = stop;
    }
    if (at < end) this.head = Buffer.from(chunk.subarray(at, end));
  }

  /** A message that continues in later chunks: checked on its prefix, then a buffer of its size. */
  private begin(flags: number, length: number): void {
    this.check(length);
    this.flags = flags;
    this.body = Buffer.allocUnsafe(length);
    this.filled = 0;
  }

  private check(length: number): void {
    if (length > this.maxBytes) throw messageTooLarge(length, this.maxBytes);
  }

  /** Whether a message was cut off: bytes left over that never became a whole message. */
  get incomplete(): boolean {
    return this.head !== undefined || this.body !== undefined;
  }
}

/** A request message framed for the wire: compressed when worth it, checked against the limit. */
export function encodeFramed(
  message: Uint8Array,
  settings: { readonly gzip: boolean; readonly maxSendBytes: number | undefined },
): Buffer {
  const compress = settings.gzip && message.length >= COMPRESS_MIN_BYTES;
  const body = compress ? gzipSync(message) : message;
  if (settings.maxSendBytes !== undefined && body.length > settings.maxSendBytes) {
    throw ownLimitError(
      `message size ${body.length} is larger than configured writeMaxBytes ${settings.maxSendBytes}`,
    );
  }
  return frameMessage(body, compress);
}
