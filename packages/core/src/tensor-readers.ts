import { TritonLlmError } from './errors.js';
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

// A streamed token is a few bytes, usually ASCII: building its string in JavaScript is cheaper
// than a call into the runtime's UTF-8 decoder, which the rest still takes.
const SHORT_TEXT = 24;

function utf8Text(bytes: Uint8Array): string {
  const n = bytes.length;
  if (n > SHORT_TEXT) return TEXT_DECODER.decode(bytes);
  for (let i = 0; i < n; i++) if (bytes[i]! >= 0x80) return TEXT_DECODER.decode(bytes);
  return String.fromCharCode.apply(null, bytes as unknown as number[]);
}

/** A tensor's elements as booleans: BOOL as it is, numbers and bigints true when non-zero. */
export function tensorBooleans(t: Tensor): boolean[] {
  return readEach(t, 'a boolean', asBoolean);
}

/** A tensor's elements as byte strings: BYTES elements as they are, strings encoded as UTF-8. */
export function tensorBytes(t: Tensor): Uint8Array[] {
  return readEach(t, 'bytes', asBytes);
}
