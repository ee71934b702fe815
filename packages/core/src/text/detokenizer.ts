import { invalidArgument } from '../errors.js';
import { newText, stableLength } from './text-delta.js';
import type { Tokenizer } from './tokenizer.js';

/** How many prompt ids give the first generated token its context (a SentencePiece leading space, a split character). */
const PREFIX_CONTEXT = 5;

/** Options of {@link IncrementalDetokenizer}; both have defaults that suit streamed generation. */
export interface IncrementalDetokenizerOptions {
  /** Passed to `Tokenizer.decode`; special tokens (EOS, BOS, chat markers) are dropped unless this is false. */
  readonly skipSpecialTokens?: boolean;
  /**
   * Ids that come before the streamed ones, usually the prompt. They are not part of the output; they only make
   * the first streamed token decode as it does in context (`"▁world"` after a prompt is `" world"`, not `"world"`).
   */
  readonly prefixIds?: readonly number[];
}

/**
 * Turns a stream of token ids into a stream of exact text deltas.
 *
 * Decoding each id alone is wrong for most tokenizers: SentencePiece drops the leading space of the first token
 * of a decode, and byte-level BPE splits multi-byte characters so a lone token decodes to U+FFFD. This class
 * decodes a short window of recent ids instead and emits how its text grew, in the manner of the prefix/read
 * offsets of Hugging Face text-generation-inference and vLLM: the window restarts at the last chunk that
 * produced text, so each step costs O(window), not O(ids so far). A trailing U+FFFD (an incomplete
 * character) and a trailing space that `clean_up_tokenization_spaces` may still delete are held back until a
 * later id settles them, so no delta ever shows text that the full decode does not have.
 *
 * For a tokenizer whose decode of a longer sequence extends the decode of a shorter one apart from such tails
 * (SentencePiece, byte-level BPE, WordPiece), `push(...)` deltas followed by `flush()` concatenate to
 * `tokenizer.decode(allIds)` exactly; with `prefixIds`, to the text that `allIds` add after the prompt.
 */
export class IncrementalDetokenizer {
  readonly #tokenizer: Tokenizer;
  readonly #decodeOptions: { readonly skipSpecialTokens: boolean };
  readonly #ids: number[] = [];
  /** Recent ids: context first, then ids whose text may not be emitted yet. */
  #window: number[];
  /** Ids of `#window` before this index were fully emitted when the window last restarted. */
  #read: number;
  /** The part of `decode(#window)` already emitted; `undefined` means `decode(#window[0, #read))`. */
  #shown: string | undefined;
  #text = '';

  constructor(tokenizer: Tokenizer, options: IncrementalDetokenizerOptions = {}) {
    if (typeof tokenizer?.decode !== 'function') {
      throw invalidArgument('tokenizer', tokenizer, 'must have a decode(ids) method');
    }
    this.#tokenizer = tokenizer;
    this.#decodeOptions = { skipSpecialTokens: options.skipSpecialTokens ?? true };
    const prefix = options.prefixIds ?? [];
    checkIds('prefixIds', prefix);
    this.#window = prefix.slice(-PREFIX_CONTEXT);
    this.#read = this.#window.length;
    this.#shown = undefined;
  }

  /** Every id pushed so far (not the prefix). */
  get ids(): readonly number[] {
    return this.#ids;
  }

  /** All text emitted so far by `push` and `flush`. */
  get text(): string {
    return this.#text;
  }

  /** Adds ids (one token or a chunk) and returns the text they settle; '' while it is still held back. */
  push(ids: readonly number[]): string {
    checkIds('ids', ids);
    const idCount = this.#ids.length;
    const windowLength = this.#window.length;
    for (const id of ids) {
      this.#ids.push(id);
      this.#window.push(id);
    }
    try {
      return this.#advance(false);
    } catch (err) {
      // The tokenizer refused these ids (one outside its vocabulary); the ids before them still stream.
      this.#ids.length = idCount;
      this.#window.length = windowLength;
      throw err;
    }
  }

  /** Ends the stream: returns the held-back tail, so that all deltas add up to the full decode. */
  flush(): string {
    return this.#advance(true);
  }

  #advance(final: boolean): string {
    const shown = this.#shown ?? this.#decode(this.#window.slice(0, this.#read));
    const text = this.#decode(this.#window);
    const settled = final ? text : text.slice(0, stableLength(text));
    if (shown.startsWith(settled)) {
      this.#shown = shown;
      return '';
    }
    const delta = newText(shown, settled);
    if (settled.length === text.length) {
      // Restart the window at the ids pushed since the last restart: they are its context from now on, and
      // their text is emitted, so next time it is recomputed from them alone.
      this.#window = this.#window.slice(this.#read);
      this.#read = this.#window.length;
      this.#shown = undefined;
    } else {
      this.#shown = settled;
    }
    this.#text += delta;
    return delta;
  }

  #decode(ids: readonly number[]): string {
    return ids.length === 0 ? '' : this.#tokenizer.decode(ids, this.#decodeOptions);
  }
}

function checkIds(field: string, ids: readonly number[]): void {
  if (!Array.isArray(ids)) throw invalidArgument(field, ids, 'must be an array of token ids');
  for (const id of ids) {
    if (!Number.isSafeInteger(id) || id < 0) {
      throw invalidArgument(field, ids, `token ids must be non-negative integers, found ${String(id)}`);
    }
  }
}
