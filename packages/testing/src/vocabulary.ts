/**
 * The "fake-bytes-v1" vocabulary of GENERATOR.md: three specials, one id per byte, and a short word
 * list so that in-context tokens (" data") differ from out-of-context ones ("data") as with a real
 * BPE tokenizer.
 */

/** The word entries, in id order from id 259 (after the three specials and the 256 byte ids). */
export const WORDS: readonly string[] = [
  ' Machine',
  ' learning',
  ' is',
  ' a',
  ' field',
  ' of',
  ' study',
  ' in',
  ' artificial',
  ' intelligence',
  '.',
  ' Models',
  ' learn',
  ' patterns',
  ' from',
  ' data',
  ' and',
  ' make',
  ' predictions',
  ' the',
  ' to',
  ' computers',
  ' ability',
  ' that',
  ' gives',
  'What',
  ' ML',
  '?',
  'Hello',
  ' world',
  ',',
];

/** The padding id (`<pad>`), the fake model's default `pad_id`. */
export const PAD_ID = 0;
/** The end id (`</s>`), the fake model's default `end_id`: generating it ends a sequence. */
export const END_ID = 2;
const FIRST_BYTE_ID = 3;
const FIRST_WORD_ID = 259;
/** Number of ids in the vocabulary (specials, bytes and words); ids at or above it are invalid. */
export const VOCAB_SIZE = FIRST_WORD_ID + WORDS.length;

const encoder = new TextEncoder();
const WORD_BYTES: readonly Uint8Array[] = WORDS.map((w) => encoder.encode(w));
// By first byte, longest first, so the first match at a position is the longest one.
const WORDS_BY_FIRST_BYTE = new Map<number, { bytes: Uint8Array; id: number }[]>();
for (const [i, bytes] of WORD_BYTES.entries()) {
  const list = WORDS_BY_FIRST_BYTE.get(bytes[0]!) ?? [];
  list.push({ bytes, id: FIRST_WORD_ID + i });
  list.sort((a, b) => b.bytes.length - a.bytes.length);
  WORDS_BY_FIRST_BYTE.set(bytes[0]!, list);
}

function matchesAt(haystack: Uint8Array, at: number, needle: Uint8Array): boolean {
  if (at + needle.length > haystack.length) return false;
  for (let i = 0; i < needle.length; i++) {
    if (haystack[at + i] !== needle[i]) return false;
  }
  return true;
}

/** Token ids of `text`: the longest word at each byte position, else that byte; no special tokens. */
export function encode(text: string): number[] {
  const bytes = encoder.encode(text);
  const ids: number[] = [];
  let at = 0;
  while (at < bytes.length) {
    const word = WORDS_BY_FIRST_BYTE.get(bytes[at]!)?.find((w) => matchesAt(bytes, at, w.bytes));
    if (word) {
      ids.push(word.id);
      at += word.bytes.length;
    } else {
      ids.push(FIRST_BYTE_ID + bytes[at]!);
      at += 1;
    }
  }
  return ids;
}

/** The bytes of ids (specials and ids outside the vocabulary give none). */
export function tokenBytes(ids: readonly number[]): Uint8Array {
  const parts: Uint8Array[] = [];
  let size = 0;
  for (const id of ids) {
    const part = bytesOf(id);
    if (part.length > 0) {
      parts.push(part);
      size += part.length;
    }
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

const NO_BYTES = new Uint8Array(0);
const SINGLE_BYTES: readonly Uint8Array[] = Array.from({ length: 256 }, (_, b) => Uint8Array.of(b));

function bytesOf(id: number): Uint8Array {
  if (id >= FIRST_WORD_ID) return WORD_BYTES[id - FIRST_WORD_ID] ?? NO_BYTES;
  if (id >= FIRST_BYTE_ID) return SINGLE_BYTES[id - FIRST_BYTE_ID] ?? NO_BYTES;
  return NO_BYTES;
}

// WHATWG decoding replaces each invalid or incomplete sequence with U+FFFD, as GENERATOR.md asks.
const decoder = new TextDecoder('utf-8');

/** Text of ids, with U+FFFD for invalid or incomplete UTF-8 (a lone piece of a character). */
export function decode(ids: readonly number[]): string {
  return decoder.decode(tokenBytes(ids));
}

/**
 * How many bytes at the end of `bytes` start a UTF-8 character that is not complete yet. A
 * streaming detokenizer holds these back instead of emitting U+FFFD.
 */
export function incompleteTailLength(bytes: Uint8Array): number {
  // A character is at most 4 bytes, so only the last 3 can begin an unfinished one.
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const b = bytes[bytes.length - back]!;
    if ((b & 0xc0) === 0x80) continue;
    const need = b >= 0xf0 && b <= 0xf4 ? 4 : b >= 0xe0 ? 3 : b >= 0xc2 ? 2 : 1;
    return need > back ? back : 0;
  }
  return 0;
}

/**
 * The tokenizer of the fake's vocabulary, in the shape `@trtllm/sdk` expects of a tokenizer, so tests
 * can run the raw `tensorrt_llm` model text-in/text-out against the fake.
 */
export const fakeTokenizer = {
  /** Ids of `text`, as the fake server's own tokenizer produces them. */
  encode: (text: string): number[] => encode(text),
  /** Text of `ids`, as the fake server decodes them. */
  decode: (ids: readonly number[]): string => decode(ids),
  endId: END_ID,
  padId: PAD_ID,
  vocabSize: VOCAB_SIZE,
} as const;
