import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TritonLlmError } from '@trtllm/sdk';
import { loadTokenizerDir } from '@trtllm/tokenizers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { load, REAL_TOKENIZERS } from './real-tokenizers.js';

/** The TritonLlmError `promise` rejects with. */
const refusal = (promise: Promise<unknown>): Promise<TritonLlmError> =>
  promise.then(
    () => expect.unreachable('resolved'),
    (e: unknown) => {
      expect(e).toBeInstanceOf(TritonLlmError);
      return e as TritonLlmError;
    },
  );

describe('loadTokenizerDir: one rule for a tokenizer directory', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'trtllm-tokenizer-dir-'));
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it('a directory with tokenizer.json gives its tokenizer', async () => {
    const real = REAL_TOKENIZERS[1]!;
    const tokenizer = await loadTokenizerDir(real.dir);
    const reference = await load(real);
    expect(tokenizer?.encode('machine learning')).toEqual(reference.encode('machine learning'));
    expect(tokenizer?.endId).toBe(reference.endId);
  });

  it.each([
    ['tokenizer_config.json', JSON.stringify({ chat_template: '{{ messages[0].content }}' })],
    ['chat_template.jinja', '{{ messages[0].content }}'],
  ])('a directory with only %s (a chat template, no tokenizer) gives no tokenizer', async (file, content) => {
    const dir = await mkdtemp(join(root, 'template-'));
    await writeFile(join(dir, file), content);
    expect(await loadTokenizerDir(dir)).toBeUndefined();
  });

  it('a directory with neither is not_found naming the path and both files', async () => {
    const dir = await mkdtemp(join(root, 'empty-'));
    await writeFile(join(dir, 'config.json'), '{}');
    const err = await refusal(loadTokenizerDir(dir, { field: '--tokenizer-dir' }));
    expect(err.code).toBe('not_found');
    expect(err.message).toBe(
      `--tokenizer-dir: ${dir} has no tokenizer.json (the tokenizer) and no tokenizer_config.json or chat_template.jinja (the chat template)`,
    );
  });

  it('a missing path is not_found naming it', async () => {
    const missing = join(root, 'no-such-dir');
    const err = await refusal(loadTokenizerDir(missing));
    expect(err.code).toBe('not_found');
    expect(err.message).toMatch(new RegExp(`^tokenizerDir: ${missing} cannot be read: ENOENT`));
  });

  it('a file is not_found: not a directory', async () => {
    const file = join(root, 'tokenizer.json');
    await writeFile(file, '{}');
    const err = await refusal(loadTokenizerDir(file));
    expect(err.code).toBe('not_found');
    expect(err.message).toContain(`tokenizerDir: ${file} is not a directory`);
  });

  it('a tokenizer.json that is not JSON fails with the file named, not as a directory without one', async () => {
    const dir = await mkdtemp(join(root, 'broken-'));
    await writeFile(join(dir, 'tokenizer.json'), '{"model": ');
    const err = await refusal(loadTokenizerDir(dir));
    expect(err.code).toBe('invalid_argument');
    expect(err.message).toContain(join(dir, 'tokenizer.json'));
  });

  it.each([[''], [42]])('%j is invalid_argument naming the setting', async (bad) => {
    const err = await refusal(loadTokenizerDir(bad as string, { field: 'tokenizerDir' }));
    expect(err.code).toBe('invalid_argument');
    expect(err.message.startsWith('tokenizerDir: must be the path')).toBe(true);
  });
});
