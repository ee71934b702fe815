import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { createOpenAiServer } from '@trtllm/openai';
import { fakeScript, fakeTokenizer, jsonSchemaInstance } from '@trtllm/testing';
import { generateText, isStepCount, streamText, tool } from 'ai';
import OpenAI from 'openai';
import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { describeEachServer, useServer } from './servers.js';
import { OPENAI_TOOLS, TOOL_MODEL, TOOL_SCRIPTS } from './tool-scripts.js';

const MODEL = 'tensorrt_llm_bls';
const weatherParameters = {
  type: 'object',
  properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
  required: ['city'],
};
const TOOLS: ChatCompletionTool[] = [
  {
    type: 'function',
    function: { name: 'get_weather', description: 'Weather in a city', parameters: weatherParameters },
  },
];
// ASCII scripts, so the per-token streaming of the ensemble path keeps every character whole.
const hermesCall = (name: string, args: object) =>
  `<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;

// trtllm-openai in front of each server, with the ChatML template (Hermes-style calls), driven by the
// official openai client and by the AI SDK's OpenAI-compatible provider.
describeEachServer('trtllm-openai tool calls: %s Triton over %s', (kind, protocol) => {
  const server = useServer(kind);
  const warnings: string[] = [];
  let close: () => Promise<void>;
  let client: OpenAI;
  let baseURL: string;
  beforeAll(async () => {
    const api = createOpenAiServer({
      transport: server().transport(protocol),
      model: MODEL,
      tokenizer: fakeTokenizer,
      chatTemplate: 'chatml',
      logger: { warn: (m) => warnings.push(m) },
    });
    baseURL = await api.listen(0, '127.0.0.1');
    close = () => api.close();
    client = new OpenAI({ baseURL, apiKey: 'unused', maxRetries: 0 });
  });
  afterAll(() => close?.());

  describe('official openai client', () => {
    it('gets a tool call, not streamed', async () => {
      const r = await client.chat.completions.create({
        model: MODEL,
        messages: [
          { role: 'user', content: `Paris? ${fakeScript(hermesCall('get_weather', { city: 'Paris' }))}` },
        ],
        tools: TOOLS,
      });
      const call = r.choices[0]!.message.tool_calls?.[0] as {
        id: string;
        function: { name: string; arguments: string };
      };
      expect(call.id).toMatch(/^call_/);
      expect(call.function).toEqual({ name: 'get_weather', arguments: '{"city":"Paris"}' });
      expect(r.choices[0]!.message.content).toBeNull();
      expect(r.choices[0]!.finish_reason).toBe('tool_calls');
    });

    it('gets a tool call streamed: content first, then id and name, then the arguments in pieces', async () => {
      const stream = await client.chat.completions.create({
        model: MODEL,
        messages: [
          {
            role: 'user',
            content: `Rome? ${fakeScript(`One moment.\n${hermesCall('get_weather', { city: 'Rome', unit: 'celsius' })}`)}`,
          },
        ],
        tools: TOOLS,
        stream: true,
      });
      let content = '';
      let id: string | undefined;
      let name = '';
      const args: string[] = [];
      let finish: string | null = null;
      for await (const chunk of stream) {
        const choice = chunk.choices[0];
        if (choice === undefined) continue;
        content += choice.delta.content ?? '';
        for (const d of choice.delta.tool_calls ?? []) {
          expect(d.index).toBe(0);
          id ??= d.id;
          name += d.function?.name ?? '';
          if (d.function?.arguments) args.push(d.function.arguments);
        }
        finish = choice.finish_reason ?? finish;
      }
      expect(content).toBe('One moment.');
      expect(id).toMatch(/^call_/);
      expect(name).toBe('get_weather');
      expect(args.length).toBeGreaterThan(1);
      expect(args.join('')).toBe('{"city":"Rome","unit":"celsius"}');
      expect(finish).toBe('tool_calls');
    });

    it('completes a two-turn conversation with a tool result', async () => {
      const question = `Paris? ${fakeScript(hermesCall('get_weather', { city: 'Paris' }))}`;
      const first = await client.chat.completions.create({
        model: MODEL,
        messages: [{ role: 'user', content: question }],
        tools: TOOLS,
      });
      const call = first.choices[0]!.message.tool_calls![0]!;
      const answer = 'It is 18 C in Paris.';
      const second = await client.chat.completions.create({
        model: MODEL,
        messages: [
          { role: 'user', content: question },
          first.choices[0]!.message,
          { role: 'tool', tool_call_id: call.id, content: `{"temp_c": 18} ${fakeScript(answer)}` },
        ],
        tools: TOOLS,
      });
      expect(second.choices[0]!.message.content).toBe(answer);
      expect(second.choices[0]!.message.tool_calls).toBeUndefined();
      expect(second.choices[0]!.finish_reason).toBe('stop');
    });

    it('tool_choice required is guided decoding of the call, read back as the call', async () => {
      const { data: r, response } = await client.chat.completions
        .create({
          model: MODEL,
          messages: [{ role: 'user', content: 'Any city.' }],
          tools: TOOLS,
          tool_choice: 'required',
        })
        .withResponse();
      const call = r.choices[0]!.message.tool_calls?.[0] as { function: { name: string; arguments: string } };
      expect(call.function).toEqual({
        name: 'get_weather',
        arguments: JSON.stringify(jsonSchemaInstance(weatherParameters)),
      });
      expect(r.choices[0]!.finish_reason).toBe('tool_calls');
      // The upstream request keeps the id the server names in x-request-id (the BLS passes it to its generator).
      const id = response.headers.get('x-request-id');
      const guided = await server().waitForEvent(
        (e) => e.event === 'received' && e.id === id && e.guide !== undefined,
      );
      expect(guided.guide).toBe('json_schema');
    });

    it('broken tool-call JSON comes back as text with a warning', async () => {
      const broken = '<tool_call>\n{"name": "get_weather", "arguments": {"city": \n</tool_call>';
      const before = warnings.length;
      const r = await client.chat.completions.create({
        model: MODEL,
        messages: [{ role: 'user', content: fakeScript(broken) }],
        tools: TOOLS,
      });
      expect(r.choices[0]!.message.content).toBe(broken);
      expect(r.choices[0]!.message.tool_calls).toBeUndefined();
      expect(warnings.length).toBe(before + 1);
    });
  });

  describe('AI SDK OpenAI-compatible provider', () => {
    const provider = () => createOpenAICompatible({ name: 'trtllm', baseURL, apiKey: 'unused' });
    const answer = 'Paris is sunny and 21 C.';
    const weatherTool = (seen: unknown[]) =>
      tool({
        description: 'Weather in a city',
        inputSchema: z.object({ city: z.string() }),
        // The result carries the script of the model's next answer, as a real tool result carries data.
        execute: async (input) => {
          seen.push(input);
          return `sunny, 21 C ${fakeScript(answer)}`;
        },
      });

    it('generateText runs a tool() and answers with its result', async () => {
      const seen: unknown[] = [];
      const result = await generateText({
        model: provider().chatModel(MODEL),
        prompt: `Weather in Paris? ${fakeScript(hermesCall('weather', { city: 'Paris' }))}`,
        tools: { weather: weatherTool(seen) },
        stopWhen: isStepCount(2),
        maxRetries: 0,
      });
      expect(seen).toEqual([{ city: 'Paris' }]);
      expect(result.steps).toHaveLength(2);
      expect(result.steps[0]!.finishReason).toBe('tool-calls');
      expect(result.steps[0]!.toolCalls.map((c) => [c.toolName, c.input])).toEqual([
        ['weather', { city: 'Paris' }],
      ]);
      expect(result.text).toBe(answer);
      expect(result.finishReason).toBe('stop');
    });

    it('streamText runs a tool() from streamed call deltas and streams the answer', async () => {
      const seen: unknown[] = [];
      const result = streamText({
        model: provider().chatModel(MODEL),
        prompt: `Weather in Paris? ${fakeScript(hermesCall('weather', { city: 'Paris' }))}`,
        tools: { weather: weatherTool(seen) },
        stopWhen: isStepCount(2),
        maxRetries: 0,
      });
      let text = '';
      for await (const piece of result.textStream) text += piece;
      expect(seen).toEqual([{ city: 'Paris' }]);
      expect(text).toBe(answer);
      expect((await result.steps)[0]!.finishReason).toBe('tool-calls');
    });
  });
});

// The shared scripts through trtllm-openai with the official openai client: the same text and calls
// the AI SDK provider and ChatTriton read straight from Triton.
describeEachServer('trtllm-openai reads the shared tool scripts: %s Triton over %s', (kind, protocol) => {
  const server = useServer(kind);
  const clients: Partial<Record<'chatml' | 'llama3', OpenAI>> = {};
  const closers: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    for (const template of ['chatml', 'llama3'] as const) {
      const api = createOpenAiServer({
        transport: server().transport(protocol),
        model: TOOL_MODEL,
        tokenizer: fakeTokenizer,
        chatTemplate: template,
        logger: { warn: () => undefined },
      });
      const baseURL = await api.listen(0, '127.0.0.1');
      closers.push(() => api.close());
      clients[template] = new OpenAI({ baseURL, apiKey: 'unused', maxRetries: 0 });
    }
  });
  afterAll(() => Promise.all(closers.map((c) => c())));
  const tools = OPENAI_TOOLS;

  it.each(TOOL_SCRIPTS)('$name: streamed and not, the same text and calls', async (script) => {
    const client = clients[script.template]!;
    const body = {
      model: TOOL_MODEL,
      messages: [{ role: 'user' as const, content: `Go. ${fakeScript(script.text)}` }],
      tools,
    };
    const whole = (await client.chat.completions.create(body)).choices[0]!;
    const streamedCalls: { name: string; arguments: string }[] = [];
    let content = '';
    let finish: string | null = null;
    for await (const chunk of await client.chat.completions.create({ ...body, stream: true })) {
      const choice = chunk.choices[0];
      if (choice === undefined) continue;
      content += choice.delta.content ?? '';
      for (const d of choice.delta.tool_calls ?? []) {
        streamedCalls[d.index] ??= { name: '', arguments: '' };
        streamedCalls[d.index]!.name += d.function?.name ?? '';
        streamedCalls[d.index]!.arguments += d.function?.arguments ?? '';
      }
      finish = choice.finish_reason ?? finish;
    }
    const expectedFinish = script.calls.length > 0 ? 'tool_calls' : 'stop';
    expect(whole.message.content ?? '').toBe(script.content);
    expect(
      (whole.message.tool_calls ?? []).map((c) => {
        const fn = (c as { function: { name: string; arguments: string } }).function;
        return [fn.name, JSON.parse(fn.arguments)];
      }),
    ).toEqual(script.calls);
    expect(whole.finish_reason).toBe(expectedFinish);
    expect(content).toBe(script.content);
    expect(streamedCalls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual(script.calls);
    expect(finish).toBe(expectedFinish);
  });
});
