import type { Transport } from '@trtllm/sdk';
import { describe, expect, it } from 'vitest';
import { PROXY_CASES, useProxiedFake } from './support/fixture.js';
import { errorTally, readStream, requests, type StreamOutcome } from './support/streams.js';

// Tokens slow enough that streams overlap and an abort lands mid-generation.
const ITL_MS = 10;
// An aborted stream would run two seconds: it is cut long before its end.
const LONG = 200;

/** The transport's own connection statistics (issue 27 item 5). */
interface ConnectionStats {
  readonly refusedStreams: number;
  readonly waitingStreams: number;
  readonly openStreams: number;
  readonly connections: number;
  readonly peerMaxConcurrentStreams: number | undefined;
}

function connectionStats(transport: Transport): ConnectionStats {
  const stats = (transport as { connectionStats?: () => ConnectionStats }).connectionStats;
  if (typeof stats !== 'function')
    throw new Error(
      'grpcTransport has no connectionStats() yet (issue 27 item 5): refused streams cannot be counted',
    );
  return stats.call(transport);
}

const env = useProxiedFake({ fake: { itlMs: ITL_MS } });

const CONCURRENT = requests(200, (i) => 8 + (i % 25));

async function concurrently(transport: Transport): Promise<StreamOutcome[]> {
  const llm = env.llm(transport);
  // One stream first: these streams test the proxy, not the opening burst (see the burst test).
  await readStream(llm, { prompt: 'warm up', maxTokens: 1 });
  return Promise.all(CONCURRENT.map((r) => readStream(llm, r)));
}

// The same requests on a direct connection, once for every proxy.
let direct: Promise<StreamOutcome[]> | undefined;

describe.each(PROXY_CASES)('through %s (%s at the proxy)', (kind, mode) => {
  it('200 concurrent streams give the text of a direct connection', async () => {
    direct ??= concurrently(env.direct());
    const [proxied, want] = await Promise.all([concurrently(env.transport(kind, mode)), direct]);
    expect(errorTally(want)).toEqual({});
    expect(errorTally(proxied)).toEqual({});
    expect(proxied.map((o) => o.text)).toEqual(want.map((o) => o.text));
    expect(proxied.every((o) => o.text.length > 0 && o.finishReason === 'length')).toBe(true);
  });

  it('aborts reach the fake: the aborted ensemble calls are cancelled there, the others complete', async () => {
    const llm = env.llm(env.transport(kind, mode));
    await llm.schema();
    const fake = env.fake();
    const batch = requests(20, (i) => (i % 2 === 0 ? LONG : 12));
    const outcomes = await Promise.all(
      batch.map((r, i) => {
        const controller = new AbortController();
        return readStream(llm, r, {
          signal: controller.signal,
          onChunk: (n) => {
            if (i % 2 === 0 && n === 3) controller.abort();
          },
        });
      }),
    );
    const ended = await Promise.all(
      outcomes.map((o) =>
        fake.waitForEvent((e) => e.model === 'ensemble' && e.id === o.requestId && e.event !== 'received'),
      ),
    );
    expect(outcomes.map((o) => o.error?.code ?? o.finishReason)).toEqual(
      batch.map((_, i) => (i % 2 === 0 ? 'cancelled' : 'length')),
    );
    expect(ended.map((e) => e.event)).toEqual(batch.map((_, i) => (i % 2 === 0 ? 'cancelled' : 'completed')));
    for (const e of ended.filter((_, i) => i % 2 === 0)) expect(e.tokens).toBeLessThan(LONG);
  });

  it('a burst of 300 streams on a fresh client completes with no stream refused', async () => {
    const transport = env.transport(kind, mode);
    const llm = env.llm(transport);
    const batch = requests(300, () => 16);
    // The first call of this transport is the burst itself: it opens the connection, so the streams
    // start before the proxy's SETTINGS (and its stream limit) have arrived.
    const outcomes = await Promise.all(batch.map((r) => readStream(llm, r)));
    expect(errorTally(outcomes)).toEqual({});
    expect(outcomes.every((o) => o.finishReason === 'length')).toBe(true);
    const stats = connectionStats(transport);
    expect(stats.refusedStreams).toBe(0);
    expect(stats.peerMaxConcurrentStreams).toBe(kind === 'nginx' ? 128 : 100);
  });
});
