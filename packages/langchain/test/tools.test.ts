import { type AIMessageChunk, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { ChatTriton } from '@trtllm/langchain';
import { type FakeTriton, fakeScript, jsonSchemaInstance, startFakeTriton } from '@trtllm/testing';
import { createAgent } from 'langchain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';

const hermesCall = (name: string, args: object) =>
  `<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;
const weatherInput = z.object({ city: z.string() });
const timeInput = z.object({ zone: z.string() });
/** Tools whose results carry the script of the model's next answer, as a real result carries data. */
const tools = (answer: string, seen: unknown[] = []) => [
  tool(
    async (input) => {
      seen.push(['get_weather', input]);
      return `sunny, 21 C ${fakeScript(answer)}`;
    },
    { name: 'get_weather', description: 'Weather in a city', schema: weatherInput },
  ),
  tool(
    async (input) => {
      seen.push(['get_time', input]);
      return `12:00 ${fakeScript(answer)}`;
    },
    { name: 'get_time', description: 'Time in a zone', schema: timeInput },
  ),
];
// The BLS accumulates tokens, so every script (non-ASCII too) arrives as written.
const MODEL = 'tensorrt_llm_bls';

describe.each(['grpc', 'http'] as const)('ChatTriton tool calls straight to Triton over %s', (protocol) => {
  let fake: FakeTriton;
  const logged: string[] = [];
  const models: ChatTriton[] = [];
  const chatModel = (fields: { model?: string; chatTemplate?: 'chatml' | 'llama3' | 'llama2' } = {}) => {
    const url = protocol === 'grpc' ? { grpcUrl: fake.grpcUrl } : { httpUrl: fake.httpUrl };
    const m = new ChatTriton({
      ...url,
      model: MODEL,
      maxTokens: 256,
      logger: { warn: (w) => logged.push(w) },
      ...fields,
    });
    models.push(m);
    return m;
  };
  beforeAll(async () => {
    fake = await startFakeTriton({ itlMs: 0 });
  });
  afterAll(async () => {
    await Promise.all(models.map((m) => m.close()));
    await fake.close();
  });

  it('createAgent runs the tool the model called and answers with its result', async () => {
    const seen: unknown[] = [];
    const answer = 'Paris is sunny and 21 C.';
    const agent = createAgent({ model: chatModel(), tools: tools(answer, seen) });
    const result = await agent.invoke({
      messages: [
        {
          role: 'user',
          content: `Weather in Paris? ${fakeScript(hermesCall('get_weather', { city: 'Paris' }))}`,
        },
      ],
    });
    expect(seen).toEqual([['get_weather', { city: 'Paris' }]]);
    const types = result.messages.map((m) => m.getType());
    expect(types).toEqual(['human', 'ai', 'tool', 'ai']);
    const call = (result.messages[1] as AIMessageChunk).tool_calls![0]!;
    expect((result.messages[2] as ToolMessage).tool_call_id).toBe(call.id);
    // The answer's script travelled only in the tool result: the ToolMessage reached the prompt.
    expect(result.messages.at(-1)!.content).toBe(answer);
  });

  it('bindTools: invoke gives AIMessage.tool_calls, with the text before the call as content', async () => {
    const model = chatModel().bindTools(tools('x'));
    const message = await model.invoke(
      `Rome? ${fakeScript(`One moment.\n${hermesCall('get_weather', { city: 'Rome' })}`)}`,
    );
    expect(message.content).toBe('One moment.');
    expect(message.tool_calls).toEqual([
      { type: 'tool_call', id: expect.stringMatching(/^call_/), name: 'get_weather', args: { city: 'Rome' } },
    ]);
  });

  it('stream gives tool_call_chunks that merge into the tool calls, two in parallel', async () => {
    const script = `${hermesCall('get_weather', { city: 'Oslo' })}\n${hermesCall('get_time', { zone: 'CET' })}`;
    const model = chatModel().bindTools(tools('x'));
    let merged: AIMessageChunk | undefined;
    const chunks: number[] = [];
    for await (const chunk of await model.stream(`Oslo? ${fakeScript(script)}`)) {
      for (const c of chunk.tool_call_chunks ?? []) chunks.push(c.index!);
      merged = merged === undefined ? chunk : merged.concat(chunk);
    }
    expect(new Set(chunks)).toEqual(new Set([0, 1]));
    expect(chunks.length).toBeGreaterThan(4);
    expect(merged!.tool_calls!.map((c) => [c.name, c.args])).toEqual([
      ['get_weather', { city: 'Oslo' }],
      ['get_time', { zone: 'CET' }],
    ]);
    expect(new Set(merged!.tool_calls!.map((c) => c.id)).size).toBe(2);
  });

  it('non-ASCII arguments arrive whole, streamed and not', async () => {
    const args = { city: 'Zürich – 東京 🌤' };
    const prompt = `Where? ${fakeScript(hermesCall('get_weather', args))}`;
    const model = chatModel().bindTools(tools('x'));
    expect((await model.invoke(prompt)).tool_calls!.map((c) => c.args)).toEqual([args]);
    let merged: AIMessageChunk | undefined;
    for await (const chunk of await model.stream(prompt)) merged = merged?.concat(chunk) ?? chunk;
    expect(merged!.tool_calls!.map((c) => c.args)).toEqual([args]);
  });

  it('a malformed call comes back as text with a warning', async () => {
    const broken = '<tool_call>\n{"name": "get_weather", "arguments": {"city": \n</tool_call>';
    const before = logged.length;
    const message = await chatModel().bindTools(tools('x')).invoke(fakeScript(broken));
    expect(message.content).toBe(broken);
    expect(message.tool_calls).toEqual([]);
    expect(logged.slice(before).some((w) => /hermes tool-call parser/.test(w))).toBe(true);
  });

  it('a ToolMessage after an AIMessage with tool_calls continues the conversation', async () => {
    const model = chatModel().bindTools(tools('x'));
    const question = new HumanMessage(`Paris? ${fakeScript(hermesCall('get_weather', { city: 'Paris' }))}`);
    const first = await model.invoke([question]);
    const call = first.tool_calls![0]!;
    const second = await model.invoke([
      question,
      first,
      new ToolMessage({ tool_call_id: call.id!, content: `18 C ${fakeScript('It is 18 C.')}` }),
    ]);
    expect(second.content).toBe('It is 18 C.');
    expect(second.tool_calls).toEqual([]);
  });

  it("tool_choice 'any' and a tool's name are guided decoding, read back as calls", async () => {
    const model = chatModel({ model: 'ensemble' });
    const required = await model.bindTools(tools('x'), { tool_choice: 'any' }).invoke('Any city.', {
      requestId: protocol === 'grpc' ? '9101' : '9102',
    });
    expect(required.tool_calls!.map((c) => [c.name, c.args])).toEqual([
      ['get_weather', jsonSchemaInstance(z.toJSONSchema(weatherInput))],
    ]);
    const event = await fake.waitForEvent(
      (e) => e.event === 'received' && e.id === (protocol === 'grpc' ? '9101' : '9102'),
    );
    expect(event.guide).toBe('json_schema');
    const named = await model.bindTools(tools('x'), { tool_choice: 'get_time' }).invoke('The time.');
    expect(named.tool_calls!.map((c) => [c.name, c.args])).toEqual([
      ['get_time', jsonSchemaInstance(z.toJSONSchema(timeInput))],
    ]);
  });

  it('the Llama 3 template teaches its JSON calls; an agent runs them and answers', async () => {
    const seen: unknown[] = [];
    const agent = createAgent({
      model: chatModel({ chatTemplate: 'llama3' }),
      tools: tools('Lima: 19 C.', seen),
    });
    const script =
      '{"name": "get_weather", "parameters": {"city": "Lima"}}; {"name": "get_time", "parameters": {"zone": "PET"}}';
    const result = await agent.invoke({
      messages: [{ role: 'user', content: `Lima? ${fakeScript(script)}` }],
    });
    expect(seen).toEqual([
      ['get_weather', { city: 'Lima' }],
      ['get_time', { zone: 'PET' }],
    ]);
    expect(result.messages.at(-1)!.content).toBe('Lima: 19 C.');
  });

  it('a template that does not render tools, and required without guided decoding, are refused before sending', async () => {
    const before = fake.events().filter((e) => e.event === 'received').length;
    await expect(
      chatModel({ chatTemplate: 'llama2' }).bindTools(tools('x')).invoke('x'),
    ).rejects.toMatchObject({
      code: 'invalid_argument',
      message: expect.stringMatching(/chat template \(llama2\) does not render tools/),
    });
    await expect(
      chatModel({ model: 'llmapi' }).bindTools(tools('x'), { tool_choice: 'required' }).invoke('x'),
    ).rejects.toMatchObject({
      code: 'invalid_argument',
      message: expect.stringMatching(/needs guided decoding.*'llmapi'/),
    });
    expect(fake.events().filter((e) => e.event === 'received').length).toBe(before);
  });
});
