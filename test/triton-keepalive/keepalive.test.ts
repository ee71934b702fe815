/**
 * Keepalive against the real Triton 2.51 (issue 27, item 4): the gRPC transport's PINGs never get
 * a connection killed by Triton's ping policy, and when a server says "too many pings" the client
 * backs off as grpc clients do.
 *
 * Triton's policy is grpc core's: while no DATA or HEADERS go out, a PING that comes sooner than
 * `--grpc-http2-min-recv-ping-interval-without-data` (default 300 000 ms) after the previous one
 * is a strike; past `--grpc-http2-max-ping-strikes` (default 2) the server sends GOAWAY
 * ENHANCE_YOUR_CALM "too_many_pings" and closes the connection with every stream on it. Showing
 * that the default client (330 000 ms) lives with that policy directly would take a stream silent
 * for several 300 s intervals, too long for CI, so the policy is scaled down to 8 000 ms and 2
 * strikes: a client at the default's ratio to the policy (1.1x, 8 800 ms) keeps a stream silent
 * for 50 s (five PINGs) alive, and a client at 1 000 ms is told off and doubles its interval until
 * the server leaves it alone. A second Triton with the default policy stands beside it, to read
 * the policy it really runs with (the table it prints at `--log-verbose=1`) against the
 * transport's default, and to see that it enforces it.
 *
 * The models are copies of the raw stand-in `tensorrt_llm` (test/triton/models) whose first token
 * comes after `ttft_ms`; until then the server sends nothing on the stream. A TCP relay in front
 * of the server counts the client's PINGs and reads the server's GOAWAY off the wire.
 */
import { rmSync } from 'node:fs';
import { type GrpcTransport, grpcTransport } from '@trtllm/grpc';
import { TritonLlmError } from '@trtllm/sdk';
import { generateTokens } from '@trtllm/testing';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { rawRequest, streamedIds } from '../../packages/grpc/test/fake-models.js';
import { startPingRelay } from './ping-relay.js';
import { type RealTriton, silentModelRepository, startTriton } from './triton.js';

/** The scaled policy: `--grpc-http2-min-recv-ping-interval-without-data` and `--grpc-http2-max-ping-strikes`. */
const POLICY_MS = 8_000;
const STRIKES = 2;
/** The default keepalive's ratio to Triton's default policy (330 s / 300 s), on the scaled policy. */
const AT_DEFAULT_RATIO_MS = 8_800;
const SILENT = { model: 'tensorrt_llm', ms: 30_000 };
const LONG_SILENT = { model: 'tensorrt_llm_long', ms: 50_000 };
const ENHANCE_YOUR_CALM = 0xb;
const TOO_MANY_PINGS = /too[ _]many[ _]pings/i;
const PROMPT = [259, 260];
const TOKENS = 2;

const repositories: string[] = [];
let scaled: RealTriton | undefined;
let defaults: RealTriton | undefined;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  const scaledRepository = silentModelRepository({
    [SILENT.model]: SILENT.ms,
    [LONG_SILENT.model]: LONG_SILENT.ms,
  });
  const defaultRepository = silentModelRepository({ [SILENT.model]: SILENT.ms });
  repositories.push(scaledRepository, defaultRepository);
  // Both at once: each takes a few seconds to load its Python models.
  const [a, b] = await Promise.allSettled([
    startTriton(scaledRepository, [
      `--grpc-http2-min-recv-ping-interval-without-data=${POLICY_MS}`,
      `--grpc-http2-max-ping-strikes=${STRIKES}`,
      '--log-verbose=1',
    ]),
    startTriton(defaultRepository, ['--log-verbose=1']),
  ]);
  if (a.status === 'fulfilled') scaled = a.value;
  if (b.status === 'fulfilled') defaults = b.value;
  if (a.status === 'rejected') throw a.reason;
  if (b.status === 'rejected') throw b.reason;
}, 120_000);

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await Promise.all([scaled?.stop(), defaults?.stop()]);
  for (const dir of repositories) rmSync(dir, { recursive: true, force: true });
}, 60_000);

function server(which: RealTriton | undefined): RealTriton {
  if (which === undefined) throw new Error('the real Triton did not start');
  return which;
}

/** A relay in front of `target`, and a transport through it with `options`; both closed after the file. */
async function relayedClient(
  target: RealTriton,
  options: { keepaliveMs?: number; warnings: string[] },
): Promise<{ transport: GrpcTransport; relay: Awaited<ReturnType<typeof startPingRelay>> }> {
  const relay = await startPingRelay(target.grpcUrl);
  const transport = grpcTransport({
    baseUrl: relay.url,
    ...(options.keepaliveMs !== undefined ? { keepaliveMs: options.keepaliveMs } : {}),
    logger: { warn: (message) => options.warnings.push(message) },
  });
  cleanups.push(relay.close, () => transport.close());
  return { transport, relay };
}

interface Outcome {
  readonly tokens: number[];
  readonly error: TritonLlmError | undefined;
}

/** One request to a silent model: its tokens, or the error that ended it. */
async function silentRequest(transport: GrpcTransport, id: string, model = SILENT.model): Promise<Outcome> {
  const responses = [];
  try {
    for await (const response of transport.stream({ ...rawRequest(id, PROMPT, TOKENS), model })) {
      responses.push(response);
    }
    return { tokens: streamedIds(responses), error: undefined };
  } catch (err) {
    if (!(err instanceof TritonLlmError)) throw err;
    return { tokens: streamedIds(responses), error: err };
  }
}

const expectedTokens = (): number[] => [...(generateTokens(PROMPT, { maxTokens: TOKENS })[0]?.tokens ?? [])];

async function eventually<T>(read: () => T | undefined, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`not seen within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('gRPC keepalive against the real Triton', () => {
  it.concurrent('a client pinging every 1 000 ms is told too_many_pings, its streams fail unavailable, it warns once and doubles its interval until a silent stream lives to its first token', async ({
    expect,
  }) => {
    const triton = server(scaled);
    const warnings: string[] = [];
    const { transport, relay } = await relayedClient(triton, { keepaliveMs: 1_000, warnings });

    // Two streams on the first connection: the GOAWAY ends every stream of its connection.
    const first = await Promise.all([silentRequest(transport, 'fast-a'), silentRequest(transport, 'fast-b')]);
    for (const outcome of first) {
      expect(outcome.tokens).toEqual([]);
      expect(outcome.error?.code).toBe('unavailable');
      expect(outcome.error?.retryable).toBe(true);
      expect(outcome.error?.message).toMatch(TOO_MANY_PINGS);
    }
    expect(relay.connections).toHaveLength(1);
    expect(relay.connections[0]?.goaway).toMatchObject({ code: ENHANCE_YOUR_CALM, debug: 'too_many_pings' });
    // One PING is free and `STRIKES` are forgiven: it takes more to be told off.
    expect(relay.connections[0]?.clientPings).toBeGreaterThan(STRIKES + 1);
    // The server stopped both requests (its generator saw the cancellation).
    const cancelled = await eventually(() => {
      const ids = triton
        .events()
        .filter((e) => e.event === 'cancelled')
        .map((e) => e.id);
      return ids.includes('fast-a') && ids.includes('fast-b') ? ids : undefined;
    }, 'the server cancelling fast-a and fast-b');
    expect(cancelled).toEqual(expect.arrayContaining(['fast-a', 'fast-b']));

    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('2000 ms');
    expect(warnings[0]).toContain('--grpc-http2-min-recv-ping-interval-without-data');
    expect(warnings[0]).toContain('--grpc-http2-max-ping-strikes');
    expect(transport.connectionStats().keepaliveMs).toBe(2_000);

    // One silent stream per later connection, until the server leaves one alone.
    const intervals: number[] = [];
    let survivor: Outcome | undefined;
    while (survivor === undefined) {
      if (intervals.length === 4)
        throw new Error(`still told off after intervals ${intervals.join(', ')} ms`);
      const interval = transport.connectionStats().keepaliveMs;
      intervals.push(interval);
      const outcome = await silentRequest(transport, `backed-off-${interval}`);
      const connection = relay.connections.at(-1);
      expect(relay.connections).toHaveLength(1 + intervals.length);
      if (outcome.error === undefined) {
        survivor = outcome;
        expect(connection?.goaway).toBeUndefined();
        expect(connection?.clientPings).toBeGreaterThanOrEqual(2);
      } else {
        expect(outcome.error.code).toBe('unavailable');
        expect(outcome.error.message).toMatch(TOO_MANY_PINGS);
        expect(connection?.goaway).toMatchObject({ code: ENHANCE_YOUR_CALM, debug: 'too_many_pings' });
        expect(transport.connectionStats().keepaliveMs).toBe(interval * 2);
      }
    }
    // grpc core's rule: PINGs at least the policy's interval apart are never strikes.
    expect(intervals.slice(0, -1).every((ms) => ms < POLICY_MS)).toBe(true);
    expect(intervals.at(-1)).toBeGreaterThanOrEqual(POLICY_MS);
    expect(survivor.tokens).toEqual(expectedTokens());
    // Told once per transport, not once per GOAWAY.
    expect(warnings).toHaveLength(1);
  }, 120_000);

  it.concurrent('a client at the default ratio to the policy (8 800 ms on 8 000 ms) keeps a stream silent for 50 s alive, without a warning', async ({
    expect,
  }) => {
    const triton = server(scaled);
    // The flags reached the server.
    expect(triton.keepaliveOptions()).toMatchObject({
      http2_min_recv_ping_interval_without_data_ms: POLICY_MS,
      http2_max_ping_strikes: STRIKES,
    });
    const warnings: string[] = [];
    const { transport, relay } = await relayedClient(triton, { keepaliveMs: AT_DEFAULT_RATIO_MS, warnings });

    const outcome = await silentRequest(transport, 'at-ratio', LONG_SILENT.model);
    expect(outcome.error).toBeUndefined();
    expect(outcome.tokens).toEqual(expectedTokens());
    expect(relay.connections).toHaveLength(1);
    expect(relay.connections[0]?.goaway).toBeUndefined();
    // As many PINGs as get a faster client told off (one free, `STRIKES` forgiven, then GOAWAY).
    expect(relay.connections[0]?.clientPings).toBeGreaterThanOrEqual(STRIKES + 2);
    expect(warnings).toEqual([]);
    expect(transport.connectionStats().keepaliveMs).toBe(AT_DEFAULT_RATIO_MS);
  }, 100_000);

  it.concurrent("the default keepalive (330 000 ms) is above the ping interval a default Triton enforces, at the scaled test's ratio", async ({
    expect,
  }) => {
    const triton = server(defaults);
    const policy = triton.keepaliveOptions();
    const minimum = policy.http2_min_recv_ping_interval_without_data_ms;
    const strikes = policy.http2_max_ping_strikes;
    if (minimum === undefined || strikes === undefined) {
      throw new Error(`the server printed no ping policy: ${JSON.stringify(policy)}`);
    }
    const { transport: byDefault } = await relayedClient(triton, { warnings: [] });
    const keepaliveMs = byDefault.connectionStats().keepaliveMs;
    expect(keepaliveMs).toBe(330_000);
    expect(keepaliveMs).toBeGreaterThan(minimum);
    expect(keepaliveMs / minimum).toBeCloseTo(AT_DEFAULT_RATIO_MS / POLICY_MS, 9);

    // The default server does enforce its policy: a client pinging every 1 000 ms is told off.
    const warnings: string[] = [];
    const { transport: fast, relay } = await relayedClient(triton, { keepaliveMs: 1_000, warnings });
    const outcome = await silentRequest(fast, 'default-policy');
    expect(outcome.error?.code).toBe('unavailable');
    expect(outcome.error?.message).toMatch(TOO_MANY_PINGS);
    expect(relay.connections[0]?.goaway).toMatchObject({ code: ENHANCE_YOUR_CALM, debug: 'too_many_pings' });
    expect(relay.connections[0]?.clientPings).toBeGreaterThan(strikes + 1);
    expect(warnings).toHaveLength(1);
    expect(fast.connectionStats().keepaliveMs).toBe(2_000);
  }, 60_000);
});
