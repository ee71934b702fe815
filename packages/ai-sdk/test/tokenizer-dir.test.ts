import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTriton } from '@trtllm/ai-sdk';
import { TritonLlmError } from '@trtllm/sdk';
import { type FakeTriton, fakeScript, startFakeTriton } from '@trtllm/testing';
import { generateText, streamText } from 'ai';
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
  it('the raw tensorrt_llm model without one fails generateText and streamText naming tokenizerDir, before anything is sent', async () => {
    const triton = createTriton({ grpcUrl: fake.grpcUrl });
    try {
      const before = fake.events().length;
      const generated = await generateText({
        model: triton('tensorrt_llm'),
        prompt: 'Hi',
        maxRetries: 0,
      }).catch((e: unknown) => e);
      const streamed: unknown[] = [];
      const stream = streamText({
        model: triton('tensorrt_llm'),
        prompt: 'Hi',
        maxRetries: 0,
        onError: ({ error }) => {
          streamed.push(error);
        },
      });
      for await (const _ of stream.textStream);
      expect(streamed).toHaveLength(1);
      for (const [call, err] of [
        ['generateText', generated],
        ['streamText', streamed[0]],
      ] as const) {
        expect(err, call).toBeInstanceOf(TritonLlmError);
        expect(err).toMatchObject({ code: 'failed_precondition', model: 'tensorrt_llm' });
        const message = (err as Error).message;
        expect(message).toMatch(
          new RegExp(
            `^${call} on 'tensorrt_llm' failed: the raw tensorrt_llm model takes and returns token ids`,
          ),
        );
        expect(message).toContain("give tokenizerDir (the model's Hugging Face tokenizer directory");
        expect(message).not.toContain('TritonLlm');
      }
      expect(fake.events().slice(before)).toEqual([]);
    } finally {
      await triton.close();
    }
  });
});
