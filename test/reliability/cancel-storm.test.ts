import { grpcTransport } from '@trtllm/grpc';
import { httpTransport } from '@trtllm/http';
import { type Transport, TritonLlm, TritonLlmError } from '@trtllm/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type InspectableServer, startFakeProcess } from './support/processes.js';

// 10,000 requests, half over each protocol, each ended at a random point. The fake runs in its
// own process so the client has a core of its own; `activeRequests()` asks it over IPC.
const REQUESTS_PER_PROTOCOL = 5000;
const CONCURRENCY = 16;
const MAX_TOKENS = 32;
const KINDS = [
  'abort-before-send',
  'abort-in-flight',
  'abort-after-k',
  'break-after-k',
  'stop-after-k',
  'deadline',
] as const;
type Kind = (typeof KINDS)[number];

/** A small seeded generator, so a failing storm can be replayed from the seed it prints. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Outcomes by `protocol:kind:outcome`, and anything thrown that is not a TritonLlmError. */
interface Tally {
  readonly outcomes: Map<string, number>;
  readonly foreign: unknown[];
}

/** One request, ended by `kind` after `k` chunks (or `k`-derived milliseconds for a deadline). */
async function one(llm: TritonLlm, protocol: string, kind: Kind, k: number, tally: Tally): Promise<void> {
  const controller = new AbortController();
  const stream = llm.stream(
    { inputIds: [259 + (k % 30)], maxTokens: MAX_TOKENS },
    { signal: controller.signal, ...(kind === 'deadline' ? { timeoutMs: 1 + k * 2 } : {}) },
  );
  if (kind === 'abort-before-send') controller.abort();
  if (kind === 'abort-in-flight') setImmediate(() => controller.abort());
  let outcome: string;
  let chunks = 0;
  try {
    for await (const chunk of stream) {
      if (chunk.done) break;
      chunks++;
      if (chunks !== k) continue;
      if (kind === 'abort-after-k') controller.abort();
      if (kind === 'break-after-k') break;
      if (kind === 'stop-after-k') void stream.stop();
    }
    outcome = 'ended';
  } catch (err) {
    if (!(err instanceof TritonLlmError)) {
      tally.foreign.push(err);
      return;
    }
    outcome = err.code;
  }
  const key = `${protocol}:${kind}:${outcome}`;
  tally.outcomes.set(key, (tally.outcomes.get(key) ?? 0) + 1);
}

/** Resources in `after` beyond those in `before`, counted by type. */
function added(before: readonly string[], after: readonly string[]): string[] {
  const left = [...before];
  return after.filter((r) => {
    const i = left.indexOf(r);
    if (i < 0) return true;
    left.splice(i, 1);
    return false;
  });
}

describe('cancel storm', () => {
  let server: InspectableServer;
  const rejections: unknown[] = [];
  const onRejection = (reason: unknown) => rejections.push(reason);

  beforeAll(async () => {
    server = await startFakeProcess({ itlMs: 1 });
    process.on('unhandledRejection', onRejection);
  });
  afterAll(async () => {
    process.off('unhandledRejection', onRejection);
    await server.close();
  });

  it(`${2 * REQUESTS_PER_PROTOCOL} requests ended at random points leave no request open, no handle, no rejection`, {
    timeout: 240_000,
  }, async () => {
    const handlesBefore = process.getActiveResourcesInfo();
    const seed = Date.now();
    const random = prng(seed);
    const transports: Transport[] = [
      grpcTransport({ baseUrl: server.grpcUrl }),
      httpTransport({ baseUrl: server.httpUrl }),
    ];
    const tally: Tally = { outcomes: new Map(), foreign: [] };
    await Promise.all(
      transports.map(async (transport) => {
        const llm = new TritonLlm({ transport, model: 'tensorrt_llm', retry: { attempts: 1 } });
        await llm.schema();
        let started = 0;
        await Promise.all(
          Array.from({ length: CONCURRENCY }, async () => {
            while (started < REQUESTS_PER_PROTOCOL) {
              started++;
              const kind = KINDS[Math.floor(random() * KINDS.length)]!;
              await one(llm, transport.protocol, kind, 1 + Math.floor(random() * 8), tally);
            }
          }),
        );
      }),
    );
    const counted = [...tally.outcomes.values()].reduce((a, b) => a + b, 0);
    console.info(`[cancel storm] seed ${seed}:`, Object.fromEntries([...tally.outcomes].sort()));
    expect(tally.foreign).toEqual([]);
    expect(counted).toBe(2 * REQUESTS_PER_PROTOCOL);

    // Every request ended on the server too (a cancelled raw model stops; none is left running).
    await eventually(async () => (await server.activeRequests()) === 0, 30_000);
    await Promise.all(transports.map((t) => t.close()));
    // Nothing the storm opened outlives close(): no socket, session or timer beyond those before it.
    await eventually(
      async () => added(handlesBefore, process.getActiveResourcesInfo()).length === 0,
      10_000,
    ).catch(() => undefined);
    expect(added(handlesBefore, process.getActiveResourcesInfo())).toEqual([]);
    expect(rejections).toEqual([]);
  });
});
