import { connect, type Socket } from 'node:net';
import { create, toBinary } from '@bufbuild/protobuf';
import { ModelInferRequestSchema } from '../../../packages/grpc/src/gen/inference/grpc_service_pb.js';
import { ensembleRequestInit, firstString } from '../wire.js';
import type { Endpoints, Variant } from './variant.js';

// HTTP/2 frame types and flags (RFC 9113 section 6).
const DATA = 0x0;
const HEADERS = 0x1;
const RST_STREAM = 0x3;
const SETTINGS = 0x4;
const PING = 0x6;
const GOAWAY = 0x7;
const WINDOW_UPDATE = 0x8;
const END_STREAM = 0x1;
const ACK = 0x1;
const END_HEADERS = 0x4;
const SETTINGS_INITIAL_WINDOW_SIZE = 0x4;
const MAX_WINDOW = 0x7fffffff;
const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/**
 * The shared calls of the `socket-probe-mux` variant: `multiplex: true`'s (`DEFAULT_MULTIPLEX_CALLS`
 * in packages/grpc/src/transport/shared-calls.ts; not imported, so the probe's process loads none of the SDK).
 */
export const PROBE_SHARED_CALLS = 32;

/** The probe as a variant, and with each token's text handed over as it arrives. */
export interface SocketProbe extends Variant {
  streamText(prompt: string, maxTokens: number, id: number, onText: (text: string) => void): Promise<number>;
}

/** What one open request has received so far. */
interface Call {
  tokens: number;
  text: string;
  /** The start of a gRPC message cut by the end of a DATA frame (a stream of its own only). */
  partial: Buffer | undefined;
  readonly onFirstToken: (() => void) | undefined;
  /** Each token's text as it arrives (the OpenAI benchmark's floor server forwards it). */
  readonly onText: ((text: string) => void) | undefined;
  readonly resolve: (tokens: number) => void;
  readonly reject: (err: Error) => void;
}

/** One HTTP/2 stream many requests share (`sharedCalls`), its members keyed by request id. */
interface SharedStream {
  readonly members: Map<number, Call>;
  partial: Buffer | undefined;
}

/** One HTTP/2 connection of the probe and the streams open on it. */
interface Connection {
  readonly socket: Socket;
  readonly calls: Map<number, Call>;
  readonly shared: Map<number, SharedStream>;
  nextStreamId: number;
  unread: Buffer | undefined;
}

export interface SocketProbeOptions {
  /**
   * Streams per connection: past them the next request opens another connection (the server's
   * MAX_CONCURRENT_STREAMS, as the stream-limit part of the bench sets it). Default: one connection.
   */
  readonly streamsPerConnection?: number;
  /**
   * Requests share this many `ModelStreamInfer` calls on one connection, each joining the call
   * with the fewest requests (what `multiplex: true` does), routed by their request id. Default:
   * a call per request.
   */
  readonly sharedCalls?: number;
}

/**
 * A probe, not a client: how little CPU per token Node needs when HTTP/2 frames are read in
 * JavaScript from a plain `node:net` socket, one `data` callback per socket read instead of one
 * per frame. It speaks only what this benchmark's exchange needs, and skips what a real client
 * must do: no HPACK decoding (response headers and trailers are recognised by their flags, never
 * read, so a gRPC error status goes unseen), no flow control (its windows are opened as wide as
 * the protocol allows, once), no TLS, no deadlines, no reconnection, and it learns a server's
 * stream limit from `streamsPerConnection`, not from the server's SETTINGS. Its figures bound what
 * an HTTP/2 client written on sockets could reach, on a call per request, past a stream limit
 * (`streamsPerConnection`) and on shared calls (`sharedCalls`); they are not a bare client users
 * could adopt, so the benchmark does not count it among the bare variants.
 */
export function socketProbeVariant(endpoints: Endpoints, options: SocketProbeOptions = {}): SocketProbe {
  const url = new URL(endpoints.grpcUrl);
  const perConnection = options.streamsPerConnection ?? Number.POSITIVE_INFINITY;
  const sharedCalls = options.sharedCalls ?? 0;
  const connections: Connection[] = [];

  const connectOne = (): Connection => {
    const s = connect(Number(url.port), url.hostname);
    const conn: Connection = {
      socket: s,
      calls: new Map(),
      shared: new Map(),
      nextStreamId: 1,
      unread: undefined,
    };
    s.setNoDelay(true);
    s.on('data', (chunk: Buffer) => onSocketData(conn, chunk));
    s.on('error', (err) => failAll(conn, err));
    const settings = Buffer.alloc(6);
    settings.writeUInt16BE(SETTINGS_INITIAL_WINDOW_SIZE, 0);
    settings.writeUInt32BE(MAX_WINDOW, 2);
    const increment = Buffer.alloc(4);
    increment.writeUInt32BE(MAX_WINDOW - 65_535, 0);
    s.write(
      Buffer.concat([
        PREFACE,
        frameHeader(settings.length, SETTINGS, 0, 0),
        settings,
        frameHeader(4, WINDOW_UPDATE, 0, 0),
        increment,
      ]),
    );
    connections.push(conn);
    return conn;
  };

  /** The first connection with a free stream, opened when every one is full. */
  const pick = (): Connection => {
    for (const conn of connections) if (conn.calls.size < perConnection) return conn;
    return connectOne();
  };

  const failAll = (conn: Connection, err: Error) => {
    for (const call of conn.calls.values()) call.reject(err);
    conn.calls.clear();
    for (const stream of conn.shared.values()) {
      for (const call of stream.members.values()) call.reject(err);
      stream.members.clear();
    }
  };

  const finish = (conn: Connection, streamId: number, call: Call) => {
    conn.calls.delete(streamId);
    call.resolve(call.tokens);
  };

  const onSocketData = (conn: Connection, chunk: Buffer) => {
    const buf = conn.unread === undefined ? chunk : Buffer.concat([conn.unread, chunk]);
    conn.unread = undefined;
    let pos = 0;
    while (buf.length - pos >= 9) {
      const length = buf.readUIntBE(pos, 3);
      if (buf.length - pos < 9 + length) break;
      const type = buf[pos + 3]!;
      const flags = buf[pos + 4]!;
      const streamId = buf.readUInt32BE(pos + 5) & 0x7fffffff;
      const payload = buf.subarray(pos + 9, pos + 9 + length);
      pos += 9 + length;
      const call = conn.calls.get(streamId);
      if (type === DATA && call !== undefined) {
        readMessages(conn, streamId, call, payload);
        if ((flags & END_STREAM) !== 0) finish(conn, streamId, call);
      } else if (type === DATA && conn.shared.has(streamId)) {
        readShared(conn.shared.get(streamId)!, payload);
      } else if (type === HEADERS && call !== undefined && (flags & END_STREAM) !== 0) {
        // The trailers (or a trailers-only answer): the call is over.
        finish(conn, streamId, call);
      } else if (type === RST_STREAM && call !== undefined) {
        conn.calls.delete(streamId);
        call.reject(new Error(`stream ${streamId} reset with code ${payload.readUInt32BE(0)}`));
      } else if (type === SETTINGS && (flags & ACK) === 0) {
        conn.socket.write(frameHeader(0, SETTINGS, ACK, 0));
      } else if (type === PING && (flags & ACK) === 0) {
        conn.socket.write(Buffer.concat([frameHeader(8, PING, ACK, 0), payload]));
      } else if (type === GOAWAY) {
        failAll(conn, new Error(`GOAWAY ${payload.readUInt32BE(4)}: ${payload.subarray(8).toString()}`));
      } else if (
        (type === RST_STREAM || (type === HEADERS && (flags & END_STREAM) !== 0)) &&
        conn.shared.has(streamId)
      ) {
        const stream = conn.shared.get(streamId)!;
        conn.shared.delete(streamId);
        for (const member of stream.members.values())
          member.reject(new Error(`shared stream ${streamId} ended`));
      }
    }
    if (pos < buf.length) conn.unread = buf.subarray(pos);
  };

  /** Counts one response's token (its `textOutput`) for `call`; true at the request's final response. */
  const absorb = (call: Call, text: Buffer | undefined): boolean => {
    if (text !== undefined) {
      if (call.tokens === 0) call.onFirstToken?.();
      call.tokens += 1;
      const piece = firstString(text);
      if (call.onText !== undefined) call.onText(piece);
      else call.text += piece;
    }
    return finalSeen;
  };

  const readMessages = (conn: Connection, streamId: number, call: Call, data: Buffer) => {
    let buf = call.partial === undefined ? data : Buffer.concat([call.partial, data]);
    call.partial = undefined;
    while (buf.length >= 5) {
      const length = buf.readUInt32BE(1);
      if (buf.length < 5 + length) break;
      // The final flag rides on the last response with tensors (or on an empty one where none
      // carries it): half-close, and the server ends the call with its trailers.
      if (absorb(call, textOutput(buf, 5, 5 + length)))
        conn.socket.write(frameHeader(0, DATA, END_STREAM, streamId));
      buf = buf.subarray(5 + length);
    }
    if (buf.length > 0) call.partial = buf;
  };

  /** A shared call's responses, each routed to its request by id; a request ends at its final one. */
  const readShared = (stream: SharedStream, data: Buffer) => {
    let buf = stream.partial === undefined ? data : Buffer.concat([stream.partial, data]);
    stream.partial = undefined;
    while (buf.length >= 5) {
      const length = buf.readUInt32BE(1);
      if (buf.length < 5 + length) break;
      const text = textOutput(buf, 5, 5 + length);
      const call = stream.members.get(idSeen);
      if (call !== undefined && absorb(call, text)) {
        stream.members.delete(idSeen);
        call.resolve(call.tokens);
      }
      buf = buf.subarray(5 + length);
    }
    if (buf.length > 0) stream.partial = buf;
  };

  /** Registers a request under `key` (its stream id, or its id on a shared call) and writes its frames. */
  const enlist = <K>(
    calls: Map<K, Call>,
    key: K,
    socket: Socket,
    frames: Uint8Array[],
    onFirstToken: (() => void) | undefined,
    onText: ((text: string) => void) | undefined,
  ): Promise<number> =>
    new Promise<number>((resolve, reject) => {
      calls.set(key, { tokens: 0, text: '', partial: undefined, onFirstToken, onText, resolve, reject });
      socket.write(Buffer.concat(frames));
    });

  const send = (
    prompt: string,
    maxTokens: number,
    id: number,
    onFirstToken: (() => void) | undefined,
    onText: ((text: string) => void) | undefined,
  ): Promise<number> => {
    const message = toBinary(
      ModelInferRequestSchema,
      create(ModelInferRequestSchema, ensembleRequestInit(prompt, maxTokens, id)),
    );
    const prefix = Buffer.alloc(5);
    prefix.writeUInt32BE(message.length, 1);
    if (sharedCalls > 0) return sendShared(id, prefix, message, onFirstToken, onText);
    const conn = pick();
    const streamId = conn.nextStreamId;
    conn.nextStreamId += 2;
    const block = headerBlock(url.host);
    const frames = [
      frameHeader(block.length, HEADERS, END_HEADERS, streamId),
      block,
      frameHeader(prefix.length + message.length, DATA, 0, streamId),
      prefix,
      message,
    ];
    return enlist(conn.calls, streamId, conn.socket, frames, onFirstToken, onText);
  };

  /** Sends a request on the shared call with the fewest requests, opening calls up to `sharedCalls`. */
  const sendShared = (
    id: number,
    prefix: Buffer,
    message: Uint8Array,
    onFirstToken: (() => void) | undefined,
    onText: ((text: string) => void) | undefined,
  ): Promise<number> => {
    // The shared calls are those open on the first connection (an ended one leaves `shared`).
    const conn = connections[0] ?? connectOne();
    let stream: SharedStream | undefined;
    let streamId = 0;
    for (const [candidateId, candidate] of conn.shared) {
      if (stream === undefined || candidate.members.size < stream.members.size) {
        stream = candidate;
        streamId = candidateId;
      }
    }
    const parts: Uint8Array[] = [];
    if (stream === undefined || (stream.members.size > 0 && conn.shared.size < sharedCalls)) {
      streamId = conn.nextStreamId;
      conn.nextStreamId += 2;
      stream = { members: new Map(), partial: undefined };
      conn.shared.set(streamId, stream);
      const block = headerBlock(url.host);
      parts.push(frameHeader(block.length, HEADERS, END_HEADERS, streamId), block);
    }
    parts.push(frameHeader(prefix.length + message.length, DATA, 0, streamId), prefix, message);
    return enlist(stream.members, id, conn.socket, parts, onFirstToken, onText);
  };

  return {
    stream: (prompt, maxTokens, id, onFirstToken) => send(prompt, maxTokens, id, onFirstToken, undefined),
    streamText: (prompt, maxTokens, id, onText) => send(prompt, maxTokens, id, undefined, onText),
    close: async () => {
      for (const conn of connections) conn.socket.destroy();
    },
  };
}

function frameHeader(length: number, type: number, flags: number, streamId: number): Buffer {
  const b = Buffer.alloc(9);
  b.writeUIntBE(length, 0, 3);
  b[3] = type;
  b[4] = flags;
  b.writeUInt32BE(streamId, 5);
  return b;
}

let cachedBlock: { host: string; block: Buffer } | undefined;

/** The request headers as HPACK literals without indexing (no encoder state to keep). */
function headerBlock(host: string): Buffer {
  if (cachedBlock?.host === host) return cachedBlock.block;
  const literal = (name: string, value: string) =>
    Buffer.concat([
      Buffer.of(0, name.length),
      Buffer.from(name),
      Buffer.of(value.length),
      Buffer.from(value),
    ]);
  const block = Buffer.concat([
    literal(':method', 'POST'),
    literal(':scheme', 'http'),
    literal(':path', '/inference.GRPCInferenceService/ModelStreamInfer'),
    literal(':authority', host),
    literal('content-type', 'application/grpc'),
    literal('te', 'trailers'),
  ]);
  cachedBlock = { host, block };
  return block;
}

const TEXT_OUTPUT = Buffer.from('text_output');
const FINAL_KEY = Buffer.from('triton_final_response');

/** Whether the response `textOutput` read last carried `triton_final_response: true`. */
let finalSeen = false;
/** The request id (as the probe writes them: decimal digits) of the response `textOutput` read last. */
let idSeen = -1;

/**
 * The `raw_output_contents` (field 6) of the output named `text_output` (field 5) in the
 * `infer_response` (field 2) of a `ModelStreamInferResponse`; undefined for a response without it.
 * Sets `finalSeen` from the response's parameters (field 4) and `idSeen` from its id (field 3).
 */
function textOutput(buf: Buffer, start: number, end: number): Buffer | undefined {
  finalSeen = false;
  idSeen = -1;
  let pos = start;
  let stop = end;
  let inside = false;
  let outputs = 0;
  let raws = 0;
  let wanted = -1;
  const varint = (): number => {
    let value = 0;
    let scale = 1;
    for (;;) {
      const b = buf[pos++]!;
      value += (b & 0x7f) * scale;
      if (b < 0x80) return value;
      scale *= 128;
    }
  };
  while (pos < stop) {
    const tag = varint();
    const field = tag >>> 3;
    const type = tag & 7;
    if (type === 2) {
      const length = varint();
      if (!inside && field === 2) {
        inside = true;
        stop = pos + length;
        continue;
      }
      if (inside && field === 3) {
        let id = 0;
        for (let i = pos; i < pos + length; i++) id = id * 10 + (buf[i]! - 0x30);
        idSeen = id;
        pos += length;
        continue;
      }
      if (inside && field === 5) {
        // InferOutputTensor: its name (field 1) comes first in what protobuf writers emit.
        const at = pos;
        pos += 1;
        const nameLength = varint();
        if (buf[at] === 0x0a && buf.subarray(pos, pos + nameLength).equals(TEXT_OUTPUT)) wanted = outputs;
        outputs += 1;
        pos = at + length;
        continue;
      }
      if (inside && field === 4) {
        // A map entry { key = 1, value = 2: InferParameter { bool_param = 1 } }, written key first.
        const keyLength = buf[pos + 1]!;
        const value = pos + 2 + keyLength;
        if (
          buf[pos] === 0x0a &&
          buf.subarray(pos + 2, value).equals(FINAL_KEY) &&
          buf[value] === 0x12 &&
          buf[value + 2] === 0x08 &&
          buf[value + 3] === 1
        ) {
          finalSeen = true;
        }
        pos += length;
        continue;
      }
      if (inside && field === 6) {
        if (raws === wanted) {
          // The parameters come before the contents in what protobuf writers emit.
          return buf.subarray(pos, pos + length);
        }
        raws += 1;
      }
      pos += length;
    } else if (type === 0) varint();
    else if (type === 1) pos += 8;
    else if (type === 5) pos += 4;
    else throw new Error(`wire type ${type}`);
  }
  return undefined;
}
