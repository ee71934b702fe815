import { UnsupportedFunctionalityError } from '@ai-sdk/provider';
import { createTriton, type TritonProvider } from '@trtllm/ai-sdk';
import { type FakeTriton, startFakeTriton } from '@trtllm/testing';
import { generateObject, generateText, Output, streamText } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';

(globalThis as { AI_SDK_LOG_WARNINGS?: unknown }).AI_SDK_LOG_WARNINGS = false;

const schema = z.object({
  name: z.string(),
  kind: z.enum(['tool', 'model']),
  version: z.number().min(3),
  stable: z.boolean(),
  tags: z.array(z.string()).min(2),
});

/** GENERATOR.md "Guided decoding": properties in order, first enum value, strings "text", minimum, true, minItems items. */
const INSTANCE = { name: 'text', kind: 'tool', version: 3, stable: true, tags: ['text', 'text'] };

describe.each(['grpc', 'http'] as const)('AI SDK structured output over %s', (protocol) => {
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

  it('generateObject with a zod schema is generated under the schema by guided decoding', async () => {
    const { object } = await generateObject({
      model: triton('ensemble'),
      schema,
      prompt: 'Describe the SDK.',
      maxOutputTokens: 200,
      providerOptions: { trtllm: { requestId: protocol === 'grpc' ? '7001' : '7002' } },
    });
    expect(object).toEqual(INSTANCE);
    const received = fake
      .events()
      .find(
        (e) =>
          e.id === (protocol === 'grpc' ? '7001' : '7002') &&
          e.model === 'tensorrt_llm' &&
          e.event === 'received',
      );
    expect(received?.guide).toBe('json_schema');
  });

  it('Output.object with streamText streams the same object', async () => {
    const result = streamText({
      model: triton('tensorrt_llm_bls'),
      output: Output.object({ schema }),
      prompt: 'Describe the SDK.',
      maxOutputTokens: 200,
    });
    expect(await result.output).toEqual(INSTANCE);
  });

  it('JSON without a schema asks for guide type json, which gives {}', async () => {
    const { output } = await generateText({
      model: triton('ensemble'),
      output: Output.json(),
      prompt: 'Anything as JSON.',
      maxOutputTokens: 50,
    });
    expect(output).toEqual({});
  });

  it('a model without guided decoding refuses JSON output with a clear error, before generating', async () => {
    const before = fake.events().filter((e) => e.model === 'llmapi').length;
    const failure = generateObject({
      model: triton('llmapi'),
      schema,
      prompt: 'Describe the SDK.',
      maxRetries: 0,
    });
    await expect(failure).rejects.toSatisfy(
      (err: unknown) =>
        UnsupportedFunctionalityError.isInstance(err) &&
        err.message.includes("model 'llmapi'") &&
        err.message.includes('guided_decoding_guide_type'),
    );
    expect(fake.events().filter((e) => e.model === 'llmapi').length).toBe(before);
  });
});
