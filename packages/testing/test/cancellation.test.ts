import { encode } from '@trtllm/testing';
import { describe, expect, it, vi } from 'vitest';
import { post, uniqueId, useFake } from './support/fake.js';
import { bool, inferRequest, rawInputs, textInputs } from './support/grpc-client.js';
import { openStream, readEvents } from './support/streams.js';

const h = useFake({ itlMs: 4 });

const is = (model: string, id: string, event: string) => (e: { model: string; id: string; event: string }) =>
  e.model === model && e.id === id && e.event === event;

describe('cancellation', () => {
  it('of an ensemble gRPC call logs the ensemble cancelled while its generator runs on to completion', async () => {
    const id = uniqueId('ens');
    const s = openStream(h.grpc);
    s.call.write(inferRequest('ensemble', textInputs('Hello', 40, [bool('stream', true)]), { id }));
    await s.received(2);
    s.call.cancel();
    const outer = await h.fake.waitForEvent(is('ensemble', id, 'cancelled'));
    expect(outer.tokens).toBeLessThan(40);
    const inner = await h.fake.waitForEvent(is('tensorrt_llm', id, 'completed'));
    expect(inner.tokens).toBe(40);
    expect(inner.protocol).toBe('grpc');
  });

  it('of a BLS gRPC call does not stop its generator either', async () => {
    const id = uniqueId('bls');
    const s = openStream(h.grpc);
    s.call.write(inferRequest('tensorrt_llm_bls', textInputs('Hello', 30, [bool('stream', true)]), { id }));
    await s.received(1);
    s.call.cancel();
    await h.fake.waitForEvent(is('tensorrt_llm_bls', id, 'cancelled'));
    expect((await h.fake.waitForEvent(is('tensorrt_llm', id, 'completed'))).tokens).toBe(30);
  });

  it('of a raw tensorrt_llm gRPC call stops the generation', async () => {
    const id = uniqueId('raw');
    const s = openStream(h.grpc);
    s.call.write(
      inferRequest('tensorrt_llm', rawInputs(encode('Hello'), 5000, [bool('streaming', true)]), { id }),
    );
    await s.received(2);
    s.call.cancel();
    const cancelled = await h.fake.waitForEvent(is('tensorrt_llm', id, 'cancelled'));
    expect(cancelled.tokens).toBeLessThan(5000);
    await vi.waitFor(() => expect(h.fake.activeRequests()).toBe(0));
    expect(
      h.fake
        .events()
        .filter((e) => e.id === id)
        .map((e) => e.event),
    ).toEqual(['received', 'cancelled']);
  });

  it('cancels every request of a call', async () => {
    const ids = [uniqueId('m'), uniqueId('m')];
    const s = openStream(h.grpc);
    for (const id of ids)
      s.call.write(inferRequest('tensorrt_llm', rawInputs([7], 5000, [bool('streaming', true)]), { id }));
    await s.received(4);
    s.call.cancel();
    for (const id of ids) await h.fake.waitForEvent(is('tensorrt_llm', id, 'cancelled'));
  });

  it('by HTTP disconnect is noticed at the next write and stops a raw generation', async () => {
    const id = uniqueId('http-raw');
    const abort = new AbortController();
    const res = await post(
      h.fake,
      '/v2/models/tensorrt_llm/generate_stream',
      { id, input_ids: [5], input_lengths: 1, request_output_len: 5000, streaming: true },
      { signal: abort.signal },
    );
    await readEvents(res, 2);
    abort.abort();
    const cancelled = await h.fake.waitForEvent(is('tensorrt_llm', id, 'cancelled'));
    expect(cancelled.protocol).toBe('http');
    expect(cancelled.tokens).toBeLessThan(5000);
  });

  it('by HTTP disconnect ends the ensemble request but not its generator', async () => {
    const id = uniqueId('http-ens');
    const abort = new AbortController();
    const res = await post(
      h.fake,
      '/v2/models/ensemble/generate_stream',
      { id, text_input: 'Hello', max_tokens: 40, stream: true },
      { signal: abort.signal },
    );
    await readEvents(res, 1);
    abort.abort();
    await h.fake.waitForEvent(is('ensemble', id, 'cancelled'));
    expect((await h.fake.waitForEvent(is('tensorrt_llm', id, 'completed'))).tokens).toBe(40);
  });

  it('counts a generator that outlives its ensemble call as active until it ends', async () => {
    const id = uniqueId('active');
    const s = openStream(h.grpc);
    s.call.write(inferRequest('ensemble', textInputs('Hello', 40, [bool('stream', true)]), { id }));
    await s.received(1);
    s.call.cancel();
    await h.fake.waitForEvent(is('ensemble', id, 'cancelled'));
    expect(h.fake.activeRequests()).toBeGreaterThan(0);
    await h.fake.waitForEvent(is('tensorrt_llm', id, 'completed'));
    await vi.waitFor(() => expect(h.fake.activeRequests()).toBe(0));
  });
});
