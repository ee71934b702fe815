import { describe, expect, it } from 'vitest';
import { PROXY_CASES, useProxiedFake } from './support/fixture.js';
import { readStream } from './support/streams.js';

// A generation whose tokens come 3 s apart behind proxies that give up on a peer silent for 2 s:
// what a user sees when a proxy's timeout is shorter than a pause of a long generation (time to
// first token of a long prompt, a queue under load). The README's "Behind a proxy" says what to raise.
const ITL_MS = 3000;
const TIMEOUT_S = 2;
const REQUEST = { prompt: 'a slow generation', maxTokens: 2 };

describe('a proxy timeout on the server side shorter than the pause between tokens', () => {
  const env = useProxiedFake({ fake: { itlMs: ITL_MS }, serverTimeoutS: TIMEOUT_S });

  // nginx grpc_read_timeout: RST_STREAM INTERNAL_ERROR. HAProxy timeout server: the stream ends
  // (empty DATA with END_STREAM, then RST_STREAM CANCEL) without a gRPC status; the connection stays.
  describe.concurrent.each(PROXY_CASES)('%s (%s)', (kind, mode) => {
    it('ends the stream after the first token with an error that says the stream was reset or closed', async () => {
      const outcome = await readStream(env.llm(env.transport(kind, mode)), REQUEST);
      console.info(`[${kind} ${mode} server timeout] ${outcome.error?.code}: ${outcome.error?.message}`);
      expect(outcome.chunks).toBe(1);
      expect(outcome.error?.code).toBe(kind === 'nginx' ? 'internal' : 'unavailable');
      expect(outcome.error?.message).toMatch(
        kind === 'nginx' ? /reset.*INTERNAL_ERROR/ : /ended without a gRPC status.*proxy/,
      );
    });
  });
});

describe('a proxy timeout on the client side shorter than the pause between tokens', () => {
  const env = useProxiedFake({ fake: { itlMs: ITL_MS }, clientTimeoutS: TIMEOUT_S });

  // The client keeps its side of the stream open while tokens arrive (for the in-band stop), so
  // nginx's client_body_timeout counts the pauses as well; HAProxy's timeout client does not.
  describe.concurrent.each(PROXY_CASES)('%s (%s)', (kind, mode) => {
    it(
      kind === 'nginx'
        ? 'nginx client_body_timeout resets the stream (RST_STREAM PROTOCOL_ERROR)'
        : 'HAProxy timeout client leaves the stream alone',
      async () => {
        const outcome = await readStream(env.llm(env.transport(kind, mode)), REQUEST);
        if (kind === 'nginx') {
          console.info(`[${kind} ${mode} client timeout] ${outcome.error?.code}: ${outcome.error?.message}`);
          expect(outcome.chunks).toBe(1);
          expect(outcome.error?.code).toBe('internal');
          expect(outcome.error?.message).toMatch(/reset.*PROTOCOL_ERROR/);
        } else {
          expect(outcome.error).toBeUndefined();
          expect(outcome.chunks).toBe(2);
          expect(outcome.finishReason).toBe('length');
        }
      },
    );
  });
});
