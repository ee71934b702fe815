import { loadChatTemplate } from '@trtllm/openai';
import { encode, fakeScript, jsonSchemaInstance } from '@trtllm/testing';
import { BadRequestError } from 'openai';
import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Stack, startStack } from './stack.js';

const weather = {
  type: 'object',
  properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
  required: ['city'],
};
const time = { type: 'object', properties: { zone: { type: 'string' }, hour24: { type: 'boolean' } } };
const TOOLS: ChatCompletionTool[] = [
  {
    type: 'function',
    function: { name: 'get_weather', description: 'Weather in a city', parameters: weather },
  },
  { type: 'function', function: { name: 'get_time', parameters: time } },
];
const hermesCall = (name: string, args: object) =>
  `<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;

type FunctionCall = { id: string; type: string; function: { name: string; arguments: string } };
const calls = (message: { tool_calls?: unknown }) => (message.tool_calls ?? []) as FunctionCall[];

describe('tool calls through the ChatML template (hermes parser)', () => {
  let stack: Stack;
  const warnings: string[] = [];
  beforeAll(async () => {
    stack = await startStack({ server: { logger: { warn: (m) => warnings.push(m) } } });
  });
  afterAll(() => stack.close());

  test('a <tool_call> block comes back as tool_calls with finish reason tool_calls', async () => {
    const r = await stack.client.chat.completions.create({
      model: 'ensemble',
      messages: [
        {
          role: 'user',
          content: `Weather in Paris? ${fakeScript(hermesCall('get_weather', { city: 'Paris' }))}`,
        },
      ],
      tools: TOOLS,
    });
    const [call] = calls(r.choices[0]!.message);
    expect(call).toMatchObject({
      type: 'function',
      function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
    });
    expect(call!.id).toMatch(/^call_[0-9a-f]{24}$/);
    expect(r.choices[0]!.message.content).toBeNull();
    expect(r.choices[0]!.finish_reason).toBe('tool_calls');
  });

  test('streamed: text first as content, then the call in deltas, ending with tool_calls', async () => {
    const script = `Let me check.\n${hermesCall('get_weather', { city: 'Rome', unit: 'celsius' })}`;
    const stream = await stack.client.chat.completions.create({
      model: 'ensemble',
      messages: [{ role: 'user', content: `Rome? ${fakeScript(script)}` }],
      tools: TOOLS,
      stream: true,
    });
    let content = '';
    const pieces: { index: number; id?: string; name?: string; arguments?: string }[] = [];
    let finish: string | null = null;
    let contentAfterCall = false;
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      if (choice === undefined) continue;
      if (choice.delta.content) {
        content += choice.delta.content;
        if (pieces.length > 0) contentAfterCall = true;
      }
      for (const d of choice.delta.tool_calls ?? []) {
        pieces.push({
          index: d.index,
          ...(d.id !== undefined ? { id: d.id } : {}),
          ...(d.function?.name !== undefined ? { name: d.function.name } : {}),
          ...(d.function?.arguments !== undefined ? { arguments: d.function.arguments } : {}),
        });
      }
      finish = choice.finish_reason ?? finish;
    }
    expect(content).toBe('Let me check.');
    expect(contentAfterCall).toBe(false);
    expect(pieces[0]).toMatchObject({ index: 0, name: 'get_weather' });
    expect(pieces[0]!.id).toMatch(/^call_/);
    expect(pieces.slice(1).every((p) => p.index === 0 && p.id === undefined)).toBe(true);
    expect(pieces.length).toBeGreaterThan(2);
    expect(pieces.map((p) => p.arguments ?? '').join('')).toBe('{"city":"Rome","unit":"celsius"}');
    expect(finish).toBe('tool_calls');
  });

  test('two calls get indexes 0 and 1, streamed and not', async () => {
    const script = `${hermesCall('get_weather', { city: 'Oslo' })}\n${hermesCall('get_time', { zone: 'CET' })}`;
    const request = {
      model: 'ensemble',
      messages: [{ role: 'user' as const, content: fakeScript(script) }],
      tools: TOOLS,
    };
    const whole = await stack.client.chat.completions.create(request);
    expect(calls(whole.choices[0]!.message).map((c) => c.function)).toEqual([
      { name: 'get_weather', arguments: '{"city":"Oslo"}' },
      { name: 'get_time', arguments: '{"zone":"CET"}' },
    ]);
    const stream = await stack.client.chat.completions.create({ ...request, stream: true });
    const args = ['', ''];
    for await (const chunk of stream) {
      for (const d of chunk.choices[0]?.delta.tool_calls ?? []) args[d.index] += d.function?.arguments ?? '';
    }
    expect(args).toEqual(['{"city":"Oslo"}', '{"zone":"CET"}']);
  });

  test('a second turn renders the call and its result through the template', async () => {
    const first = await stack.client.chat.completions.create({
      model: 'ensemble',
      messages: [
        { role: 'user', content: `Paris? ${fakeScript(hermesCall('get_weather', { city: 'Paris' }))}` },
      ],
      tools: TOOLS,
    });
    const call = calls(first.choices[0]!.message)[0]!;
    const answer = 'It is 18 degrees in Paris.';
    const result = `{"temp": 18} ${fakeScript(answer)}`;
    const second = await stack.client.chat.completions.create({
      model: 'ensemble',
      messages: [
        { role: 'user', content: `Paris? ${fakeScript(hermesCall('get_weather', { city: 'Paris' }))}` },
        { role: 'assistant', content: null, tool_calls: [call as never] },
        { role: 'tool', tool_call_id: call.id, content: result },
      ],
      tools: TOOLS,
    });
    expect(second.choices[0]!.message.content).toBe(answer);
    expect(second.choices[0]!.message.tool_calls).toBeUndefined();
    expect(second.choices[0]!.finish_reason).toBe('stop');
    const template = await loadChatTemplate({ choice: 'chatml' });
    const prompt = template.render(
      [
        { role: 'user', content: `Paris? ${fakeScript(hermesCall('get_weather', { city: 'Paris' }))}` },
        { role: 'assistant', content: '', toolCalls: [{ id: call.id, ...call.function }] },
        { role: 'tool', content: result, toolCallId: call.id },
      ],
      { tools: TOOLS.map((t) => ({ ...(t as { function: { name: string } }).function })) },
    );
    expect(prompt).toContain('<tool_response>\n{"temp": 18}');
    expect(second.usage?.prompt_tokens).toBe(encode(prompt).length);
  });

  test('broken JSON in a block is plain content with a warning, never a call', async () => {
    const script = 'Sure.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": \n</tool_call>';
    const before = warnings.length;
    const r = await stack.client.chat.completions.create({
      model: 'ensemble',
      messages: [{ role: 'user', content: fakeScript(script) }],
      tools: TOOLS,
    });
    expect(r.choices[0]!.message.content).toBe(script);
    expect(r.choices[0]!.message.tool_calls).toBeUndefined();
    expect(r.choices[0]!.finish_reason).toBe('stop');
    expect(warnings.slice(before).join('\n')).toMatch(/broken JSON/);
  });

  test('an unknown function name is plain content with a warning, streamed too', async () => {
    const script = hermesCall('launch_rocket', { to: 'moon' });
    const before = warnings.length;
    const stream = await stack.client.chat.completions.create({
      model: 'ensemble',
      messages: [{ role: 'user', content: fakeScript(script) }],
      tools: TOOLS,
      stream: true,
    });
    let content = '';
    let sawCall = false;
    let finish: string | null = null;
    for await (const chunk of stream) {
      content += chunk.choices[0]?.delta.content ?? '';
      sawCall ||= (chunk.choices[0]?.delta.tool_calls ?? []).length > 0;
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(content).toBe(script);
    expect(sawCall).toBe(false);
    expect(finish).toBe('stop');
    expect(warnings.slice(before).join('\n')).toMatch(/unknown function 'launch_rocket'/);
  });

  test('tool_choice none neither shows the tools nor reads calls', async () => {
    const script = hermesCall('get_weather', { city: 'Paris' });
    const messages = [{ role: 'user' as const, content: fakeScript(script) }];
    const r = await stack.client.chat.completions.create({
      model: 'ensemble',
      messages,
      tools: TOOLS,
      tool_choice: 'none',
    });
    expect(r.choices[0]!.message.content).toBe(script);
    const plain = (await loadChatTemplate({ choice: 'chatml' })).render(messages);
    expect(r.usage?.prompt_tokens).toBe(encode(plain).length);
  });

  test('tool_choice required is guided by a schema of the calls and read as calls', async () => {
    const r = await stack.client.chat.completions.create({
      model: 'ensemble',
      messages: [{ role: 'user', content: 'Anything.' }],
      tools: TOOLS,
      tool_choice: 'required',
    });
    // The fake's guided instance picks the first branch: the first tool, its schema's instance.
    expect(calls(r.choices[0]!.message).map((c) => c.function)).toEqual([
      { name: 'get_weather', arguments: JSON.stringify(jsonSchemaInstance(weather)) },
    ]);
    expect(r.choices[0]!.finish_reason).toBe('tool_calls');
    const received = stack.fake.events().filter((e) => e.event === 'received' && e.model === 'ensemble');
    expect(received.at(-1)?.guide).toBe('json_schema');
  });

  test('a named tool_choice is guided by that function’s parameters and wrapped into its call', async () => {
    const stream = await stack.client.chat.completions.create({
      model: 'ensemble',
      messages: [{ role: 'user', content: 'What time is it?' }],
      tools: TOOLS,
      tool_choice: { type: 'function', function: { name: 'get_time' } },
      stream: true,
    });
    let name = '';
    let args = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      for (const d of chunk.choices[0]?.delta.tool_calls ?? []) {
        name += d.function?.name ?? '';
        args += d.function?.arguments ?? '';
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(name).toBe('get_time');
    expect(args).toBe(JSON.stringify(jsonSchemaInstance(time)));
    expect(finish).toBe('tool_calls');
  });

  test('response_format json_schema with strict is guided decoding of that schema', async () => {
    const { data: r, response } = await stack.client.chat.completions
      .create({
        model: 'ensemble',
        messages: [{ role: 'user', content: 'Weather as JSON.' }],
        response_format: {
          type: 'json_schema',
          json_schema: { name: 'weather', schema: weather, strict: true },
        },
      })
      .withResponse();
    expect(r.choices[0]!.message.content).toBe(JSON.stringify(jsonSchemaInstance(weather)));
    const id = response.headers.get('x-request-id');
    const received = stack.fake.events().find((e) => e.event === 'received' && e.id === id);
    expect(received?.guide).toBe('json_schema');
  });

  test('bad tools and tool choices are 400s naming the parameter', async () => {
    const ask = (extra: object) =>
      stack.client.chat.completions
        .create({ model: 'ensemble', messages: [{ role: 'user', content: 'x' }], ...extra })
        .then(
          () => undefined,
          (err: unknown) => err,
        );
    const cases: [object, RegExp][] = [
      [{ tool_choice: 'required' }, /tool_choice.*needs a non-empty tools list/],
      [{ tools: [{ type: 'function', function: { name: 'bad name' } }] }, /tools\[0\]\.function\.name/],
      [
        { tools: TOOLS, tool_choice: { type: 'function', function: { name: 'nope' } } },
        /tool_choice\.function\.name/,
      ],
      [{ tools: TOOLS, tool_choice: 'sometimes' }, /tool_choice/],
      [
        { tools: TOOLS, tool_choice: 'required', response_format: { type: 'json_object' } },
        /response_format.*cannot be combined/,
      ],
      [{ functions: [{ name: 'f' }] }, /functions/],
    ];
    for (const [extra, message] of cases) {
      const err = await ask(extra);
      expect(err).toBeInstanceOf(BadRequestError);
      expect((err as BadRequestError).message).toMatch(message);
    }
  });
});

describe('tool calls through the Llama 3 template (llama3_json parser)', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ server: { chatTemplate: 'llama3' } });
  });
  afterAll(() => stack.close());

  test('a JSON call with "parameters" becomes tool_calls', async () => {
    const script = '{"name": "get_weather", "parameters": {"city": "Lima"}}';
    const r = await stack.client.chat.completions.create({
      model: 'ensemble',
      messages: [{ role: 'user', content: fakeScript(script) }],
      tools: TOOLS,
    });
    expect(calls(r.choices[0]!.message).map((c) => c.function)).toEqual([
      { name: 'get_weather', arguments: '{"city":"Lima"}' },
    ]);
    expect(r.choices[0]!.finish_reason).toBe('tool_calls');
  });

  test('an ordinary answer streams as content', async () => {
    const stream = await stack.client.chat.completions.create({
      model: 'ensemble',
      messages: [{ role: 'user', content: fakeScript('Sunny, 21 degrees.') }],
      tools: TOOLS,
      stream: true,
    });
    let content = '';
    for await (const chunk of stream) content += chunk.choices[0]?.delta.content ?? '';
    expect(content).toBe('Sunny, 21 degrees.');
  });
});

describe('tools where the deployment cannot honour them', () => {
  test('a template that does not render tools refuses them', async () => {
    const stack = await startStack({ server: { chatTemplate: 'llama2' } });
    try {
      const err = await stack.client.chat.completions
        .create({ model: 'ensemble', messages: [{ role: 'user', content: 'x' }], tools: TOOLS })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BadRequestError);
      expect((err as BadRequestError).message).toMatch(/chat template \(llama2\) does not render tools/);
    } finally {
      await stack.close();
    }
  });

  test('required, named and strict json_schema need guided decoding: a model without it says so', async () => {
    const stack = await startStack({ model: 'llmapi' });
    try {
      const bodies = [
        { tools: TOOLS, tool_choice: 'required' as const },
        { tools: TOOLS, tool_choice: { type: 'function' as const, function: { name: 'get_time' } } },
        {
          response_format: {
            type: 'json_schema' as const,
            json_schema: { name: 'w', schema: weather, strict: true },
          },
        },
      ];
      for (const extra of bodies) {
        const err = await stack.client.chat.completions
          .create({ model: 'llmapi', messages: [{ role: 'user', content: 'x' }], ...extra })
          .catch((e: unknown) => e);
        expect(err).toBeInstanceOf(BadRequestError);
        expect((err as BadRequestError).message).toMatch(/needs guided decoding.*model 'llmapi'/);
      }
      expect(stack.fake.events().filter((e) => e.event === 'received')).toEqual([]);
    } finally {
      await stack.close();
    }
  });
});
