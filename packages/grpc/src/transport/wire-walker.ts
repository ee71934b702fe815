import { TritonLlmError } from '@trtllm/sdk';

// Protobuf wire types.
export const VARINT = 0;
export const FIXED64 = 1;
export const LENGTH_DELIMITED = 2;
export const FIXED32 = 5;

/** The most digits of an id read by value: every such number is exact in a double. */
const MAX_DECIMAL_ID = 15;

/**
 * The value of an id written in decimal, where the number writes it back (no leading zero, at
 * most {@link MAX_DECIMAL_ID} digits): the ids a shared call knows by value, read from the wire
 * by the same rule (`Walker.knownId`).
 */
export function decimalValue(id: string): number | undefined {
  const n = id.length;
  if (n === 0 || n > MAX_DECIMAL_ID || (n > 1 && id.charCodeAt(0) === 0x30)) return undefined;
  let value = 0;
  for (let i = 0; i < n; i++) {
    const digit = id.charCodeAt(i) - 0x30;
    if (digit < 0 || digit > 9) return undefined;
    value = value * 10 + digit;
  }
  return value;
}

/** A field that runs past the end of its message. */
export class Truncated extends Error {}

/** A position in a message and the reads the walker needs; every read checks the bounds. */
export class Walker {
  pos = 0;
  end = 0;
  buf: Buffer = Buffer.alloc(0);
  private expectedId: string | undefined;
  private knownIds: ReadonlyMap<number, string> | undefined;

  /**
   * Points the walker at `buf[start..end)`. `expectedId` is the one id the message should carry (a
   * call of its own); `knownIds` holds the decimal ids of the requests on a shared call by value.
   */
  reset(
    buf: Buffer,
    start: number,
    end: number,
    expectedId: string | undefined,
    knownIds?: ReadonlyMap<number, string>,
  ): this {
    this.buf = buf;
    this.end = end;
    this.pos = start;
    this.expectedId = expectedId;
    this.knownIds = knownIds;
    return this;
  }

  /** A short name that recurs in every response (model, output, data type, parameter key). */
  name(): string {
    const stop = this.take(this.varint());
    const out = NAMES.get(this.buf, this.pos, stop);
    this.pos = stop;
    return out;
  }

  /** The response's id: the request's own in every response of a stream, so its string is reused. */
  id(): string {
    const stop = this.take(this.varint());
    const expected = this.expectedId;
    const out =
      expected !== undefined && sameAscii(expected, this.buf, this.pos, stop)
        ? expected
        : (this.knownId(stop) ?? this.buf.toString('utf8', this.pos, stop));
    this.pos = stop;
    return out;
  }

  /**
   * The registered string of a decimal id (the SDK's own ids are decimal): on a shared call every
   * response names its request, and decoding that name into a new string, then hashing it to find
   * the request, was work per token whose answer already exists. Undefined for any other id.
   */
  private knownId(stop: number): string | undefined {
    const known = this.knownIds;
    const start = this.pos;
    const length = stop - start;
    if (known === undefined || length === 0 || length > MAX_DECIMAL_ID) return undefined;
    const buf = this.buf;
    // A leading zero would name a string that no number gives back ("007").
    if (buf[start] === 0x30 && length > 1) return undefined;
    let value = 0;
    for (let i = start; i < stop; i++) {
      const digit = buf[i]! - 0x30;
      if (digit < 0 || digit > 9) return undefined;
      value = value * 10 + digit;
    }
    return known.get(value);
  }

  /** A varint as a number: exact up to 2^53, which every tag and length is. */
  varint(): number {
    const buf = this.buf;
    let b = buf[this.pos++];
    if (b === undefined) throw new Truncated();
    if (b < 0x80) return b;
    let value = b & 0x7f;
    let scale = 128;
    for (let i = 1; i < 10; i++) {
      b = buf[this.pos++];
      if (b === undefined) throw new Truncated();
      value += (b & 0x7f) * scale;
      if (b < 0x80) return value;
      scale *= 128;
    }
    throw new Error('a varint longer than 10 bytes');
  }

  /** A 64-bit integer parameter: a number when it fits exactly, else a bigint (signed for int64). */
  int64(signed: boolean): number | bigint {
    const start = this.pos;
    const value = this.varint();
    if (value <= Number.MAX_SAFE_INTEGER) return value;
    let big = 0n;
    for (let i = this.pos - 1; i >= start; i--) big = (big << 7n) | BigInt(this.buf[i]! & 0x7f);
    big = BigInt.asUintN(64, big);
    const exact = signed ? BigInt.asIntN(64, big) : big;
    return exact >= BigInt(Number.MIN_SAFE_INTEGER) && exact <= BigInt(Number.MAX_SAFE_INTEGER)
      ? Number(exact)
      : exact;
  }

  /** A shape dimension: a whole number a JavaScript array can index. */
  dimension(): number {
    const value = this.varint();
    if (value > Number.MAX_SAFE_INTEGER)
      throw new TritonLlmError('protocol', `a tensor dimension of ${value}`);
    return value;
  }

  double(): number {
    if (this.pos + 8 > this.end) throw new Truncated();
    const value = this.buf.readDoubleLE(this.pos);
    this.pos += 8;
    return value;
  }

  /** Checks that `length` bytes follow and returns where they end. */
  take(length: number): number {
    const stop = this.pos + length;
    if (stop > this.end) throw new Truncated();
    return stop;
  }

  string(): string {
    const stop = this.take(this.varint());
    const out = this.buf.toString('utf8', this.pos, stop);
    this.pos = stop;
    return out;
  }

  skip(type: number): void {
    switch (type) {
      case VARINT:
        this.varint();
        return;
      case FIXED64:
        this.pos = this.take(8);
        return;
      case LENGTH_DELIMITED:
        this.pos = this.take(this.varint());
        return;
      case FIXED32:
        this.pos = this.take(4);
        return;
      default:
        throw new Error(`wire type ${type} (groups are not used by this protocol)`);
    }
  }
}

function sameAscii(text: string, buf: Buffer, start: number, end: number): boolean {
  if (text.length !== end - start) return false;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) !== buf[start + i]) return false;
  return true;
}

/**
 * The few short strings every response repeats (model name and version, output names, data
 * types, parameter keys), decoded once: a lookup compares bytes instead of decoding UTF-8 and
 * allocating a string for each of them in every streamed token.
 */
class NameCache {
  // By length, so that a lookup compares bytes with the few names of that length only.
  private readonly bytes: Uint8Array[][] = [];
  private readonly strings: string[][] = [];

  constructor(private readonly perLength: number) {}

  get(buf: Buffer, start: number, end: number): string {
    const length = end - start;
    if (length > MAX_NAME_BYTES) return buf.toString('utf8', start, end);
    let bytes = this.bytes[length];
    let strings = this.strings[length];
    if (bytes === undefined || strings === undefined) {
      bytes = [];
      strings = [];
      this.bytes[length] = bytes;
      this.strings[length] = strings;
    }
    for (let i = 0; i < bytes.length; i++) {
      const b = bytes[i]!;
      let j = 0;
      while (j < length && b[j] === buf[start + j]) j++;
      if (j === length) return strings[i]!;
    }
    const text = buf.toString('utf8', start, end);
    // A full bucket drops its oldest name.
    if (bytes.length >= this.perLength) {
      bytes.shift();
      strings.shift();
    }
    bytes.push(Uint8Array.prototype.slice.call(buf, start, end));
    strings.push(text);
    return text;
  }
}

const MAX_NAME_BYTES = 64;
const NAMES = new NameCache(4);
