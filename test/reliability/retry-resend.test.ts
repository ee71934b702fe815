import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { grpcTransport } from '@trtllm/grpc';
import { httpTransport } from '@trtllm/http';
import { type GenerationEvent, type Transport, TritonLlm } from '@trtllm/sdk';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PROTOCOLS, type Protocol, useFakeTriton } from '../support/fake.js';
import { drain, expectedIds } from './support/streams.js';

// A stream keeps its encoded request only until the transport has it; a retry encodes the request
// again. These streams lose their first attempt (the connection is reset at its first bytes, before
// any response) and must then get exactly what an untroubled request gets: same id, same inputs.

/** A TCP proxy in front of one port that, once armed, resets the next connection to send bytes. */
class ResettingProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private armed = false;
  resets = 0;
  port = 0;

  async start(target: number): Promise<void> {
    this.server = createServer((client: Socket) => {
      const upstream = connect(target, '127.0.0.1');
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.once('close', () => this.sockets.delete(socket));
      }
      client.on('data', (bytes: Buffer) => {
        if (this.armed) {
          this.armed = false;
          this.resets++;
          upstream.destroy();
          client.resetAndDestroy();
          return;
        }
        upstream.write(bytes);
      });
      upstream.on('data', (bytes: Buffer) => client.write(bytes));
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
    });
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    this.port = (this.server.address() as { port: number }).port;
  }

  arm(): void {
    this.armed = true;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

const fake = useFakeTriton();
const proxies: Partial<Record<Protocol, ResettingProxy>> = {};

beforeAll(async () => {
  for (const protocol of PROTOCOLS) {
    const proxy = new ResettingProxy();
    const url = new URL(protocol === 'grpc' ? fake.triton().grpcUrl : fake.triton().httpUrl);
    await proxy.start(Number(url.port));
    proxies[protocol] = proxy;
  }
});

afterAll(async () => {
  await Promise.all(Object.values(proxies).map((p) => p?.close()));
});

describe.each(PROTOCOLS)('a stream retried over %s after its first attempt was lost', (protocol) => {
  const transports: Transport[] = [];
  afterEach(async () => {
    await Promise.all(transports.splice(0).map((t) => t.close()));
  });

  function client(model: string, events: GenerationEvent[], direct = false): TritonLlm {
    const port = direct
      ? Number(new URL(protocol === 'grpc' ? fake.triton().grpcUrl : fake.triton().httpUrl).port)
      : proxies[protocol]!.port;
    const baseUrl = `http://127.0.0.1:${port}`;
    const transport = protocol === 'grpc' ? grpcTransport({ baseUrl }) : httpTransport({ baseUrl });
    transports.push(transport);
    return new TritonLlm({ transport, model, onEvent: (e) => events.push(e) });
  }

  function received(id: string, model: string): number {
    return fake
      .triton()
      .events()
      .filter((e) => e.id === id && e.model === model && e.event === 'received').length;
  }

  it('the raw model: the second attempt sends the same ids and limits, under the same request id', async () => {
    const events: GenerationEvent[] = [];
    const llm = client('tensorrt_llm', events);
    await llm.schema();
    const proxy = proxies[protocol]!;
    const resetsBefore = proxy.resets;
    proxy.arm();
    const input = [259, 262, 300];
    const stream = llm.stream(
      { inputIds: input, maxTokens: 7 },
      { retry: { initialDelayMs: 1, maxDelayMs: 5 } },
    );
    const { tokens, error, chunks } = await drain(stream);
    expect(error).toBeUndefined();
    expect(proxy.resets).toBe(resetsBefore + 1);
    expect(events.filter((e) => e.type === 'retry')).toHaveLength(1);
    expect(tokens).toEqual(expectedIds(input, 7));
    expect(chunks.at(-1)?.done).toBe(true);
    // The lost attempt never reached the fake; the retry reached it under the stream's id.
    expect(received(stream.requestId, 'tensorrt_llm')).toBe(1);
  });

  it('the ensemble: the retried request streams the text an untroubled one gets, stop words applied', async () => {
    const request = { prompt: 'What is ML?', maxTokens: 12, stopWords: ['zzz-never'], temperature: 0.5 };
    const control = await client('ensemble', [], true).generate(request);
    const events: GenerationEvent[] = [];
    const llm = client('ensemble', events);
    await llm.schema();
    const proxy = proxies[protocol]!;
    proxy.arm();
    const stream = llm.stream(request, { retry: { initialDelayMs: 1, maxDelayMs: 5 } });
    const { chunks, error } = await drain(stream);
    expect(error).toBeUndefined();
    expect(events.filter((e) => e.type === 'retry')).toHaveLength(1);
    const final = chunks.at(-1);
    expect(final?.done).toBe(true);
    expect(control.text.length).toBeGreaterThan(0);
    expect(final?.done === true ? final.result.text : undefined).toBe(control.text);
    expect(final?.done === true ? final.usage.completionTokens : undefined).toBe(
      control.usage.completionTokens,
    );
    expect(received(stream.requestId, 'ensemble')).toBe(1);
  });
});
