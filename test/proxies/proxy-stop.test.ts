import { describe, expect, it } from 'vitest';
import { PROXY_CASES, useProxiedFake } from './support/fixture.js';
import { readStream, requests, startStreams } from './support/streams.js';

// 150 tokens 10 ms apart: the streams are still running when the proxy goes away.
const ITL_MS = 10;
const STREAMS = 10;

const env = useProxiedFake({ fake: { itlMs: ITL_MS } });

describe.concurrent.each(PROXY_CASES)('stopping %s (%s at the proxy)', (kind, mode) => {
  it('fails the streams in flight unavailable; once it is back, the next call on the same transport reconnects', async () => {
    const proxy = env.proxy(kind, mode);
    const llm = env.llm(env.transport(kind, mode));
    await readStream(llm, { prompt: 'warm up', maxTokens: 1 });

    const inFlight = startStreams(
      llm,
      requests(STREAMS, () => 150),
      3,
    );
    await inFlight.midway;
    await proxy.stop();
    const outcomes = await inFlight.outcomes;
    expect(outcomes.map((o) => o.error?.name)).toEqual(outcomes.map(() => 'TritonLlmError'));
    expect(outcomes.map((o) => o.error?.code)).toEqual(outcomes.map(() => 'unavailable'));
    expect(outcomes.every((o) => o.chunks >= 3)).toBe(true);

    await proxy.start();
    const request = { prompt: 'after the restart', maxTokens: 12 };
    const [after, direct] = await Promise.all([
      readStream(llm, request),
      readStream(env.llm(env.direct()), request),
    ]);
    expect(after.error).toBeUndefined();
    expect(after.finishReason).toBe('length');
    expect(after.text).toBe(direct.text);
  });
});
