import type { AIMessageChunk } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { ChatTriton } from '@trtllm/langchain';
import { TritonLlmError } from '@trtllm/sdk';
import { type FakeTriton, fakeScript, startFakeTriton } from '@trtllm/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';

// "ü" is two byte tokens of the fake's vocabulary and each CJK character three: streamed by the
// ensemble, which decodes each token alone, every one of them arrives as U+FFFD (GENERATOR.md).
const CITY = 'Zürich 北京';
const hermesCall = (args: object) =>
  `<tool_call>\n${JSON.stringify({ name: 'get_weather', arguments: args })}\n</tool_call>`;
const weather = tool(async () => 'sunny', {
  name: 'get_weather',
  description: 'Weather in a city',
  schema: z.object({ city: z.string() }),
});

describe.each(['grpc', 'http'] as const)('ChatTriton streaming on a lossy flavor over %s', (protocol) => {
  let fake: FakeTriton;
  const models: ChatTriton[] = [];
  const chatModel = (model: string, logged: string[]) => {
    const url = protocol === 'grpc' ? { grpcUrl: fake.grpcUrl } : { httpUrl: fake.httpUrl };
    const m = new ChatTriton({ ...url, model, maxTokens: 256, logger: { warn: (w) => logged.push(w) } });
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

  it('stream with bindTools on ensemble: the tool call carries exactly the arguments the model wrote', async () => {
    const logged: string[] = [];
    const model = chatModel('ensemble', logged).bindTools([weather]);
    let merged: AIMessageChunk | undefined;
    for await (const chunk of await model.stream(`Weather? ${fakeScript(hermesCall({ city: CITY }))}`)) {
      merged = merged === undefined ? chunk : merged.concat(chunk);
    }
    expect(merged?.tool_calls?.map((c) => [c.name, c.args])).toEqual([['get_weather', { city: CITY }]]);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatch(/^ChatTriton\.stream on 'ensemble': tool calls and structured output need/);
    expect(logged[0]).toContain('accumulate_tokens');
  });

  it('invoke with bindTools on ensemble gives the exact call, with nothing to warn about', async () => {
    const logged: string[] = [];
    const model = chatModel('ensemble', logged).bindTools([weather]);
    const reply = await model.invoke(`Weather? ${fakeScript(hermesCall({ city: CITY }))}`);
    expect(reply.tool_calls?.map((c) => c.args)).toEqual([{ city: CITY }]);
    expect(logged).toEqual([]);
  });

  it('withStructuredOutput streamed from ensemble gives the exact object', async () => {
    const logged: string[] = [];
    const object = { city: CITY, note: '🤖 daß' };
    const model = chatModel('ensemble', logged).withStructuredOutput(
      z.object({ city: z.string(), note: z.string() }),
    );
    let last: unknown;
    for await (const partial of await model.stream(`Describe. ${fakeScript(JSON.stringify(object))}`)) {
      last = partial;
    }
    expect(last).toEqual(object);
    expect(logged).toHaveLength(1);
  });

  it('plain streamed text with U+FFFD is warned about once through the logger; invoke is exact', async () => {
    const logged: string[] = [];
    const model = chatModel('ensemble', logged);
    let text = '';
    for await (const chunk of await model.stream(`Say. ${fakeScript(CITY)}`)) text += chunk.text;
    expect(text.match(/\uFFFD/gu)?.length).toBeGreaterThan(1);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatch(/^ChatTriton\.stream on 'ensemble': the streamed text has U\+FFFD/);
    expect(logged[0]).toContain("'tensorrt_llm_bls' with accumulate_tokens: true");
    const reply = await model.invoke(`Say. ${fakeScript(CITY)}`);
    expect(reply.text).toBe(CITY);
    expect(logged).toHaveLength(1);
  });

  it('the BLS with accumulate_tokens streams exact text and tool calls, with no warning', async () => {
    const logged: string[] = [];
    const model = chatModel('tensorrt_llm_bls', logged);
    let text = '';
    for await (const chunk of await model.stream(`Say. ${fakeScript(CITY)}`)) text += chunk.text;
    expect(text).toBe(CITY);
    let merged: AIMessageChunk | undefined;
    const tools = model.bindTools([weather]);
    for await (const chunk of await tools.stream(`W? ${fakeScript(hermesCall({ city: CITY }))}`)) {
      merged = merged === undefined ? chunk : merged.concat(chunk);
    }
    expect(merged?.tool_calls?.map((c) => c.args)).toEqual([{ city: CITY }]);
    expect(logged).toEqual([]);
  });
});

describe('ChatTriton errors in the caller words', () => {
  let fake: FakeTriton;
  beforeAll(async () => {
    fake = await startFakeTriton({ itlMs: 0 });
  });
  afterAll(async () => {
    await fake.close();
  });

  it('an unknown model: invoke and stream lead with the call, the SDK steps stay in cause', async () => {
    const model = new ChatTriton({ grpcUrl: fake.grpcUrl, model: 'ensembel', maxRetries: 0 });
    try {
      const err = await model.invoke('x').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TritonLlmError);
      expect((err as TritonLlmError).code).toBe('not_found');
      expect((err as Error).message).toMatch(/^ChatTriton\.invoke on 'ensembel' failed: /);
      expect((err as Error).message).not.toMatch(/schema|ModelConfig/);
      expect(((err as Error).cause as Error).message).toMatch(/^schema on 'ensembel' failed: /);
      const streamed = await (async () => {
        for await (const _ of await model.stream('x')) {
          // nothing arrives
        }
      })().catch((e: unknown) => e);
      expect((streamed as Error).message).toMatch(/^ChatTriton\.stream on 'ensembel' failed: /);
    } finally {
      await model.close();
    }
  });

  it('a gRPC URL that is an HTTP endpoint: the hint names httpUrl, not an SDK function', async () => {
    const model = new ChatTriton({ grpcUrl: fake.httpUrl, maxRetries: 0, retry: { attempts: 1 } });
    try {
      const err = await model.invoke('x').catch((e: unknown) => e);
      expect((err as Error).message).toMatch(
        /^ChatTriton\.invoke on 'ensemble' failed: .*the address speaks HTTP: give it as httpUrl$/,
      );
      expect((err as Error).message).not.toContain('httpTransport');
    } finally {
      await model.close();
    }
  });
});
