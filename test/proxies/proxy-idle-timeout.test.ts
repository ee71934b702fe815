import { describe, expect, it } from 'vitest';
import { PROXY_CASES, useProxiedFake } from './support/fixture.js';
import { readStream } from './support/streams.js';

// A generation whose tokens come 3 s apart behind a proxy that gives up on a server silent for
// 2 s: what a user sees when nginx's grpc_read_timeout or HAProxy's timeout server is shorter
// than the pause of a long generation (the README's "Behind a proxy" says what to raise).
const IDLE_TIMEOUT_S = 2;
const ITL_MS = 3000;

const env = useProxiedFake({ fake: { itlMs: ITL_MS }, idleTimeoutS: IDLE_TIMEOUT_S });

describe.concurrent.each(PROXY_CASES)('an idle timeout of %s (%s at the proxy)', (kind, mode) => {
  it('shorter than the pause between tokens ends the stream with an error that says the stream was reset or closed', async () => {
    const llm = env.llm(env.transport(kind, mode));
    const outcome = await readStream(llm, { prompt: 'a slow generation', maxTokens: 3 });
    console.info(`[${kind} ${mode} idle timeout] ${outcome.error?.code}: ${outcome.error?.message}`);
    expect(outcome.chunks).toBe(1);
    expect(outcome.error?.code).toBe(kind === 'nginx' ? 'internal' : 'unavailable');
    expect(outcome.error?.message).toMatch(/reset|closed/i);
  });
});
