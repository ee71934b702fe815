import { type ErrorCode, type GenerationEvent, TritonLlm } from '@trtllm/sdk';
import type { FakeFaults } from '@trtllm/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { PROTOCOLS, useFakeTriton } from '../support/fake.js';
import { drain, expectedIds } from './support/streams.js';

const INPUT = [259, 262];
const MAX_TOKENS = 40;

interface FaultCase {
  readonly name: string;
  readonly faults: FakeFaults;
  readonly code: ErrorCode;
  /** Tokens the consumer must have received before the error (a drop may lose the one in flight). */
  readonly delivered: { readonly min: number; readonly max: number };
  readonly options?: { readonly timeoutMs?: number };
}

// Each fault fires after tokens were delivered: the error must come after them, typed, and the
// request must not be sent again (a retry would repeat or lose output).
const CASES: readonly FaultCase[] = [
  { name: 'a model error', faults: { errorAfterTokens: 3 }, code: 'internal', delivered: { min: 3, max: 3 } },
  {
    name: 'a dropped connection',
    faults: { dropConnectionAfterTokens: 3 },
    code: 'unavailable',
    delivered: { min: 2, max: 3 },
  },
  {
    name: 'a malformed message (protobuf / SSE JSON)',
    faults: { malformedAfterTokens: 3 },
    code: 'protocol',
    delivered: { min: 3, max: 3 },
  },
  {
    name: 'a stall, under a total deadline',
    faults: { stallAfterTokens: 3 },
    code: 'deadline_exceeded',
    delivered: { min: 3, max: 3 },
    options: { timeoutMs: 500 },
  },
];

describe.each(PROTOCOLS)('faults in the middle of a stream over %s', (protocol) => {
  const fake = useFakeTriton({ itlMs: 2 });

  afterEach(() => {
    fake.triton().setFaults(undefined);
  });

  function client(events: GenerationEvent[]): TritonLlm {
    return new TritonLlm({
      transport: fake.transport(protocol),
      model: 'tensorrt_llm',
      onEvent: (e) => events.push(e),
    });
  }

  function received(id: string): number {
    return fake
      .triton()
      .events()
      .filter((e) => e.id === id && e.model === 'tensorrt_llm' && e.event === 'received').length;
  }

  it.each(CASES)('$name: $code after the chunks delivered, never retried', async (c) => {
    const events: GenerationEvent[] = [];
    const llm = client(events);
    await llm.schema();
    fake.triton().setFaults({ model: 'tensorrt_llm', ...c.faults });
    const stream = llm.stream({ inputIds: INPUT, maxTokens: MAX_TOKENS }, c.options ?? {});
    const { tokens, error } = await drain(stream);
    expect(error?.code).toBe(c.code);
    expect(error?.requestId).toBe(stream.requestId);
    expect(tokens.length).toBeGreaterThanOrEqual(c.delivered.min);
    expect(tokens.length).toBeLessThanOrEqual(c.delivered.max);
    expect(tokens).toEqual(expectedIds(INPUT, MAX_TOKENS).slice(0, tokens.length));
    expect(events.filter((e) => e.type === 'retry')).toEqual([]);
    expect(received(stream.requestId)).toBe(1);
  });

  it('a stream that ends without its final response is never reported complete', async () => {
    const llm = client([]);
    await llm.schema();
    fake.triton().setFaults({ model: 'tensorrt_llm', omitFinalResponse: true });
    const { chunks, error } = await drain(llm.stream({ inputIds: INPUT, maxTokens: 5 }));
    // gRPC: the call ends OK without a final-flagged response; HTTP: the connection is cut.
    expect(error?.code).toBe(protocol === 'grpc' ? 'protocol' : 'unavailable');
    expect(chunks.some((c) => c.done)).toBe(false);
  });

  it('a connection dropped before the first response is retried with backoff, up to the attempts', async () => {
    const events: GenerationEvent[] = [];
    const llm = client(events);
    await llm.schema();
    fake.triton().setFaults({ model: 'tensorrt_llm', dropConnectionAfterTokens: 0 });
    const stream = llm.stream(
      { inputIds: INPUT, maxTokens: 5 },
      { retry: { attempts: 4, initialDelayMs: 5, maxDelayMs: 20 } },
    );
    const { chunks, error } = await drain(stream);
    expect(chunks).toEqual([]);
    expect(error?.code).toBe('unavailable');
    expect(error?.message).toMatch(/\(after 4 attempts\)$/);
    expect(events.filter((e) => e.type === 'retry').map((e) => e.type === 'retry' && e.attempt)).toEqual([
      2, 3, 4,
    ]);
    expect(received(stream.requestId)).toBe(4);
  });

  it('an abort during the wait between attempts ends the stream with finish reason cancelled', async () => {
    const events: GenerationEvent[] = [];
    const llm = client(events);
    await llm.schema();
    fake.triton().setFaults({ model: 'tensorrt_llm', dropConnectionAfterTokens: 0 });
    const controller = new AbortController();
    const stream = llm.stream(
      { inputIds: INPUT, maxTokens: 5 },
      {
        signal: controller.signal,
        retry: { attempts: 5, initialDelayMs: 60_000, maxDelayMs: 60_000, budgetMs: 600_000 },
      },
    );
    const drained = drain(stream);
    await expect.poll(() => events.some((e) => e.type === 'retry')).toBe(true);
    controller.abort();
    const { chunks, error } = await drained;
    expect(error).toBeUndefined();
    expect(chunks).toHaveLength(1);
    expect(chunks[0]?.done && chunks[0].finishReason).toBe('cancelled');
    expect(received(stream.requestId)).toBe(1);
  });

  it('a status the server sent (UNAVAILABLE / 503) is not retried: it is an answer, not a lost connection', async () => {
    const events: GenerationEvent[] = [];
    const llm = client(events);
    await llm.schema();
    fake.triton().setFaults({ statusOnce: { grpc: 14, http: 503, message: 'server is draining' } });
    const { error } = await drain(llm.stream({ inputIds: INPUT, maxTokens: 5 }));
    expect(error?.code).toBe('unavailable');
    expect(error?.retryable).toBe(true);
    expect(error?.serverMessage).toBe('server is draining');
    expect(events.filter((e) => e.type === 'retry')).toEqual([]);
  });

  it('after each fault the same client serves the next request', async () => {
    const llm = client([]);
    for (const c of CASES) {
      fake.triton().setFaults({ model: 'tensorrt_llm', ...c.faults });
      expect((await drain(llm.stream({ inputIds: INPUT, maxTokens: 8 }, c.options ?? {}))).error?.code).toBe(
        c.code,
      );
      fake.triton().setFaults(undefined);
      const { tokens, error } = await drain(llm.stream({ inputIds: INPUT, maxTokens: 8 }));
      expect(error).toBeUndefined();
      expect(tokens).toEqual(expectedIds(INPUT, 8));
    }
  });
});
