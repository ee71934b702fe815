import { invalidArgument } from '../errors.js';

const REPLACEMENT = '\uFFFD';

/**
 * A tail that the next piece of text may still change:
 * - trailing U+FFFD: a decoder's stand-in for an incomplete UTF-8 sequence, which the next token's bytes complete;
 * - trailing spaces, or spaces followed by the start of `n't`, `'s`, `'m`, `'ve`, `'re`: Hugging Face's
 *   `clean_up_tokenization_spaces` deletes that space once the next token turns out to be `.`, `,`, `?`, `!`,
 *   a contraction or a lone `'`, so emitting it early would put a space in the stream that the full text lacks;
 * - a trailing `'`: the same clean-up turns `" ' "` into `"'"`, but not when a `.`, `,`, `?` or `!` follows
 *   (its replacements run first and take the space), so the quote's surroundings are not known yet; the
 *   spaces before these tails are held with them, as a replacement can leave a new `" 've"` behind.
 */
const UNSTABLE_TAIL = /(?:\uFFFD+| +(?:n'?|'[vr]?)?| *')$/u;

const FFFD = 0xfffd;
const SPACE = 0x20;
const QUOTE = 0x27;

/**
 * Length of the part of `text` that no later text can change (see `UNSTABLE_TAIL`). Scans back
 * from the end, so it costs the length of the tail, not of the text: the cumulative mode calls it
 * for every token with all the text so far. `UNSTABLE_TAIL` states the rule it implements.
 */
export function stableLength(text: string): number {
  const end = text.length;
  let i = end;
  while (i > 0 && text.charCodeAt(i - 1) === FFFD) i--;
  if (i < end) return i;
  const last = text.charCodeAt(end - 1);
  // The tail's letters, then the spaces before them: `n`, `n'`, `'`, `'v`, `'r`, or nothing.
  let j = end;
  if (last === 0x6e /* n */) j = end - 1;
  else if (last === QUOTE)
    j = end >= 2 && text.charCodeAt(end - 2) === 0x6e && spacesBefore(text, end - 2) > 0 ? end - 2 : end - 1;
  else if ((last === 0x76 /* v */ || last === 0x72) /* r */ && end >= 2 && text.charCodeAt(end - 2) === QUOTE)
    j = end - 2;
  else if (last !== SPACE) return end;
  const spaces = spacesBefore(text, j);
  // Only a lone quote may stand without spaces before it.
  if (spaces === 0 && !(j === end - 1 && last === QUOTE)) return end;
  return j - spaces;
}

function spacesBefore(text: string, at: number): number {
  let k = at;
  while (k > 0 && text.charCodeAt(k - 1) === SPACE) k--;
  return at - k;
}

/** The reference form of {@link stableLength}, kept for tests that check the two agree. */
export function stableLengthByPattern(text: string): number {
  const tail = UNSTABLE_TAIL.exec(text);
  return tail === null ? text.length : tail.index;
}

/**
 * `text` without the U+FFFD a decoder put for an incomplete character at its very end, for a
 * generation cut by `maxTokens` inside a character: the rest of its bytes will never come, and
 * OpenAI's API and vLLM drop such a remnant too (the token ids keep it). One, because a decoder
 * gives one U+FFFD for the incomplete tail (WHATWG and Python's `errors="replace"` alike); the ones
 * before it stand for bytes that no later byte could have completed.
 */
export function withoutIncompleteEnd(text: string): string {
  return text.charCodeAt(text.length - 1) === FFFD ? text.slice(0, -1) : text;
}

// How much of the text already consumed a cumulative response is checked against: servers rewrite
// only their last characters (an incomplete character completed); a longer rewrite is still found
// when it reaches into this window.
const CHECK_WINDOW = 32;

/**
 * The new part of `next` given that `emitted` was already handed out. When `next` extends `emitted` that is
 * the plain suffix; when it does not (the producer rewrote text it had already sent), what was emitted stands
 * and everything from the first differing character on is new, so no character the producer sent is lost.
 */
export function newText(emitted: string, next: string): string {
  if (next.startsWith(emitted)) return next.slice(emitted.length);
  let common = 0;
  const limit = Math.min(emitted.length, next.length);
  while (common < limit && emitted.charCodeAt(common) === next.charCodeAt(common)) common++;
  return next.slice(common);
}

/**
 * How a server hands out streamed text: `cumulative` (BLS with `accumulate_tokens: true`) repeats all text so
 * far in every response; `delta` (ensemble, BLS without accumulation) sends each token decoded on its own.
 */
export type TextDeltaMode = 'cumulative' | 'delta';

/** Options of {@link TextDeltaDecoder}; the mode must match how the model streams its text. */
export interface TextDeltaDecoderOptions {
  /** Whether each streamed text repeats everything so far or carries only the new part. */
  readonly mode: TextDeltaMode;
}

/**
 * Turns the text of streamed responses into exact deltas.
 *
 * In `cumulative` mode each pushed text is the whole output so far; `push` returns what it adds, holding back a
 * trailing U+FFFD (an incomplete character that the next response completes) and a trailing space that a
 * tokenizer's clean-up may still remove. If a response does not extend the text already emitted (the server
 * rewrote it), the emitted text stands and the rest of the new text from the first difference on is emitted,
 * and `diverged` turns true: nothing is repeated before that point and nothing the server sent is dropped.
 *
 * In `delta` mode text passes through unchanged. The server decoded each token alone, so a character split over
 * tokens arrives as U+FFFD and cannot be repaired; `lossy` reports that it happened (in either mode), so callers
 * can point users at BLS `accumulate_tokens` or the raw model plus a client-side detokenizer.
 */
export class TextDeltaDecoder {
  /** The mode this decoder was created with. */
  readonly mode: TextDeltaMode;
  #emitted = '';
  /** The server's text that `#emitted` accounts for; after a divergence the two differ. */
  #consumed = '';
  #latest = '';
  #lossy = false;
  #diverged = false;

  constructor(options: TextDeltaDecoderOptions | TextDeltaMode) {
    const mode = typeof options === 'string' ? options : options?.mode;
    if (mode !== 'cumulative' && mode !== 'delta') {
      throw invalidArgument('mode', mode, "must be 'cumulative' or 'delta'");
    }
    this.mode = mode;
  }

  /** All text emitted so far by `push` and `flush`. */
  get text(): string {
    return this.#emitted;
  }

  /** True once emitted text carries a U+FFFD the server sent, which no client can turn back into the character. */
  get lossy(): boolean {
    return this.#lossy;
  }

  /** True once a cumulative response did not extend the text already emitted. */
  get diverged(): boolean {
    return this.#diverged;
  }

  /** Takes one response's text and returns the new text that is safe to show. */
  push(text: string): string {
    if (typeof text !== 'string') throw invalidArgument('text', text, 'must be a string');
    if (this.mode === 'delta') return this.#emit(text);
    // An empty cumulative text says nothing new (a BLS final response may carry one): the tail
    // held back from the text before it must still come out at the end.
    if (text.length === 0) return '';
    this.#latest = text;
    return this.#emitUpTo(text.slice(0, stableLength(text)));
  }

  /** Ends the stream: returns the held-back tail of the last cumulative text (always '' in delta mode). */
  flush(): string {
    if (this.mode === 'delta') return '';
    return this.#emitUpTo(this.#latest);
  }

  #emitUpTo(stable: string): string {
    const consumed = this.#consumed;
    // The usual case, checked on a window so that each token costs its own length: the new text
    // extends what was consumed.
    if (stable.length > consumed.length) {
      const from = Math.max(0, consumed.length - CHECK_WINDOW);
      if (stable.startsWith(consumed.slice(from), from)) {
        this.#consumed = stable;
        return this.#emit(stable.slice(consumed.length));
      }
    } else {
      // A shorter text that the emitted one extends adds nothing; keeping the longer one means a later text that
      // grows again is diffed against what was really shown, not repeated.
      const from = Math.max(0, stable.length - CHECK_WINDOW);
      if (consumed.startsWith(stable.slice(from), from)) return '';
    }
    this.#diverged = true;
    const delta = newText(consumed, stable);
    this.#consumed = stable;
    return this.#emit(delta);
  }

  #emit(delta: string): string {
    if (delta.includes(REPLACEMENT)) this.#lossy = true;
    this.#emitted += delta;
    return delta;
  }
}
