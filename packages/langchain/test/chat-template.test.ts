import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChatTriton } from '@trtllm/langchain';
import { type FakeTriton, fakeTokenizer, startFakeTriton } from '@trtllm/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatedText } from './expected.js';

// The template of the deployment's tokenizer directory, as `chatTemplate: 'auto'` finds it.
describe("ChatTriton renders with the model's own chat template", () => {
  let fake: FakeTriton;
  let dir: string;
  let model: ChatTriton;
  beforeAll(async () => {
    fake = await startFakeTriton();
    dir = await mkdtemp(join(tmpdir(), 'trtllm-langchain-'));
    await writeFile(
      join(dir, 'tokenizer_config.json'),
      JSON.stringify({
        bos_token: '<B>',
        chat_template:
          "{{ bos_token }}{% for m in messages %}{% if m.role == 'tool' %}{{ raise_exception('no tool turns') }}{% endif %}" +
          '[{{ m.role | upper }}] {{ m.content }}\n{% endfor %}{% if add_generation_prompt %}[BOT]{% endif %}',
      }),
    );
    model = new ChatTriton({
      httpUrl: fake.httpUrl,
      model: 'tensorrt_llm',
      tokenizer: fakeTokenizer,
      tokenizerDir: dir,
      maxTokens: 9,
    });
  });
  afterAll(async () => {
    await model.close();
    await fake.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('the prompt is the template of tokenizer_config.json', async () => {
    const reply = await model.invoke([
      ['system', 'Be brief.'],
      ['human', 'What is ML?'],
    ]);
    const prompt = '<B>[SYSTEM] Be brief.\n[USER] What is ML?\n[BOT]';
    expect(reply.content).toBe(generatedText(prompt, { maxTokens: 9 }));
    expect(reply.usage_metadata).toMatchObject({ input_tokens: fakeTokenizer.encode(prompt).length });
  });

  it('a conversation the template refuses is invalid_argument naming the messages', async () => {
    const before = fake.events().length;
    const err = await model
      .invoke([{ role: 'tool', content: 'result', tool_call_id: 'c1' }])
      .catch((e: unknown) => e as { code?: string; message?: string });
    expect(err).toMatchObject({ code: 'invalid_argument', message: expect.stringContaining('messages') });
    expect(fake.events().length).toBe(before);
  });
});
