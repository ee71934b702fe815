/**
 * What the SDK needs from a tokenizer: text to ids and back, and the special ids the raw
 * `tensorrt_llm` model wants. `@trtllm/tokenizers` adapts Hugging Face `tokenizer.json` files to it;
 * any object of this shape works.
 */
export interface Tokenizer {
  /** Token ids of `text`; special tokens (such as BOS) only when `addSpecialTokens` is true. */
  encode(text: string, options?: { readonly addSpecialTokens?: boolean }): number[];
  /** Text of `ids`; special tokens dropped unless `skipSpecialTokens` is false. */
  decode(ids: readonly number[], options?: { readonly skipSpecialTokens?: boolean }): string;
  /** End-of-sequence id, the default `end_id` of the raw model. */
  readonly endId?: number;
  /** Padding id, the default `pad_id`; falls back to `endId`. */
  readonly padId?: number;
}
