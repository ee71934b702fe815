import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadPrompts, parsePrompts } from '@trtllm/bench';
import { TritonLlmError } from '@trtllm/sdk';
import { describe, expect, it } from 'vitest';

function errorOf(call: () => unknown): TritonLlmError {
  try {
    call();
  } catch (err) {
    if (err instanceof TritonLlmError) return err;
    throw err;
  }
  throw new Error('expected a TritonLlmError');
}

describe('JSONL input data', () => {
  it('reads inputs and optional expected outputs, skipping blank lines, a BOM and CRLF', () => {
    const text =
      '\uFEFF{"input":"What is ML?","output":" Machine learning"}\r\n\r\n{"input":"Hello","extra":1}\n';
    expect(parsePrompts(text)).toEqual([
      { input: 'What is ML?', output: ' Machine learning', line: 1 },
      { input: 'Hello', line: 3 },
    ]);
  });

  it('names the file and line of a line that is not JSON', () => {
    const err = errorOf(() => parsePrompts('{"input":"a"}\n{"input": nope}\n', 'p.jsonl'));
    expect(err.code).toBe('invalid_argument');
    expect(err.message).toContain('p.jsonl line 2');
    expect(err.message).toContain('not JSON');
  });

  it('refuses a line that is not an object', () => {
    const err = errorOf(() => parsePrompts('["input"]'));
    expect(err.code).toBe('invalid_argument');
    expect(err.message).toContain('line 1');
    expect(err.message).toContain('JSON object');
  });

  it('refuses a missing, empty or non-string input', () => {
    for (const line of ['{"output":"x"}', '{"input":""}', '{"input":42}']) {
      const err = errorOf(() => parsePrompts(line));
      expect(err.code).toBe('invalid_argument');
      expect(err.message).toContain('"input" must be a non-empty string');
    }
  });

  it('refuses an expected output that is not a string', () => {
    const err = errorOf(() => parsePrompts('{"input":"a","output":["b"]}'));
    expect(err.code).toBe('invalid_argument');
    expect(err.message).toContain('"output" must be a string');
    expect(err.message).toContain('["b"]');
  });

  it('refuses data with no prompts', () => {
    const err = errorOf(() => parsePrompts('\n  \n', 'empty.jsonl'));
    expect(err.code).toBe('invalid_argument');
    expect(err.message).toContain('empty.jsonl holds no prompts');
  });

  it('loads a file, and names a file it cannot read', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trtllm-bench-'));
    const path = join(dir, 'prompts.jsonl');
    await writeFile(path, '{"input":"a"}\n{"input":"b","output":"c"}\n');
    expect((await loadPrompts(path)).map((p) => p.input)).toEqual(['a', 'b']);
    const missing = join(dir, 'missing.jsonl');
    await expect(loadPrompts(missing)).rejects.toMatchObject({
      code: 'invalid_argument',
      message: expect.stringContaining(missing),
    });
  });
});
