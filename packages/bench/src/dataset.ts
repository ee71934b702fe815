import { readFile } from 'node:fs/promises';
import { TritonLlmError } from '@trtllm/sdk';

/** One line of the input data: the prompt and, optionally, the output it is expected to produce. */
export interface PromptRecord {
  readonly input: string;
  /** Expected output, scored with exact match and ROUGE-L when present. */
  readonly output?: string;
  /** 1-based line number in the source, for messages. */
  readonly line: number;
}

/**
 * Parses JSONL input data: one JSON object per line with a string `input` and an optional string
 * `output`; blank lines are skipped, other keys ignored. A bad line is an `invalid_argument` error
 * naming the source and line, because a benchmark over silently dropped prompts measures something else.
 */
export function parsePrompts(text: string, source = 'input data'): PromptRecord[] {
  const records: PromptRecord[] = [];
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  lines.forEach((raw, index) => {
    const line = index + 1;
    if (raw.trim().length === 0) return;
    const fail = (why: string) =>
      new TritonLlmError('invalid_argument', `input-data: ${source} line ${line}: ${why}`);
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (err) {
      throw fail(`is not JSON (${(err as Error).message})`);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw fail(`must be a JSON object such as {"input": "..."} (got ${clip(raw)})`);
    }
    const { input, output } = value as { input?: unknown; output?: unknown };
    if (typeof input !== 'string' || input.length === 0) {
      throw fail(`"input" must be a non-empty string (got ${clip(JSON.stringify(input) ?? 'nothing')})`);
    }
    if (output !== undefined && typeof output !== 'string') {
      throw fail(`"output" must be a string when present (got ${clip(JSON.stringify(output))})`);
    }
    records.push(output === undefined ? { input, line } : { input, output, line });
  });
  if (records.length === 0) {
    throw new TritonLlmError(
      'invalid_argument',
      `input-data: ${source} holds no prompts (one JSON object per line)`,
    );
  }
  return records;
}

/** Reads and parses a JSONL file of prompts (see {@link parsePrompts}). */
export async function loadPrompts(path: string): Promise<PromptRecord[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new TritonLlmError(
      'invalid_argument',
      `input-data: cannot read ${path}: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
  return parsePrompts(text, path);
}

function clip(s: string): string {
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}
