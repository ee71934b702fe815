// The HPACK Huffman code (RFC 7541 Appendix B) and a table-driven decoder for it.
//
// The code is canonical: within one length, codes ascend with the symbol, and each length starts
// where the shorter ones stopped. So the code lengths alone define it; the codes are rebuilt from
// them at module load, and the tests check a few against the values the RFC prints.

/** Bit length of the code of each symbol 0..255, then EOS (256). */
// biome-ignore format: sixteen symbols a row reads against the RFC's table
const CODE_LENGTHS = [
  13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, //   0
  28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28, //  16
   6, 10, 10, 12, 13,  6,  8, 11, 10, 10,  8, 11,  8,  6,  6,  6, //  32 ' '
   5,  5,  5,  6,  6,  6,  6,  6,  6,  6,  7,  8, 15,  6, 12, 10, //  48 '0'
  13,  6,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7, //  64 '@'
   7,  7,  7,  7,  7,  7,  7,  7,  8,  7,  8, 13, 19, 13, 14,  6, //  80 'P'
  15,  5,  6,  5,  6,  5,  6,  6,  6,  5,  7,  7,  6,  6,  6,  5, //  96 '`'
   6,  7,  6,  5,  5,  6,  7,  7,  7,  7,  7, 15, 11, 14, 13, 28, // 112 'p'
  20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23, // 128
  24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24, // 144
  22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, // 160
  21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23, // 176
  26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, // 192
  19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27, // 208
  20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23, // 224
  26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26, // 240
  30,                                                             // 256 EOS
];

const EOS = 256;

/** The code of each symbol, right-aligned in its CODE_LENGTHS[symbol] bits. */
export const HUFFMAN_CODES: readonly number[] = canonicalCodes(CODE_LENGTHS);
export const HUFFMAN_CODE_LENGTHS: readonly number[] = CODE_LENGTHS;

function canonicalCodes(lengths: readonly number[]): number[] {
  const symbols = lengths.map((_, symbol) => symbol);
  symbols.sort((a, b) => (lengths[a] as number) - (lengths[b] as number) || a - b);
  const codes = new Array<number>(lengths.length).fill(0);
  let code = 0;
  let previous = lengths[symbols[0] as number] as number;
  for (const symbol of symbols) {
    const length = lengths[symbol] as number;
    // Multiplication, not <<, keeps 30-bit codes clear of the sign bit.
    code *= 2 ** (length - previous);
    previous = length;
    codes[symbol] = code;
    code += 1;
  }
  return codes;
}

// The decoder walks the code tree four bits at a time. A state is an internal node of the tree
// (256 of them: 257 leaves); each of its 16 nibble transitions is precomputed into one word:
//   bits 0-7   the next state
//   bit 8      a symbol ends within this nibble (at most one can: no code is shorter than 5 bits)
//   bit 9      the nibble runs into EOS, which a string must not contain
//   bits 10-17 the symbol
const EMITS = 1 << 8;
const HITS_EOS = 1 << 9;

/** How a string may end in a state: RFC 7541 5.2 allows at most 7 bits of padding, all ones. */
const END_OK = 0;
const END_PADDING_TOO_LONG = 1;
const END_PADDING_NOT_ONES = 2;

const { transitions, endings } = buildDecoder();

function buildDecoder(): { transitions: Uint32Array; endings: Uint8Array } {
  // Tree nodes: children in two arrays; a child >= 0 is an internal node, ~symbol is a leaf.
  const zero: number[] = [-1];
  const one: number[] = [-1];
  for (let symbol = 0; symbol <= EOS; symbol++) {
    const length = CODE_LENGTHS[symbol] as number;
    const code = HUFFMAN_CODES[symbol] as number;
    let node = 0;
    for (let bit = length - 1; bit >= 0; bit--) {
      const branch = Math.floor(code / 2 ** bit) % 2 === 0 ? zero : one;
      if (bit === 0) {
        branch[node] = ~symbol;
      } else {
        if ((branch[node] as number) < 0) {
          branch[node] = zero.length;
          zero.push(-1);
          one.push(-1);
        }
        node = branch[node] as number;
      }
    }
  }
  const states = zero.length;

  // A state's padding verdict: the path from the root must be all ones and at most 7 long.
  const endings = new Uint8Array(states).fill(END_PADDING_NOT_ONES);
  endings[0] = END_OK;
  for (let node = 0, depth = 0; node >= 0; node = one[node] as number, depth++) {
    endings[node] = depth <= 7 ? END_OK : END_PADDING_TOO_LONG;
  }

  const transitions = new Uint32Array(states * 16);
  for (let state = 0; state < states; state++) {
    for (let nibble = 0; nibble < 16; nibble++) {
      let node = state;
      let word = 0;
      for (let bit = 3; bit >= 0; bit--) {
        const child = ((nibble >> bit) & 1) === 0 ? zero[node] : one[node];
        if ((child as number) >= 0) {
          node = child as number;
          continue;
        }
        const symbol = ~(child as number);
        if (symbol === EOS) {
          word |= HITS_EOS;
          break;
        }
        word |= EMITS | (symbol << 10);
        node = 0;
      }
      transitions[state * 16 + nibble] = word | node;
    }
  }
  return { transitions, endings };
}

/**
 * Decodes `input[start..end)` into `out` from index 0 and returns the number of octets written.
 * `out` must hold at least `(end - start) * 8 / 5` octets (the shortest code is 5 bits).
 * Returns a negative number for a malformed string: see `huffmanErrorMessage`.
 */
export function decodeHuffman(input: Uint8Array, start: number, end: number, out: Uint8Array): number {
  let state = 0;
  let written = 0;
  for (let i = start; i < end; i++) {
    const octet = input[i] as number;
    let word = transitions[(state << 4) | (octet >> 4)] as number;
    if ((word & HITS_EOS) !== 0) return HUFFMAN_EOS;
    if ((word & EMITS) !== 0) out[written++] = word >> 10;
    state = word & 0xff;
    word = transitions[(state << 4) | (octet & 0x0f)] as number;
    if ((word & HITS_EOS) !== 0) return HUFFMAN_EOS;
    if ((word & EMITS) !== 0) out[written++] = word >> 10;
    state = word & 0xff;
  }
  const ending = endings[state] as number;
  if (ending === END_OK) return written;
  return ending === END_PADDING_TOO_LONG ? HUFFMAN_PADDING_TOO_LONG : HUFFMAN_PADDING_NOT_ONES;
}

export const HUFFMAN_EOS = -1;
export const HUFFMAN_PADDING_TOO_LONG = -2;
export const HUFFMAN_PADDING_NOT_ONES = -3;

/** What a negative result of `decodeHuffman` means, for an error message. */
export function huffmanErrorMessage(result: number): string {
  if (result === HUFFMAN_EOS) return 'Huffman string contains the EOS symbol';
  if (result === HUFFMAN_PADDING_TOO_LONG) return 'Huffman padding longer than 7 bits';
  return 'Huffman padding is not all ones (the string ends inside a symbol)';
}
