import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { TritonLlmError } from '@trtllm/sdk';
import { invalidArgument } from '@trtllm/sdk/transport';
import { type HfTokenizer, tokenizerFromJson } from './hf-tokenizer.js';

/**
 * Loads the Hugging Face tokenizer in a local directory: `tokenizer.json` (required) and
 * `tokenizer_config.json` (optional; it supplies the end, padding and BOS tokens). Nothing is downloaded; point
 * it at the same `tokenizer_dir` the deployment's preprocessing and postprocessing models use.
 */
export async function loadTokenizer(dir: string): Promise<HfTokenizer> {
  if (typeof dir !== 'string' || dir.length === 0) {
    throw invalidArgument('dir', dir, 'must be the path of a directory holding tokenizer.json');
  }
  const tokenizerJson = await readJson(join(dir, 'tokenizer.json'), true);
  const config = (await readJson(join(dir, 'tokenizer_config.json'), false)) ?? {};
  return tokenizerFromJson(tokenizerJson as object, config as object);
}

async function readJson(path: string, required: true): Promise<unknown>;
async function readJson(path: string, required: false): Promise<unknown | undefined>;
async function readJson(path: string, required: boolean): Promise<unknown | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if (!required && (err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new TritonLlmError('not_found', `cannot read ${path}: ${(err as Error).message}`, { cause: err });
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new TritonLlmError('invalid_argument', `${path} is not valid JSON: ${(err as Error).message}`, {
      cause: err,
    });
  }
}
