import { grpcTransport } from '@trtllm/grpc';
import { httpTransport } from '@trtllm/http';
import { type GenerationEvent, type StreamChunk, type Transport, TritonLlm } from '@trtllm/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { freePorts, type ServerProcess, startFakeCli } from './support/processes.js';
import { drain, expectedIds } from './support/streams.js';

// A killed or frozen server process, not an injected fault: the operating system closes (or
// keeps) the sockets exactly as it would for a crashed or hung Triton.
const ITL_MS = 10;
const INPUT = [259, 260];

describe.each(['grpc', 'http'] as const)('a fake Triton process over %s', (protocol) => {
  const open: { servers: ServerProcess[]; transports: Transport[] } = { servers: [], transports: [] };

  afterEach(async () => {
    await Promise.all(open.transports.map((t) => t.close()));
    for (const s of open.servers) {
      await s.signal('SIGCONT');
      await s.signal('SIGKILL');
    }
    open.servers = [];
    open.transports = [];
  });

  async function start(ports: { grpc: number; http: number }): Promise<ServerProcess> {
    const server = await startFakeCli(ports, ITL_MS);
    open.servers.push(server);
    return server;
  }

  async function setUp(events?: GenerationEvent[]) {
    const [grpc, http] = await freePorts(2);
    const ports = { grpc: grpc!, http: http! };
    const server = await start(ports);
    const transport =
      protocol === 'grpc'
        ? grpcTransport({ baseUrl: server.grpcUrl })
        : httpTransport({ baseUrl: server.httpUrl });
    open.transports.push(transport);
    const llm = new TritonLlm({
      transport,
      model: 'tensorrt_llm',
      ...(events !== undefined ? { onEvent: (e: GenerationEvent) => events.push(e) } : {}),
    });
    await llm.schema();
    return { server, llm, ports };
  }

  it('killed mid-stream: unavailable before the idle timeout, delivered chunks kept; the same client works after a restart', async () => {
    const { server, llm, ports } = await setUp();
    // Were the kill not noticed, the idle timeout would end the stream with deadline_exceeded instead.
    const stream = llm.stream({ inputIds: INPUT, maxTokens: 2000 }, { idleTimeoutMs: 1000 });
    const tokens: number[] = [];
    const err = await (async () => {
      for await (const chunk of stream) {
        if (chunk.done) continue;
        tokens.push(...chunk.tokenIds);
        if (tokens.length === 5) await server.signal('SIGKILL');
      }
    })().catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'TritonLlmError', code: 'unavailable' });
    expect(tokens.length).toBeGreaterThanOrEqual(5);
    expect(tokens).toEqual(expectedIds(INPUT, 2000).slice(0, tokens.length));

    await start(ports);
    const result = await llm.generate({ inputIds: INPUT, maxTokens: 8 });
    expect(result.sequences[0]?.tokenIds).toEqual(expectedIds(INPUT, 8));
  });

  it('a request made while the server is down is retried and succeeds once it is back', async () => {
    const events: GenerationEvent[] = [];
    const { server, llm, ports } = await setUp(events);
    await server.signal('SIGKILL');
    const pending = llm.generate(
      { inputIds: INPUT, maxTokens: 8 },
      { retry: { attempts: 100, initialDelayMs: 20, maxDelayMs: 200, budgetMs: 60_000 } },
    );
    await expect.poll(() => events.some((e) => e.type === 'retry'), { timeout: 10_000 }).toBe(true);
    await start(ports);
    const result = await pending;
    expect(result.sequences[0]?.tokenIds).toEqual(expectedIds(INPUT, 8));
    const retries = events.filter((e) => e.type === 'retry');
    expect(retries.every((e) => e.error.code === 'unavailable')).toBe(true);
    expect(retries.map((e) => e.attempt)).toEqual(retries.map((_, i) => i + 2));
  });

  it('frozen mid-stream (SIGSTOP): deadline_exceeded at the idle timeout, chunks kept; works again once resumed', async () => {
    const { server, llm } = await setUp();
    const stream = llm.stream({ inputIds: INPUT, maxTokens: 2000 }, { idleTimeoutMs: 300 });
    const tokens: number[] = [];
    const err = await (async () => {
      for await (const chunk of stream) {
        if (chunk.done) continue;
        tokens.push(...chunk.tokenIds);
        if (tokens.length === 5) await server.signal('SIGSTOP');
      }
    })().catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'TritonLlmError', code: 'deadline_exceeded' });
    expect(tokens).toEqual(expectedIds(INPUT, 2000).slice(0, tokens.length));

    await server.signal('SIGCONT');
    const { tokens: after, error } = await drain(llm.stream({ inputIds: INPUT, maxTokens: 8 }));
    expect(error).toBeUndefined();
    expect(after).toEqual(expectedIds(INPUT, 8));
  });

  it.each(['abort', 'stop'] as const)('frozen mid-stream: %s still ends the request', async (how) => {
    const { server, llm } = await setUp();
    const controller = new AbortController();
    const stream = llm.stream({ inputIds: INPUT, maxTokens: 2000 }, { signal: controller.signal });
    const chunks: StreamChunk[] = [];
    for await (const chunk of stream) {
      chunks.push(chunk);
      if (chunks.length !== 3) continue;
      await server.signal('SIGSTOP');
      // Over HTTP both send the in-band stop first, which the frozen server never answers.
      if (how === 'abort') controller.abort();
      else await stream.stop();
    }
    const final = chunks.at(-1);
    expect(final?.done && final.finishReason).toBe(how === 'abort' ? 'cancelled' : 'stopped');
  });

  it('frozen before answering: the total deadline (timeoutMs) ends the request', async () => {
    const { server, llm } = await setUp();
    await server.signal('SIGSTOP');
    const { error } = await drain(llm.stream({ inputIds: INPUT, maxTokens: 8 }, { timeoutMs: 300 }));
    expect(error?.code).toBe('deadline_exceeded');
  });
});
