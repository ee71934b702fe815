export type { SpecialTokenValue, TokenizerConfig } from './hf-tokenizer.js';
export { HfTokenizer, tokenizerFromJson } from './hf-tokenizer.js';
export { loadTokenizer } from './load.js';
