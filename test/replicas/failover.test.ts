import type { InferResponse } from '@trtllm/sdk';
import { generateTokens } from '@trtllm/testing';
import { describe, expect, it } from 'vitest';
import { failure } from '../support/failure.js';
import { PROTOCOLS, rawRequest, statsOf, stopRequest, tokenIds, useThreeFakes } from './support.js';

const INPUT = [259, 260, 261];

function expectedIds(maxTokens: number): readonly number[] {
  return generateTokens(INPUT, { maxTokens })[0]!.tokens;
}

async function collectIds(stream: AsyncIterable<InferResponse>): Promise<number[]> {
  const ids: number[] = [];
  for await (const r of stream) ids.push(...tokenIds(r));
  return ids;
}

describe.each(PROTOCOLS)('failover between replicas (%s)', (protocol) => {
  // Paced, so that a test can act between two tokens of a running stream.
  const replicas = useThreeFakes([{ itlMs: 10 }, { itlMs: 10 }, { itlMs: 10 }]);
  const hasId = (i: number, id: string) =>
    replicas
      .fake(i)
      .events()
      .some((e) => e.id === id);

  it('moves a stream that fails before its first token to another replica', async () => {
    // Replicas 0 and 1 drop every generation before its first token; only 2 can serve.
    replicas.fake(0).setFaults({ dropConnectionAfterTokens: 0 });
    replicas.fake(1).setFaults({ dropConnectionAfterTokens: 0 });
    const t = replicas.transport(protocol, { healthIntervalMs: 0, ejectAfterFailures: 100 });
    for (let i = 0; i < 4; i++) {
      const id = `before-${i}`;
      expect(await collectIds(t.stream(rawRequest(id, INPUT, 5)))).toEqual(expectedIds(5));
      expect(replicas.received(2, 'tensorrt_llm', id)).toHaveLength(1);
    }
    const urls = replicas.urls(protocol);
    const failed = [0, 1].map((i) => replicas.received(i, 'tensorrt_llm').length);
    // Taking turns, the first attempts of four requests cannot all avoid replicas 0 and 1.
    expect(failed[0]! + failed[1]!).toBeGreaterThan(0);
    expect([statsOf(t, urls[0]!).errors, statsOf(t, urls[1]!).errors]).toEqual(failed);
    expect(statsOf(t, urls[2]!)).toMatchObject({ errors: 0, requests: 4, inFlight: 0 });
  });

  it('moves a unary request that failed before its answer', async () => {
    replicas.fake(0).setFaults({ dropConnectionAfterTokens: 0 });
    replicas.fake(1).setFaults({ dropConnectionAfterTokens: 0 });
    const t = replicas.transport(protocol, { healthIntervalMs: 0, ejectAfterFailures: 100 });
    for (let i = 0; i < 4; i++) {
      const r = await t.infer(rawRequest(`unary-${i}`, INPUT, 4, 'tensorrt_llm_unary'));
      expect(tokenIds(r).slice(INPUT.length)).toEqual(expectedIds(4));
    }
    const urls = replicas.urls(protocol);
    expect(statsOf(t, urls[0]!).errors + statsOf(t, urls[1]!).errors).toBeGreaterThan(0);
    expect(statsOf(t, urls[2]!).requests).toBe(4);
  });

  it('gives up after failoverAttempts other replicas, with the last error', async () => {
    for (const i of [0, 1, 2]) replicas.fake(i).setFaults({ dropConnectionAfterTokens: 0 });
    const t = replicas.transport(protocol, { healthIntervalMs: 0, failoverAttempts: 1 });
    const err = await failure(collectIds(t.stream(rawRequest('budget', INPUT, 5))));
    expect(err.code).toBe('unavailable');
    expect([0, 1, 2].filter((i) => hasId(i, 'budget'))).toHaveLength(2);
  });

  it('does not move a request every replica would refuse', async () => {
    const t = replicas.transport(protocol, { healthIntervalMs: 0 });
    const bad = { ...rawRequest('bad', INPUT, 5), inputs: rawRequest('bad', INPUT, 5).inputs.slice(0, 2) };
    const err = await failure(collectIds(t.stream(bad)));
    expect(err.code).toBe('invalid_argument');
    expect(t.endpointStats().map((s) => s.requests)).toEqual(expect.arrayContaining([1, 0, 0]));
    expect(t.endpointStats().reduce((n, s) => n + s.requests, 0)).toBe(1);
  });

  it('never moves a stream after its first token: losing its replica ends it with an error', async () => {
    const t = replicas.transport(protocol, { healthIntervalMs: 0 });
    const stream = t.stream(rawRequest('after', INPUT, 200));
    const iterator = stream[Symbol.asyncIterator]();
    const first = await iterator.next();
    const second = await iterator.next();
    expect([first.done, second.done]).toEqual([false, false]);
    const carrier = [0, 1, 2].find((i) => hasId(i, 'after'))!;
    await replicas.kill(carrier);
    try {
      const err = await failure(
        (async () => {
          for (;;) if ((await iterator.next()).done === true) return;
        })(),
      );
      // Retryable, so only the first-token rule kept it from moving.
      expect(err).toMatchObject({ code: 'unavailable', retryable: true });
      expect([0, 1, 2].filter((i) => i !== carrier).some((i) => hasId(i, 'after'))).toBe(false);
      expect(statsOf(t, replicas.urls(protocol)[carrier]!)).toMatchObject({ requests: 1, inFlight: 0 });
    } finally {
      await replicas.restart(carrier);
    }
  });

  it('sends the in-band stop to the replica that carries the stream', async () => {
    const t = replicas.transport(protocol, { healthIntervalMs: 0 });
    const stream = t.stream(rawRequest('stop-me', INPUT, 500));
    const iterator = stream[Symbol.asyncIterator]();
    const ids = [...tokenIds((await iterator.next()).value as InferResponse)];
    await stream.sendStop(stopRequest('stop-me'));
    for (;;) {
      const r = await iterator.next();
      if (r.done === true) break;
      ids.push(...tokenIds(r.value));
    }
    expect(ids.length).toBeLessThan(500);
    expect(ids).toEqual(expectedIds(500).slice(0, ids.length));
    const carrier = [0, 1, 2].find((i) => hasId(i, 'stop-me'))!;
    await replicas.fake(carrier).waitForEvent((e) => e.id === 'stop-me' && e.event === 'stopped');
    expect([0, 1, 2].filter((i) => hasId(i, 'stop-me'))).toEqual([carrier]);
  });
});
