import { ModelAbortError } from '@langchain/core/errors';
import type { AIMessageChunk, UsageMetadata } from '@langchain/core/messages';
import { ChatPromptTemplate } from '@langchain/core/prompts';
import { tool } from '@langchain/core/tools';
import { toJsonSchema } from '@langchain/core/utils/json_schema';
import { ChatTriton } from '@trtllm/langchain';
import type { EarlyStopReport } from '@trtllm/sdk';
import { fakeScript, fakeTokenizer, generateTokens, jsonSchemaInstance } from '@trtllm/testing';
import { loadChatTemplate } from '@trtllm/tokenizers';
import { createAgent } from 'langchain';
import { afterAll, expect, it } from 'vitest';
import { z } from 'zod';
import { useChatModels } from './front-ends.js';
import { describeEachServer, useServer } from './servers.js';
import { OPENAI_TOOLS, TOOL_MODEL, TOOL_SCRIPTS } from './tool-scripts.js';

const quiet = { warn: () => undefined };
const MAX = 2000;
let nextId = 9_100_000;

const generated = (prompt: string, maxTokens: number): string =>
  fakeTokenizer.decode(generateTokens(fakeTokenizer.encode(prompt), { maxTokens })[0]!.tokens);

// The LangChain.js chat model in a chain, in front of each Triton over each protocol.
describeEachServer('LangChain ChatTriton: %s Triton over %s', (kind, protocol) => {
  const server = useServer(kind);
  const chatModel = useChatModels(server, protocol);

  it('a prompt template piped into the model streams the exact text, token by token through callbacks', async () => {
    const chain = ChatPromptTemplate.fromMessages([
      ['system', 'You are terse.'],
      ['human', 'Tell me about {topic}'],
    ]).pipe(chatModel('tensorrt_llm_bls', 32));
    const tokens: string[] = [];
    const chunks: string[] = [];
    let finish: unknown;
    let outputTokens: number | undefined;
    const stream = await chain.stream(
      { topic: 'ML' },
      { callbacks: [{ handleLLMNewToken: (token: string) => void tokens.push(token) }] },
    );
    for await (const chunk of stream) {
      chunks.push(chunk.text);
      finish = chunk.response_metadata.finish_reason ?? finish;
      const usage = chunk.usage_metadata as UsageMetadata | undefined;
      outputTokens = usage?.output_tokens ?? outputTokens;
    }
    const prompt = (await loadChatTemplate({ choice: 'chatml' })).render([
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Tell me about ML' },
    ]);
    // Cut by maxTokens inside a character: its remnant is dropped, as OpenAI and vLLM do.
    expect(chunks.join('')).toBe(generated(prompt, 32).replace(/\uFFFD$/u, ''));
    expect(chunks.filter((c) => c !== '').length).toBeGreaterThan(1);
    expect(tokens).toEqual(chunks.filter((c) => c !== ''));
    expect(finish).toBe('length');
    expect(outputTokens).toBe(32);
  });

  it('a scripted reply passes through the ensemble and the chat template unchanged', async () => {
    const reply = 'Machine learning finds patterns in data.';
    const message = await chatModel('ensemble', 64).invoke([
      ['human', `Hi ${fakeScript('Hello.')}`],
      ['ai', 'Hello.'],
      ['human', `What is ML? ${fakeScript(reply)}`],
    ]);
    expect(message.content).toBe(reply);
    expect(message.response_metadata.finish_reason).toBe('stop');
  });

  it('withStructuredOutput: a zod schema through guided decoding comes back as the parsed object', async () => {
    const Answer = z.object({ topic: z.string(), confidence: z.number(), tags: z.array(z.string()) });
    const answer = await chatModel('tensorrt_llm_bls', 200)
      .withStructuredOutput(Answer)
      .invoke('Classify: models learn patterns from data.');
    expect(answer).toEqual(jsonSchemaInstance(toJsonSchema(Answer)));
  });

  it('AbortSignal ends a stream of the raw model, and the model stops generating', async () => {
    const id = String(nextId++);
    const controller = new AbortController();
    let report!: (err: unknown) => void;
    const callbackError = new Promise<unknown>((r) => {
      report = r;
    });
    const stream = await chatModel('tensorrt_llm', MAX).stream('What is ML?', {
      signal: controller.signal,
      requestId: id,
      // LangChain may also report its own AbortError; the SDK's report is in the ModelAbortError.
      callbacks: [{ handleLLMError: (err: unknown) => ModelAbortError.isInstance(err) && report(err) }],
    });
    let text = '';
    await expect(
      (async () => {
        for await (const chunk of stream) {
          text += chunk.text;
          if (text.length > 0) controller.abort();
        }
      })(),
    ).rejects.toThrow(/abort/i);
    const end = await server().waitForEvent(
      (e) => e.id === id && e.model === 'tensorrt_llm' && e.event !== 'received',
      20_000,
    );
    // gRPC cancels the call; HTTP sends the in-band stop first (README "Ending a request early").
    expect(end.event).toBe(protocol === 'grpc' ? 'cancelled' : 'stopped');
    expect(end.tokens).toBeLessThan(MAX);
    const err = await callbackError;
    expect(ModelAbortError.isInstance(err)).toBe(true);
    expect((err as ModelAbortError).partialOutput?.response_metadata.early_stop).toMatchObject({
      trigger: 'abort',
      serverTold: true,
      serverStopsGenerating: true,
    });
  });

  it('AbortSignal on the ensemble: the partial reply says the server keeps generating, and it does', async () => {
    const id = String(nextId++);
    const controller = new AbortController();
    const maxTokens = 80;
    // invoke generates the ensemble's reply whole (its streamed text is lossy), so no token
    // arrives before the end: the abort follows the request's arrival at the model instead.
    const call = chatModel('ensemble', maxTokens).invoke('What is ML?', {
      signal: controller.signal,
      requestId: id,
    });
    await server().waitForEvent((e) => e.id === id && e.model === 'tensorrt_llm' && e.event === 'received');
    controller.abort();
    const err = await call.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(ModelAbortError.isInstance(err)).toBe(true);
    const metadata = (err as ModelAbortError).partialOutput?.response_metadata;
    expect(metadata?.finish_reason).toBe('cancelled');
    expect(metadata?.early_stop as EarlyStopReport).toMatchObject({
      trigger: 'abort',
      serverTold: true,
      serverStopsGenerating: false,
    });
    const inner = await server().waitForEvent(
      (e) => e.id === id && e.model === 'tensorrt_llm' && e.event !== 'received',
      20_000,
    );
    expect(inner).toMatchObject({ event: 'completed', tokens: maxTokens });
  });
});

// Tool calls read by ChatTriton itself, straight from Triton: the shared scripts, and a LangChain agent.
describeEachServer('LangChain ChatTriton tool calls: %s Triton over %s', (kind, protocol) => {
  const server = useServer(kind);
  const models: ChatTriton[] = [];
  afterAll(() => Promise.all(models.map((m) => m.close())));
  const chatModel = (template: 'chatml' | 'llama3'): ChatTriton => {
    const m = new ChatTriton({
      transport: server().transport(protocol),
      model: TOOL_MODEL,
      tokenizer: fakeTokenizer,
      chatTemplate: template,
      maxTokens: 512,
      logger: quiet,
    });
    models.push(m);
    return m;
  };
  const tools = OPENAI_TOOLS;

  it.each(TOOL_SCRIPTS)('$name: invoke and stream read the same text and calls', async (script) => {
    const model = chatModel(script.template).bindTools(tools);
    const prompt = `Go. ${fakeScript(script.text)}`;
    const whole = await model.invoke(prompt);
    let merged: AIMessageChunk | undefined;
    for await (const chunk of await model.stream(prompt)) merged = merged?.concat(chunk) ?? chunk;
    for (const message of [whole, merged!]) {
      expect(message.content).toBe(script.content);
      expect((message.tool_calls ?? []).map((c) => [c.name, c.args])).toEqual(script.calls);
    }
  });

  it('createAgent runs the tool and answers, with no OpenAI-compatible server between', async () => {
    const seen: unknown[] = [];
    const answer = 'Paris is sunny and 21 C.';
    const weather = tool(
      async (input) => {
        seen.push(input);
        return `sunny, 21 C ${fakeScript(answer)}`;
      },
      { name: 'get_weather', description: 'Weather in a city', schema: z.object({ city: z.string() }) },
    );
    const agent = createAgent({ model: chatModel('chatml'), tools: [weather] });
    const result = await agent.invoke({
      messages: [{ role: 'user', content: `Weather in Paris? ${fakeScript(TOOL_SCRIPTS[0]!.text)}` }],
    });
    expect(seen).toEqual([{ city: 'Paris' }]);
    expect(result.messages.map((m) => m.getType())).toEqual(['human', 'ai', 'tool', 'ai']);
    expect(result.messages.at(-1)!.content).toBe(answer);
  });
});
