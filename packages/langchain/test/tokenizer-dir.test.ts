import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChatTriton } from '@trtllm/langchain';
import { TritonLlmError } from '@trtllm/sdk';
import { type FakeTriton, fakeScript, startFakeTriton } from '@trtllm/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const quiet = { warn: () => undefined };

// tokenizerDir is read by loadTokenizerDir of @trtllm/tokenizers, the rule every front end shares.
describe('ChatTriton tokenizerDir', () => {
  let fake: FakeTriton;
  let root: string;
  beforeAll(async () => {
    fake = await startFakeTriton();
    root = await mkdtemp(join(tmpdir(), 'trtllm-langchain-dir-'));
  });
  afterAll(async () => {
    await fake.close();
    await rm(root, { recursive: true, force: true });
  });

  async function invoke(tokenizerDir: string): Promise<unknown> {
    const model = new ChatTriton({ grpcUrl: fake.grpcUrl, model: 'ensemble', tokenizerDir, logger: quiet });
    try {
      return await model.invoke(`Hi ${fakeScript('ok')}`).then(
        (m) => m.content,
        (e: unknown) => e,
      );
    } finally {
      await model.close();
    }
  }

  it('a directory with only a chat template (no tokenizer.json) renders with it', async () => {
    const dir = await mkdtemp(join(root, 'template-'));
    await writeFile(
      join(dir, 'tokenizer_config.json'),
      JSON.stringify({ chat_template: '{{ messages[0].content }}' }),
    );
    const before = fake.events().length;
    expect(await invoke(dir)).toBe('ok');
    expect(fake.events().length).toBeGreaterThan(before);
  });

  it('a directory with neither tokenizer.json nor a chat template is not_found naming it, before anything is sent', async () => {
    const dir = await mkdtemp(join(root, 'empty-'));
    const before = fake.events().length;
    const err = await invoke(dir);
    expect(err).toBeInstanceOf(TritonLlmError);
    expect(err).toMatchObject({ code: 'not_found' });
    expect((err as Error).message).toContain(`tokenizerDir: ${dir} has no tokenizer.json`);
    expect(fake.events().length).toBe(before);
  });
  it('the raw tensorrt_llm model without one fails invoke and stream naming tokenizerDir, before anything is sent', async () => {
    const model = new ChatTriton({ grpcUrl: fake.grpcUrl, model: 'tensorrt_llm', logger: quiet });
    try {
      const before = fake.events().length;
      const invoked = await model.invoke('Hi').catch((e: unknown) => e);
      const streamed = await (async () => {
        for await (const _ of await model.stream('Hi'));
      })().catch((e: unknown) => e);
      for (const [call, err] of [
        ['ChatTriton.invoke', invoked],
        ['ChatTriton.stream', streamed],
      ] as const) {
        expect(err, call).toBeInstanceOf(TritonLlmError);
        expect(err).toMatchObject({ code: 'failed_precondition', model: 'tensorrt_llm' });
        const message = (err as Error).message;
        expect(message.startsWith(`${call} on 'tensorrt_llm' failed: the raw tensorrt_llm model takes`)).toBe(
          true,
        );
        expect(message).toContain('give new ChatTriton({ tokenizerDir })');
        expect(message).not.toContain('create TritonLlm');
      }
      expect(fake.events().slice(before)).toEqual([]);
    } finally {
      await model.close();
    }
  });
});
