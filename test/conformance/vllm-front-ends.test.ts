import { createTriton, type TritonProvider } from '@trtllm/ai-sdk';
import type { GenerationEvent } from '@trtllm/sdk';
import {
  type FakeEvent,
  fakeTokenizer,
  generateTokens,
  jsonSchemaInstance,
  tokenLogProb,
} from '@trtllm/testing';
import { generateObject, generateText, streamText } from 'ai';
import { beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { expectedVllm, vllmText } from '../support/vllm.js';
import { abortStreamTextAfterThree, chatStreamed, useChatModels, useOpenAiFrontEnd } from './front-ends.js';
import { describeEachServer, type ServerKind, useServer } from './servers.js';
import { OPENAI_TOOLS, TOOL_PARAMETERS } from './tool-scripts.js';

(globalThis as { AI_SDK_LOG_WARNINGS?: unknown }).AI_SDK_LOG_WARNINGS = false;

// trtllm-openai, the AI SDK provider and LangChain in front of Triton's vLLM backend: the fake's
// `vllm` model and the real Triton's stand-in (test/triton/fakegen/vllm_model.py).
const MODEL = 'vllm';
const MAX = 2000;
const quiet = { warn: () => undefined };

/** The generator's text for `prompt` as vLLM shows it: no part of a character cut off at the end. */
const expected = (prompt: string, maxTokens: number): string =>
  vllmText(expectedVllm(prompt, { maxTokens }).tokens);
/** The front ends' default chat template (ChatML) around one user turn. */
const chatml = (user: string): string => `<|im_start|>user\n${user}<|im_end|>\n<|im_start|>assistant\n`;

/** The end of the vLLM request that started after `before` (the events seen then), once logged. */
async function endOfNewRequest(
  server: () => {
    events(): FakeEvent[];
    waitForEvent(m: (e: FakeEvent) => boolean, t?: number): Promise<FakeEvent>;
  },
  before: ReadonlySet<string>,
): Promise<FakeEvent> {
  const started = await server().waitForEvent(
    (e) => e.model === MODEL && e.event === 'received' && !before.has(e.id),
    10_000,
  );
  return server().waitForEvent((e) => e.id === started.id && e.event !== 'received', 10_000);
}
const idsSoFar = (server: () => { events(): FakeEvent[] }): Set<string> =>
  new Set(
    server()
      .events()
      .map((e) => e.id),
  );

describeEachServer('trtllm-openai on vLLM: %s Triton over %s', (kind: ServerKind, protocol) => {
  const server = useServer(kind);
  const client = useOpenAiFrontEnd(server, protocol, MODEL);

  it('completes a prompt with usage and finish reason length', async () => {
    const r = await client().completions.create({ model: MODEL, prompt: 'Hello world', max_tokens: 20 });
    expect(r.choices[0]?.text).toBe(expected('Hello world', 20));
    expect(r.choices[0]?.finish_reason).toBe('length');
    expect(r.usage).toMatchObject({
      prompt_tokens: fakeTokenizer.encode('Hello world').length,
      completion_tokens: 20,
    });
  });

  it('streams a chat completion to [DONE], equal to the whole answer', async () => {
    const request = {
      model: MODEL,
      messages: [{ role: 'user' as const, content: 'What is ML?' }],
      max_tokens: 30,
    };
    const whole = await client().chat.completions.create(request);
    expect(whole.choices[0]?.message.content).toBe(expected(chatml('What is ML?'), 30));
    const stream = await client().chat.completions.create({ ...request, stream: true });
    const { text, finish } = await chatStreamed(stream);
    expect(text).toBe(whole.choices[0]?.message.content);
    expect(finish).toBe('length');
  });

  it('returns log probs with the top alternatives vLLM ranks, chat and completions', async () => {
    const prompt = chatml('What is ML?');
    const tokens = generateTokens(fakeTokenizer.encode(prompt), { maxTokens: 5 })[0]!.tokens;
    const chat = await client().chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'What is ML?' }],
      max_tokens: 5,
      logprobs: true,
      top_logprobs: 2,
    });
    const content = chat.choices[0]?.logprobs?.content ?? [];
    expect(content.map((t) => t.logprob)).toEqual(tokens.map(tokenLogProb));
    content.forEach((t, i) => {
      expect(t.top_logprobs).toHaveLength(2);
      expect(t.top_logprobs[0]!.logprob).toBeGreaterThanOrEqual(t.top_logprobs[1]!.logprob);
      // GENERATOR.md's vLLM maps: the sampled token ranks 1 + (id mod 3), so it is among the top 2 or not.
      const sampledRank = 1 + (tokens[i]! % 3);
      expect(t.top_logprobs.some((a) => a.token === t.token && a.logprob === t.logprob)).toBe(
        sampledRank <= 2,
      );
    });
    const legacy = await client().completions.create({
      model: MODEL,
      prompt: 'Hello world',
      max_tokens: 4,
      logprobs: 3,
    });
    const top = legacy.choices[0]?.logprobs?.top_logprobs ?? [];
    expect(top.map((entry) => Object.keys(entry ?? {}).length)).toEqual([3, 3, 3, 3]);
  });

  it('response_format json_schema answers the schema instance, through vLLM structured outputs', async () => {
    const schema = {
      type: 'object',
      properties: { city: { type: 'string' }, n: { type: 'integer', minimum: 2 } },
      required: ['city', 'n'],
    };
    const r = await client().chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'A city?' }],
      max_tokens: 200,
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema } },
    });
    expect(JSON.parse(r.choices[0]?.message.content ?? '')).toEqual(jsonSchemaInstance(schema));
  });

  it('tool_choice required is guided decoding of the call, read back as the call', async () => {
    const before = idsSoFar(server);
    const r = await client().chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Any city.' }],
      tools: OPENAI_TOOLS,
      tool_choice: 'required',
      max_tokens: 200,
    });
    const call = r.choices[0]!.message.tool_calls?.[0] as { function: { name: string; arguments: string } };
    expect(call.function).toEqual({
      name: 'get_weather',
      arguments: JSON.stringify(jsonSchemaInstance(TOOL_PARAMETERS.get_weather)),
    });
    expect(r.choices[0]!.finish_reason).toBe('tool_calls');
    // vLLM's structured output kind for a JSON schema is `json`.
    const received = await server().waitForEvent(
      (e) => e.model === MODEL && e.event === 'received' && !before.has(e.id),
    );
    expect(received.guide).toBe('json');
  });

  it('a client that leaves a stream cancels the request on the server', async () => {
    const before = idsSoFar(server);
    const stream = await client().chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'What is ML?' }],
      max_tokens: MAX,
      stream: true,
    });
    let chunks = 0;
    // Leaving the loop closes the response; trtllm-openai then cancels its Triton request.
    for await (const _ of stream) if (++chunks === 3) break;
    const end = await endOfNewRequest(server, before);
    expect([end.event, end.tokens < MAX]).toEqual(['cancelled', true]);
  });
});

describeEachServer('AI SDK provider on vLLM: %s Triton over %s', (kind, protocol) => {
  const server = useServer(kind);
  let triton: TritonProvider;
  const events: GenerationEvent[] = [];
  beforeAll(() => {
    triton = createTriton({
      transport: server().transport(protocol),
      tokenizer: fakeTokenizer,
      onEvent: (e) => events.push(e),
      logger: quiet,
    });
  });

  it('generateText returns the text with finish length and usage', async () => {
    const r = await generateText({ model: triton(MODEL), prompt: 'What is ML?', maxOutputTokens: 16 });
    expect(r.text).toBe(expected(chatml('What is ML?'), 16));
    expect(r.finishReason).toBe('length');
    expect(r.usage.outputTokens).toBe(16);
    expect(r.usage.inputTokens).toBe(fakeTokenizer.encode(chatml('What is ML?')).length);
  });

  it('streamText streams the same text', async () => {
    const result = streamText({ model: triton(MODEL), prompt: 'What is ML?', maxOutputTokens: 16 });
    let text = '';
    for await (const delta of result.textStream) text += delta;
    expect(text).toBe(expected(chatml('What is ML?'), 16));
    expect(await result.finishReason).toBe('length');
  });

  it('generateObject answers the schema instance, through vLLM structured outputs', async () => {
    const schema = z.object({
      name: z.string(),
      version: z.number().min(3),
      tags: z.array(z.string()).min(2),
    });
    const r = await generateObject({
      model: triton(MODEL),
      schema,
      prompt: 'Describe a tool.',
      maxOutputTokens: 200,
    });
    expect(r.object).toEqual({ name: 'text', version: 3, tags: ['text', 'text'] });
  });

  it('aborting streamText cancels the request on the server', async () => {
    const requestId = `vllm-ai-sdk-abort-${kind}-${protocol}-${Date.now()}`;
    await abortStreamTextAfterThree(triton, MODEL, MAX, requestId);
    const end = await server().waitForEvent((e) => e.id === requestId && e.event !== 'received', 10_000);
    expect([end.event, end.tokens < MAX]).toEqual(['cancelled', true]);
  });
});

describeEachServer('LangChain ChatTriton on vLLM: %s Triton over %s', (kind, protocol) => {
  const server = useServer(kind);
  const chatModels = useChatModels(server, protocol);
  const chatModel = (maxTokens: number) => chatModels(MODEL, maxTokens);

  it('invoke answers the text with usage and finish reason', async () => {
    const message = await chatModel(12).invoke('What is ML?');
    expect(message.text).toBe(expected(chatml('What is ML?'), 12));
    expect((message.usage_metadata as { output_tokens?: number } | undefined)?.output_tokens).toBe(12);
    expect(message.response_metadata.finish_reason).toBe('length');
  });

  it('stream yields chunks that add up to the same text', async () => {
    let text = '';
    let chunks = 0;
    for await (const chunk of await chatModel(12).stream('What is ML?')) {
      text += chunk.text;
      chunks += 1;
    }
    expect(chunks).toBeGreaterThan(1);
    expect(text).toBe(expected(chatml('What is ML?'), 12));
  });

  it('an abort cancels the request on the server', async () => {
    const before = idsSoFar(server);
    const controller = new AbortController();
    await expect(
      (async () => {
        let text = '';
        for await (const chunk of await chatModel(MAX).stream('What is ML?', { signal: controller.signal })) {
          text += chunk.text;
          if (text.length > 0) controller.abort();
        }
      })(),
    ).rejects.toThrow(/abort/i);
    const end = await endOfNewRequest(server, before);
    expect([end.event, end.tokens < MAX]).toEqual(['cancelled', true]);
  });
});
