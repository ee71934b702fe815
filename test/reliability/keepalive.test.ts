import { once } from 'node:events';
import { createServer, type Http2Server, type ServerHttp2Stream } from 'node:http2';
import { type AddressInfo, createServer as createTcpServer, type Socket } from 'node:net';
import { grpcTransport } from '@trtllm/grpc';
import { TritonLlmError } from '@trtllm/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// A gRPC server that accepts a ModelStreamInfer call and never answers it, counting the HTTP/2
// PINGs it receives: the client's keepalive is what notices a peer that vanished without a word.
let server: Http2Server;
let url: string;
let pings = 0;
const open: ServerHttp2Stream[] = [];

beforeAll(async () => {
  server = createServer();
  server.on('session', (session) => session.on('ping', () => pings++));
  server.on('stream', (stream) => {
    stream.on('error', () => undefined);
    open.push(stream);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const s of open) s.destroy();
  await new Promise((resolve) => server.close(resolve));
});

describe('gRPC keepalive', () => {
  it('pings the server at keepaliveMs while a call is open', async () => {
    const transport = grpcTransport({ baseUrl: url, keepaliveMs: 50 });
    const controller = new AbortController();
    const stream = transport.stream(
      { model: 'tensorrt_llm', id: 'k-1', inputs: [] },
      { signal: controller.signal },
    );
    const pending = (async () => {
      for await (const _ of stream);
    })().catch(() => undefined);
    const before = pings;
    await expect.poll(() => pings - before, { timeout: 10_000 }).toBeGreaterThanOrEqual(3);
    controller.abort();
    await pending;
    await transport.close();
  });
});

// A peer that accepted the connection and then went silent (a dead host behind a load balancer,
// a half-open TCP connection): it reads everything and answers nothing, not even PINGs.
describe('gRPC keepalive against a silent peer', () => {
  it('gives the connection up after keepaliveTimeoutMs: the stream fails unavailable, and the next call connects anew', async () => {
    const sockets: Socket[] = [];
    const silent = createTcpServer((socket) => {
      sockets.push(socket);
      socket.on('data', () => undefined);
      socket.on('error', () => undefined);
    });
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    const silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    const transport = grpcTransport({ baseUrl: silentUrl, keepaliveMs: 50, keepaliveTimeoutMs: 300 });
    const read = async (id: string) => {
      const chunks: unknown[] = [];
      try {
        for await (const r of transport.stream({ model: 'tensorrt_llm', id, inputs: [] })) chunks.push(r);
      } catch (err) {
        return { chunks, err };
      }
      return { chunks, err: undefined };
    };
    try {
      const first = await read('silent-1');
      expect(first.chunks).toEqual([]);
      expect(first.err).toBeInstanceOf(TritonLlmError);
      const err = first.err as TritonLlmError;
      expect(err.code).toBe('unavailable');
      expect(err.retryable).toBe(true);
      expect(err.message).toContain('no answer to a keepalive PING within 300 ms');
      expect(sockets).toHaveLength(1);
      const second = await read('silent-2');
      expect((second.err as TritonLlmError).code).toBe('unavailable');
      expect(sockets).toHaveLength(2);
    } finally {
      await transport.close();
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
