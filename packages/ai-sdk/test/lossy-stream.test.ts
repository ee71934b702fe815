import { createTriton, type TritonProvider } from '@trtllm/ai-sdk';
import { TritonLlmError } from '@trtllm/sdk';
import { type FakeTriton, fakeScript, startFakeTriton } from '@trtllm/testing';
import { generateText, Output, streamObject, streamText, tool } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';

(globalThis as { AI_SDK_LOG_WARNINGS?: unknown }).AI_SDK_LOG_WARNINGS = false;

// "ü" is two byte tokens of the fake's vocabulary and each CJK character three: streamed by the
// ensemble, which decodes each token alone, every one of them arrives as U+FFFD (GENERATOR.md).
const CITY = 'Zürich 北京';
const hermesCall = (args: object) =>
  `<tool_call>\n${JSON.stringify({ name: 'get_weather', arguments: args })}\n</tool_call>`;
const weather = (seen: unknown[]) => ({
  get_weather: tool({
    description: 'Weather in a city',
    inputSchema: z.object({ city: z.string() }),
    execute: async (input) => {
      seen.push(input);
      return 'sunny';
    },
  }),
});
const warningTexts = (warnings: readonly { type: string; message?: string }[] | undefined) =>
  (warnings ?? []).flatMap((w) => (w.type === 'other' && w.message !== undefined ? [w.message] : []));

describe.each(['grpc', 'http'] as const)('AI SDK streaming on a lossy flavor over %s', (protocol) => {
  let fake: FakeTriton;
  let triton: TritonProvider;
  beforeAll(async () => {
    fake = await startFakeTriton({ itlMs: 0 });
    triton = createTriton(protocol === 'grpc' ? { grpcUrl: fake.grpcUrl } : { httpUrl: fake.httpUrl });
  });
  afterAll(async () => {
    await triton.close();
    await fake.close();
  });

  it('streamText with tools on ensemble runs the tool with exactly the arguments the model wrote', async () => {
    const seen: unknown[] = [];
    const result = streamText({
      model: triton('ensemble'),
      prompt: `Weather? ${fakeScript(hermesCall({ city: CITY }))}`,
      tools: weather(seen),
    });
    let deltas = '';
    for await (const part of result.fullStream) if (part.type === 'tool-input-delta') deltas += part.delta;
    expect(seen).toEqual([{ city: CITY }]);
    expect(JSON.parse(deltas)).toEqual({ city: CITY });
    expect((await result.toolCalls).map((c) => c.input)).toEqual([{ city: CITY }]);
    // Why the output came at once, and what streams it: said once.
    const said = warningTexts(await result.warnings);
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/^Streamed call on 'ensemble': tool calls and JSON output need the exact text/);
    expect(said[0]).toContain('accumulate_tokens');
  });

  it('streamText with Output.object on ensemble gives the exact object', async () => {
    const object = { city: CITY, note: '🤖 daß' };
    const result = streamText({
      model: triton('ensemble'),
      output: Output.object({ schema: z.object({ city: z.string(), note: z.string() }) }),
      prompt: `Describe. ${fakeScript(JSON.stringify(object))}`,
    });
    expect(await result.output).toEqual(object);
    expect(warningTexts(await result.warnings)).toHaveLength(1);
  });

  // The provider cannot tell streamObject from streamText (both reach it as one doStream with a
  // JSON responseFormat), so the warning names the streamed call and the model, never a function.
  it('streamObject on ensemble gives the exact object, every partial free of U+FFFD, and one warning', async () => {
    const object = { city: CITY, note: '🤖 daß' };
    fake.clearEvents();
    const result = streamObject({
      model: triton('ensemble'),
      schema: z.object({ city: z.string(), note: z.string() }),
      prompt: `Describe. ${fakeScript(JSON.stringify(object))}`,
    });
    const partials: unknown[] = [];
    for await (const partial of result.partialObjectStream) partials.push(partial);
    expect(await result.object).toEqual(object);
    expect(partials.at(-1)).toEqual(object);
    for (const partial of partials) expect(JSON.stringify(partial)).not.toContain('\uFFFD');
    const said = warningTexts(await result.warnings);
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/^Streamed call on 'ensemble': tool calls and JSON output need the exact text/);
    expect(said[0]).toContain("'tensorrt_llm_bls' with accumulate_tokens: true");
    expect(said[0]).not.toContain('streamText');
    // The object's schema still reached the server as its guide.
    const received = fake.events().filter((e) => e.model === 'ensemble' && e.event === 'received');
    expect(received.map((e) => e.guide)).toEqual(['json_schema']);
  });

  it("streamObject with output 'array' on ensemble gives the exact elements", async () => {
    const elements = [{ city: CITY }, { city: 'Kraków 東京' }];
    const result = streamObject({
      model: triton('ensemble'),
      output: 'array',
      schema: z.object({ city: z.string() }),
      prompt: `List. ${fakeScript(JSON.stringify({ elements }))}`,
    });
    const seen: unknown[] = [];
    for await (const element of result.elementStream) seen.push(element);
    expect(seen).toEqual(elements);
    expect(await result.object).toEqual(elements);
    expect(warningTexts(await result.warnings)).toHaveLength(1);
  });

  it('streamObject on the BLS with accumulate_tokens streams the exact object with no warning', async () => {
    const object = { city: CITY, note: '🤖 daß' };
    const result = streamObject({
      model: triton('tensorrt_llm_bls'),
      schema: z.object({ city: z.string(), note: z.string() }),
      prompt: `Describe. ${fakeScript(JSON.stringify(object))}`,
    });
    const partials: unknown[] = [];
    for await (const partial of result.partialObjectStream) partials.push(partial);
    expect(await result.object).toEqual(object);
    // Streamed, not generated whole: the object grew over several partials.
    expect(partials.length).toBeGreaterThan(1);
    expect(warningTexts(await result.warnings)).toEqual([]);
  });

  it('streamed text with U+FFFD gets one warning naming the flavor that streams exactly', async () => {
    const result = streamText({ model: triton('ensemble'), prompt: `Say. ${fakeScript(CITY)}` });
    const text = await result.text;
    // Several lossy chunks, one warning.
    expect(text.match(/\uFFFD/gu)?.length).toBeGreaterThan(1);
    const said = warningTexts(await result.warnings);
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/^Streamed call on 'ensemble': the streamed text has U\+FFFD/);
    expect(said[0]).toContain("'tensorrt_llm_bls' with accumulate_tokens: true");
    expect((await result.providerMetadata)?.trtllm?.lossy).toBe(true);
  });

  it('exact streamed text (BLS with accumulate_tokens, or ASCII on ensemble) gets no warning', async () => {
    const bls = streamText({ model: triton('tensorrt_llm_bls'), prompt: `Say. ${fakeScript(CITY)}` });
    expect(await bls.text).toBe(CITY);
    expect(warningTexts(await bls.warnings)).toEqual([]);
    const ascii = streamText({ model: triton('ensemble'), prompt: `Say. ${fakeScript('plain words')}` });
    expect(await ascii.text).toBe('plain words');
    expect(warningTexts(await ascii.warnings)).toEqual([]);
  });

  it('tools on the BLS with accumulate_tokens still stream (no whole generation, no warning)', async () => {
    const seen: unknown[] = [];
    const result = streamText({
      model: triton('tensorrt_llm_bls'),
      prompt: `Weather? ${fakeScript(hermesCall({ city: CITY }))}`,
      tools: weather(seen),
    });
    await result.consumeStream();
    expect(seen).toEqual([{ city: CITY }]);
    expect(warningTexts(await result.warnings)).toEqual([]);
  });
});

describe('AI SDK errors in the caller words', () => {
  let fake: FakeTriton;
  beforeAll(async () => {
    fake = await startFakeTriton({ itlMs: 0 });
  });
  afterAll(async () => {
    await fake.close();
  });

  it('an unknown model: generateText and streamText lead with the call, the SDK steps stay in cause', async () => {
    const triton = createTriton({ grpcUrl: fake.grpcUrl });
    try {
      const whole = await generateText({ model: triton('ensembel'), prompt: 'x' }).catch((e: unknown) => e);
      expect(whole).toBeInstanceOf(TritonLlmError);
      const err = whole as TritonLlmError;
      expect(err.code).toBe('not_found');
      expect(err.message).toMatch(/^generateText on 'ensembel' failed: /);
      expect(err.message).not.toMatch(/schema|ModelConfig/);
      expect(err.operation).toBe('generateText');
      expect((err.cause as TritonLlmError).message).toMatch(/^schema on 'ensembel' failed: /);
      const errors: unknown[] = [];
      const streamed = streamText({
        model: triton('ensembel'),
        prompt: 'x',
        onError: ({ error }) => {
          errors.push(error);
        },
      });
      await streamed.consumeStream();
      expect(errors).toHaveLength(1);
      expect((errors[0] as Error).message).toMatch(/^streamText on 'ensembel' failed: /);
      expect((errors[0] as Error).message).not.toMatch(/schema|ModelConfig/);
    } finally {
      await triton.close();
    }
  });

  it('an HTTP URL that is a gRPC endpoint: the hint names grpcUrl, not an SDK function', async () => {
    const triton = createTriton({ httpUrl: fake.grpcUrl, retry: { attempts: 1 } });
    try {
      const err = await generateText({ model: triton('ensemble'), prompt: 'x' }).catch((e: unknown) => e);
      expect((err as TritonLlmError).endpointProtocol).toBe('grpc');
      expect((err as Error).message).toMatch(
        /^generateText on 'ensemble' failed: .*the address speaks gRPC: give it as grpcUrl$/,
      );
      expect((err as Error).message).not.toContain('Transport');
    } finally {
      await triton.close();
    }
  });

  it('a gRPC URL that is an HTTP endpoint: the hint names httpUrl, not an SDK function', async () => {
    const triton = createTriton({ grpcUrl: fake.httpUrl, retry: { attempts: 1 } });
    try {
      const err = await generateText({ model: triton('ensemble'), prompt: 'x' }).catch((e: unknown) => e);
      expect((err as Error).message).toMatch(
        /^generateText on 'ensemble' failed: .*the address speaks HTTP: give it as httpUrl$/,
      );
      expect((err as Error).message).not.toContain('httpTransport');
    } finally {
      await triton.close();
    }
  });
});
