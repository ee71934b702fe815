import { describe, expect, it } from 'vitest';
import { PROXY_CASES, useProxiedFake } from './support/fixture.js';
import { errorTally, readStream, requests, startStreams } from './support/streams.js';

// 60 tokens 20 ms apart: over a second of generation, long past the reload.
const ITL_MS = 20;
const STREAMS = 20;

const env = useProxiedFake({ fake: { itlMs: ITL_MS } });

describe.concurrent.each(PROXY_CASES)('a reload of %s (%s at the proxy)', (kind, mode) => {
  it('is transparent: streams in flight finish with the exact text, and new calls work', async () => {
    const batch = requests(STREAMS, () => 60);
    const llm = env.llm(env.transport(kind, mode));
    const direct = env.llm(env.direct());
    const expected = Promise.all(batch.map((r) => readStream(direct, r)));
    await readStream(llm, { prompt: 'warm up', maxTokens: 1 });

    const inFlight = startStreams(llm, batch, 3);
    await inFlight.midway;
    await env.proxy(kind, mode).reload();
    // Were they all done already, the reload would have happened between streams, proving nothing.
    const endedAtReload = inFlight.ended();

    // A call while the old worker drains, and one after it has closed its connection.
    const during = await readStream(llm, batch[0]!);
    const outcomes = await inFlight.outcomes;
    const after = await readStream(llm, batch[1]!);
    const want = await expected;
    expect(endedAtReload).toBeLessThan(STREAMS);
    expect(errorTally(outcomes)).toEqual({});
    expect(outcomes.map((o) => o.text)).toEqual(want.map((o) => o.text));
    expect(errorTally([during, after])).toEqual({});
    expect([during.text, after.text]).toEqual([want[0]?.text, want[1]?.text]);
  });
});
