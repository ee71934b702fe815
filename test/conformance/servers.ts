import { grpcTransport } from '@trtllm/grpc';
import { httpTransport } from '@trtllm/http';
import type { GenerateResult, StreamChunk, Transport } from '@trtllm/sdk';
import { type FakeEvent, type FakeTriton, startFakeTriton } from '@trtllm/testing';
import { afterAll, beforeAll, describe, inject } from 'vitest';
import { readEventLog } from '../support/event-log.js';
import { inCi } from './ci.js';

export type ServerKind = 'fake' | 'real';
export type Protocol = 'grpc' | 'http';

/** What a conformance test needs of a server, the same for the fake and the real Triton. */
export interface ConformanceServer {
  readonly kind: ServerKind;
  /** The server's HTTP and gRPC addresses, for answers read as they come rather than through a transport. */
  readonly httpUrl: string;
  readonly grpcUrl: string;
  transport(protocol: Protocol): Transport;
  /** Events of the generator (GENERATOR.md "Event log"): the fake's log, or the real models' JSONL file. */
  events(): FakeEvent[];
  waitForEvent(match: (e: FakeEvent) => boolean, timeoutMs?: number): Promise<FakeEvent>;
}

/** Same per-token pace on both servers, so cancellation tests find requests still running. */
export const ITL_MS = 5;

const real = inject('realTriton');
/**
 * Whether the real-Triton cases are skipped: only off CI, when the global setup could not start
 * the server. In CI they run and, with no server, fail in `useServer` (the global setup already
 * refuses to go on there), so a missing real Triton is never a green run.
 */
export const REAL_SKIPPED = 'unavailable' in real && !inCi();

/**
 * Declares `fn`'s block once per server and protocol, named by `name`'s two `%s` (server, protocol).
 * The real-Triton blocks are always declared, so a machine without it lists them as skipped
 * instead of dropping them from the count.
 */
export function describeEachServer(name: string, fn: (kind: ServerKind, protocol: Protocol) => void): void {
  const cases = (kind: ServerKind) => (['grpc', 'http'] as const).map((p) => [kind, p] as const);
  describe.each(cases('fake'))(name, fn);
  describe.skipIf(REAL_SKIPPED).each(cases('real'))(name, fn);
}

/**
 * @deprecated The cases that run (the real Triton's only when it is up), for `describe.each`: a
 * machine without the real Triton drops those silently. Use {@link describeEachServer}, which lists
 * them as skipped.
 */
export const CASES: readonly (readonly [ServerKind, Protocol])[] = (['fake', 'real'] as const)
  .filter((kind) => kind === 'fake' || !('unavailable' in real))
  .flatMap((kind) => (['grpc', 'http'] as const).map((p) => [kind, p] as const));

/** Sets up the server of a describe block and closes what it made afterwards. */
export function useServer(kind: ServerKind): () => ConformanceServer {
  let server: ConformanceServer | undefined;
  let fake: FakeTriton | undefined;
  const transports: Transport[] = [];
  beforeAll(async () => {
    if (kind === 'fake') {
      const f = await startFakeTriton({ itlMs: ITL_MS });
      fake = f;
      server = {
        kind,
        httpUrl: f.httpUrl,
        grpcUrl: f.grpcUrl,
        transport: (p) =>
          track(p === 'grpc' ? grpcTransport({ baseUrl: f.grpcUrl }) : httpTransport({ baseUrl: f.httpUrl })),
        events: () => f.events(),
        waitForEvent: (m, t) => f.waitForEvent(m, t),
      };
    } else {
      if ('unavailable' in real) throw new Error(real.unavailable);
      const { grpcUrl, httpUrl, eventLog } = real;
      const events = (): FakeEvent[] => readEventLog(eventLog);
      server = {
        kind,
        httpUrl,
        grpcUrl,
        transport: (p) =>
          track(p === 'grpc' ? grpcTransport({ baseUrl: grpcUrl }) : httpTransport({ baseUrl: httpUrl })),
        events,
        waitForEvent: async (match, timeoutMs = 10_000) => {
          const deadline = Date.now() + timeoutMs;
          for (;;) {
            const hit = events().find(match);
            if (hit !== undefined) return hit;
            if (Date.now() > deadline)
              throw new Error(`no matching event on the real Triton within ${timeoutMs} ms`);
            await new Promise((r) => setTimeout(r, 50));
          }
        },
      };
    }
  });
  afterAll(async () => {
    await Promise.all(transports.map((t) => t.close()));
    await fake?.close();
  });
  function track(t: Transport): Transport {
    transports.push(t);
    return t;
  }
  return () => {
    if (server === undefined) throw new Error('server not set up');
    return server;
  };
}

/** The streamed text of a stream and the result its final chunk carries. */
export async function streamed(
  stream: AsyncIterable<StreamChunk>,
): Promise<{ text: string; final: GenerateResult }> {
  let text = '';
  for await (const chunk of stream) {
    if (chunk.done) return { text, final: chunk.result };
    text += chunk.text;
  }
  throw new Error('the stream ended without its final chunk');
}
