import { invalidArgument } from './errors.js';

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

/** Length of the part of `text` that no later text can change (see `UNSTABLE_TAIL`). */
export function stableLength(text: string): number {
  const tail = UNSTABLE_TAIL.exec(text);
  return tail === null ? text.length : tail.index;
}

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
    this.#latest = text;
    return this.#emitUpTo(text.slice(0, stableLength(text)));
  }

  /** Ends the stream: returns the held-back tail of the last cumulative text (always '' in delta mode). */
  flush(): string {
    if (this.mode === 'delta') return '';
    return this.#emitUpTo(this.#latest);
  }

  #emitUpTo(stable: string): string {
    // A shorter text that the emitted one extends adds nothing; keeping the longer one means a later text that
    // grows again is diffed against what was really shown, not repeated.
    if (this.#consumed.startsWith(stable)) return '';
    if (!stable.startsWith(this.#consumed)) this.#diverged = true;
    const delta = newText(this.#consumed, stable);
    this.#consumed = stable;
    return this.#emit(delta);
  }

  #emit(delta: string): string {
    if (delta.includes(REPLACEMENT)) this.#lossy = true;
    this.#emitted += delta;
    return delta;
  }
}
