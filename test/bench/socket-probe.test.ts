import { startFakeTriton } from '@trtllm/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { PROBE_SHARED_CALLS, socketProbeVariant } from '../../bench/overhead/variants/socket-probe.js';
import { iteratedProbeVariant } from '../../bench/overhead/variants/socket-probe-iter.js';
import { DEFAULT_MULTIPLEX_CALLS } from '../../packages/grpc/src/transport/shared-calls.js';

type Fake = Awaited<ReturnType<typeof startFakeTriton>>;
let fake: Fake | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

const PROMPTS = ['What is ML?', 'Tell me about GPUs', 'Why is the sky blue?', 'Name a prime'];

/** Streams `count` requests at once through `probe`; each request's text and token count, in order. */
async function streamAll(
  probe: ReturnType<typeof socketProbeVariant>,
  count: number,
): Promise<{ tokens: number; text: string }[]> {
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      let text = '';
      const tokens = await probe.streamText(PROMPTS[i % PROMPTS.length]!, 3 + (i % 7), i, (piece) => {
        text += piece;
      });
      return { tokens, text };
    }),
  );
}

describe('bench:overhead socket probe (the floor past a stream limit and on shared calls)', () => {
  it('opens another connection at a server stream limit it is told of, and fails past one it is not', async () => {
    fake = await startFakeTriton({ grpcMaxConcurrentStreams: 3 });
    const endpoints = { grpcUrl: fake.grpcUrl, httpUrl: fake.httpUrl };

    const limited = socketProbeVariant(endpoints, { streamsPerConnection: 3 });
    const got = await streamAll(limited, 12);
    await limited.close();
    expect(got.map((g) => g.tokens)).toEqual(Array.from({ length: 12 }, (_, i) => 3 + (i % 7)));
    expect(got.every((g) => g.text.length > 0)).toBe(true);

    // The same load on one connection: the server refuses the streams past its limit.
    const unlimited = socketProbeVariant(endpoints);
    await expect(streamAll(unlimited, 12)).rejects.toThrow(/reset with code 7/);
    await unlimited.close();
  });

  it('routes the responses of requests on shared calls by id, as a call per request gets them', async () => {
    // Four streams allowed: 40 requests pass only if they share the four calls.
    fake = await startFakeTriton({ grpcMaxConcurrentStreams: 4 });
    const endpoints = { grpcUrl: fake.grpcUrl, httpUrl: fake.httpUrl };
    const shared = socketProbeVariant(endpoints, { sharedCalls: 4 });
    const viaShared = await streamAll(shared, 40);
    await shared.close();

    const own = socketProbeVariant(endpoints, { streamsPerConnection: 4 });
    const viaOwn = await streamAll(own, 40);
    await own.close();

    expect(viaShared).toEqual(viaOwn);
    expect(new Set(viaShared.map((g) => g.text)).size).toBeGreaterThan(1);
    // Every request of both runs (ids 0-39 twice) completed on the server, none left behind.
    const completed = fake.events().filter((e) => e.event === 'completed' && e.model === 'ensemble');
    expect(completed.map((e) => e.id).sort()).toEqual(
      Array.from({ length: 40 }, (_, i) => [String(i), String(i)])
        .flat()
        .sort(),
    );
  });

  it('hands each token through an async iterator, every request whole, and fails as the probe does', async () => {
    fake = await startFakeTriton({ grpcMaxConcurrentStreams: 3 });
    const endpoints = { grpcUrl: fake.grpcUrl, httpUrl: fake.httpUrl };
    const iterated = iteratedProbeVariant(socketProbeVariant(endpoints, { streamsPerConnection: 3 }));
    const firsts: number[] = [];
    const counts = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        iterated.stream(PROMPTS[i % PROMPTS.length]!, 3 + (i % 7), i, () => firsts.push(i)),
      ),
    );
    await iterated.close();
    expect(counts).toEqual(Array.from({ length: 12 }, (_, i) => 3 + (i % 7)));
    expect(firsts.sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i));

    // Past a limit it is not told of, the server's refusal ends the iteration with the probe's error.
    const unlimited = iteratedProbeVariant(socketProbeVariant(endpoints));
    const all = Array.from({ length: 12 }, (_, i) => unlimited.stream(PROMPTS[0]!, 5, 100 + i));
    await expect(Promise.all(all)).rejects.toThrow(/reset with code 7/);
    await Promise.allSettled(all);
    await unlimited.close();
  });

  it("shares as many calls as the transport's multiplex: true", () => {
    expect(PROBE_SHARED_CALLS).toBe(DEFAULT_MULTIPLEX_CALLS);
  });
});
