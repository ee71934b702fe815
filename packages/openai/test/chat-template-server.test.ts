import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadChatTemplate } from '@trtllm/openai';
import { BadRequestError } from 'openai';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { generated } from './expected.js';
import { startStack } from './stack.js';

const conversation = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Hi' },
  { role: 'assistant', content: 'Hello' },
  { role: 'user', content: 'What is ML?' },
];

describe('built-in chat templates', () => {
  test('chatml', async () => {
    const t = await loadChatTemplate({ choice: 'chatml' });
    expect(t.render(conversation)).toBe(
      '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n' +
        '<|im_start|>assistant\nHello<|im_end|>\n<|im_start|>user\nWhat is ML?<|im_end|>\n<|im_start|>assistant\n',
    );
  });

  test('llama2 folds the system prompt into the first turn', async () => {
    const t = await loadChatTemplate({ choice: 'llama2' });
    expect(t.render(conversation)).toBe(
      '<s>[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi [/INST] Hello </s><s>[INST] What is ML? [/INST]',
    );
  });

  test('llama3', async () => {
    const t = await loadChatTemplate({ choice: 'llama3' });
    expect(t.render(conversation.slice(1, 2))).toBe(
      '<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>' +
        '<|start_header_id|>assistant<|end_header_id|>\n\n',
    );
  });

  test('auto without a tokenizer directory is ChatML', async () => {
    expect((await loadChatTemplate({})).source).toBe('chatml');
  });
});

describe("the model's own chat template", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'trtllm-openai-'));
    await writeFile(
      join(dir, 'tokenizer_config.json'),
      JSON.stringify({
        bos_token: { content: '<B>', lstrip: false },
        eos_token: '</E>',
        chat_template:
          "{{ bos_token }}{% for m in messages %}{% if m.role == 'assistant' %}{{ raise_exception('no assistant turns here') }}{% endif %}" +
          '[{{ m.role | upper }}] {{ m.content }}\n{% endfor %}{% if add_generation_prompt %}[BOT]{% endif %}',
      }),
    );
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  test('is read from tokenizer_config.json, with its special tokens', async () => {
    const t = await loadChatTemplate({ tokenizerDir: dir });
    expect(t.source).toBe('model');
    expect(t.render(conversation.slice(0, 2))).toBe('<B>[SYSTEM] Be brief.\n[USER] Hi\n[BOT]');
  });

  test('a built-in chosen by flag still uses the directory’s special tokens', async () => {
    const t = await loadChatTemplate({ choice: 'llama3', tokenizerDir: dir });
    expect(t.render([{ role: 'user', content: 'x' }]).startsWith('<B><|start_header_id|>')).toBe(true);
  });

  test('drives the server’s prompt, and its refusals are 400s', async () => {
    const stack = await startStack({ model: 'ensemble', server: { tokenizerDir: dir } });
    try {
      const r = await stack.client.chat.completions.create({
        model: 'ensemble',
        messages: [{ role: 'user', content: 'Hello' }],
        max_tokens: 6,
      });
      expect(r.choices[0]!.message.content).toBe(
        generated('<B>[USER] Hello\n[BOT]', { maxTokens: 6 })[0]!.text,
      );
      const err = await stack.client.chat.completions
        .create({ model: 'ensemble', messages: [{ role: 'assistant', content: 'x' }], max_tokens: 2 })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BadRequestError);
      expect((err as BadRequestError).message).toContain('no assistant turns here');
      expect((err as BadRequestError).param).toBe('messages');
    } finally {
      await stack.close();
    }
  });

  test('a template list picks the one named default', async () => {
    const listDir = await mkdtemp(join(tmpdir(), 'trtllm-openai-'));
    try {
      await writeFile(
        join(listDir, 'tokenizer_config.json'),
        JSON.stringify({
          chat_template: [
            { name: 'tool_use', template: 'TOOLS' },
            { name: 'default', template: '{% for m in messages %}{{ m.content }}{% endfor %}' },
          ],
        }),
      );
      const t = await loadChatTemplate({ tokenizerDir: listDir });
      expect(t.render([{ role: 'user', content: 'plain' }])).toBe('plain');
    } finally {
      await rm(listDir, { recursive: true, force: true });
    }
  });
});
