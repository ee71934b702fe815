// A strict HPACK decoder (RFC 7541) for the header blocks our HTTP/2 client receives.
//
// Strings are latin1 (one char per octet) so that the table sizes, which RFC 7541 4.1 counts in
// octets, are plain `.length` sums, and any octet a server sends round-trips. Every violation
// throws HpackError; the caller answers it with a connection error (COMPRESSION_ERROR), so the
// decoder's state after a throw does not matter.

import { decodeHuffman, huffmanErrorMessage } from './huffman.js';

/** A header block that breaks RFC 7541; the connection cannot continue (RFC 9113 4.3). */
export class HpackError extends Error {
  override name = 'HpackError';
}

/** A header block whose decoded list is larger than the SETTINGS_MAX_HEADER_LIST_SIZE we advertise. */
export class HpackListTooLargeError extends HpackError {
  override name = 'HpackListTooLargeError';
}

/** Options of an HpackDecoder: the limits our SETTINGS advertise to the peer. */
export interface HpackDecoderOptions {
  /** SETTINGS_HEADER_TABLE_SIZE we advertise; a table size update above it is an error. Default 4096. */
  maxTableSize?: number;
  /** SETTINGS_MAX_HEADER_LIST_SIZE we advertise (RFC 9113 6.5.2 sizes). Default: no limit. */
  maxHeaderListSize?: number;
}

// RFC 7541 Appendix A; index 1 first.
// biome-ignore format: one entry a line, as the RFC lists them
const STATIC_TABLE: readonly (readonly [string, string])[] = [
  [':authority', ''], [':method', 'GET'], [':method', 'POST'], [':path', '/'], [':path', '/index.html'],
  [':scheme', 'http'], [':scheme', 'https'], [':status', '200'], [':status', '204'], [':status', '206'],
  [':status', '304'], [':status', '400'], [':status', '404'], [':status', '500'], ['accept-charset', ''],
  ['accept-encoding', 'gzip, deflate'], ['accept-language', ''], ['accept-ranges', ''], ['accept', ''],
  ['access-control-allow-origin', ''], ['age', ''], ['allow', ''], ['authorization', ''], ['cache-control', ''],
  ['content-disposition', ''], ['content-encoding', ''], ['content-language', ''], ['content-length', ''],
  ['content-location', ''], ['content-range', ''], ['content-type', ''], ['cookie', ''], ['date', ''],
  ['etag', ''], ['expect', ''], ['expires', ''], ['from', ''], ['host', ''], ['if-match', ''],
  ['if-modified-since', ''], ['if-none-match', ''], ['if-range', ''], ['if-unmodified-since', ''],
  ['last-modified', ''], ['link', ''], ['location', ''], ['max-forwards', ''], ['proxy-authenticate', ''],
  ['proxy-authorization', ''], ['range', ''], ['referer', ''], ['refresh', ''], ['retry-after', ''],
  ['server', ''], ['set-cookie', ''], ['strict-transport-security', ''], ['transfer-encoding', ''],
  ['user-agent', ''], ['vary', ''], ['via', ''], ['www-authenticate', ''],
];
const STATIC_COUNT = STATIC_TABLE.length;

/** RFC 7541 4.1: an entry's size is its name and value octets plus 32. */
const ENTRY_OVERHEAD = 32;
/** RFC 9113 6.5.2 counts a header list the same way. */
const FIELD_OVERHEAD = 32;
/** RFC 9113 6.5.2: the initial SETTINGS_HEADER_TABLE_SIZE, which the peer's encoder starts from. */
const INITIAL_TABLE_SIZE = 4096;
const EMPTY = new Uint8Array(0);
/** Integers above this are errors; nothing in HTTP/2 needs more, and it keeps arithmetic exact. */
const MAX_INTEGER = 0x7fffffff;

/**
 * Decodes the header blocks of one HTTP/2 connection's receive direction, keeping the dynamic
 * table between blocks. Blocks must be fed complete (HEADERS plus its CONTINUATIONs) and in order.
 */
export class HpackDecoder {
  #maxTableSize: number;
  readonly #maxHeaderListSize: number;
  /** The table's maximum size as the encoder last set it (RFC 7541 4.2). */
  #capacity = INITIAL_TABLE_SIZE;
  #size = 0;
  /** Set when our limit fell below #capacity: the next block must open with a size update. */
  #updateRequired: boolean;

  // The dynamic table is a ring, newest entry at #newest; its length is a power of two.
  #names: string[] = new Array<string>(16).fill('');
  #values: string[] = new Array<string>(16).fill('');
  #mask = 15;
  #newest = 0;
  #count = 0;

  // The block being decoded, and where the last integer or string read from it ended.
  #block: Uint8Array = EMPTY;
  #end = 0;
  // Not from Node's shared pool (Buffer.allocUnsafe): the decoder lives as long as its connection,
  // and a pooled slice keeps the whole slab alive, so every connection would hold a slab of its own
  // (docs/PERFORMANCE.md).
  #huffmanOut: Buffer = Buffer.allocUnsafeSlow(256);

  constructor(options: HpackDecoderOptions = {}) {
    this.#maxTableSize = checkLimit('maxTableSize', options.maxTableSize ?? INITIAL_TABLE_SIZE);
    this.#maxHeaderListSize = checkLimit(
      'maxHeaderListSize',
      options.maxHeaderListSize ?? Number.POSITIVE_INFINITY,
    );
    this.#updateRequired = this.#maxTableSize < this.#capacity;
  }

  /** Current dynamic table size in octets (RFC 7541 4.1). */
  get tableSize(): number {
    return this.#size;
  }

  /** The dynamic table's entries, newest (index 62) first. */
  dynamicTable(): [string, string][] {
    const entries: [string, string][] = [];
    for (let i = 0; i < this.#count; i++) {
      const slot = (this.#newest - i) & this.#mask;
      entries.push([this.#names[slot] as string, this.#values[slot] as string]);
    }
    return entries;
  }

  /**
   * Applies a new SETTINGS_HEADER_TABLE_SIZE once the peer has acknowledged it. If it is below the
   * size the encoder uses, RFC 7541 4.2 obliges the encoder to open its next block with an update.
   */
  setMaxTableSize(maxTableSize: number): void {
    this.#maxTableSize = checkLimit('maxTableSize', maxTableSize);
    if (this.#maxTableSize < this.#capacity) this.#updateRequired = true;
  }

  /** Decodes one complete header block into [name, value] pairs, in order. Throws HpackError. */
  decode(block: Uint8Array): [string, string][] {
    const end = block.length;
    if (this.#updateRequired && (end === 0 || ((block[0] as number) & 0xe0) !== 0x20)) {
      throw new HpackError(
        `the first block after SETTINGS_HEADER_TABLE_SIZE fell to ${this.#maxTableSize} must open with a table size update`,
      );
    }
    this.#block = block;
    const fields: [string, string][] = [];
    let listSize = 0;
    let updates = 0;
    let pos = 0;
    while (pos < end) {
      const first = block[pos] as number;
      let name: string;
      let value: string;
      if (first >= 0x80) {
        // Indexed field (RFC 7541 6.1); the common case, an index below 127, is the one octet.
        let index = first & 0x7f;
        if (index < 0x7f) {
          pos++;
        } else {
          index = this.#integer(pos, 7, 'index');
          pos = this.#end;
        }
        if (index === 0)
          throw new HpackError('index 0 is not in the table (an indexed field needs 1 or more)');
        if (index <= STATIC_COUNT) {
          const entry = STATIC_TABLE[index - 1] as readonly [string, string];
          name = entry[0];
          value = entry[1];
        } else {
          const slot = this.#slot(index);
          name = this.#names[slot] as string;
          value = this.#values[slot] as string;
        }
      } else if ((first & 0xe0) === 0x20) {
        // Dynamic table size update (6.3): zero, one or two before the block's first field (4.2).
        if (fields.length > 0) throw new HpackError('table size update after the first field of a block');
        if (++updates > 2) throw new HpackError('more than two table size updates at the start of a block');
        const size = this.#integer(pos, 5, 'table size update');
        pos = this.#end;
        if (size > this.#maxTableSize) {
          throw new HpackError(
            `table size update to ${size} is above the ${this.#maxTableSize} we advertise`,
          );
        }
        this.#updateRequired = false;
        this.#capacity = size;
        this.#evictTo(size);
        continue;
      } else {
        // Literal with incremental indexing (6.2.1), without indexing (6.2.2) or never indexed
        // (6.2.3); the last two are the same to a decoder.
        const indexing = first >= 0x40;
        const nameIndex = this.#integer(pos, indexing ? 6 : 4, 'index');
        if (nameIndex === 0) {
          name = this.#string(this.#end);
        } else if (nameIndex <= STATIC_COUNT) {
          name = (STATIC_TABLE[nameIndex - 1] as readonly [string, string])[0];
        } else {
          name = this.#names[this.#slot(nameIndex)] as string;
        }
        value = this.#string(this.#end);
        pos = this.#end;
        if (indexing) this.#insert(name, value);
      }
      listSize += name.length + value.length + FIELD_OVERHEAD;
      if (listSize > this.#maxHeaderListSize) {
        throw new HpackListTooLargeError(
          `header list larger than the ${this.#maxHeaderListSize} octets we advertise (SETTINGS_MAX_HEADER_LIST_SIZE)`,
        );
      }
      fields.push([name, value]);
    }
    this.#block = EMPTY;
    return fields;
  }

  /** Reads an integer with an N-bit prefix (RFC 7541 5.1) at `pos`; #end is set past it. */
  #integer(pos: number, prefixBits: number, what: string): number {
    const block = this.#block;
    const mask = (1 << prefixBits) - 1;
    let value = (block[pos++] as number) & mask;
    if (value === mask) {
      let factor = 1;
      for (;;) {
        if (pos >= block.length) throw new HpackError(`${what}: integer runs past the end of the block`);
        const octet = block[pos++] as number;
        value += (octet & 0x7f) * factor;
        // Past 2^31 - 1, or continuation octets of zero that add nothing but could go on forever.
        if (value > MAX_INTEGER || factor > 2 ** 28) {
          throw new HpackError(`${what}: integer larger than ${MAX_INTEGER}`);
        }
        if (octet < 0x80) break;
        factor *= 128;
      }
    }
    this.#end = pos;
    return value;
  }

  /** Reads a string literal (RFC 7541 5.2) at `pos`; #end is set past it. */
  #string(pos: number): string {
    const block = this.#block;
    if (pos >= block.length) throw new HpackError('string literal missing at the end of the block');
    const huffman = (block[pos] as number) >= 0x80;
    const length = this.#integer(pos, 7, 'string length');
    const start = this.#end;
    const left = block.length - start;
    if (length > left) {
      throw new HpackError(
        `string literal of ${length} octets runs past the end of the block (${left} left)`,
      );
    }
    const end = start + length;
    this.#end = end;
    if (!huffman) return latin1(block, start, end);
    // The shortest code is 5 bits, so n octets decode to at most 8n/5 symbols.
    const bound = Math.ceil((length * 8) / 5);
    if (this.#huffmanOut.length < bound) {
      this.#huffmanOut = Buffer.allocUnsafeSlow(Math.max(bound, this.#huffmanOut.length * 2));
    }
    const written = decodeHuffman(block, start, end, this.#huffmanOut);
    if (written < 0) throw new HpackError(huffmanErrorMessage(written));
    return this.#huffmanOut.toString('latin1', 0, written);
  }

  /** The ring slot of dynamic table index `index` (62 is the newest entry). */
  #slot(index: number): number {
    const age = index - STATIC_COUNT - 1;
    if (age >= this.#count) {
      throw new HpackError(
        `index ${index} is not in the table (static 1..${STATIC_COUNT}, dynamic ${STATIC_COUNT + 1}..${STATIC_COUNT + this.#count})`,
      );
    }
    return (this.#newest - age) & this.#mask;
  }

  /** Adds an entry (RFC 7541 4.4): evicts the oldest until it fits; one larger than the table empties it. */
  #insert(name: string, value: string): void {
    const size = name.length + value.length + ENTRY_OVERHEAD;
    if (size > this.#capacity) {
      this.#evictTo(0);
      return;
    }
    this.#evictTo(this.#capacity - size);
    if (this.#count === this.#names.length) this.#grow();
    this.#newest = (this.#newest + 1) & this.#mask;
    this.#names[this.#newest] = name;
    this.#values[this.#newest] = value;
    this.#count++;
    this.#size += size;
  }

  #evictTo(size: number): void {
    while (this.#size > size) {
      const oldest = (this.#newest - this.#count + 1) & this.#mask;
      this.#size -=
        (this.#names[oldest] as string).length + (this.#values[oldest] as string).length + ENTRY_OVERHEAD;
      this.#names[oldest] = '';
      this.#values[oldest] = '';
      this.#count--;
    }
  }

  #grow(): void {
    const length = this.#names.length * 2;
    const names = new Array<string>(length).fill('');
    const values = new Array<string>(length).fill('');
    // Oldest first, so the newest lands at #count - 1.
    for (let i = 0; i < this.#count; i++) {
      const slot = (this.#newest - this.#count + 1 + i) & this.#mask;
      names[i] = this.#names[slot] as string;
      values[i] = this.#values[slot] as string;
    }
    this.#names = names;
    this.#values = values;
    this.#mask = length - 1;
    this.#newest = this.#count - 1;
  }
}

/** Octets as a latin1 string: one char each, through Buffer's native slicing. */
function latin1(block: Uint8Array, start: number, end: number): string {
  if (Buffer.isBuffer(block)) return block.toString('latin1', start, end);
  return Buffer.from(block.buffer, block.byteOffset + start, end - start).toString('latin1');
}

function checkLimit(option: string, value: number): number {
  if (typeof value !== 'number' || !(value >= 0) || (Number.isFinite(value) && !Number.isInteger(value))) {
    throw new RangeError(`HpackDecoder ${option} must be a whole number of octets, got ${value}`);
  }
  return value;
}
