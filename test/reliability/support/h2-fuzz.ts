/**
 * The seeded HTTP/2 fuzz of issue 27, shared by `h2-fuzz.test.ts` (a short fixed seed set) and
 * `pnpm fuzz:h2` (long runs). A seed makes one case: the hostile server sends a valid answer
 * (SETTINGS, response headers, token messages, trailers, with harmless extras in between), then
 * corrupts it (lengths, flags, types, stream ids, HPACK bytes, window arithmetic, gRPC prefixes,
 * truncation), or sends purely random frames. The client's call must end in a typed error or the
 * correct answer, before a watchdog set past its deadline.
 */
import { create, toBinary } from '@bufbuild/protobuf';
import { grpcTransport } from '@trtllm/grpc';
import { type InferResponse, TritonLlmError, tensorStrings } from '@trtllm/sdk';
import { ServerLiveResponseSchema } from '../../../packages/grpc/src/gen/inference/grpc_service_pb.js';
import {
  CONTINUATION,
  DATA,
  END_HEADERS,
  END_STREAM,
  frame,
  GOAWAY,
  GRPC_RESPONSE_HEADERS,
  grpcMessage,
  HEADERS,
  HOSTILE_REQUEST,
  type HostilePeer,
  headerBlock,
  hpackInteger,
  MAX_FRAME,
  PADDED,
  PING,
  PRIORITY_FLAG,
  PRIORITY_FRAME,
  prng,
  RST_STREAM,
  randomBytesFrom,
  SETTINGS,
  startHostileServer,
  tokenResponse,
  uint32,
  WINDOW_UPDATE,
} from './hostile-h2.js';

/** One generated case. */
export interface FuzzCase {
  readonly seed: number;
  /** The streamed call (our own framing) or a unary one (connect-node). */
  readonly path: 'stream' | 'unary';
  /** No corruption: the call must give the correct answer. */
  readonly valid: boolean;
  /** The server keeps the connection open after its bytes: only the deadline ends a stalled call. */
  readonly holdOpen: boolean;
  readonly timeoutMs: number;
  /** What was done, for a report. */
  readonly steps: readonly string[];
  /** The bytes the server sends once the request's HEADERS came, for the request's stream id. */
  readonly bytes: (streamId: number) => Buffer;
  /** Whether the server sends its SETTINGS first. */
  readonly settingsFirst: boolean;
}

/** How a case ended. */
export interface FuzzOutcome {
  readonly seed: number;
  readonly path: 'stream' | 'unary';
  readonly ms: number;
  /** `answer`, or the error code. */
  readonly result: string;
  /** The error's message, when the call failed. */
  readonly message?: string;
  /**
   * The call ended at its deadline although the server had closed the connection: a typed error,
   * so not a failure, but a client that noticed the close would have ended sooner.
   */
  readonly stalled?: boolean;
  /** Why the case failed (a hang, a wrong answer, an untyped error); undefined when it passed. */
  readonly failure?: string;
}

const TOKENS = ['Hello', ', ', 'wörld', '!'];
const SETTINGS_KNOWN: readonly [number, number][] = [
  [0x1, 4096],
  [0x3, 100],
  [0x4, 65_535],
  [0x5, MAX_FRAME],
  [0x6, 16_384],
];

/** A random generator with helpers, from a seed. */
class Dice {
  private readonly next: () => number;
  constructor(seed: number) {
    this.next = prng(seed);
  }
  /** An integer in [0, n). */
  int(n: number): number {
    return this.next() % n;
  }
  chance(p: number): boolean {
    return this.next() / 2 ** 32 < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
  bytes(n: number): Buffer {
    return randomBytesFrom(this.next, n);
  }
}

/** A frame before it is serialized, so mutations can reach its fields. */
interface Draft {
  type: number;
  flags: number;
  streamId: number;
  payload: Buffer;
  /** A length to announce instead of the payload's. */
  length?: number;
}

/** The request stream's id, filled in when the bytes are made. */
const SELF = -1;

function settingsPayload(entries: readonly (readonly [number, number])[]): Buffer {
  return Buffer.concat(
    entries.map(([id, value]) => Buffer.concat([Buffer.of(id >> 8, id & 0xff), uint32(value)])),
  );
}

/** Splits `block` over HEADERS and CONTINUATION frames at random points. */
function headerFrames(dice: Dice, block: Buffer, endStream: boolean): Draft[] {
  const out: Draft[] = [];
  let at = 0;
  do {
    const size = dice.chance(0.7) ? block.length - at : 1 + dice.int(Math.max(1, block.length - at));
    const part = block.subarray(at, at + size);
    at += part.length;
    const last = at >= block.length;
    const first = out.length === 0;
    let flags = (last ? END_HEADERS : 0) | (first && endStream ? END_STREAM : 0);
    let payload = part;
    if (first && dice.chance(0.2)) {
      flags |= PADDED;
      const pad = dice.int(8);
      payload = Buffer.concat([Buffer.of(pad), part, Buffer.alloc(pad)]);
    }
    if (first && dice.chance(0.1)) {
      flags |= PRIORITY_FLAG;
      const [head, rest] =
        (flags & PADDED) !== 0 ? [payload.subarray(0, 1), payload.subarray(1)] : [Buffer.alloc(0), payload];
      payload = Buffer.concat([head, uint32(0), Buffer.of(15), rest]);
    }
    out.push({ type: first ? HEADERS : CONTINUATION, flags, streamId: SELF, payload });
  } while (at < block.length);
  return out;
}

/** Splits gRPC message bytes over DATA frames at random points. */
function dataFrames(dice: Dice, body: Buffer, endStream: boolean): Draft[] {
  const out: Draft[] = [];
  let at = 0;
  do {
    const size = dice.chance(0.6) ? body.length - at : 1 + dice.int(Math.max(1, body.length - at));
    const part = body.subarray(at, at + Math.min(size, MAX_FRAME));
    at += part.length;
    let flags = endStream && at >= body.length ? END_STREAM : 0;
    let payload = part;
    if (dice.chance(0.15)) {
      flags |= PADDED;
      const pad = dice.int(16);
      payload = Buffer.concat([Buffer.of(pad), part, Buffer.alloc(pad)]);
    }
    out.push({ type: DATA, flags, streamId: SELF, payload });
  } while (at < body.length);
  return out;
}

/** Frames a correct server may send at any point between the others. */
function harmless(dice: Dice): Draft {
  switch (dice.int(5)) {
    case 0:
      return { type: PING, flags: 0, streamId: 0, payload: dice.bytes(8) };
    case 1:
      return {
        type: WINDOW_UPDATE,
        flags: 0,
        streamId: dice.pick([0, SELF]),
        payload: uint32(1 + dice.int(65_535)),
      };
    case 2:
      return {
        type: PRIORITY_FRAME,
        flags: 0,
        streamId: SELF,
        payload: Buffer.concat([uint32(0), Buffer.of(7)]),
      };
    case 3:
      // Unknown frame types are ignored (RFC 9113, 4.1).
      return {
        type: 0xa + dice.int(0xf0),
        flags: dice.int(256),
        streamId: dice.pick([0, SELF]),
        payload: dice.bytes(dice.int(32)),
      };
    default:
      return { type: SETTINGS, flags: 0, streamId: 0, payload: settingsPayload([dice.pick(SETTINGS_KNOWN)]) };
  }
}

/** The frames of a correct answer: to the streamed call, or to ServerLive. */
function validAnswer(dice: Dice, path: 'stream' | 'unary'): Draft[] {
  const frames: Draft[] = [...headerFrames(dice, GRPC_RESPONSE_HEADERS, false)];
  const messages =
    path === 'stream'
      ? TOKENS.map((t, i) => grpcMessage(tokenResponse(t, i === TOKENS.length - 1)))
      : [grpcMessage(toBinary(ServerLiveResponseSchema, create(ServerLiveResponseSchema, { live: true })))];
  const body = Buffer.concat(messages);
  frames.push(...dataFrames(dice, body, false));
  frames.push(...headerFrames(dice, headerBlock([['grpc-status', '0']]), true));
  // Harmless frames between the others, never inside a header block.
  for (let n = dice.int(4); n > 0; n--) {
    const at = dice.int(frames.length + 1);
    if (frames[at]?.type === CONTINUATION) continue;
    frames.splice(at, 0, harmless(dice));
  }
  return frames;
}

type Mutation = (dice: Dice, frames: Draft[]) => string;

const MUTATIONS: Mutation[] = [
  (dice, frames) => {
    const f = dice.pick(frames);
    f.length = dice.pick([
      0,
      1,
      4,
      7,
      MAX_FRAME + 1,
      0xffffff,
      dice.int(0x1000000),
      f.payload.length + 1,
      Math.max(0, f.payload.length - 1),
    ]);
    return `length of a type-${f.type} frame announced as ${f.length}`;
  },
  (dice, frames) => {
    const f = dice.pick(frames);
    f.flags ^= 1 << dice.int(8);
    return `flags of a type-${f.type} frame now 0x${f.flags.toString(16)}`;
  },
  (dice, frames) => {
    const f = dice.pick(frames);
    f.type = dice.int(12);
    return `a frame's type now ${f.type}`;
  },
  (dice, frames) => {
    const f = dice.pick(frames);
    f.streamId = dice.pick([0, 2, 3, 5, 0x7fffffff, 0x80000001, dice.int(2 ** 31)]);
    return `a type-${f.type} frame on stream ${f.streamId}`;
  },
  (dice, frames) => {
    const blocks = frames.filter((f) => f.type === HEADERS || f.type === CONTINUATION);
    const f = dice.pick(blocks.length > 0 ? blocks : frames);
    const payload = Buffer.from(f.payload);
    for (let n = 1 + dice.int(3); n > 0 && payload.length > 0; n--)
      payload[dice.int(payload.length)] = dice.int(256);
    f.payload = payload;
    return `bytes of a type-${f.type} frame changed`;
  },
  (dice, frames) => {
    const blocks = frames.filter((f) => f.type === HEADERS);
    const f = dice.pick(blocks.length > 0 ? blocks : frames);
    const inserts = [
      hpackInteger(dice.pick([4097, 2 ** 32 - 1, 2 ** 31, 0]), 5, 0x20),
      Buffer.of(0x80), // Indexed field 0: not a field.
      hpackInteger(dice.pick([62, 100, 2 ** 31]), 7, 0x80), // An index past both tables.
      Buffer.of(0x00, 0x7f), // A literal whose name length never ends.
      Buffer.of(0x00, 0x81, 0xff), // A Huffman name of one byte of padding only.
    ];
    f.payload = Buffer.concat([
      dice.chance(0.5) ? dice.pick(inserts) : Buffer.alloc(0),
      f.payload,
      dice.chance(0.5) ? dice.pick(inserts) : Buffer.alloc(0),
    ]);
    return 'an HPACK representation a decoder must refuse added to a header block';
  },
  (dice, frames) => {
    const at = dice.int(frames.length + 1);
    const bad: Draft = dice.pick<Draft>([
      { type: WINDOW_UPDATE, flags: 0, streamId: 0, payload: uint32(0) },
      { type: WINDOW_UPDATE, flags: 0, streamId: SELF, payload: uint32(0) },
      { type: WINDOW_UPDATE, flags: 0, streamId: 0, payload: uint32(0x7fffffff) },
      { type: WINDOW_UPDATE, flags: 0, streamId: SELF, payload: uint32(0x7fffffff) },
      { type: SETTINGS, flags: 0, streamId: 0, payload: settingsPayload([[0x4, 0x80000000]]) },
      { type: SETTINGS, flags: 0, streamId: 0, payload: settingsPayload([[0x4, 0x7fffffff]]) },
      { type: SETTINGS, flags: 0, streamId: 0, payload: settingsPayload([[0x5, dice.int(2 ** 32)]]) },
      { type: SETTINGS, flags: 0, streamId: 0, payload: settingsPayload([[0x2, 1]]) },
      { type: SETTINGS, flags: 1, streamId: 0, payload: Buffer.alloc(6) },
      { type: DATA, flags: 0, streamId: SELF, payload: Buffer.alloc(70_000), length: 70_000 },
    ]);
    frames.splice(at, 0, bad);
    return `window/SETTINGS arithmetic: type-${bad.type} frame inserted`;
  },
  (dice, frames) => {
    const data = frames.filter((f) => f.type === DATA && f.payload.length >= 5 && (f.flags & PADDED) === 0);
    const f = dice.pick(data.length > 0 ? data : frames);
    const payload = Buffer.from(f.payload);
    if (payload.length >= 5) {
      payload[0] = dice.pick([1, 2, 0x80]);
      if (dice.chance(0.7))
        payload.writeUInt32BE(dice.pick([0, 1, 0xffffffff, 2 ** 31, dice.int(2 ** 32)]), 1);
    }
    f.payload = payload;
    return 'a gRPC message prefix changed (flag, length)';
  },
  (dice, frames) => {
    const i = dice.int(frames.length);
    if (dice.chance(0.5)) frames.splice(i, 1);
    else frames.splice(i, 0, { ...frames[i]! });
    return 'a frame dropped or repeated';
  },
  (dice, frames) => {
    const i = dice.int(frames.length);
    const j = dice.int(frames.length);
    [frames[i], frames[j]] = [frames[j]!, frames[i]!];
    return 'two frames swapped';
  },
  (dice, frames) => {
    const f = dice.pick(frames);
    f.flags |= PADDED;
    f.payload = Buffer.concat([Buffer.of(f.payload.length + dice.int(200)), f.payload]);
    return 'padding longer than the frame';
  },
  (dice, frames) => {
    frames.splice(dice.int(frames.length + 1), 0, {
      type: dice.pick([RST_STREAM, GOAWAY, PING]),
      flags: 0,
      streamId: dice.pick([0, SELF]),
      payload: dice.bytes(dice.pick([0, 3, 4, 8, 9, 17])),
    });
    return 'a control frame of a random size';
  },
];

/** Frames of random types, flags, streams and payloads, as a server that lost its mind sends them. */
function randomFrames(dice: Dice): Draft[] {
  return Array.from({ length: 1 + dice.int(20) }, () => ({
    type: dice.int(13),
    flags: dice.int(256),
    streamId: dice.pick([0, SELF, 1, 2, 3, dice.int(2 ** 32)]),
    payload: dice.bytes(dice.pick([0, 4, 5, 6, 8, 9, dice.int(64), dice.int(20_000)])),
    ...(dice.chance(0.1) ? { length: dice.int(0x1000000) } : {}),
  }));
}

/** The case a seed makes. */
export function fuzzCase(seed: number): FuzzCase {
  const dice = new Dice(seed);
  const path = dice.chance(0.1) ? 'unary' : 'stream';
  const steps: string[] = [];
  let frames: Draft[];
  let valid = false;
  const kind = dice.int(10);
  if (kind === 0) {
    frames = randomFrames(dice);
    steps.push(`${frames.length} random frames`);
  } else {
    frames = validAnswer(dice, path);
    if (kind === 1) {
      valid = true;
      steps.push('a valid answer');
    } else {
      for (let n = 1 + dice.int(3); n > 0; n--) steps.push(dice.pick(MUTATIONS)(dice, frames));
    }
  }
  const settingsFirst = valid || !dice.chance(0.03);
  if (!settingsFirst) steps.push('no SETTINGS first');
  else if (!valid && dice.chance(0.1)) {
    frames.unshift({ type: SETTINGS, flags: 0, streamId: 0, payload: dice.bytes(dice.pick([1, 5, 7, 12])) });
    steps.push('an extra SETTINGS frame of a random size');
  }
  const truncateAt = !valid && dice.chance(0.15) ? dice.int(1000) : undefined;
  if (truncateAt !== undefined) steps.push(`truncated after ${truncateAt} bytes`);
  const holdOpen = !valid && dice.chance(0.04);
  if (holdOpen) steps.push('connection held open');
  return {
    seed,
    path,
    valid,
    holdOpen,
    // A stalled call can end only at its deadline: a short one keeps the run fast.
    // Unary calls get a shorter one: on node:http2 many corrupted answers leave the call waiting for
    // its deadline although the server closed the connection (see stalled in FuzzOutcome).
    timeoutMs: holdOpen ? 800 : path === 'unary' ? 1_000 : 2_000,
    steps,
    settingsFirst,
    bytes: (streamId) => {
      const out = Buffer.concat(
        frames.map((f) =>
          frame(
            f.type,
            f.flags,
            f.streamId === SELF ? streamId : f.streamId,
            f.payload,
            f.length ?? f.payload.length,
          ),
        ),
      );
      return truncateAt === undefined ? out : out.subarray(0, truncateAt);
    },
  };
}

/** How far past the deadline a call may still be running before it counts as a hang. */
const HANG_MARGIN_MS = 3_000;

/** Runs one case: the server, a fresh transport, one call under a watchdog. */
export async function runFuzzCase(c: FuzzCase): Promise<FuzzOutcome> {
  const server = await startHostileServer({
    run: async (peer: HostilePeer) => {
      const id = await peer.handshake(c.settingsFirst);
      if (id === undefined) return;
      await peer.send(c.bytes(id));
      if (!c.holdOpen) peer.socket.end();
    },
  });
  const transport = grpcTransport({ baseUrl: server.url });
  const started = performance.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hang = new Promise<'hang'>((resolve) => {
    timer = setTimeout(() => resolve('hang'), c.timeoutMs + HANG_MARGIN_MS);
  });
  const call = (async () => {
    if (c.path === 'unary')
      return (await transport.serverLive({ timeoutMs: c.timeoutMs })) ? ['live'] : ['not live'];
    const texts: string[] = [];
    for await (const r of transport.stream(HOSTILE_REQUEST, { timeoutMs: c.timeoutMs }))
      texts.push(textOf(r));
    return texts;
  })();
  const base = { seed: c.seed, path: c.path };
  try {
    const answer = await Promise.race([call, hang]);
    const ms = performance.now() - started;
    if (answer === 'hang') {
      return {
        ...base,
        ms,
        result: 'hang',
        failure: `no end ${HANG_MARGIN_MS} ms past the ${c.timeoutMs} ms deadline`,
      };
    }
    const expected = c.path === 'unary' ? ['live'] : TOKENS;
    // A corruption the protocol allows to pass (an unknown frame type, a flag with no meaning
    // there, a message prefix of length 0: an empty response) may still give an answer, but only
    // one made of what the server sent; a valid case must give exactly the answer.
    const correct = c.valid
      ? JSON.stringify(answer) === JSON.stringify(expected)
      : answer.every((text) => text === '' || expected.includes(text));
    if (!correct) return { ...base, ms, result: 'answer', failure: `wrong answer ${JSON.stringify(answer)}` };
    return { ...base, ms, result: 'answer' };
  } catch (err) {
    const ms = performance.now() - started;
    if (!(err instanceof TritonLlmError)) {
      return { ...base, ms, result: 'untyped', failure: `not a TritonLlmError: ${String(err)}` };
    }
    const failed = { ...base, ms, result: err.code, message: err.message };
    if (c.valid) return { ...failed, failure: `a valid answer failed: ${err.message}` };
    return { ...failed, stalled: err.code === 'deadline_exceeded' && !c.holdOpen };
  } finally {
    clearTimeout(timer);
    await transport.close();
    await server.close();
  }
}

function textOf(r: InferResponse): string {
  const t = r.outputs.find((o) => o.name === 'text_output');
  return t === undefined ? '' : tensorStrings(t).join('');
}
