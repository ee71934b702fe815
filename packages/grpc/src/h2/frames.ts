/**
 * HTTP/2 frame constants and the encoders of the frames a client sends (RFC 9113, section 6), and
 * the request header block, written as HPACK literals (RFC 7541).
 */

// Frame types.
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

// Flags.
export const END_STREAM = 0x1;
export const ACK = 0x1;
export const END_HEADERS = 0x4;
export const PADDED = 0x8;
export const PRIORITY_FLAG = 0x20;

// SETTINGS parameters.
export const SETTINGS_HEADER_TABLE_SIZE = 0x1;
export const SETTINGS_ENABLE_PUSH = 0x2;
export const SETTINGS_MAX_CONCURRENT_STREAMS = 0x3;
export const SETTINGS_INITIAL_WINDOW_SIZE = 0x4;
export const SETTINGS_MAX_FRAME_SIZE = 0x5;
export const SETTINGS_MAX_HEADER_LIST_SIZE = 0x6;

// Error codes (RFC 9113, section 7).
export const H2_NO_ERROR = 0x0;
export const H2_PROTOCOL_ERROR = 0x1;
export const H2_INTERNAL_ERROR = 0x2;
export const H2_FLOW_CONTROL_ERROR = 0x3;
export const H2_STREAM_CLOSED = 0x5;
export const H2_FRAME_SIZE_ERROR = 0x6;
export const H2_REFUSED_STREAM = 0x7;
export const H2_CANCEL = 0x8;
export const H2_COMPRESSION_ERROR = 0x9;
export const H2_ENHANCE_YOUR_CALM = 0xb;
export const H2_INADEQUATE_SECURITY = 0xc;
export const H2_HTTP_1_1_REQUIRED = 0xd;

const ERROR_NAMES = [
  'NO_ERROR',
  'PROTOCOL_ERROR',
  'INTERNAL_ERROR',
  'FLOW_CONTROL_ERROR',
  'SETTINGS_TIMEOUT',
  'STREAM_CLOSED',
  'FRAME_SIZE_ERROR',
  'REFUSED_STREAM',
  'CANCEL',
  'COMPRESSION_ERROR',
  'CONNECT_ERROR',
  'ENHANCE_YOUR_CALM',
  'INADEQUATE_SECURITY',
  'HTTP_1_1_REQUIRED',
];

/** `PROTOCOL_ERROR (0x1)`: an error code as people read it in logs and specs. */
export function h2ErrorName(code: number): string {
  return `${ERROR_NAMES[code] ?? 'unknown error'} (0x${code.toString(16)})`;
}

export const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
export const FRAME_HEADER = 9;
export const DEFAULT_WINDOW = 65_535;
export const MAX_WINDOW = 0x7fffffff;
export const DEFAULT_MAX_FRAME = 16_384;
export const MAX_STREAM_ID = 0x7fffffff;

const EMPTY = Buffer.alloc(0);

export function frame(type: number, flags: number, streamId: number, payload: Buffer = EMPTY): Buffer {
  const out = Buffer.allocUnsafe(FRAME_HEADER + payload.length);
  out[0] = (payload.length >>> 16) & 0xff;
  out[1] = (payload.length >>> 8) & 0xff;
  out[2] = payload.length & 0xff;
  out[3] = type;
  out[4] = flags;
  out.writeUInt32BE(streamId, 5);
  payload.copy(out, FRAME_HEADER);
  return out;
}

/** HEADERS, and CONTINUATION frames for a block larger than the peer's frame size. */
export function headerFrames(streamId: number, block: Buffer, maxFrame: number): Buffer {
  if (block.length <= maxFrame) return frame(HEADERS, END_HEADERS, streamId, block);
  const frames: Buffer[] = [];
  for (let at = 0; at < block.length; at += maxFrame) {
    const part = block.subarray(at, at + maxFrame);
    const last = at + maxFrame >= block.length;
    frames.push(frame(at === 0 ? HEADERS : CONTINUATION, last ? END_HEADERS : 0, streamId, part));
  }
  return Buffer.concat(frames);
}

export function settingsFrame(entries: readonly (readonly [number, number])[]): Buffer {
  const payload = Buffer.allocUnsafe(entries.length * 6);
  entries.forEach(([id, value], i) => {
    payload.writeUInt16BE(id, i * 6);
    payload.writeUInt32BE(value, i * 6 + 2);
  });
  return frame(SETTINGS, 0, 0, payload);
}

export function goawayFrame(lastStreamId: number, code: number): Buffer {
  const payload = Buffer.allocUnsafe(8);
  payload.writeUInt32BE(lastStreamId, 0);
  payload.writeUInt32BE(code, 4);
  return frame(GOAWAY, 0, 0, payload);
}

export function uint32(value: number): Buffer {
  const out = Buffer.allocUnsafe(4);
  out.writeUInt32BE(value, 0);
  return out;
}

/**
 * A request's header block: `:method POST`, `:scheme`, `:path`, `:authority`, then `fields`
 * (lowercase names), each as an HPACK literal without indexing (RFC 7541, 6.2.2). Nothing enters
 * the peer's dynamic table, so its SETTINGS_HEADER_TABLE_SIZE never constrains us.
 */
export function encodeHeaderBlock(
  url: URL,
  path: string,
  fields: Readonly<Record<string, string | number | readonly string[] | undefined>>,
): Buffer {
  const parts: Buffer[] = [];
  const add = (name: string, value: string) => {
    const n = Buffer.from(name, 'latin1');
    const v = Buffer.from(value, 'latin1');
    parts.push(Buffer.of(0), hpackInteger(n.length, 7), n, hpackInteger(v.length, 7), v);
  };
  add(':method', 'POST');
  add(':scheme', url.protocol === 'https:' ? 'https' : 'http');
  add(':path', path);
  add(':authority', url.host);
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) add(name, String(v));
    else add(name, String(value));
  }
  return Buffer.concat(parts);
}

/** An HPACK integer with an `n`-bit prefix (RFC 7541, 5.1); the prefix's other bits are 0. */
function hpackInteger(value: number, n: number): Buffer {
  const max = (1 << n) - 1;
  if (value < max) return Buffer.of(value);
  const bytes = [max];
  let rest = value - max;
  while (rest >= 128) {
    bytes.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  bytes.push(rest);
  return Buffer.from(bytes);
}
