import { createServer, type Server, type Socket } from 'node:net';
import { grpcTransport } from '@trtllm/grpc';
import { httpTransport } from '@trtllm/http';
import { type Transport, TritonLlm } from '@trtllm/sdk';
import { generateTokens } from '@trtllm/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failure } from '../support/failure.js';
import { PROTOCOLS, type Protocol, useFakeTriton } from '../support/fake.js';

// A client reads its model's config once, for every request waiting on it. One caller's signal or
// deadline ends that caller's wait only: found under load on the real Triton, where the first of 16
// requests aborted at once failed 13 others with its "cancelled by the caller's signal".
const INPUT = [259, 260];
const MAX_TOKENS = 6;

describe.each(PROTOCOLS)('the model config read shared by concurrent requests (%s)', (protocol: Protocol) => {
  const fake = useFakeTriton();
  const expected = generateTokens(INPUT, { maxTokens: MAX_TOKENS })[0]!.tokens;

  it('a request aborted during the read fails alone: the requests beside it get their tokens', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'tensorrt_llm' });
    const aborted = new AbortController();
    // All three start before the config is read (it is read once, for all of them).
    const first = llm.generate({ inputIds: INPUT, maxTokens: MAX_TOKENS }, { signal: aborted.signal });
    const others = [1, 2].map(() => llm.generate({ inputIds: INPUT, maxTokens: MAX_TOKENS }));
    aborted.abort();
    const err = await failure(first);
    expect(err.code).toBe('cancelled');
    expect(err.message).toContain("ModelConfig 'tensorrt_llm' was cancelled by the caller's signal");
    for (const result of await Promise.all(others)) {
      expect(result.sequences[0]?.tokenIds).toEqual(expected);
    }
  });

  it('a read every caller left is started again by the next caller', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'tensorrt_llm' });
    const aborted = new AbortController();
    const first = llm.schema({ signal: aborted.signal });
    aborted.abort();
    expect((await failure(first)).code).toBe('cancelled');
    expect((await llm.schema()).flavor).toBe('tensorrt_llm');
  });

  it("a signal already aborted fails the call in the caller's words", async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'tensorrt_llm' });
    const err = await failure(llm.schema({ signal: AbortSignal.abort() }));
    expect(err.code).toBe('cancelled');
    expect(err.message).toContain("was cancelled by the caller's signal");
  });
});

describe.each(PROTOCOLS)(
  'each caller keeps its own deadline on a server that never answers (%s)',
  (protocol) => {
    let server: Server;
    const sockets = new Set<Socket>();
    let port = 0;
    const transports: Transport[] = [];
    beforeAll(async () => {
      // Accepts connections and never writes a byte: the config read hangs until someone gives up.
      server = createServer((socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as { port: number }).port;
    });
    afterAll(async () => {
      await Promise.all(transports.map((t) => t.close()));
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    });

    it("fails each request at its own deadline, in its own words, not the first caller's", async () => {
      const url = `http://127.0.0.1:${port}`;
      const transport =
        protocol === 'grpc' ? grpcTransport({ baseUrl: url }) : httpTransport({ baseUrl: url });
      transports.push(transport);
      const llm = new TritonLlm({ transport, model: 'ensemble', retry: { attempts: 1 } });
      const short = llm.generate({ prompt: 'hi', maxTokens: 2 }, { timeoutMs: 100 });
      const long = llm.generate({ prompt: 'hi', maxTokens: 2 }, { timeoutMs: 600 });
      const [a, b] = await Promise.all([failure(short), failure(long)]);
      expect(a.code).toBe('deadline_exceeded');
      expect(a.message).toContain('100 ms');
      expect(b.code).toBe('deadline_exceeded');
      expect(b.message).toContain('600 ms');
    });
  },
);
