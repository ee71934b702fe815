import { loadChatTemplate, pickToolCallParser } from '@trtllm/tokenizers';
import { describe, expect, test } from 'vitest';

describe('tool-call parser choice', () => {
  test('auto reads the format from the template', async () => {
    const chatml = await loadChatTemplate({ choice: 'chatml' });
    const llama3 = await loadChatTemplate({ choice: 'llama3' });
    const llama2 = await loadChatTemplate({ choice: 'llama2' });
    expect(pickToolCallParser('auto', chatml.text)?.name).toBe('hermes');
    expect(pickToolCallParser('auto', llama3.text)?.name).toBe('llama3_json');
    expect(pickToolCallParser('auto', llama2.text)).toBeUndefined();
    // Llama 3.1's own template names <|python_tag|>; Qwen's writes <tool_call> blocks.
    expect(pickToolCallParser('auto', '{{- "<|python_tag|>" }}')?.name).toBe('llama3_json');
    expect(pickToolCallParser('auto', '{{- \'\\n<tool_call>\\n{"name": "\' }}')?.name).toBe('hermes');
  });

  test('a named parser wins over the template', () => {
    expect(pickToolCallParser('llama3_json', '<tool_call>')?.name).toBe('llama3_json');
    expect(pickToolCallParser('hermes', '')?.name).toBe('hermes');
  });
});
