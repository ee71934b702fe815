import { readdir } from 'node:fs/promises';
import { TritonLlmError } from '@trtllm/sdk';
import { invalidArgument } from '@trtllm/sdk/transport';
import type { HfTokenizer } from './hf-tokenizer.js';
import { loadTokenizer } from './load.js';

/** Options of {@link loadTokenizerDir}. */
export interface TokenizerDirOptions {
  /** The name of the setting the directory came from, as errors name it (`tokenizerDir`, `--tokenizer-dir`). Default `tokenizerDir`. */
  readonly field?: string;
}

/**
 * Reads a Hugging Face tokenizer directory, the `tokenizerDir` of `@trtllm/ai-sdk`, `@trtllm/langchain`
 * and `trtllm-openai`, by one rule: its `tokenizer.json` gives the tokenizer; a directory without one
 * but with a chat template (`tokenizer_config.json` or `chat_template.jinja`, as deployments whose
 * server tokenizes may ship) gives `undefined`, the template still being read by
 * `loadChatTemplate({ tokenizerDir })`. A path that is missing or not a directory, or a directory with
 * none of the three files, is `not_found` naming the path and what is missing; call this before the
 * first request, so a wrong path fails before anything is sent. A model that needs token ids (the raw
 * `tensorrt_llm`) then fails naming the missing tokenizer.
 */
export async function loadTokenizerDir(
  dir: string,
  options: TokenizerDirOptions = {},
): Promise<HfTokenizer | undefined> {
  const field = options.field ?? 'tokenizerDir';
  if (typeof dir !== 'string' || dir.length === 0) {
    throw invalidArgument(field, dir, 'must be the path of a Hugging Face tokenizer directory');
  }
  let files: Set<string>;
  try {
    files = new Set(await readdir(dir));
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code === 'ENOTDIR' ? 'is not a directory' : 'cannot be read';
    throw new TritonLlmError('not_found', `${field}: ${dir} ${why}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  if (files.has('tokenizer.json')) return loadTokenizer(dir);
  if (files.has('tokenizer_config.json') || files.has('chat_template.jinja')) return undefined;
  throw new TritonLlmError(
    'not_found',
    `${field}: ${dir} has no tokenizer.json (the tokenizer) and no tokenizer_config.json or chat_template.jinja (the chat template)`,
  );
}
