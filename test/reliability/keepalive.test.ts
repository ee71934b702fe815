import { once } from 'node:events';
import { createServer, type Http2Server, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { grpcTransport } from '@trtllm/grpc';
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
