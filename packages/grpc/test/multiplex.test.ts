import { grpcTransport } from '@trtllm/grpc';
import { type InferResponse, type Transport, TritonLlmError } from '@trtllm/sdk';
import { type FakeTriton, generateTokens, startFakeTriton } from '@trtllm/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest, stopRequest, streamedIds } from './fake-models.js';

let fake: FakeTriton;
let transport: Transport;

beforeAll(async () => {
  fake = await startFakeTriton({ grpcPort: 0, httpPort: 0, itlMs: 2 });
  transport = grpcTransport({ baseUrl: fake.grpcUrl, multiplex: true });
});

afterAll(async () => {
  await transport.close();
  await fake.close();
});

async function collect(stream: AsyncIterable<InferResponse>): Promise<InferResponse[]> {
  const out: InferResponse[] = [];
  for await (const r of stream) out.push(r);
  return out;
}

describe('multiplexed streams (shared ModelStreamInfer calls)', () => {
  it('keeps concurrent requests apart by id', async () => {
    const inputs = Array.from({ length: 24 }, (_, i) => [259 + (i % 20), 3 + i]);
    const results = await Promise.all(
      inputs.map((input, i) => collect(transport.stream(rawRequest(`mux-${i}`, input, 12)))),
    );
    results.forEach((responses, i) => {
      expect(streamedIds(responses)).toEqual(generateTokens(inputs[i]!, { maxTokens: 12 })[0]?.tokens);
      expect(responses.filter((r) => r.final)).toHaveLength(1);
    });
  });

  it('keeps decimal ids (read by value) apart from ids that only look alike, all on one call', async () => {
    const one = grpcTransport({ baseUrl: fake.grpcUrl, multiplex: { calls: 1 } });
    try {
      // Decimal ids are matched by their value; the others ('007' is 7 with a leading zero, 16
      // digits is past an exact double, '12a' is not a number) by their string. Each gets only its
      // own tokens.
      const ids = ['7', '007', '70', '0', '123456789012345', '1234567890123456', '12a', '-7', 'mux-7'];
      const inputs = ids.map((_, i) => [270 + i, 5 + i]);
      const results = await Promise.all(
        ids.map((id, i) => collect(one.stream(rawRequest(id, inputs[i]!, 8 + i)))),
      );
      results.forEach((responses, i) => {
        expect(responses.every((r) => r.id === ids[i])).toBe(true);
        expect(streamedIds(responses)).toEqual(generateTokens(inputs[i]!, { maxTokens: 8 + i })[0]?.tokens);
        expect(responses.filter((r) => r.final)).toHaveLength(1);
      });
    } finally {
      await one.close();
    }
  });

  it('says that ending a stream early does not cancel it on the server', async () => {
    const stream = transport.stream(rawRequest('mux-break', [260], 400));
    expect(stream.cancelsOnServer).toBe(false);
    let n = 0;
    for await (const _ of stream) if (++n === 3) break;
    // The others on the call are unaffected.
    const after = await collect(transport.stream(rawRequest('mux-after', [261], 5)));
    expect(streamedIds(after)).toEqual(generateTokens([261], { maxTokens: 5 })[0]?.tokens);
  });

  it('ends an aborted stream with cancelled at once', async () => {
    const controller = new AbortController();
    const stream = transport.stream(rawRequest('mux-abort', [262], 400), { signal: controller.signal });
    const err = await (async () => {
      let n = 0;
      for await (const _ of stream) if (++n === 2) controller.abort();
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TritonLlmError);
    expect((err as TritonLlmError).code).toBe('cancelled');
  });

  it('ends a stream opened without a signal with cancel(), the call and its other requests going on', async () => {
    // The client opens every stream without a signal and ends it with cancel().
    const other = collect(transport.stream(rawRequest('mux-other', [264], 20)));
    const stream = transport.stream(rawRequest('mux-cancel', [265], 400));
    const seen: InferResponse[] = [];
    const err = await (async () => {
      for await (const r of stream) {
        seen.push(r);
        if (seen.length === 2) stream.cancel();
      }
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TritonLlmError);
    expect((err as TritonLlmError).code).toBe('cancelled');
    // Responses that had arrived before cancel() are still handed out (as after an abort), so a
    // third may follow the two; the stream then ends long before its 400 tokens.
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(seen.length).toBeLessThan(50);
    expect(streamedIds(seen)).toEqual(
      generateTokens([265], { maxTokens: 400 })[0]?.tokens.slice(0, streamedIds(seen).length),
    );
    expect(streamedIds(await other)).toEqual(generateTokens([264], { maxTokens: 20 })[0]?.tokens);
  });

  it('spreads concurrent requests over at most `calls` shared calls, one request at a time staying on one', async () => {
    const three = grpcTransport({ baseUrl: fake.grpcUrl, multiplex: { calls: 3 } });
    try {
      for (let i = 0; i < 3; i++) {
        const responses = await collect(three.stream(rawRequest(`seq-${i}`, [266 + i], 4)));
        expect(streamedIds(responses)).toEqual(generateTokens([266 + i], { maxTokens: 4 })[0]?.tokens);
      }
      expect(three.connectionStats().openStreams).toBe(1);
      const inputs = Array.from({ length: 10 }, (_, i) => [270 + i, 5 + i]);
      const results = await Promise.all(
        inputs.map((input, i) => collect(three.stream(rawRequest(`spread-${i}`, input, 8)))),
      );
      results.forEach((responses, i) => {
        expect(streamedIds(responses)).toEqual(generateTokens(inputs[i]!, { maxTokens: 8 })[0]?.tokens);
      });
      expect(three.connectionStats().openStreams).toBe(3);
    } finally {
      await three.close();
    }
  });

  it('refuses a request over maxSendMessageBytes without opening a shared call', async () => {
    const small = grpcTransport({ baseUrl: fake.grpcUrl, multiplex: true, maxSendMessageBytes: 256 });
    try {
      const input = Array.from({ length: 200 }, (_, i) => 3 + i);
      const err = await collect(small.stream(rawRequest('mux-big', input, 2))).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TritonLlmError);
      expect((err as TritonLlmError).code).toBe('resource_exhausted');
      expect(small.connectionStats().openStreams).toBe(0);
      // A request that fits still goes out after it.
      const ok = await collect(small.stream(rawRequest('mux-fits', [280], 3)));
      expect(streamedIds(ok)).toEqual(generateTokens([280], { maxTokens: 3 })[0]?.tokens);
    } finally {
      await small.close();
    }
  });

  it('names a bad multiplex option before anything is opened', () => {
    const cases: [unknown, string][] = [
      [{ calls: 0 }, 'multiplex.calls: must be a whole number from 1 to 1024 (got 0)'],
      [{ calls: 2.5 }, 'multiplex.calls: must be a whole number from 1 to 1024 (got 2.5)'],
      [{ calls: 5000 }, 'multiplex.calls: must be a whole number from 1 to 1024 (got 5000)'],
      ['yes', 'multiplex: must be true, false or { calls } (got "yes")'],
    ];
    for (const [multiplex, message] of cases) {
      let err: unknown;
      try {
        grpcTransport({ baseUrl: fake.grpcUrl, multiplex: multiplex as never });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(TritonLlmError);
      expect((err as TritonLlmError).code).toBe('invalid_argument');
      expect((err as TritonLlmError).message).toBe(message);
    }
  });

  it('stops a request in-band on the shared call', async () => {
    const stream = transport.stream(rawRequest('77', [263], 400));
    const responses: InferResponse[] = [];
    for await (const r of stream) {
      responses.push(r);
      if (streamedIds(responses).length === 3) await stream.sendStop(stopRequest('77'));
    }
    const stopped = await fake.waitForEvent((e) => e.id === '77' && e.event === 'stopped');
    expect(streamedIds(responses).length).toBe(stopped.tokens);
    expect(responses.at(-1)?.final).toBe(true);
  });

  it('refuses a second request with an id already in flight', async () => {
    const first = transport.stream(rawRequest('dup', [264], 50));
    const it1 = first[Symbol.asyncIterator]();
    await it1.next();
    const err = await collect(transport.stream(rawRequest('dup', [264], 5))).catch((e: unknown) => e);
    expect((err as TritonLlmError).code).toBe('invalid_argument');
    await it1.return?.();
  });

  it('delivers a model error to its own request only', async () => {
    fake.setFaults({ model: 'tensorrt_llm_unary', errorAfterTokens: 0 });
    try {
      const failing = collect(
        transport.stream({ ...rawRequest('mux-err', [265], 5), model: 'tensorrt_llm_unary' }),
      );
      const fine = collect(transport.stream(rawRequest('mux-fine', [265], 5)));
      await expect(failing).rejects.toBeInstanceOf(TritonLlmError);
      expect(streamedIds(await fine)).toEqual(generateTokens([265], { maxTokens: 5 })[0]?.tokens);
    } finally {
      fake.setFaults(undefined);
    }
  });
});
