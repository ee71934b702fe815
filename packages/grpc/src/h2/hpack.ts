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

  // The block being decoded, as a Buffer for its latin1 slicing.
  #block: Buffer = Buffer.alloc(0);
  #pos = 0;
  #huffmanOut: Buffer = Buffer.allocUnsafe(256);

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
    this.#block = Buffer.isBuffer(block)
      ? block
      : Buffer.from(block.buffer, block.byteOffset, block.byteLength);
    this.#pos = 0;
    const end = block.length;
    const fields: [string, string][] = [];
    let listSize = 0;
    let updates = 0;
    while (this.#pos < end) {
      const first = block[this.#pos] as number;
      let name: string;
      let value: string;
      if (first >= 0x80) {
        // Indexed field (RFC 7541 6.1).
        const index = this.#integer(7);
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
      } else if (first >= 0x40) {
        // Literal with incremental indexing (6.2.1).
        name = this.#literalName(6);
        value = this.#string();
        this.#insert(name, value);
      } else if (first >= 0x20) {
        // Dynamic table size update (6.3): only before the block's first field (4.2).
        if (fields.length > 0) throw new HpackError('table size update after the first field of a block');
        if (++updates > 2) throw new HpackError('more than two table size updates at the start of a block');
        const size = this.#sizeUpdate();
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
        // Literal without indexing (6.2.2) or never indexed (6.2.3): the same to a decoder.
        name = this.#literalName(4);
        value = this.#string();
      }
      if (this.#updateRequired) throw missingUpdate(this.#maxTableSize);
      listSize += name.length + value.length + FIELD_OVERHEAD;
      if (listSize > this.#maxHeaderListSize) {
        throw new HpackListTooLargeError(
          `header list larger than the ${this.#maxHeaderListSize} octets we advertise (SETTINGS_MAX_HEADER_LIST_SIZE)`,
        );
      }
      fields.push([name, value]);
    }
    if (this.#updateRequired) throw missingUpdate(this.#maxTableSize);
    return fields;
  }

  /** Reads an integer with an N-bit prefix (RFC 7541 5.1) at #pos. */
  /** The size of a table size update; one too large to read is named as such. */
  #sizeUpdate(): number {
    try {
      return this.#integer(5);
    } catch (err) {
      if (err instanceof HpackError) throw new HpackError(`table size update: ${err.message}`);
      throw err;
    }
  }

  #integer(prefixBits: number): number {
    const block = this.#block;
    const mask = (1 << prefixBits) - 1;
    let value = (block[this.#pos++] as number) & mask;
    if (value < mask) return value;
    let factor = 1;
    for (;;) {
      if (this.#pos >= block.length) throw new HpackError('integer runs past the end of the block');
      const octet = block[this.#pos++] as number;
      value += (octet & 0x7f) * factor;
      if (value > MAX_INTEGER) throw new HpackError(`integer larger than ${MAX_INTEGER}`);
      if (octet < 0x80) return value;
      factor *= 128;
      // Continuation octets of zero add nothing but could go on forever.
      if (factor > 2 ** 28) throw new HpackError(`integer larger than ${MAX_INTEGER}`);
    }
  }

  /** The name of a literal field: an index into the tables, or 0 and a string literal. */
  #literalName(prefixBits: number): string {
    const index = this.#integer(prefixBits);
    if (index === 0) return this.#string();
    if (index <= STATIC_COUNT) return (STATIC_TABLE[index - 1] as readonly [string, string])[0];
    return this.#names[this.#slot(index)] as string;
  }

  /** Reads a string literal (RFC 7541 5.2) at #pos. */
  #string(): string {
    const block = this.#block;
    if (this.#pos >= block.length) throw new HpackError('string literal missing at the end of the block');
    const huffman = (block[this.#pos] as number) >= 0x80;
    const length = this.#integer(7);
    const start = this.#pos;
    const left = block.length - start;
    if (length > left) {
      throw new HpackError(
        `string literal of ${length} octets runs past the end of the block (${left} left)`,
      );
    }
    this.#pos = start + length;
    if (!huffman) return block.toString('latin1', start, start + length);
    // The shortest code is 5 bits, so n octets decode to at most 8n/5 symbols.
    const bound = Math.ceil((length * 8) / 5);
    if (this.#huffmanOut.length < bound)
      this.#huffmanOut = Buffer.allocUnsafe(Math.max(bound, this.#huffmanOut.length * 2));
    const written = decodeHuffman(block, start, start + length, this.#huffmanOut);
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

function missingUpdate(maxTableSize: number): HpackError {
  return new HpackError(
    `the first block after SETTINGS_HEADER_TABLE_SIZE fell to ${maxTableSize} must open with a table size update`,
  );
}

function checkLimit(option: string, value: number): number {
  if (typeof value !== 'number' || !(value >= 0) || (Number.isFinite(value) && !Number.isInteger(value))) {
    throw new RangeError(`HpackDecoder ${option} must be a whole number of octets, got ${value}`);
  }
  return value;
}
