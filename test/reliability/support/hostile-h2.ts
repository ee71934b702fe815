/**
 * An adversarial HTTP/2 server for the reliability tests, the fuzz harness and `pnpm bench:hostile`.
 *
 * It is `node:net` (or `node:tls`) and raw frames, never `node:http2`: nghttp2 refuses to send most
 * of what matters here (a header block continued forever, DATA past the window, a lying frame
 * length, a bad HPACK size update). Each connection reads the client preface and the client's
 * frames (SETTINGS and PING are acknowledged, like a real server would) and runs one scripted
 * scenario. A scenario returns when it has nothing more to send; the connection then stays open
 * until the client closes it or the server is closed, so a client that ignores a violation waits
 * for its own deadline, which is what the tests and the bench look for. Its frame writer is its
 * own, not the client's (packages/grpc/src/h2/): a server built on the codec under test would
 * share its mistakes.
 */
import { once } from 'node:events';
import { type AddressInfo, createServer as createTcpServer, type Server, type Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { createServer as createTlsServer } from 'node:tls';
import { deflateRawSync, constants as zlibConstants } from 'node:zlib';
import { create, toBinary } from '@bufbuild/protobuf';
import { createTensor, type InferRequest } from '@trtllm/sdk';
import { encodeTensorData } from '@trtllm/sdk/transport';
import {
  ModelInferRequestSchema,
  ModelStreamInferResponseSchema,
} from '../../../packages/grpc/src/gen/inference/grpc_service_pb.js';
import { toModelInferRequest } from '../../../packages/grpc/src/transport/infer-request.js';
import { createTestPki, type TestPki } from '../../../packages/grpc/test/certificates.js';

// Frame types, flags and error codes (RFC 9113, sections 6 and 7).
export const DATA = 0x0;
export const HEADERS = 0x1;
export const PRIORITY_FRAME = 0x2;
export const RST_STREAM = 0x3;
export const SETTINGS = 0x4;
export const PUSH_PROMISE = 0x5;
export const PING = 0x6;
export const GOAWAY = 0x7;
export const WINDOW_UPDATE = 0x8;
export const CONTINUATION = 0x9;
export const END_STREAM = 0x1;
export const ACK = 0x1;
export const END_HEADERS = 0x4;
export const PADDED = 0x8;
export const PRIORITY_FLAG = 0x20;
export const ENHANCE_YOUR_CALM = 0xb;

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
const FRAME_HEADER = 9;
/** SETTINGS_MAX_FRAME_SIZE's default, which our client keeps: the largest frame it accepts. */
export const MAX_FRAME = 16_384;
/** What a flooding scenario sends at most on one connection, unless the server is told otherwise. */
export const DEFAULT_CAP_BYTES = 128 * 1024 * 1024;

/** The id of {@link HOSTILE_REQUEST}, which the scenarios' responses carry. */
export const HOSTILE_REQUEST_ID = 'hostile';

/** A valid streamed request to `ensemble`: what every client sends the hostile server. */
export const HOSTILE_REQUEST: InferRequest = {
  model: 'ensemble',
  id: HOSTILE_REQUEST_ID,
  inputs: [
    createTensor('text_input', 'BYTES', [1, 1], ['What is HTTP/2?']),
    createTensor('max_tokens', 'INT32', [1, 1], [16]),
    createTensor('stream', 'BOOL', [1, 1], [true]),
  ],
};

/** {@link HOSTILE_REQUEST} as protobuf bytes, for clients that take messages already encoded. */
export function hostileRequestBytes(): Uint8Array {
  return toBinary(
    ModelInferRequestSchema,
    create(ModelInferRequestSchema, toModelInferRequest(HOSTILE_REQUEST)),
  );
}

/** One frame; `length` lets a scenario announce a length other than the payload's. */
export function frame(
  type: number,
  flags: number,
  streamId: number,
  payload: Uint8Array = Buffer.alloc(0),
  length = payload.length,
): Buffer {
  const out = Buffer.allocUnsafe(FRAME_HEADER + payload.length);
  out.writeUIntBE(length, 0, 3);
  out[3] = type;
  out[4] = flags;
  out.writeUInt32BE(streamId >>> 0, 5);
  out.set(payload, FRAME_HEADER);
  return out;
}

export function uint32(value: number): Buffer {
  const out = Buffer.allocUnsafe(4);
  out.writeUInt32BE(value >>> 0, 0);
  return out;
}

/** An HPACK integer (RFC 7541, 5.1) with an `n`-bit prefix; `high` holds the first byte's other bits. */
export function hpackInteger(value: number, n: number, high = 0): Buffer {
  const max = 2 ** n - 1;
  if (value < max) return Buffer.of(high | value);
  const bytes = [high | max];
  let rest = value - max;
  while (rest >= 128) {
    bytes.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  bytes.push(rest);
  return Buffer.from(bytes);
}

/** A header field as an HPACK literal without indexing, with a literal name (RFC 7541, 6.2.2). */
export function literal(name: string, value: string): Buffer {
  const n = Buffer.from(name, 'latin1');
  const v = Buffer.from(value, 'latin1');
  return Buffer.concat([Buffer.of(0), hpackInteger(n.length, 7), n, hpackInteger(v.length, 7), v]);
}

/** A header block of literals. */
export function headerBlock(fields: readonly (readonly [string, string])[]): Buffer {
  return Buffer.concat(fields.map(([name, value]) => literal(name, value)));
}

/** The start of a gRPC answer: status 200 and the gRPC content type. */
export const GRPC_RESPONSE_HEADERS = headerBlock([
  [':status', '200'],
  ['content-type', 'application/grpc'],
]);

/** A gRPC message: the 5-byte prefix (uncompressed) and `body`. */
export function grpcMessage(body: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(5 + body.length);
  out[0] = 0;
  out.writeUInt32BE(body.length, 1);
  out.set(body, 5);
  return out;
}

/** A streamed response carrying one token of `text` for {@link HOSTILE_REQUEST}, final or not. */
export function tokenResponse(text: string, final = false): Uint8Array {
  return toBinary(
    ModelStreamInferResponseSchema,
    create(ModelStreamInferResponseSchema, {
      inferResponse: {
        modelName: 'ensemble',
        id: HOSTILE_REQUEST_ID,
        outputs: [{ name: 'text_output', datatype: 'BYTES', shape: [1n, 1n] }],
        rawOutputContents: [encodeTensorData(createTensor('text_output', 'BYTES', [1, 1], [text]))],
        parameters: final
          ? { triton_final_response: { parameterChoice: { case: 'boolParam', value: true } } }
          : {},
      },
    }),
  );
}

/** A small seeded PRNG (mulberry32): the same seed gives the same bytes on every machine. */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/** `n` bytes from `next`. */
export function randomBytesFrom(next: () => number, n: number): Buffer {
  const out = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) out[i] = next() & 0xff;
  return out;
}

/** A frame the client sent. */
export interface ClientFrame {
  readonly type: number;
  readonly flags: number;
  readonly streamId: number;
  readonly payload: Buffer;
}

/** One client connection as a scenario drives it. */
export class HostilePeer {
  /** Every frame the client sent, in order. */
  readonly frames: ClientFrame[] = [];
  /** Bytes written to the client so far. */
  bytesSent = 0;
  closed = false;
  /** Whether the client opened with the HTTP/2 preface. */
  prefaceOk = false;
  /** Resolves when the socket is closed, by either side. */
  readonly whenClosed: Promise<void>;
  /** Resolves when the scenario has sent all it will (or the socket closed first). */
  finished: Promise<void> = Promise.resolve();
  private received: Buffer = Buffer.alloc(0);
  private prefaceRead = false;
  private settingsSent = false;
  private unackedSettings = 0;
  private readonly waiters = new Set<() => void>();

  constructor(
    readonly socket: Socket,
    /** What flooding scenarios send at most. */
    readonly capBytes: number,
  ) {
    this.whenClosed = new Promise((resolve) => {
      socket.once('close', () => {
        this.closed = true;
        this.wake();
        resolve();
      });
    });
    // As HTTP/2 servers do: without it, Nagle holds a small frame back until the client's delayed
    // ACK of the one before, and every scenario would take 40-200 ms longer than it is about.
    socket.setNoDelay(true);
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
  }

  /** Sends `bytes`; resolves once the socket takes more (false when it is closed). */
  async send(bytes: Buffer): Promise<boolean> {
    if (this.closed || this.socket.destroyed) return false;
    this.bytesSent += bytes.length;
    if (this.socket.write(bytes)) return true;
    await Promise.race([once(this.socket, 'drain').catch(() => undefined), this.whenClosed]);
    return !this.closed;
  }

  /** Sends our SETTINGS (empty: every default) and acknowledges the client's from now on. */
  async sendSettings(): Promise<void> {
    this.settingsSent = true;
    const acks = Array.from({ length: this.unackedSettings }, () => frame(SETTINGS, ACK, 0));
    this.unackedSettings = 0;
    await this.send(Buffer.concat([frame(SETTINGS, 0, 0), ...acks]));
  }

  /** Resolves once the client's first bytes (the preface, or whatever it sends) arrived. */
  async firstBytes(): Promise<boolean> {
    await this.until(() => this.received.length > 0 || this.prefaceRead);
    return !this.closed;
  }

  /**
   * The usual start: the client's preface read, our SETTINGS sent (unless `settings` is false),
   * and the client's first request HEADERS received. Resolves to its stream id (undefined if the
   * client left first).
   */
  async handshake(settings = true): Promise<number | undefined> {
    await this.until(() => this.prefaceRead);
    if (this.closed) return undefined;
    if (settings) await this.sendSettings();
    return (await this.frame((f) => f.type === HEADERS))?.streamId;
  }

  /** The first client frame matching `match` (already received or still to come). */
  async frame(match: (f: ClientFrame) => boolean): Promise<ClientFrame | undefined> {
    let found: ClientFrame | undefined;
    await this.until(() => {
      found = this.frames.find(match);
      return found !== undefined;
    });
    return found;
  }

  /** Resolves when `done()` holds or the socket is closed. */
  private until(done: () => boolean): Promise<void> {
    if (done() || this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      const check = () => {
        if (!done() && !this.closed) return;
        this.waiters.delete(check);
        resolve();
      };
      this.waiters.add(check);
    });
  }

  private wake(): void {
    for (const check of [...this.waiters]) check();
  }

  private onData(chunk: Buffer): void {
    this.received = this.received.length === 0 ? chunk : Buffer.concat([this.received, chunk]);
    if (!this.prefaceRead) {
      if (this.received.length < PREFACE.length) {
        this.wake();
        return;
      }
      this.prefaceOk = this.received.subarray(0, PREFACE.length).equals(PREFACE);
      this.prefaceRead = true;
      this.received = this.received.subarray(PREFACE.length);
    }
    // Not an HTTP/2 client: there are no frames to read.
    if (!this.prefaceOk) {
      this.wake();
      return;
    }
    let at = 0;
    while (this.received.length - at >= FRAME_HEADER) {
      const length = this.received.readUIntBE(at, 3);
      if (this.received.length - at < FRAME_HEADER + length) break;
      const f: ClientFrame = {
        type: this.received[at + 3]!,
        flags: this.received[at + 4]!,
        streamId: this.received.readUInt32BE(at + 5) & 0x7fffffff,
        payload: Buffer.from(this.received.subarray(at + FRAME_HEADER, at + FRAME_HEADER + length)),
      };
      at += FRAME_HEADER + length;
      this.frames.push(f);
      this.answer(f);
    }
    this.received = this.received.subarray(at);
    this.wake();
  }

  /** What any server does for the client's control frames. */
  private answer(f: ClientFrame): void {
    if (f.type === SETTINGS && (f.flags & ACK) === 0) {
      if (this.settingsSent) void this.send(frame(SETTINGS, ACK, 0));
      else this.unackedSettings += 1;
    } else if (f.type === PING && (f.flags & ACK) === 0 && this.settingsSent) {
      void this.send(frame(PING, ACK, 0, f.payload));
    }
  }
}

/** A scripted behaviour of the server on one connection. */
export interface Scenario {
  /** What it does; it returns when it has nothing more to send. */
  readonly run: (peer: HostilePeer) => Promise<void>;
  /** TLS whose ALPN offers only `http/1.1` instead of plaintext. */
  readonly tlsWithoutH2?: boolean;
  /** Builds what the scenario sends once, when its server starts (not in a measured call). */
  readonly prepare?: () => void;
}

/** Sends `chunk` again and again until the client leaves or the cap is reached. */
async function flood(peer: HostilePeer, chunk: () => Buffer): Promise<void> {
  while (!peer.closed && peer.bytesSent < peer.capBytes) {
    if (!(await peer.send(chunk()))) return;
  }
}

/** Sends `chunk` every `everyMs` until the client leaves or `total` bytes are out. */
async function trickle(peer: HostilePeer, chunk: Buffer, everyMs: number, total: number): Promise<void> {
  let sent = 0;
  while (!peer.closed && sent < total) {
    const piece = chunk.subarray(0, Math.min(chunk.length, total - sent));
    if (!(await peer.send(piece))) return;
    sent += piece.length;
    await delay(everyMs);
  }
}

/** The HTML page a proxy answers with when its upstream fails. */
export const HTML_502 =
  '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n';

async function http1(peer: HostilePeer): Promise<void> {
  if (!(await peer.firstBytes())) return;
  const body =
    '<html>\r\n<head><title>400 Bad Request</title></head>\r\n<body>400 Bad Request</body>\r\n</html>\r\n';
  peer.socket.end(
    `HTTP/1.1 400 Bad Request\r\nServer: nginx\r\nContent-Type: text/html\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** A bad frame after a normal start: the request's headers arrived, then `bad(streamId)`. */
function afterStart(bad: (streamId: number) => Buffer): Scenario {
  return {
    run: async (peer) => {
      const id = await peer.handshake();
      if (id !== undefined) await peer.send(bad(id));
    },
  };
}

/** The start of a valid gRPC answer on `id`, then `rest(id)`. */
function afterResponseStart(rest: (peer: HostilePeer, id: number) => Promise<void>): Scenario {
  return {
    run: async (peer) => {
      const id = await peer.handshake();
      if (id === undefined) return;
      if (await peer.send(frame(HEADERS, END_HEADERS, id, GRPC_RESPONSE_HEADERS))) await rest(peer, id);
    },
  };
}

/** The client's SETTINGS_INITIAL_WINDOW_SIZE (the last it sent), else HTTP/2's default. */
function clientInitialWindow(peer: HostilePeer): number {
  let window = 65_535;
  for (const f of peer.frames) {
    if (f.type !== SETTINGS || (f.flags & ACK) !== 0) continue;
    for (let at = 0; at + 6 <= f.payload.length; at += 6) {
      if (f.payload.readUInt16BE(at) === 0x4) window = f.payload.readUInt32BE(at + 2);
    }
  }
  return window;
}

/**
 * Sends `bytes` as DATA on stream `id` as a well-behaved server does: within the client's stream
 * and connection windows, waiting for its WINDOW_UPDATEs (a client that stops reading stops it).
 * Resolves false if the client reset the stream or left.
 */
async function sendWithinWindows(peer: HostilePeer, id: number, bytes: Buffer): Promise<boolean> {
  let stream = clientInitialWindow(peer);
  let connection = 65_535;
  let seen = 0;
  let at = 0;
  while (at < bytes.length) {
    for (; seen < peer.frames.length; seen++) {
      const f = peer.frames[seen]!;
      if (f.type === WINDOW_UPDATE) {
        const increment = f.payload.readUInt32BE(0) & 0x7fffffff;
        if (f.streamId === 0) connection += increment;
        else if (f.streamId === id) stream += increment;
      } else if (f.type === RST_STREAM && f.streamId === id) return false;
      else if (f.type === GOAWAY) return false;
    }
    const room = Math.min(stream, connection, MAX_FRAME, bytes.length - at);
    if (room <= 0) {
      const before = seen;
      await peer.frame(() => peer.frames.length > before);
      if (peer.closed) return false;
      continue;
    }
    // The frame's header, then a view of the payload: a copy per frame would put the whole
    // message again in this process's memory, which the tests measure as the client's growth.
    if (!(await peer.send(frame(DATA, 0, id, undefined, room)))) return false;
    if (!(await peer.send(bytes.subarray(at, at + room)))) return false;
    at += room;
    stream -= room;
    connection -= room;
  }
  return true;
}

/** A valid answer to {@link HOSTILE_REQUEST} on stream `id`: one final token and status OK. */
export async function answerValid(peer: HostilePeer, id: number): Promise<boolean> {
  return peer.send(
    Buffer.concat([
      frame(HEADERS, END_HEADERS, id, GRPC_RESPONSE_HEADERS),
      frame(DATA, 0, id, grpcMessage(tokenResponse('ok', true))),
      frame(HEADERS, END_HEADERS | END_STREAM, id, headerBlock([['grpc-status', '0']])),
    ]),
  );
}

/**
 * Answers every stream the client opens after stream `after` validly, until it leaves: after a
 * hostile first stream, a second call on the same connection must work.
 */
export async function serveLaterStreams(peer: HostilePeer, after: number): Promise<void> {
  let last = after;
  while (!peer.closed) {
    const next = await peer.frame((f) => f.type === HEADERS && f.streamId > last);
    if (next === undefined) return;
    last = next.streamId;
    if (!(await answerValid(peer, next.streamId))) return;
  }
}

/** A well-behaved server on every stream of the connection. */
async function serveValid(peer: HostilePeer): Promise<void> {
  const id = await peer.handshake();
  if (id === undefined) return;
  if (await answerValid(peer, id)) await serveLaterStreams(peer, id);
}

const MiB_ = 1024 * 1024;
let zerosMiB: Buffer | undefined;

/**
 * A gzip member that inflates to `mib` MiB of zeros, about 1 KiB compressed per MiB: one MiB
 * deflated with a full flush (byte-aligned, no reference before it), repeated, then an empty final
 * block. Its trailer gives `isize` (the true size mod 2^32 unless a scenario lies); its CRC32 is
 * not computed (a client refuses the bomb long before it could check it).
 */
export function gzipBomb(mib: number, isize = (mib * MiB_) % 2 ** 32): Buffer {
  zerosMiB ??= deflateRawSync(Buffer.alloc(MiB_), { level: 9, finishFlush: zlibConstants.Z_FULL_FLUSH });
  const header = Buffer.from([0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0x03]);
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(isize >>> 0, 4);
  const body = Buffer.alloc(zerosMiB.length * mib);
  for (let i = 0; i < mib; i++) zerosMiB.copy(body, i * zerosMiB.length);
  return Buffer.concat([header, body, deflateRawSync(Buffer.alloc(0)), trailer]);
}

/** A gRPC message with the compressed flag set. */
export function compressedGrpcMessage(body: Uint8Array): Buffer {
  const out = grpcMessage(body);
  out[0] = 1;
  return out;
}

const GZIP_RESPONSE_HEADERS = headerBlock([
  [':status', '200'],
  ['content-type', 'application/grpc'],
  ['grpc-encoding', 'gzip'],
]);

/** A gzip bomb of `mib` MiB as the first stream's message; later streams are answered validly. */
function gzipBombScenario(mib: number, isize?: number): Scenario {
  let bomb: Buffer | undefined;
  const prepare = () => {
    bomb ??= compressedGrpcMessage(gzipBomb(mib, isize));
  };
  return {
    prepare,
    run: async (peer) => {
      const id = await peer.handshake();
      if (id === undefined) return;
      prepare();
      if (!(await peer.send(frame(HEADERS, END_HEADERS, id, GZIP_RESPONSE_HEADERS)))) return;
      await sendWithinWindows(peer, id, bomb!);
      await serveLaterStreams(peer, id);
    },
  };
}

/** Sends `count` copies of `one` in batches (or until the client leaves). */
async function floodFrames(peer: HostilePeer, one: Buffer, count: number): Promise<void> {
  const perBatch = 1000;
  const batch = Buffer.concat(Array.from({ length: perBatch }, () => one));
  for (let sent = 0; sent < count && !peer.closed; sent += perBatch) {
    if (!(await peer.send(batch))) return;
  }
}

/** How many frames each flood sends at most (the measurements). */
export const FLOOD_FRAMES = { ping: 100_000, settings: 100_000, empty: 1_000_000, reset: 100_000 };

// A header field of just under 16 KiB: one per CONTINUATION frame.
const FLOOD_FIELD = literal('x-flood', 'a'.repeat(MAX_FRAME - 32));

/** Whole token responses packed into one DATA payload of at most one frame. */
function tokenFrames(id: number, frames: number): Buffer {
  const one = grpcMessage(tokenResponse('x'));
  const perFrame = Math.floor(MAX_FRAME / one.length);
  const payload = Buffer.concat(Array.from({ length: perFrame }, () => one));
  return Buffer.concat(Array.from({ length: frames }, () => frame(DATA, 0, id, payload)));
}

// The same random bytes every time (made once: a fresh megabyte per connection would be the
// server's own cost in every measured time).
const GARBAGE = randomBytesFrom(prng(0x9a7ba6e), 64 * 1024);

/** The 1.9 GB that the huge-message scenario announces. */
export const HUGE_MESSAGE_BYTES = 1_900_000_000;

export const SCENARIOS = {
  'continuation-flood': {
    run: async (peer) => {
      const id = await peer.handshake();
      if (id === undefined) return;
      const start = headerBlock([[':status', '200']]);
      if (!(await peer.send(frame(HEADERS, 0, id, start)))) return;
      const four = Buffer.concat(Array.from({ length: 4 }, () => frame(CONTINUATION, 0, id, FLOOD_FIELD)));
      await flood(peer, () => four);
    },
  },
  'window-overrun': afterResponseStart(async (peer, id) => {
    const chunk = tokenFrames(id, 4);
    await flood(peer, () => chunk);
  }),
  'oversized-frame': afterResponseStart(async (peer, id) => {
    const announced = 0xffffff;
    if (!(await peer.send(frame(DATA, 0, id, Buffer.alloc(0), announced)))) return;
    await trickle(peer, Buffer.alloc(1024), 5, announced);
  }),
  'huge-message': afterResponseStart(async (peer, id) => {
    const prefix = Buffer.alloc(5);
    prefix.writeUInt32BE(HUGE_MESSAGE_BYTES, 1);
    if (!(await peer.send(frame(DATA, 0, id, prefix)))) return;
    await trickle(peer, frame(DATA, 0, id, Buffer.alloc(MAX_FRAME)), 5, peer.capBytes);
  }),
  garbage: {
    run: async (peer) => {
      if (!(await peer.firstBytes())) return;
      await trickle(peer, GARBAGE, 10, 1 << 24);
    },
  },
  'hpack-table-update': afterStart((id) =>
    // 001xxxxx: a dynamic table size update, to 2^32 - 1 (we never allowed more than 4096).
    frame(
      HEADERS,
      END_HEADERS,
      id,
      Buffer.concat([hpackInteger(2 ** 32 - 1, 5, 0x20), GRPC_RESPONSE_HEADERS]),
    ),
  ),
  'hpack-table-update-mid-block': afterStart((id) =>
    // A size update is only allowed at the start of a block (RFC 7541, 4.2).
    frame(
      HEADERS,
      END_HEADERS,
      id,
      Buffer.concat([
        literal(':status', '200'),
        hpackInteger(0, 5, 0x20),
        literal('content-type', 'application/grpc'),
      ]),
    ),
  ),
  http1: { run: http1 },
  'tls-no-h2': { run: http1, tlsWithoutH2: true },
  'close-at-once': {
    run: async (peer) => {
      peer.socket.destroy();
    },
  },
  'window-update-zero': afterStart(() => frame(WINDOW_UPDATE, 0, 0, uint32(0))),
  'window-overflow': afterStart(() => frame(WINDOW_UPDATE, 0, 0, uint32(0x7fffffff))),
  'settings-wrong-size': afterStart(() => frame(SETTINGS, 0, 0, Buffer.alloc(5))),
  'ping-wrong-size': afterStart(() => frame(PING, 0, 0, Buffer.alloc(7))),
  'stream-0-data': afterStart(() => frame(DATA, 0, 0, Buffer.alloc(8))),
  'padding-overflow': afterStart((id) =>
    Buffer.concat([
      frame(HEADERS, END_HEADERS, id, GRPC_RESPONSE_HEADERS),
      // PADDED with a pad length past the frame's end (RFC 9113, 6.1: a PROTOCOL_ERROR).
      frame(DATA, PADDED, id, Buffer.of(200, 0, 0, 0)),
    ]),
  ),
  'first-frame-not-settings': {
    run: async (peer) => {
      const id = await peer.handshake(false);
      if (id !== undefined) await peer.send(frame(HEADERS, END_HEADERS, id, GRPC_RESPONSE_HEADERS));
    },
  },
  'html-502': afterStart((id) => {
    const headers = headerBlock([
      [':status', '502'],
      ['content-type', 'text/html'],
      ['content-length', String(HTML_502.length)],
    ]);
    return Buffer.concat([
      frame(HEADERS, END_HEADERS, id, headers),
      frame(DATA, END_STREAM, id, Buffer.from(HTML_502, 'latin1')),
    ]);
  }),
  'gzip-bomb': gzipBombScenario(10 * 1024),
  'gzip-bomb-1g': gzipBombScenario(1024),
  'gzip-bomb-lying-size': gzipBombScenario(10 * 1024, 1024),
  'ping-flood': afterResponseStart((peer) =>
    floodFrames(peer, frame(PING, 0, 0, Buffer.alloc(8)), FLOOD_FRAMES.ping),
  ),
  'settings-flood': afterResponseStart((peer) =>
    floodFrames(peer, frame(SETTINGS, 0, 0), FLOOD_FRAMES.settings),
  ),
  'empty-data-flood': afterResponseStart((peer, id) =>
    floodFrames(peer, frame(DATA, 0, id), FLOOD_FRAMES.empty),
  ),
  'empty-headers-flood': {
    // A header block opened empty and continued by empty CONTINUATION frames: it never grows.
    run: async (peer) => {
      const id = await peer.handshake();
      if (id === undefined || !(await peer.send(frame(HEADERS, 0, id)))) return;
      await floodFrames(peer, frame(CONTINUATION, 0, id), FLOOD_FRAMES.empty);
    },
  },
  'rst-flood': {
    // Resets of a stream already over: the first call is answered, the flood comes under the second.
    run: async (peer) => {
      const first = await peer.handshake();
      if (first === undefined || !(await answerValid(peer, first))) return;
      const second = await peer.frame((f) => f.type === HEADERS && f.streamId > first);
      if (second === undefined) return;
      await floodFrames(peer, frame(RST_STREAM, 0, first, uint32(0x8)), FLOOD_FRAMES.reset);
    },
  },
  'too-many-pings': {
    run: async (peer) => {
      const first = await peer.handshake();
      if (first === undefined) return;
      // Streams the client opened at the same time come in the same read or just after.
      await delay(20);
      const last = Math.max(...peer.frames.filter((f) => f.type === HEADERS).map((f) => f.streamId));
      const debug = Buffer.from('too_many_pings', 'latin1');
      await peer.send(frame(GOAWAY, 0, 0, Buffer.concat([uint32(last), uint32(ENHANCE_YOUR_CALM), debug])));
      // grpc core closes the connection after this GOAWAY.
      peer.socket.end();
    },
  },
} satisfies Record<string, Scenario>;

export type ScenarioName = keyof typeof SCENARIOS;
export const SCENARIO_NAMES = Object.keys(SCENARIOS) as ScenarioName[];

/** The running server. */
export interface HostileServer {
  /** `http://127.0.0.1:port`, or `https://` for a TLS scenario. */
  readonly url: string;
  /** The CA to trust for a TLS scenario. */
  readonly ca: string | undefined;
  /** The connections so far, in order. */
  readonly peers: readonly HostilePeer[];
  /** The `index`-th connection, once it is made. */
  peer(index?: number): Promise<HostilePeer>;
  /** Stops listening and ends every connection. */
  close(): Promise<void>;
}

let pki: TestPki | undefined;

/** Starts a server on an ephemeral loopback port that runs `scenario` on every connection. */
export async function startHostileServer(
  scenario: ScenarioName | Scenario,
  options: {
    readonly capBytes?: number;
    /** Only the first this many connections run the scenario; later ones are served validly. */
    readonly hostileConnections?: number;
  } = {},
): Promise<HostileServer> {
  const spec: Scenario = typeof scenario === 'string' ? SCENARIOS[scenario] : scenario;
  const capBytes = options.capBytes ?? DEFAULT_CAP_BYTES;
  spec.prepare?.();
  const peers: HostilePeer[] = [];
  const waiters: (() => void)[] = [];
  const accept = (socket: Socket) => {
    const peer = new HostilePeer(socket, capBytes);
    const hostile = options.hostileConnections === undefined || peers.length < options.hostileConnections;
    peers.push(peer);
    for (const wake of waiters.splice(0)) wake();
    peer.finished = Promise.race([
      (hostile ? spec.run(peer) : serveValid(peer)).catch(() => {
        peer.socket.destroy();
      }),
      peer.whenClosed,
    ]);
  };
  let server: Server;
  let ca: string | undefined;
  if (spec.tlsWithoutH2 === true) {
    pki ??= createTestPki();
    ca = pki.ca;
    server = createTlsServer(
      { cert: pki.serverCert, key: pki.serverKey, ALPNProtocols: ['http/1.1'] },
      accept,
    );
    // A client offering only h2 fails the handshake on some Node versions: not our concern here.
    server.on('tlsClientError', () => undefined);
  } else {
    server = createTcpServer(accept);
  }
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `${ca === undefined ? 'http' : 'https'}://127.0.0.1:${port}`,
    ca,
    peers,
    peer: async (index = 0) => {
      while (peers.length <= index) await new Promise<void>((resolve) => waiters.push(resolve));
      return peers[index]!;
    },
    close: async () => {
      const closed = new Promise((resolve) => server.close(resolve));
      for (const peer of peers) peer.socket.destroy();
      await closed;
    },
  };
}
