import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import { grpcTransport } from '@trtllm/grpc';
import { httpTransport } from '@trtllm/http';
import { type RetryOptions, type Transport, TritonLlm, TritonLlmError } from '@trtllm/sdk';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { rejection } from './support/streams.js';

// A server that accepts each connection and resets it at once: a failure before any response
// byte, on every attempt. Counting connections counts attempts.
interface ResettingServer {
  readonly url: string;
  readonly connections: () => number;
  close(): Promise<void>;
}

async function resettingServer(): Promise<ResettingServer> {
  let connections = 0;
  const server: Server = createServer((socket) => {
    connections++;
    socket.resetAndDestroy();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    connections: () => connections,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let shared: ResettingServer;
beforeAll(async () => {
  shared = await resettingServer();
});
afterAll(() => shared.close());

const FAST: RetryOptions = { initialDelayMs: 1, maxDelayMs: 5 };

describe.each(['grpc', 'http'] as const)(
  'retries over %s against a server that resets every connection',
  (protocol) => {
    const transports: Transport[] = [];
    afterEach(async () => {
      await Promise.all(transports.splice(0).map((t) => t.close()));
    });

    function client(retry?: RetryOptions, url = shared.url): TritonLlm {
      const transport =
        protocol === 'grpc' ? grpcTransport({ baseUrl: url }) : httpTransport({ baseUrl: url });
      transports.push(transport);
      return new TritonLlm({ transport, model: 'tensorrt_llm', ...(retry !== undefined ? { retry } : {}) });
    }

    async function attemptsOf(
      call: () => Promise<unknown>,
    ): Promise<{ attempts: number; error: TritonLlmError }> {
      const before = shared.connections();
      const error = await rejection(call());
      expect(error).toBeInstanceOf(TritonLlmError);
      return { attempts: shared.connections() - before, error: error as TritonLlmError };
    }

    it('retries an idempotent read up to the attempts, then says how many were made', async () => {
      const { attempts, error } = await attemptsOf(() => client({ ...FAST, attempts: 5 }).health());
      expect(attempts).toBe(5);
      expect(error.code).toBe('unavailable');
      expect(error.message).toMatch(/\(after 5 attempts\)$/);
    });

    it('makes three attempts by default', async () => {
      const { attempts } = await attemptsOf(() => client().modelConfig());
      expect(attempts).toBe(3);
    });

    it('lets a call override the client policy field by field', async () => {
      const llm = client({ ...FAST, attempts: 5 });
      expect((await attemptsOf(() => llm.health({ retry: { attempts: 2 } }))).attempts).toBe(2);
      expect((await attemptsOf(() => llm.health({ retry: { attempts: 1 } }))).attempts).toBe(1);
    });

    it('does not retry infer() on an arbitrary model unless asked', async () => {
      const llm = client({ ...FAST, attempts: 4 });
      const request = { model: 'tensorrt_llm', inputs: [] };
      expect((await attemptsOf(() => llm.infer(request))).attempts).toBe(1);
      const asked = await attemptsOf(() => llm.infer(request, { retry: { retryNonIdempotent: true } }));
      expect(asked.attempts).toBe(4);
    });

    it('stops retrying when the budget is spent, long before the attempts are', async () => {
      const { attempts, error } = await attemptsOf(() =>
        client({ attempts: 1000, initialDelayMs: 20, maxDelayMs: 20, budgetMs: 200 }).health(),
      );
      expect(error.code).toBe('unavailable');
      expect(attempts).toBeGreaterThan(1);
      expect(attempts).toBeLessThan(1000);
    });

    it('stops retrying at the call deadline', async () => {
      const { attempts, error } = await attemptsOf(() =>
        client({ attempts: 1000, initialDelayMs: 20, maxDelayMs: 20, budgetMs: 60_000 }).health({
          timeoutMs: 200,
        }),
      );
      expect(['unavailable', 'deadline_exceeded']).toContain(error.code);
      expect(attempts).toBeLessThan(1000);
    });

    it('an abort during the wait between attempts ends the call with cancelled', async () => {
      // A server of its own: an attempt of the test before, cut off by its deadline while it
      // connected, may reach the shared server after this test began and count as one of its own.
      const own = await resettingServer();
      try {
        const controller = new AbortController();
        const retry = { attempts: 10, initialDelayMs: 60_000, maxDelayMs: 60_000, budgetMs: 600_000 };
        const pending = rejection(client(retry, own.url).health({ signal: controller.signal }));
        await expect.poll(() => own.connections()).toBe(1);
        controller.abort();
        expect(((await pending) as TritonLlmError).code).toBe('cancelled');
        expect(own.connections()).toBe(1);
      } finally {
        await own.close();
      }
    });
  },
);
