import { createGunzip, type Gunzip, gunzipSync } from 'node:zlib';
import { Code, ConnectError } from '@connectrpc/connect';
import { ownLimitError } from './messages.js';

// Deflate expands at most 1032:1 (a 258-byte match in 2 bits), gzip members included, so a
// compressed message's length bounds its inflated size from above without inflating anything.
const MAX_RATIO = 1032;
// Messages whose bound is at most this inflate on the spot: 1 MiB takes about a millisecond, and a
// token's message (a few hundred bytes) pays no thread-pool hop. Larger ones inflate off the
// event loop (issue 55: a 10 MB bomb held it for 7.9 s).
const SYNC_MAX_OUTPUT = 1 << 20;
// Output per thread-pool round: each round is one callback on the event loop (microseconds), so
// the cap is checked every 256 KiB and overshot by less than that.
const CHUNK_BYTES = 256 * 1024;
const GZIP_MAGIC_0 = 0x1f;
const GZIP_MAGIC_1 = 0x8b;
// The gzip header (10 bytes) and trailer (CRC32, ISIZE) around the deflate data.
const GZIP_MIN_BYTES = 18;

/** Whether a compressed response message can be inflated here (gRPC's `grpc-encoding`). */
export function checkEncoding(encoding: string | undefined): void {
  if (encoding !== 'gzip') {
    throw new ConnectError(
      `protocol error: received compressed envelope with encoding ${String(encoding)}`,
      Code.Internal,
    );
  }
}

/**
 * The size a gzip message says it inflates to, as far as that proves anything: its trailer's
 * ISIZE is the last member's size mod 2^32, so the real size is at least ISIZE (or the message is
 * corrupt, which inflating would find at its end). A small ISIZE proves nothing (10 GiB + 1 KiB
 * says 1 KiB): only the cap while inflating does.
 */
export function gzipSizeAtLeast(bytes: Buffer): number {
  if (bytes.length < GZIP_MIN_BYTES || bytes[0] !== GZIP_MAGIC_0 || bytes[1] !== GZIP_MAGIC_1) return 0;
  return bytes.readUInt32LE(bytes.length - 4);
}

/** Whether `bytes` inflate on the spot (see SYNC_MAX_OUTPUT): their worst case is small. */
export function inflatesAtOnce(bytes: Buffer): boolean {
  return bytes.length * MAX_RATIO <= SYNC_MAX_OUTPUT;
}

/** A compressed message that cannot fit, refused before inflating (see `gzipSizeAtLeast`). */
export function refusedBySize(bytes: Buffer, limit: number): ConnectError | undefined {
  const atLeast = gzipSizeAtLeast(bytes);
  if (atLeast <= limit) return undefined;
  return tooLarge(
    limit,
    `its gzip trailer gives ${atLeast} bytes inflated; refused before inflating (${bytes.length} bytes compressed)`,
  );
}

function tooLarge(limit: number, detail: string): ConnectError {
  return ownLimitError(
    `the server sent a gzip-compressed message that inflates to more than maxReceiveMessageBytes ${limit} ` +
      `(${detail}); raise grpcTransport({ maxReceiveMessageBytes }) for larger answers`,
  );
}

function cannotInflate(err: unknown): ConnectError {
  return new ConnectError(
    `protocol error: a gzip message cannot be inflated (${String(err)})`,
    Code.Internal,
  );
}

/** Inflates a message whose worst case is small (`inflatesAtOnce`), capped at `limit`. */
export function inflateNow(bytes: Buffer, limit: number): Buffer {
  try {
    return gunzipSync(bytes, { maxOutputLength: limit });
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') {
      throw tooLarge(limit, 'inflating stopped at the limit');
    }
    throw cannotInflate(err);
  }
}

/**
 * One message inflated on zlib's thread pool, a chunk at a time, its output counted: past `limit`
 * it stops at once (the bomb's rest is never inflated) and fails `resource_exhausted`. `done`
 * runs once, unless `cancel` came first.
 */
export class AsyncInflate {
  private readonly gunzip: Gunzip;
  private readonly parts: Buffer[] = [];
  private total = 0;

  constructor(
    bytes: Buffer,
    private readonly limit: number,
    private done: ((err: unknown, message?: Buffer) => void) | undefined,
  ) {
    this.gunzip = createGunzip({ chunkSize: CHUNK_BYTES });
    this.gunzip.on('data', (chunk: Buffer) => {
      this.total += chunk.length;
      if (this.total > this.limit) {
        this.finish(tooLarge(this.limit, `inflating stopped past ${this.limit} bytes`));
        return;
      }
      this.parts.push(chunk);
    });
    this.gunzip.on('end', () => this.finish(undefined, Buffer.concat(this.parts, this.total)));
    this.gunzip.on('error', (err) => this.finish(cannotInflate(err)));
    this.gunzip.end(bytes);
  }

  /** Stops inflating; `done` never runs. */
  cancel(): void {
    this.done = undefined;
    this.parts.length = 0;
    this.gunzip.destroy();
  }

  private finish(err: unknown, message?: Buffer): void {
    const done = this.done;
    if (done === undefined) return;
    this.cancel();
    done(err, message);
  }
}
