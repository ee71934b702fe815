import { createTriton, type TritonProvider } from '@trtllm/ai-sdk';
import type { GenerationEvent } from '@trtllm/sdk';
import { decode, encode, fakeScript, fakeTokenizer, generateTokens } from '@trtllm/testing';
import {
  generateObject,
  generateText,
  isStepCount,
  type JSONSchema7,
  jsonSchema,
  streamText,
  tool,
  UnsupportedFunctionalityError,
} from 'ai';
import { beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { abortStreamTextAfterThree } from './front-ends.js';
import { describeEachServer, useServer } from './servers.js';
import { TOOL_MODEL, TOOL_PARAMETERS, TOOL_SCRIPTS } from './tool-scripts.js';

(globalThis as { AI_SDK_LOG_WARNINGS?: unknown }).AI_SDK_LOG_WARNINGS = false;

/** The provider's default template (ChatML) around one user turn. */
const chatml = (user: string): string => `<|im_start|>user\n${user}<|im_end|>\n<|im_start|>assistant\n`;
const generated = (prompt: string, maxTokens: number): readonly number[] =>
  generateTokens(encode(prompt), { maxTokens })[0]!.tokens;

const MAX = 400;
// Request ids are numeric (the raw model's stop path) and new on every run: the real server's event log persists.
let nextId = Math.floor(Math.random() * 1e9);
const freshId = (): string => String(++nextId);

const schema = z.object({
  name: z.string(),
  kind: z.enum(['tool', 'model']),
  version: z.number().min(3),
  stable: z.boolean(),
  tags: z.array(z.string()).min(2),
});
/** GENERATOR.md "Guided decoding": properties in order, first enum value, strings "text", minimum, true, minItems items. */
const INSTANCE = { name: 'text', kind: 'tool', version: 3, stable: true, tags: ['text', 'text'] };

// The AI SDK provider driven by the real `ai` package, on both servers over both transports.
describeEachServer('AI SDK provider: %s Triton over %s', (kind, protocol) => {
  const server = useServer(kind);
  let triton: TritonProvider;
  const events: GenerationEvent[] = [];
  const warnings: string[] = [];
  beforeAll(() => {
    triton = createTriton({
      transport: server().transport(protocol),
      tokenizer: fakeTokenizer,
      onEvent: (e) => events.push(e),
      logger: { warn: (m) => warnings.push(m) },
    });
  });

  it('generateText returns the generator text with finish length and usage', async () => {
    const r = await generateText({
      model: triton('tensorrt_llm_bls'),
      prompt: 'What is ML?',
      maxOutputTokens: 16,
    });
    expect(r.text).toBe(decode(generated(chatml('What is ML?'), 16)));
    expect(r.finishReason).toBe('length');
    expect(r.usage.outputTokens).toBe(16);
  });

  it('streamText streams the ensemble text token by token', async () => {
    const result = streamText({ model: triton('ensemble'), prompt: 'Hello world', maxOutputTokens: 24 });
    let text = '';
    for await (const delta of result.textStream) text += delta;
    // The ensemble decodes each streamed token alone (GENERATOR.md "Responses").
    expect(text).toBe(
      generated(chatml('Hello world'), 24)
        .map((t) => decode([t]))
        .join(''),
    );
    expect(await result.finishReason).toBe('length');
  });

  it('streamText on the raw model with a tokenizer gives the scripted text exactly', async () => {
    const script = 'Machine learning 🤖 机器学习.';
    const result = streamText({
      model: triton('tensorrt_llm'),
      prompt: `Say it ${fakeScript(script)}`,
      maxOutputTokens: 200,
    });
    let text = '';
    for await (const delta of result.textStream) text += delta;
    expect(text).toBe(script);
    expect(await result.finishReason).toBe('stop');
  });

  async function abortAfterThree(model: string): Promise<string> {
    const requestId = freshId();
    await abortStreamTextAfterThree(triton, model, MAX, requestId);
    return requestId;
  }

  it('aborting streamText mid-stream stops the raw model on the server', async () => {
    const id = await abortAfterThree('tensorrt_llm');
    const seen = await server().waitForEvent(
      (e) => e.id === id && e.model === 'tensorrt_llm' && e.event !== 'received',
      20_000,
    );
    expect(['cancelled', 'stopped']).toContain(seen.event);
    expect(seen.tokens).toBeLessThan(MAX);
  });

  it('aborting the ensemble is reported as the SDK reports it, and the server runs on to max tokens', async () => {
    const id = await abortAfterThree('ensemble');
    const inner = await server().waitForEvent(
      (e) => e.id === id && e.model === 'tensorrt_llm' && e.event !== 'received',
      20_000,
    );
    expect(inner.event).toBe('completed');
    expect(inner.tokens).toBe(MAX);
    const end = events.find((e) => e.type === 'end' && e.requestId === id);
    expect(end?.type === 'end' && end.result.earlyStop).toMatchObject({
      trigger: 'abort',
      serverTold: true,
      serverStopsGenerating: false,
    });
    expect(warnings.some((w) => w.includes("'ensemble'"))).toBe(true);
  });

  it('generateObject with a zod schema goes through guided decoding', async () => {
    const requestId = freshId();
    const { object } = await generateObject({
      model: triton('ensemble'),
      schema,
      prompt: 'Describe the SDK.',
      maxOutputTokens: 200,
      providerOptions: { trtllm: { requestId } },
    });
    expect(object).toEqual(INSTANCE);
    const received = await server().waitForEvent(
      (e) => e.id === requestId && e.model === 'tensorrt_llm' && e.event === 'received',
    );
    expect(received.guide).toBe('json_schema');
  });

  it('generateObject on a model without guided decoding is a clear error', async () => {
    await expect(
      generateObject({ model: triton('llmapi'), schema, prompt: 'Describe the SDK.', maxRetries: 0 }),
    ).rejects.toSatisfy(
      (err: unknown) =>
        UnsupportedFunctionalityError.isInstance(err) && err.message.includes('guided_decoding_guide_type'),
    );
  });
});

// Tool calls read by the provider itself, straight from Triton: the shared scripts, and an agent loop.
describeEachServer('AI SDK provider tool calls: %s Triton over %s', (kind, protocol) => {
  const server = useServer(kind);
  const providers: Partial<Record<'chatml' | 'llama3', TritonProvider>> = {};
  const provider = (template: 'chatml' | 'llama3'): TritonProvider => {
    providers[template] ??= createTriton({
      transport: server().transport(protocol),
      tokenizer: fakeTokenizer,
      chatTemplate: template,
      logger: { warn: () => undefined },
    });
    return providers[template]!;
  };
  // Each step runs at most once (the default stopWhen): the results are not read back here.
  const tools = {
    get_weather: tool({
      description: 'Weather in a city',
      inputSchema: jsonSchema<Record<string, unknown>>(TOOL_PARAMETERS.get_weather as JSONSchema7),
      execute: async () => 'ok',
    }),
    get_time: tool({
      description: 'Time in a zone',
      inputSchema: jsonSchema<Record<string, unknown>>(TOOL_PARAMETERS.get_time as JSONSchema7),
      execute: async () => 'ok',
    }),
  };

  it.each(TOOL_SCRIPTS)('$name: generateText and streamText read the same text and calls', async (script) => {
    const options = {
      model: provider(script.template)(TOOL_MODEL),
      prompt: `Go. ${fakeScript(script.text)}`,
      tools,
      maxRetries: 0,
    };
    const whole = await generateText(options);
    const streamed = streamText(options);
    let text = '';
    for await (const piece of streamed.textStream) text += piece;
    for (const [content, calls, finish] of [
      [whole.text, whole.toolCalls, whole.finishReason],
      [text, await streamed.toolCalls, await streamed.finishReason],
    ] as const) {
      expect(content).toBe(script.content);
      expect(calls.map((c) => [c.toolName, c.input])).toEqual(script.calls);
      expect(finish).toBe(script.calls.length > 0 ? 'tool-calls' : 'stop');
    }
  });

  it('generateText with stopWhen runs the tool and answers, with no OpenAI-compatible server between', async () => {
    const seen: unknown[] = [];
    const answer = 'Paris is sunny and 21 C.';
    const result = await generateText({
      model: provider('chatml')(TOOL_MODEL),
      prompt: `Weather in Paris? ${fakeScript(TOOL_SCRIPTS[0]!.text)}`,
      tools: {
        get_weather: tool({
          description: 'Weather in a city',
          inputSchema: jsonSchema<{ city: string }>(TOOL_PARAMETERS.get_weather as JSONSchema7),
          execute: async (input) => {
            seen.push(input);
            return `sunny, 21 C ${fakeScript(answer)}`;
          },
        }),
      },
      stopWhen: isStepCount(3),
      maxRetries: 0,
    });
    expect(seen).toEqual([{ city: 'Paris' }]);
    expect(result.steps.map((s) => s.finishReason)).toEqual(['tool-calls', 'stop']);
    expect(result.text).toBe(answer);
  });
});
