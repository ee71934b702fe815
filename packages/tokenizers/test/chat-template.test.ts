import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ChatMessage, type ChatTool, loadChatTemplate } from '@trtllm/tokenizers';
import { describe, expect, test } from 'vitest';

const weather: ChatTool = {
  name: 'get_weather',
  description: 'Current weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};
const weatherJson =
  '{"type": "function", "function": {"name": "get_weather", "description": "Current weather in a city", ' +
  '"parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}';

// A two-turn tool conversation: the call, its result, and the question that follows.
const toolTurns: ChatMessage[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Weather in Paris and Rome?' },
  {
    role: 'assistant',
    content: '',
    toolCalls: [
      { id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { id: 'call_2', name: 'get_weather', arguments: '{"city":"Rome"}' },
    ],
  },
  { role: 'tool', content: '18 C', toolCallId: 'call_1' },
  { role: 'tool', content: '24 C', toolCallId: 'call_2' },
];

describe('chat templates with tools', () => {
  test('chatml describes the tools in the system turn and asks for <tool_call> blocks', async () => {
    const t = await loadChatTemplate({ choice: 'chatml' });
    const prompt = t.render(toolTurns.slice(0, 2), { tools: [weather] });
    expect(prompt).toBe(
      '<|im_start|>system\nBe brief.\n\n# Tools\n\nYou may call the functions described, in JSON Schema, inside <tools></tools>:\n' +
        `<tools>\n${weatherJson}\n</tools>\n\n` +
        'To call a function, answer with a JSON object of its name and arguments between <tool_call></tool_call> tags:\n' +
        '<tool_call>\n{"name": <function-name>, "arguments": <arguments-object>}\n</tool_call><|im_end|>\n' +
        '<|im_start|>user\nWeather in Paris and Rome?<|im_end|>\n<|im_start|>assistant\n',
    );
  });

  test('chatml writes earlier calls back as <tool_call> blocks and results as one user turn', async () => {
    const t = await loadChatTemplate({ choice: 'chatml' });
    const prompt = t.render(toolTurns, { tools: [weather] });
    expect(prompt).toContain(
      '<|im_start|>assistant\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n' +
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rome"}}\n</tool_call><|im_end|>\n' +
        '<|im_start|>user\n<tool_response>\n18 C\n</tool_response>\n<tool_response>\n24 C\n</tool_response><|im_end|>\n' +
        '<|im_start|>assistant\n',
    );
  });

  test('chatml without tools keeps a lone system turn and plain messages as before', async () => {
    const t = await loadChatTemplate({ choice: 'chatml' });
    expect(t.render(toolTurns.slice(0, 2))).toBe(
      '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nWeather in Paris and Rome?<|im_end|>\n<|im_start|>assistant\n',
    );
    expect(t.render(toolTurns.slice(0, 2), { tools: [] })).toBe(t.render(toolTurns.slice(0, 2)));
  });

  test('llama3 asks for the JSON call format and writes results as ipython turns', async () => {
    const t = await loadChatTemplate({ choice: 'llama3' });
    const prompt = t.render(toolTurns.slice(1, 4), { tools: [weather] });
    expect(prompt).toBe(
      '<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n' +
        'You may call the functions below. To call one, answer with only a JSON object of the form ' +
        '{"name": <function-name>, "parameters": <arguments-object>}; separate several calls with "; ".\n\n' +
        `${weatherJson}<|eot_id|>` +
        '<|start_header_id|>user<|end_header_id|>\n\nWeather in Paris and Rome?<|eot_id|>' +
        '<|start_header_id|>assistant<|end_header_id|>\n\n' +
        '{"name": "get_weather", "parameters": {"city": "Paris"}}; {"name": "get_weather", "parameters": {"city": "Rome"}}<|eot_id|>' +
        '<|start_header_id|>ipython<|end_header_id|>\n\n18 C<|eot_id|>' +
        '<|start_header_id|>assistant<|end_header_id|>\n\n',
    );
  });

  test('arguments that are not a JSON object reach the template as text', async () => {
    const t = await loadChatTemplate({ choice: 'chatml' });
    const prompt = t.render([
      { role: 'assistant', content: 'x', toolCalls: [{ id: 'c', name: 'f', arguments: 'not json' }] },
    ]);
    expect(prompt).toContain('{"name": "f", "arguments": "not json"}');
  });

  test('rendersTools tells the templates that read tools from those that would drop them', async () => {
    expect((await loadChatTemplate({ choice: 'chatml' })).rendersTools).toBe(true);
    expect((await loadChatTemplate({ choice: 'llama3' })).rendersTools).toBe(true);
    expect((await loadChatTemplate({ choice: 'llama2' })).rendersTools).toBe(false);
  });

  test("a model's own template gets tools and calls in Hugging Face's shape", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trtllm-template-'));
    await writeFile(
      join(dir, 'tokenizer_config.json'),
      JSON.stringify({
        chat_template:
          '{% for t in tools %}T:{{ t.function.name }}|{% endfor %}' +
          '{% for m in messages %}{{ m.role }}:{{ m.content }}' +
          '{% if m.tool_calls %}{% for c in m.tool_calls %}[{{ c.id }} {{ c.type }} {{ c.function.name }} {{ c.function.arguments.city }}]{% endfor %}{% endif %}' +
          '{% if m.tool_call_id %}({{ m.tool_call_id }}){% endif %}|{% endfor %}',
      }),
    );
    const t = await loadChatTemplate({ tokenizerDir: dir });
    expect(t.render(toolTurns.slice(1, 4), { tools: [weather] })).toBe(
      'T:get_weather|user:Weather in Paris and Rome?|' +
        'assistant:[call_1 function get_weather Paris][call_2 function get_weather Rome]|tool:18 C(call_1)|',
    );
  });
});
