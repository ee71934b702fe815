import { httpTransport } from '@trtllm/http';
import { TritonLlm, TritonLlmError } from '@trtllm/sdk';
import { describe, expect, it } from 'vitest';
import type { ServerProcess } from '../reliability/support/processes.js';
import { expectedIds } from '../reliability/support/streams.js';
import { useFreezablePair } from './support.js';

// Issue 55: streams already running on a replica that freezes (SIGSTOP) had nothing to end them
// over HTTP, which has no PING: with no deadline they waited for ever, and the endpoint never
// heard of it. The HTTP transport's liveness rule (silenceTimeoutMs) now fails them `unavailable`,
// after the tokens they got, and that counts against the frozen endpoint.
const INPUT = [259, 260];
const MAX_TOKENS = 2000;
const STREAMS = 4;
const SILENCE_MS = 400;

interface Running {
  readonly tokens: number[];
  error: TritonLlmError | undefined;
  done: Promise<void>;
}

describe('streams on a replica frozen mid-generation (http)', () => {
  const pair = useFreezablePair();

  it('fail unavailable after silenceTimeoutMs with their tokens kept, and eject the frozen endpoint', async () => {
    const { healthy, frozen } = await pair.start(5);
    // No periodic health check and a probe that cannot end within the test: only the streams'
    // own failures can eject the frozen endpoint here.
    const transport = pair.track(
      httpTransport({
        baseUrls: [healthy.httpUrl, frozen.httpUrl],
        silenceTimeoutMs: SILENCE_MS,
        healthIntervalMs: 0,
        healthTimeoutMs: 60_000,
        ejectAfterFailures: 1,
      }),
    );
    const statsOf = (s: ServerProcess) =>
      transport.endpointStats().find((e) => e.name.startsWith(s.httpUrl))!;
    const llm = new TritonLlm({ transport, model: 'tensorrt_llm', retry: { attempts: 1 } });
    await llm.schema();

    const stop = new AbortController();
    const running: Running[] = Array.from({ length: STREAMS }, () => {
      const r: Running = { tokens: [], error: undefined, done: Promise.resolve() };
      r.done = (async () => {
        try {
          for await (const chunk of llm.stream(
            { inputIds: INPUT, maxTokens: MAX_TOKENS },
            { signal: stop.signal },
          )) {
            if (!chunk.done) r.tokens.push(...chunk.tokenIds);
          }
        } catch (err) {
          if (!(err instanceof TritonLlmError)) throw err;
          r.error = err;
        }
      })();
      return r;
    });
    await expect.poll(() => running.every((r) => r.tokens.length > 0), { timeout: 10_000 }).toBe(true);
    const onFrozen = statsOf(frozen).inFlight;
    expect(onFrozen).toBeGreaterThan(0);

    await frozen.signal('SIGSTOP');
    const failed = () => running.filter((r) => r.error?.code === 'unavailable');
    await expect.poll(() => failed().length, { timeout: 10_000 }).toBe(onFrozen);
    stop.abort();
    await Promise.all(running.map((r) => r.done));

    for (const r of failed()) {
      expect(r.error?.message).toContain('silenceTimeoutMs');
      expect(r.tokens).toEqual(expectedIds(INPUT, MAX_TOKENS).slice(0, r.tokens.length));
    }
    // The others ran on the healthy replica until the test ended them (a stream ended by its
    // caller's signal ends quietly).
    const others = running.filter((r) => r.error === undefined);
    expect(others).toHaveLength(STREAMS - onFrozen);
    for (const r of others)
      expect(r.tokens).toEqual(expectedIds(INPUT, MAX_TOKENS).slice(0, r.tokens.length));
    expect(statsOf(frozen).errors).toBe(onFrozen);
    expect(statsOf(frozen).state).toBe('ejected');

    // The next request goes to the healthy replica and completes.
    const requestsBefore = statsOf(frozen).requests;
    const result = await llm.generate({ inputIds: INPUT, maxTokens: 4 });
    expect(result.sequences[0]?.tokenIds).toEqual(expectedIds(INPUT, 4));
    expect(statsOf(frozen).requests).toBe(requestsBefore);
  });
});
