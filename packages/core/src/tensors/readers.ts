import { TritonLlmError } from '../errors.js';
import { isArrayLike, TEXT_ENCODER, type Tensor } from './tensor.js';

// ignoreBOM keeps a leading U+FEFF as text instead of silently dropping it.
const TEXT_DECODER = new TextDecoder('utf-8', { ignoreBOM: true });

function show(v: unknown): string {
  if (typeof v === 'bigint') return `${v}n`;
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 37)}...` : v);
  if (v instanceof Uint8Array) return `${v.length} bytes`;
  return String(v);
}

/**
 * Reads every element with `read`; `undefined` from it means the element is not of the wanted kind.
 * The readers below are module-level functions, not closures made per call: decoding a streamed
 * response reads several tensors for every token.
 */
function readEach<T>(t: Tensor, wanted: string, read: (v: unknown) => T | undefined): T[] {
  const items = arrayOf(t);
  const out = new Array<T>(items.length);
  for (let i = 0; i < items.length; i++) {
    const value = read(items[i]);
    if (value === undefined) throw unreadable(t, i, items[i], wanted);
    out[i] = value;
  }
  return out;
}

function arrayOf(t: Tensor): ArrayLike<unknown> {
  const items: unknown = t.data;
  if (!isArrayLike(items)) {
    throw new TritonLlmError('protocol', `tensor '${t.name}' (${t.datatype}) holds no array of values`);
  }
  return items;
}

function unreadable(t: Tensor, i: number, item: unknown, wanted: string): TritonLlmError {
  return new TritonLlmError(
    'protocol',
    `tensor '${t.name}' (${t.datatype}): element ${i} cannot be read as ${wanted} (got ${show(item)})`,
  );
}

const WANTED_NUMBER = 'a number (bigints must lie within ±(2^53 - 1); use tensorBigInts())';

function asNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') {
    return v >= Number.MIN_SAFE_INTEGER && v <= Number.MAX_SAFE_INTEGER ? Number(v) : undefined;
  }
  if (typeof v === 'boolean') return v ? 1 : 0;
  return undefined;
}

function asBigInt(v: unknown): bigint | undefined {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : undefined;
  if (typeof v === 'boolean') return v ? 1n : 0n;
  return undefined;
}

function asText(v: unknown): string | undefined {
  if (v instanceof Uint8Array) return utf8Text(v);
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  return undefined;
}

function asBoolean(v: unknown): boolean | undefined {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return Number.isNaN(v) ? undefined : v !== 0;
  if (typeof v === 'bigint') return v !== 0n;
  return undefined;
}

function asBytes(v: unknown): Uint8Array | undefined {
  if (v instanceof Uint8Array) return v;
  if (typeof v === 'string') return TEXT_ENCODER.encode(v);
  return undefined;
}

/**
 * `tensorNumbers(t)[0]` (undefined when `t` holds no element) without the array, for the
 * one-element counters a streamed response carries with every token.
 * @internal
 */
export function firstTensorNumber(t: Tensor): number | undefined {
  const items = arrayOf(t);
  if (items.length !== 1) return tensorNumbers(t)[0];
  const value = asNumber(items[0]);
  if (value === undefined) throw unreadable(t, 0, items[0], WANTED_NUMBER);
  return value;
}

/**
 * A tensor's elements as numbers, whatever its numeric form: typed arrays, the FP64 tensors of
 * HTTP `/generate`, booleans (0/1), and bigints up to 2^53; larger bigints are a `protocol` error
 * (read them with {@link tensorBigInts}).
 */
export function tensorNumbers(t: Tensor): number[] {
  return readEach(t, WANTED_NUMBER, asNumber);
}

/** A tensor's elements as bigints; numbers must be integers (an FP64 token id of 5 reads as 5n). */
export function tensorBigInts(t: Tensor): bigint[] {
  return readEach(t, 'an integer', asBigInt);
}

/**
 * A tensor's elements as text: BYTES elements decoded as UTF-8 (invalid sequences become
 * U+FFFD), strings as they are, numbers, bigints and booleans through `String()`.
 */
export function tensorStrings(t: Tensor): string[] {
  return readEach(t, 'text', asText);
}

// A streamed token is a few bytes: building its string in JavaScript is cheaper than a call into
// the runtime's UTF-8 decoder, which the rest still takes. Not only for ASCII: a small Uint8Array
// made in JavaScript (HTTP's BYTES outputs) keeps its bytes on V8's heap, and handing it to
// TextDecoder first moves them to a buffer of their own (a malloc and a free per token), which
// shows in the HTTP path's CPU per token (docs/PERFORMANCE.md).
const SHORT_TEXT = 24;

function utf8Text(bytes: Uint8Array): string {
  const n = bytes.length;
  if (n > SHORT_TEXT) return TEXT_DECODER.decode(bytes);
  for (let i = 0; i < n; i++) {
    if (bytes[i]! >= 0x80) return shortUtf8Text(bytes, n) ?? TEXT_DECODER.decode(bytes);
  }
  return String.fromCharCode.apply(null, bytes as unknown as number[]);
}

// UTF-16 code units of the text being decoded (one text at a time), reused rather than allocated.
const UNITS: number[] = [];

/**
 * The text of a few bytes of well-formed UTF-8, or undefined at the first byte that is not (a
 * sequence cut by a token boundary, an overlong form, a surrogate, past U+10FFFF): TextDecoder
 * then decodes the whole text, with U+FFFD where the Encoding Standard puts it. The ranges of a
 * second byte that E0, ED, F0 and F4 allow are that standard's.
 */
function shortUtf8Text(bytes: Uint8Array, n: number): string | undefined {
  let k = 0;
  for (let i = 0; i < n; ) {
    const b0 = bytes[i]!;
    if (b0 < 0x80) {
      UNITS[k++] = b0;
      i += 1;
    } else if (b0 >= 0xc2 && b0 <= 0xdf) {
      if (i + 1 >= n || !continuation(bytes[i + 1]!, 0x80, 0xbf)) return undefined;
      UNITS[k++] = ((b0 & 0x1f) << 6) | (bytes[i + 1]! & 0x3f);
      i += 2;
    } else if (b0 >= 0xe0 && b0 <= 0xef) {
      if (i + 2 >= n) return undefined;
      const b1 = bytes[i + 1]!;
      const b2 = bytes[i + 2]!;
      if (!continuation(b1, b0 === 0xe0 ? 0xa0 : 0x80, b0 === 0xed ? 0x9f : 0xbf)) return undefined;
      if (!continuation(b2, 0x80, 0xbf)) return undefined;
      UNITS[k++] = ((b0 & 0x0f) << 12) | ((b1 & 0x3f) << 6) | (b2 & 0x3f);
      i += 3;
    } else if (b0 >= 0xf0 && b0 <= 0xf4) {
      if (i + 3 >= n) return undefined;
      const b1 = bytes[i + 1]!;
      const b2 = bytes[i + 2]!;
      const b3 = bytes[i + 3]!;
      if (!continuation(b1, b0 === 0xf0 ? 0x90 : 0x80, b0 === 0xf4 ? 0x8f : 0xbf)) return undefined;
      if (!continuation(b2, 0x80, 0xbf) || !continuation(b3, 0x80, 0xbf)) return undefined;
      const above = (((b0 & 0x07) << 18) | ((b1 & 0x3f) << 12) | ((b2 & 0x3f) << 6) | (b3 & 0x3f)) - 0x10000;
      UNITS[k++] = 0xd800 + (above >> 10);
      UNITS[k++] = 0xdc00 + (above & 0x3ff);
      i += 4;
    } else return undefined;
  }
  UNITS.length = k;
  return String.fromCharCode.apply(null, UNITS);
}

function continuation(b: number, low: number, high: number): boolean {
  return b >= low && b <= high;
}

/** A tensor's elements as booleans: BOOL as it is, numbers and bigints true when non-zero. */
export function tensorBooleans(t: Tensor): boolean[] {
  return readEach(t, 'a boolean', asBoolean);
}

/** A tensor's elements as byte strings: BYTES elements as they are, strings encoded as UTF-8. */
export function tensorBytes(t: Tensor): Uint8Array[] {
  return readEach(t, 'bytes', asBytes);
}
