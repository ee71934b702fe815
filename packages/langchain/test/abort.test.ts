import { ModelAbortError } from '@langchain/core/errors';
import { ChatTriton } from '@trtllm/langchain';
import type { EarlyStopReport } from '@trtllm/sdk';
import { type FakeTriton, fakeTokenizer, startFakeTriton } from '@trtllm/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const quiet = { warn: () => undefined };
let nextId = 7_000_000;
const requestId = () => String(nextId++);

/** Resolves with the ModelAbortError the callbacks receive (LangChain may also report its own AbortError). */
function errorCallback(): { handler: { handleLLMError(err: unknown): void }; error: Promise<unknown> } {
  let resolve!: (err: unknown) => void;
  const error = new Promise<unknown>((r) => {
    resolve = r;
  });
  return {
    handler: {
      handleLLMError: (err: unknown) => {
        if (ModelAbortError.isInstance(err)) resolve(err);
      },
    },
    error,
  };
}

function earlyStopOf(err: unknown): EarlyStopReport | undefined {
  expect(ModelAbortError.isInstance(err)).toBe(true);
  return (err as ModelAbortError).partialOutput?.response_metadata.early_stop as EarlyStopReport | undefined;
}

// LangChain's signal ends the request on the server as the SDK README's early-stop table says.
describe.each(['grpc', 'http'] as const)('AbortSignal and early ends over %s', (protocol) => {
  let fake: FakeTriton;
  const models: ChatTriton[] = [];
  const chatModel = (model: string) => {
    const url = protocol === 'grpc' ? { grpcUrl: fake.grpcUrl } : { httpUrl: fake.httpUrl };
    const m = new ChatTriton({ ...url, model, tokenizer: fakeTokenizer, maxTokens: 3000, logger: quiet });
    models.push(m);
    return m;
  };
  // README "Ending a request early": gRPC cancels the call; HTTP sends the raw model's in-band stop
  // for the request id, then disconnects, so the model logs 'stopped' there.
  const serverMeans = protocol === 'grpc' ? ['grpc_cancel'] : ['in_band_stop', 'http_disconnect'];
  const rawEnd = protocol === 'grpc' ? 'cancelled' : 'stopped';
  beforeAll(async () => {
    fake = await startFakeTriton({ itlMs: 2 });
  });
  afterAll(async () => {
    await Promise.all(models.map((m) => m.close()));
    await fake.close();
  });

  it('stream on the raw model: aborting ends the iteration and the model, callbacks get the report', async () => {
    const id = requestId();
    const controller = new AbortController();
    const { handler, error } = errorCallback();
    const stream = await chatModel('tensorrt_llm').stream('What is ML?', {
      signal: controller.signal,
      requestId: id,
      callbacks: [handler],
    });
    let received = '';
    await expect(
      (async () => {
        for await (const chunk of stream) {
          received += chunk.text;
          controller.abort();
        }
      })(),
    ).rejects.toThrow(/abort/i);
    expect(received.length).toBeGreaterThan(0);
    const end = await fake.waitForEvent(
      (e) => e.id === id && e.model === 'tensorrt_llm' && e.event !== 'received',
    );
    expect(end.event).toBe(rawEnd);
    expect(end.tokens).toBeLessThan(3000);
    const report = earlyStopOf(await error);
    expect(report).toMatchObject({ trigger: 'abort', serverTold: true, serverStopsGenerating: true });
    expect(report?.via).toEqual(expect.arrayContaining(serverMeans));
  });

  it('invoke on the ensemble: ModelAbortError with the partial reply, and the report says the server runs on', async () => {
    const id = requestId();
    const controller = new AbortController();
    const model = chatModel('ensemble');
    // invoke generates the ensemble's reply whole (its streamed text is lossy), so no token
    // arrives before the end: the abort follows the request's arrival at the server instead.
    const call = model.invoke('What is ML?', { signal: controller.signal, requestId: id, maxTokens: 60 });
    await fake.waitForEvent((e) => e.id === id && e.event === 'received');
    controller.abort();
    const err = await call.then(
      () => undefined,
      (e: unknown) => e,
    );
    const report = earlyStopOf(err);
    expect(report).toMatchObject({ trigger: 'abort', serverTold: true, serverStopsGenerating: false });
    expect((err as ModelAbortError).partialOutput?.response_metadata.finish_reason).toBe('cancelled');
    // As on real Triton 2.51, the inner tensorrt_llm request runs on to max tokens.
    const inner = await fake.waitForEvent(
      (e) => e.id === id && e.model === 'tensorrt_llm' && e.event !== 'received',
    );
    expect(inner).toMatchObject({ event: 'completed', tokens: 60 });
  });

  it('leaving the stream early cancels the raw request on the server', async () => {
    const id = requestId();
    const stream = await chatModel('tensorrt_llm').stream('What is ML?', { requestId: id });
    let pieces = 0;
    for await (const chunk of stream) {
      if (chunk.text !== '' && ++pieces === 3) break;
    }
    const end = await fake.waitForEvent(
      (e) => e.id === id && e.model === 'tensorrt_llm' && e.event !== 'received',
    );
    expect(end.event).toBe(rawEnd);
  });

  it('an already aborted signal sends nothing', async () => {
    const id = requestId();
    const controller = new AbortController();
    controller.abort();
    await expect(
      chatModel('tensorrt_llm').invoke('What is ML?', { signal: controller.signal, requestId: id }),
    ).rejects.toThrow();
    expect(fake.events().filter((e) => e.id === id)).toEqual([]);
  });
});
