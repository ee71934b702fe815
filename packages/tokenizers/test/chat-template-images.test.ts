import { type ChatMessage, ChatTemplate, loadChatTemplate } from '@trtllm/tokenizers';
import { describe, expect, test } from 'vitest';

// Qwen2-VL-Instruct's chat template (tokenizer_config.json), a template with image markers: a
// content list's image parts become <|vision_start|><|image_pad|><|vision_end|> where they stand.
const QWEN2_VL = [
  "{% set image_count = namespace(value=0) %}{% for message in messages %}{% if loop.first and message['role'] != 'system' %}",
  '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n{% endif %}',
  "<|im_start|>{{ message['role'] }}\n{% if message['content'] is string %}{{ message['content'] }}<|im_end|>\n",
  "{% else %}{% for content in message['content'] %}",
  "{% if content['type'] == 'image' or 'image' in content or 'image_url' in content %}",
  '{% set image_count.value = image_count.value + 1 %}<|vision_start|><|image_pad|><|vision_end|>',
  "{% elif 'text' in content %}{{ content['text'] }}{% endif %}{% endfor %}<|im_end|>\n",
  '{% endif %}{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}',
].join('');

// llava-1.5-hf's: every image of a turn as one <image> line before its text.
const LLAVA = [
  "{% for message in messages %}{% if message['role'] != 'system' %}{{ message['role'].upper() + ': '}}{% endif %}",
  "{% for content in message['content'] | selectattr('type', 'equalto', 'image') %}{{ '<image>\\n' }}{% endfor %}",
  "{% for content in message['content'] | selectattr('type', 'equalto', 'text') %}{{ content['text'] + ' '}}{% endfor %}",
  "{% endfor %}{% if add_generation_prompt %}{{ 'ASSISTANT:' }}{% endif %}",
].join('');

const withImages: ChatMessage[] = [
  {
    role: 'user',
    content: 'Compare and .',
    parts: [
      { type: 'text', text: 'Compare ' },
      { type: 'image' },
      { type: 'text', text: ' and ' },
      { type: 'image' },
      { type: 'text', text: '.' },
    ],
  },
];

const specials = { bosToken: '', eosToken: '' };

describe('chat templates and images', () => {
  test('a template with image markers places one where each image stood', () => {
    const t = new ChatTemplate('model', QWEN2_VL, specials);
    expect(t.rendersImages).toBe(true);
    const marker = '<|vision_start|><|image_pad|><|vision_end|>';
    expect(t.render(withImages)).toBe(
      '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n' +
        `<|im_start|>user\nCompare ${marker} and ${marker}.<|im_end|>\n<|im_start|>assistant\n`,
    );
  });

  test('a template that groups images puts them where it says (llava: before the text)', () => {
    const t = new ChatTemplate('model', LLAVA, specials);
    // The template writes each text part followed by a space.
    const texts = ['Compare ', ' and ', '.'].map((text) => `${text} `).join('');
    expect(t.render(withImages)).toBe(`USER: <image>\n<image>\n${texts}ASSISTANT:`);
  });

  test('a message without images reaches a vision template as a string, as before', () => {
    const t = new ChatTemplate('model', QWEN2_VL, specials);
    const plain: ChatMessage[] = [{ role: 'user', content: 'Hi', parts: [{ type: 'text', text: 'Hi' }] }];
    expect(t.render(plain)).toBe(
      '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n',
    );
  });

  test('a template without image markers (the built-in ChatML) renders the text alone', async () => {
    const t = await loadChatTemplate({ choice: 'chatml' });
    expect(t.rendersImages).toBe(false);
    expect(t.render(withImages)).toBe('<|im_start|>user\nCompare and .<|im_end|>\n<|im_start|>assistant\n');
  });
});
