import { createTriton, type TritonProvider } from '@trtllm/ai-sdk';
import type { GenerationEvent } from '@trtllm/sdk';
import { type FakeTriton, fakeTokenizer, startFakeTriton } from '@trtllm/testing';
import { streamText } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

(globalThis as { AI_SDK_LOG_WARNINGS?: unknown }).AI_SDK_LOG_WARNINGS = false;

const MAX = 400;
let nextId = 900_000;

describe.each(['grpc', 'http'] as const)('AI SDK early end over %s', (protocol) => {
  let fake: FakeTriton;
  let triton: TritonProvider;
  const events: GenerationEvent[] = [];
  const listeners = new Set<(e: GenerationEvent) => void>();
  const onEvent = (e: GenerationEvent): void => {
    events.push(e);
    for (const listener of listeners) listener(e);
  };
  /** The SDK's `end` event of a request, now or when it comes. */
  const endOf = (id: string): Promise<GenerationEvent> =>
    new Promise((resolve) => {
      const match = (e: GenerationEvent): boolean => e.type === 'end' && e.requestId === id;
      const seen = events.find(match);
      if (seen !== undefined) return resolve(seen);
      const listener = (e: GenerationEvent): void => {
        if (!match(e)) return;
        listeners.delete(listener);
        resolve(e);
      };
      listeners.add(listener);
    });
  const warnings: string[] = [];
  beforeAll(async () => {
    fake = await startFakeTriton({ itlMs: 5 });
    triton = createTriton({
      ...(protocol === 'grpc' ? { grpcUrl: fake.grpcUrl } : { httpUrl: fake.httpUrl }),
      tokenizer: fakeTokenizer,
      onEvent,
      logger: { warn: (m) => warnings.push(m) },
    });
  });
  afterAll(async () => {
    await triton.close();
    await fake.close();
  });

  /** Streams until three deltas arrived, then aborts the call. */
  async function abortAfterThree(model: string): Promise<string> {
    const requestId = String(++nextId);
    const controller = new AbortController();
    const result = streamText({
      model: triton(model),
      prompt: 'What is ML?',
      maxOutputTokens: MAX,
      abortSignal: controller.signal,
      providerOptions: { trtllm: { requestId } },
    });
    let deltas = 0;
    for await (const _ of result.textStream) if (++deltas === 3) controller.abort();
    return requestId;
  }

  // The README's early-stop table: over gRPC a cancelled call; over HTTP an in-band stop, then the
  // disconnect, either of which the server may see first.
  const stoppedOnServer: readonly string[] = protocol === 'grpc' ? ['cancelled'] : ['stopped', 'cancelled'];

  it('aborting streamText on the raw model stops it on the server', async () => {
    const id = await abortAfterThree('tensorrt_llm');
    const seen = await fake.waitForEvent(
      (e) => e.id === id && e.model === 'tensorrt_llm' && e.event !== 'received',
    );
    expect(stoppedOnServer).toContain(seen.event);
    expect(seen.tokens).toBeLessThan(MAX);
  });

  it('cancelling the model stream (what the AI SDK does on abort) stops the raw model on the server', async () => {
    const requestId = String(++nextId);
    const { stream } = await triton('tensorrt_llm').doStream({
      prompt: [{ role: 'user', content: [{ type: 'text', text: 'What is ML?' }] }],
      maxOutputTokens: MAX,
      providerOptions: { trtllm: { requestId } },
    });
    const reader = stream.getReader();
    let deltas = 0;
    while (deltas < 3) {
      const { value } = await reader.read();
      if (value?.type === 'text-delta') deltas++;
    }
    await reader.cancel();
    const seen = await fake.waitForEvent(
      (e) => e.id === requestId && e.model === 'tensorrt_llm' && e.event !== 'received',
    );
    expect(stoppedOnServer).toContain(seen.event);
    expect(seen.tokens).toBeLessThan(MAX);
  });

  it('aborting the ensemble is reported as the SDK reports it: the server keeps generating', async () => {
    const id = await abortAfterThree('ensemble');
    const end = await endOf(id);
    expect(end.type === 'end' && end.result.finishReason).toBe('cancelled');
    expect(end.type === 'end' && end.result.earlyStop).toMatchObject({
      trigger: 'abort',
      serverTold: true,
      serverStopsGenerating: false,
    });
    expect(warnings.some((w) => w.includes("'ensemble'") && w.includes('cannot stop its generation'))).toBe(
      true,
    );
    const inner = await fake.waitForEvent(
      (e) => e.id === id && e.model === 'tensorrt_llm' && e.event !== 'received',
      10_000,
    );
    expect(inner.event).toBe('completed');
    expect(inner.tokens).toBe(MAX);
  });
});
