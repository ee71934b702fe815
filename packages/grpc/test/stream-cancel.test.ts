import { grpcTransport } from '@trtllm/grpc';
import type { Transport } from '@trtllm/sdk';
import { type FakeTriton, startFakeTriton } from '@trtllm/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest, streamedIds } from './fake-models.js';
import { drain } from './support.js';

// A slow generator, so every request is still running when it is cancelled.
let fake: FakeTriton;
let transport: Transport;

beforeAll(async () => {
  fake = await startFakeTriton({ grpcPort: 0, httpPort: 0, itlMs: 50 });
  transport = grpcTransport({ baseUrl: fake.grpcUrl });
});

afterAll(async () => {
  await transport.close();
  await fake.close();
});

describe('cancelling a stream', () => {
  it('aborting the signal cancels the request on the server', async () => {
    const controller = new AbortController();
    const stream = transport.stream(rawRequest('c-1', [5, 6], 500), { signal: controller.signal });
    const { responses, error } = await drain(
      (async function* () {
        for await (const r of stream) {
          yield r;
          if (r.outputs.length > 0) controller.abort();
        }
      })(),
    );
    expect(error?.code).toBe('cancelled');
    const cancelled = await fake.waitForEvent((e) => e.id === 'c-1' && e.event === 'cancelled');
    expect(cancelled.model).toBe('tensorrt_llm');
    expect(cancelled.tokens).toBeLessThan(500);
    // What had arrived before the abort is still handed out (a loaded machine reads several
    // tokens at once), and nothing the server did not send before it heard the cancel.
    expect(streamedIds(responses).length).toBeGreaterThanOrEqual(1);
    expect(streamedIds(responses).length).toBeLessThanOrEqual(cancelled.tokens);
  });

  it('breaking out of the loop cancels the request on the server', async () => {
    let seen = 0;
    for await (const r of transport.stream(rawRequest('c-2', [7], 500))) {
      if (r.outputs.length > 0) seen += 1;
      if (seen === 2) break;
    }
    const cancelled = await fake.waitForEvent((e) => e.id === 'c-2' && e.event === 'cancelled');
    expect(cancelled.tokens).toBeLessThan(500);
  });

  it('cancelling one stream leaves another on the same transport running', async () => {
    const controller = new AbortController();
    const doomed = drain(transport.stream(rawRequest('c-3', [8], 500), { signal: controller.signal }));
    const survivor = drain(transport.stream(rawRequest('c-4', [9], 4)));
    await fake.waitForEvent((e) => e.id === 'c-3' && e.event === 'received');
    controller.abort();
    expect((await doomed).error?.code).toBe('cancelled');
    const result = await survivor;
    expect(result.error).toBeUndefined();
    expect(result.responses.at(-1)?.final).toBe(true);
    expect(fake.events().some((e) => e.id === 'c-4' && e.event === 'cancelled')).toBe(false);
    expect((await fake.waitForEvent((e) => e.id === 'c-4' && e.event === 'completed')).tokens).toBe(4);
  });

  it('a signal aborted before the first response still reaches the server', async () => {
    const controller = new AbortController();
    const stream = transport.stream(rawRequest('c-5', [10], 500), { signal: controller.signal });
    const pending = drain(stream);
    await fake.waitForEvent((e) => e.id === 'c-5' && e.event === 'received');
    controller.abort();
    expect((await pending).error?.code).toBe('cancelled');
    await fake.waitForEvent((e) => e.id === 'c-5' && e.event === 'cancelled');
  });
});
