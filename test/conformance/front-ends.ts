import type { TritonProvider } from '@trtllm/ai-sdk';
import { ChatTriton } from '@trtllm/langchain';
import { createOpenAiServer } from '@trtllm/openai';
import { fakeTokenizer } from '@trtllm/testing';
import { streamText } from 'ai';
import OpenAI from 'openai';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { afterAll, beforeAll } from 'vitest';
import type { ConformanceServer, Protocol } from './servers.js';

const quiet = { warn: () => undefined };

/**
 * trtllm-openai serving `model` (ChatML, the fake tokenizer) in front of the server, started for
 * the block and closed after it: the official `openai` client on it.
 */
export function useOpenAiFrontEnd(
  server: () => ConformanceServer,
  protocol: Protocol,
  model: string,
): () => OpenAI {
  let close: (() => Promise<void>) | undefined;
  let client: OpenAI | undefined;
  beforeAll(async () => {
    const api = createOpenAiServer({
      transport: server().transport(protocol),
      model,
      tokenizer: fakeTokenizer,
      chatTemplate: 'chatml',
      logger: quiet,
    });
    const url = await api.listen(0, '127.0.0.1');
    close = () => api.close();
    client = new OpenAI({ baseURL: url, apiKey: 'unused', maxRetries: 0 });
  });
  afterAll(() => close?.());
  return () => {
    if (client === undefined) throw new Error('trtllm-openai not started');
    return client;
  };
}

/** LangChain chat models (ChatML, the fake tokenizer) on the server, closed after the block. */
export function useChatModels(
  server: () => ConformanceServer,
  protocol: Protocol,
): (model: string, maxTokens: number) => ChatTriton {
  const models: ChatTriton[] = [];
  afterAll(() => Promise.all(models.map((m) => m.close())));
  return (model, maxTokens) => {
    const m = new ChatTriton({
      transport: server().transport(protocol),
      model,
      tokenizer: fakeTokenizer,
      chatTemplate: 'chatml',
      maxTokens,
      logger: quiet,
    });
    models.push(m);
    return m;
  };
}

/** Streams 'What is ML?' through the AI SDK as request `requestId`, aborting after the third delta. */
export async function abortStreamTextAfterThree(
  triton: TritonProvider,
  model: string,
  maxOutputTokens: number,
  requestId: string,
): Promise<void> {
  const controller = new AbortController();
  const result = streamText({
    model: triton(model),
    prompt: 'What is ML?',
    maxOutputTokens,
    abortSignal: controller.signal,
    providerOptions: { trtllm: { requestId } },
  });
  let deltas = 0;
  for await (const _ of result.textStream) if (++deltas === 3) controller.abort();
}

/** A streamed chat completion's text, joined, and its last finish reason. */
export async function chatStreamed(
  stream: AsyncIterable<ChatCompletionChunk>,
): Promise<{ text: string; finish: string | null | undefined }> {
  let text = '';
  let finish: string | null | undefined;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta.content ?? '';
    finish = chunk.choices[0]?.finish_reason ?? finish;
  }
  return { text, finish };
}
