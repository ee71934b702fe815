import { Tokenizer as HfTokenizerCore } from '@huggingface/tokenizers';
import { type Tokenizer, TritonLlmError } from '@trtllm/sdk';
import { invalidArgument } from '@trtllm/sdk/transport';

/** The fields of `tokenizer_config.json` this adapter reads; everything else is passed to the library as is. */
export interface TokenizerConfig {
  readonly eos_token?: SpecialTokenValue;
  readonly pad_token?: SpecialTokenValue;
  readonly bos_token?: SpecialTokenValue;
  readonly clean_up_tokenization_spaces?: boolean;
  readonly [key: string]: unknown;
}

/** A special token as `tokenizer_config.json` writes it: the text, or an added-token object with `content`. */
export type SpecialTokenValue = string | { readonly content: string } | null;

/**
 * The calls {@link HfTokenizer} makes on a `@huggingface/tokenizers` `Tokenizer`. Declared here rather than
 * imported so our published types do not carry that library's declarations, which fail to compile in a
 * consumer's strict NodeNext project (their relative imports have no file extensions).
 */
export interface HfTokenizerEngine {
  /** Token ids of `text`, with the model's special tokens when asked. */
  encode(text: string, options: { add_special_tokens: boolean }): { ids: number[] };
  /** The text of `ids`. */
  decode(
    ids: number[],
    options: { skip_special_tokens: boolean; clean_up_tokenization_spaces: boolean },
  ): string;
  /** The id of one token of the vocabulary, if it is one. */
  token_to_id(token: string): number | undefined;
  /** The token of one id, if the vocabulary has it. */
  id_to_token(id: number): string | undefined;
  /** The whole vocabulary, with the added tokens when asked. */
  get_vocab(withAddedTokens: boolean): Map<string, number>;
}

/**
 * A Hugging Face tokenizer (`tokenizer.json` plus `tokenizer_config.json`) as the SDK's {@link Tokenizer}:
 * `encode` for prompts and stop/bad words, `decode` for the raw `tensorrt_llm` model's output ids, and the
 * end and padding ids that model needs, taken from the config's `eos_token` and `pad_token`. Encoding and
 * decoding run in pure JavaScript through `@huggingface/tokenizers`, with no download at any point.
 */
export class HfTokenizer implements Tokenizer {
  readonly endId?: number;
  readonly padId?: number;
  /** Beginning-of-sequence id from the config's `bos_token`, when it names one. */
  readonly bosId?: number;
  /** Number of ids, added tokens included; valid ids are `0 .. vocabSize - 1`. */
  readonly vocabSize: number;
  readonly #core: HfTokenizerEngine;
  readonly #cleanUpSpaces: boolean;

  /** Use {@link tokenizerFromJson} or `loadTokenizer`; the constructor takes an already built library tokenizer. */
  constructor(core: HfTokenizerEngine, config: TokenizerConfig) {
    this.#core = core;
    this.vocabSize = core.get_vocab(true).size;
    // transformers stopped cleaning up spaces by default; a config that wants it says so.
    this.#cleanUpSpaces = config.clean_up_tokenization_spaces === true;
    const endId = this.#specialId('eos_token', config.eos_token);
    const padId = this.#specialId('pad_token', config.pad_token);
    const bosId = this.#specialId('bos_token', config.bos_token);
    if (endId !== undefined) this.endId = endId;
    if (padId !== undefined) this.padId = padId;
    if (bosId !== undefined) this.bosId = bosId;
  }

  encode(text: string, options: { readonly addSpecialTokens?: boolean } = {}): number[] {
    if (typeof text !== 'string') throw invalidArgument('text', text, 'must be a string');
    return this.#core.encode(text, { add_special_tokens: options.addSpecialTokens ?? false }).ids;
  }

  decode(ids: readonly number[], options: { readonly skipSpecialTokens?: boolean } = {}): string {
    if (!Array.isArray(ids)) throw invalidArgument('ids', ids, 'must be an array of token ids');
    for (const id of ids) {
      if (!Number.isSafeInteger(id) || id < 0 || this.#core.id_to_token(id) === undefined) {
        throw invalidArgument(
          'ids',
          ids,
          `token id ${String(id)} is not in the vocabulary of ${this.vocabSize}`,
        );
      }
    }
    // The library refuses an empty list; the text of no tokens is ''.
    if (ids.length === 0) return '';
    return this.#core.decode([...ids], {
      skip_special_tokens: options.skipSpecialTokens ?? true,
      clean_up_tokenization_spaces: this.#cleanUpSpaces,
    });
  }

  /** The id of a token string (such as `"<|im_end|>"`), or `undefined` when the vocabulary lacks it. */
  tokenToId(token: string): number | undefined {
    return this.#core.token_to_id(token);
  }

  /** The token string of an id, or `undefined` when the id is out of range. */
  idToToken(id: number): string | undefined {
    return this.#core.id_to_token(id);
  }

  #specialId(field: string, value: SpecialTokenValue | undefined): number | undefined {
    if (value === undefined || value === null) return undefined;
    const content = typeof value === 'string' ? value : value.content;
    if (typeof content !== 'string') {
      throw invalidArgument(`tokenizer_config.${field}`, value, 'must be a token string or { content }');
    }
    const id = this.#core.token_to_id(content);
    if (id === undefined) {
      throw invalidArgument(`tokenizer_config.${field}`, content, 'is not a token of tokenizer.json');
    }
    return id;
  }
}

/**
 * Builds a {@link HfTokenizer} from the parsed contents of `tokenizer.json` and, optionally,
 * `tokenizer_config.json`. Works in any runtime (browsers, edge workers): fetch or import the files yourself.
 */
export function tokenizerFromJson(tokenizerJson: object, config: object = {}): HfTokenizer {
  if (tokenizerJson === null || typeof tokenizerJson !== 'object' || Array.isArray(tokenizerJson)) {
    throw invalidArgument('tokenizerJson', tokenizerJson, 'must be the parsed object of tokenizer.json');
  }
  if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    throw invalidArgument('config', config, 'must be the parsed object of tokenizer_config.json');
  }
  let core: HfTokenizerCore;
  try {
    core = new HfTokenizerCore(tokenizerJson, config);
  } catch (err) {
    throw new TritonLlmError(
      'invalid_argument',
      `tokenizerJson: not a tokenizer.json this library can load: ${err instanceof Error ? err.message : String(err)}`,
      { cause: err },
    );
  }
  return new HfTokenizer(core, config as TokenizerConfig);
}
