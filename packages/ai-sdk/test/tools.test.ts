import { UnsupportedFunctionalityError } from '@ai-sdk/provider';
import { createTriton, type TritonProvider } from '@trtllm/ai-sdk';
import { type FakeTriton, fakeScript, jsonSchemaInstance, startFakeTriton } from '@trtllm/testing';
import { generateText, isStepCount, streamText, tool } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';

(globalThis as { AI_SDK_LOG_WARNINGS?: unknown }).AI_SDK_LOG_WARNINGS = false;

const hermesCall = (name: string, args: object) =>
  `<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;
const weatherInput = z.object({ city: z.string() });
const timeInput = z.object({ zone: z.string() });
/** Tools whose results carry the script of the model's next answer, as a real result carries data. */
const tools = (answer: string, seen: unknown[] = []) => ({
  get_weather: tool({
    description: 'Weather in a city',
    inputSchema: weatherInput,
    execute: async (input) => {
      seen.push(['get_weather', input]);
      return `sunny, 21 C ${fakeScript(answer)}`;
    },
  }),
  get_time: tool({
    description: 'Time in a zone',
    inputSchema: timeInput,
    execute: async (input) => {
      seen.push(['get_time', input]);
      return `12:00 ${fakeScript(answer)}`;
    },
  }),
});
// The BLS accumulates tokens, so every script (non-ASCII too) arrives as written.
const MODEL = 'tensorrt_llm_bls';

describe.each(['grpc', 'http'] as const)('AI SDK tool calls straight to Triton over %s', (protocol) => {
  let fake: FakeTriton;
  let triton: TritonProvider;
  const logged: string[] = [];
  beforeAll(async () => {
    fake = await startFakeTriton({ itlMs: 0 });
    const server = protocol === 'grpc' ? { grpcUrl: fake.grpcUrl } : { httpUrl: fake.httpUrl };
    triton = createTriton({ ...server, logger: { warn: (m) => logged.push(m) } });
  });
  afterAll(async () => {
    await triton.close();
    await fake.close();
  });

  it('generateText with stopWhen runs the tool the model called and answers with its result', async () => {
    const seen: unknown[] = [];
    const answer = 'Paris is sunny and 21 C.';
    const result = await generateText({
      model: triton(MODEL),
      prompt: `Weather in Paris? ${fakeScript(hermesCall('get_weather', { city: 'Paris' }))}`,
      tools: tools(answer, seen),
      stopWhen: isStepCount(3),
      maxRetries: 0,
      include: { requestBody: true },
    });
    expect(seen).toEqual([['get_weather', { city: 'Paris' }]]);
    expect(result.steps).toHaveLength(2);
    const [first, second] = result.steps;
    expect(first!.finishReason).toBe('tool-calls');
    expect(first!.toolCalls).toHaveLength(1);
    // The id is the one the AI SDK handed the tool and then sent back with its result.
    expect(first!.toolResults[0]!.toolCallId).toBe(first!.toolCalls[0]!.toolCallId);
    // The second step's prompt is the whole conversation through the ChatML template: the call as
    // the model wrote it, the result as a <tool_response> block.
    const prompt = (second!.request.body as { prompt: string }).prompt;
    expect(prompt).toContain(
      `<|im_start|>assistant\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call><|im_end|>`,
    );
    expect(prompt).toContain(`<tool_response>\nsunny, 21 C ${fakeScript(answer)}\n</tool_response>`);
    expect(prompt).toContain('"name": "get_weather", "description": "Weather in a city"');
    expect(result.text).toBe(answer);
    expect(result.finishReason).toBe('stop');
  });

  it('streamText streams tool-input-start, the argument deltas and tool-input-end, then the tool-call', async () => {
    const script = `One moment.\n${hermesCall('get_weather', { city: 'Rome' })}`;
    const result = streamText({
      model: triton(MODEL),
      prompt: `Rome? ${fakeScript(script)}`,
      tools: tools('unused'),
      maxRetries: 0,
    });
    const parts: { type: string; id?: string; delta?: string; text?: string; toolCallId?: string }[] = [];
    for await (const part of result.fullStream) {
      if (part.type.startsWith('tool-input') || part.type === 'tool-call' || part.type === 'text-delta') {
        parts.push(part as (typeof parts)[number]);
      }
    }
    const types = parts.map((p) => p.type);
    const start = types.indexOf('tool-input-start');
    expect(types.slice(0, start).every((t) => t === 'text-delta')).toBe(true);
    expect(
      parts
        .slice(0, start)
        .map((p) => p.text)
        .join(''),
    ).toBe('One moment.');
    const end = types.indexOf('tool-input-end');
    expect(types.slice(start + 1, end).every((t) => t === 'tool-input-delta')).toBe(true);
    expect(end - start - 1).toBeGreaterThan(1);
    expect(
      parts
        .slice(start + 1, end)
        .map((p) => p.delta)
        .join(''),
    ).toBe('{"city":"Rome"}');
    expect(types[end + 1]).toBe('tool-call');
    const id = parts[start]!.id!;
    expect(parts.slice(start, end + 1).every((p) => p.id === id)).toBe(true);
    expect(parts[end + 1]!.toolCallId).toBe(id);
    expect(await result.finishReason).toBe('tool-calls');
    expect((await result.toolCalls).map((c) => [c.toolName, c.input])).toEqual([
      ['get_weather', { city: 'Rome' }],
    ]);
  });

  it('two calls in one answer are two tool-call parts with their own ids, both run', async () => {
    const seen: unknown[] = [];
    const script = `${hermesCall('get_weather', { city: 'Oslo' })}\n${hermesCall('get_time', { zone: 'CET' })}`;
    const result = await generateText({
      model: triton(MODEL),
      prompt: `Oslo? ${fakeScript(script)}`,
      tools: tools('Done.', seen),
      stopWhen: isStepCount(2),
    });
    const calls = result.steps[0]!.toolCalls;
    expect(calls.map((c) => [c.toolName, c.input])).toEqual([
      ['get_weather', { city: 'Oslo' }],
      ['get_time', { zone: 'CET' }],
    ]);
    expect(new Set(calls.map((c) => c.toolCallId)).size).toBe(2);
    expect(seen).toHaveLength(2);
    expect(result.text).toBe('Done.');
  });

  it('non-ASCII arguments arrive whole, streamed and not', async () => {
    const args = { city: 'Zürich – 東京 🌤' };
    const prompt = `Where? ${fakeScript(hermesCall('get_weather', args))}`;
    const whole = await generateText({ model: triton(MODEL), prompt, tools: tools('x') });
    expect(whole.toolCalls.map((c) => c.input)).toEqual([args]);
    const streamed = streamText({ model: triton(MODEL), prompt, tools: tools('x') });
    let deltas = '';
    for await (const part of streamed.fullStream) if (part.type === 'tool-input-delta') deltas += part.delta;
    expect(JSON.parse(deltas)).toEqual(args);
    expect((await streamed.toolCalls).map((c) => c.input)).toEqual([args]);
  });

  it('a malformed call comes back as text with a warning, and the step ends with stop', async () => {
    const broken = '<tool_call>\n{"name": "get_weather", "arguments": {"city": \n</tool_call>';
    const before = logged.length;
    const result = await generateText({
      model: triton(MODEL),
      prompt: fakeScript(broken),
      tools: tools('x'),
    });
    expect(result.text).toBe(broken);
    expect(result.toolCalls).toEqual([]);
    expect(result.finishReason).toBe('stop');
    expect(
      result.warnings?.some((w) => w.type === 'other' && /hermes tool-call parser/.test(w.message)),
    ).toBe(true);
    expect(logged.length).toBe(before + 1);
  });

  it("toolChoice 'required' and a named tool are guided decoding, read back as calls", async () => {
    const required = await generateText({
      model: triton('ensemble'),
      prompt: 'Any city.',
      tools: tools('x'),
      toolChoice: 'required',
      providerOptions: { trtllm: { requestId: protocol === 'grpc' ? '8101' : '8102' } },
    });
    expect(required.toolCalls.map((c) => [c.toolName, c.input])).toEqual([
      ['get_weather', jsonSchemaInstance(z.toJSONSchema(weatherInput))],
    ]);
    expect(required.finishReason).toBe('tool-calls');
    const event = await fake.waitForEvent((e) => e.event === 'received' && e.id === required.response.id);
    expect(event.guide).toBe('json_schema');
    const named = await generateText({
      model: triton('ensemble'),
      prompt: 'The time.',
      tools: tools('x'),
      toolChoice: { type: 'tool', toolName: 'get_time' },
    });
    expect(named.toolCalls.map((c) => [c.toolName, c.input])).toEqual([
      ['get_time', jsonSchemaInstance(z.toJSONSchema(timeInput))],
    ]);
  });

  it("toolChoice 'none' leaves the tools out of the prompt and reads the output as text", async () => {
    const script = hermesCall('get_weather', { city: 'Paris' });
    const result = await generateText({
      model: triton(MODEL),
      prompt: fakeScript(script),
      tools: tools('x'),
      toolChoice: 'none',
      include: { requestBody: true },
    });
    expect((result.request.body as { prompt: string }).prompt).not.toContain('<tools>');
    expect(result.text).toBe(script);
    expect(result.toolCalls).toEqual([]);
  });

  it('the Llama 3 template teaches its JSON calls, and they are read back', async () => {
    const llama = createTriton({
      ...(protocol === 'grpc' ? { grpcUrl: fake.grpcUrl } : { httpUrl: fake.httpUrl }),
      chatTemplate: 'llama3',
    });
    try {
      const script =
        '{"name": "get_weather", "parameters": {"city": "Lima"}}; {"name": "get_time", "parameters": {"zone": "PET"}}';
      const result = await generateText({
        model: llama(MODEL),
        prompt: `Lima? ${fakeScript(script)}`,
        tools: tools('Lima: 19 C.'),
        stopWhen: isStepCount(2),
        include: { requestBody: true },
      });
      expect(result.steps[0]!.toolCalls.map((c) => [c.toolName, c.input])).toEqual([
        ['get_weather', { city: 'Lima' }],
        ['get_time', { zone: 'PET' }],
      ]);
      const prompt = (result.steps[1]!.request.body as { prompt: string }).prompt;
      expect(prompt).toContain('<|start_header_id|>ipython<|end_header_id|>');
      expect(result.text).toBe('Lima: 19 C.');
    } finally {
      await llama.close();
    }
  });
});

describe('AI SDK tools where the deployment cannot do them', () => {
  let fake: FakeTriton;
  beforeAll(async () => {
    fake = await startFakeTriton({ itlMs: 0 });
  });
  afterAll(() => fake.close());

  it('a template that does not render tools gets the unsupported warning; the request goes without them', async () => {
    const triton = createTriton({ grpcUrl: fake.grpcUrl, chatTemplate: 'llama2' });
    try {
      const result = await generateText({
        model: triton(MODEL),
        prompt: fakeScript('plain text'),
        tools: tools('x'),
      });
      expect(result.text).toBe('plain text');
      const warning = result.warnings?.find((w) => w.type === 'unsupported' && w.feature === 'tools');
      expect(warning && 'details' in warning ? warning.details : '').toMatch(
        /chat template \(llama2\) does not render tools/,
      );
    } finally {
      await triton.close();
    }
  });

  it("toolChoice 'required' on a model without guided decoding is refused before anything is sent", async () => {
    const triton = createTriton({ grpcUrl: fake.grpcUrl });
    try {
      const before = fake.events().filter((e) => e.event === 'received').length;
      const err = await generateText({
        model: triton('llmapi'),
        prompt: 'x',
        tools: tools('x'),
        toolChoice: 'required',
        maxRetries: 0,
      }).catch((e: unknown) => e);
      expect(UnsupportedFunctionalityError.isInstance(err)).toBe(true);
      expect((err as Error).message).toMatch(/needs guided decoding.*model 'llmapi'/);
      expect(fake.events().filter((e) => e.event === 'received').length).toBe(before);
    } finally {
      await triton.close();
    }
  });

  it('toolCallParser must be a known parser', () => {
    expect(() => createTriton({ grpcUrl: fake.grpcUrl, toolCallParser: 'xml' as never })).toThrow(
      /toolCallParser/,
    );
  });
});
