import { grpcTransport } from '@trtllm/grpc';
import type { InferResponse, Transport } from '@trtllm/sdk';
import { type FakeTriton, generateTokens, startFakeTriton } from '@trtllm/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest, stopRequest, streamedIds } from './fake-models.js';

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

describe('graceful stop', () => {
  it('sendStop ends the request early and still delivers its final response', async () => {
    const input = [259, 262];
    const stream = transport.stream(rawRequest('42', input, 500));
    const responses: InferResponse[] = [];
    for await (const r of stream) {
      responses.push(r);
      if (streamedIds(responses).length === 3) await stream.sendStop(stopRequest('42'));
    }
    const stopped = await fake.waitForEvent((e) => e.id === '42' && e.event === 'stopped');
    const ids = streamedIds(responses);
    expect(ids.length).toBeLessThan(500);
    expect(ids.length).toBe(stopped.tokens);
    expect(ids).toEqual((generateTokens(input, { maxTokens: 500 })[0]?.tokens ?? []).slice(0, ids.length));
    expect(responses.filter((r) => r.final)).toHaveLength(1);
    expect(responses.at(-1)?.final).toBe(true);
    expect(fake.events().some((e) => e.id === '42' && e.event === 'cancelled')).toBe(false);
  });

  it('sendStop after the final response sends nothing', async () => {
    const stream = transport.stream(rawRequest('43', [5], 2));
    const responses: InferResponse[] = [];
    for await (const r of stream) {
      responses.push(r);
      if (r.final) await stream.sendStop(stopRequest('43'));
    }
    expect(streamedIds(responses)).toHaveLength(2);
    expect(
      fake
        .events()
        .filter((e) => e.id === '43')
        .map((e) => e.event),
    ).toEqual(['received', 'completed']);
  });
});
