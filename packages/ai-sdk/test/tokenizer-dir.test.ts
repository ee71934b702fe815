import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTriton } from '@trtllm/ai-sdk';
import { TritonLlmError } from '@trtllm/sdk';
import { type FakeTriton, fakeScript, startFakeTriton } from '@trtllm/testing';
import { generateText } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

(globalThis as { AI_SDK_LOG_WARNINGS?: unknown }).AI_SDK_LOG_WARNINGS = false;

// tokenizerDir is read by loadTokenizerDir of @trtllm/tokenizers, the rule every front end shares.
describe('createTriton tokenizerDir', () => {
  let fake: FakeTriton;
  let root: string;
  beforeAll(async () => {
    fake = await startFakeTriton();
    root = await mkdtemp(join(tmpdir(), 'trtllm-ai-sdk-dir-'));
  });
  afterAll(async () => {
    await fake.close();
    await rm(root, { recursive: true, force: true });
  });

  async function firstCall(tokenizerDir: string): Promise<unknown> {
    const triton = createTriton({ grpcUrl: fake.grpcUrl, tokenizerDir });
    try {
      return await generateText({ model: triton('ensemble'), prompt: fakeScript('ok'), maxRetries: 0 }).then(
        (r) => r.text,
        (e: unknown) => e,
      );
    } finally {
      await triton.close();
    }
  }

  it.each([
    ['a missing path', () => join(root, 'nowhere'), /cannot be read: ENOENT/],
    [
      'a directory with no tokenizer.json and no chat template',
      () => root,
      /has no tokenizer\.json .* and no tokenizer_config\.json/,
    ],
  ])('%s fails the first call not_found naming the path, before anything is sent', async (_, dir, why) => {
    const before = fake.events().length;
    const err = await firstCall(dir());
    expect(err).toBeInstanceOf(TritonLlmError);
    expect(err).toMatchObject({ code: 'not_found' });
    expect((err as Error).message).toContain(`tokenizerDir: ${dir()} `);
    expect((err as Error).message).toMatch(why);
    expect(fake.events().length).toBe(before);
  });

  it('a directory with only a chat template is used for its template', async () => {
    const dir = await mkdtemp(join(root, 'template-'));
    await writeFile(join(dir, 'chat_template.jinja'), '{{ messages[0].content }}');
    expect(await firstCall(dir)).toBe('ok');
  });
});
