import { grpcTransport } from '@trtllm/grpc';
import { httpTransport } from '@trtllm/http';
import { type Transport, TritonLlm } from '@trtllm/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { freePorts, type ServerProcess, startFakeCli } from './support/processes.js';

// Issue 55: the "was ended early ... To free the GPU" advice was printed when a server died or a
// keepalive failed, though no caller ended anything. It is the caller's to hear only when the
// caller ended the request.
describe('the keeps-generating warning blames only the caller', () => {
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

  async function setUp(protocol: 'grpc' | 'http', keepalive = false) {
    const [grpc, http] = await freePorts(2);
    const server = await startFakeCli({ grpc: grpc!, http: http! }, 10);
    open.servers.push(server);
    const transport =
      protocol === 'grpc'
        ? grpcTransport({
            baseUrl: server.grpcUrl,
            ...(keepalive ? { keepaliveMs: 50, keepaliveTimeoutMs: 300 } : {}),
          })
        : httpTransport({ baseUrl: server.httpUrl });
    open.transports.push(transport);
    const warnings: string[] = [];
    const llm = new TritonLlm({
      transport,
      model: 'ensemble',
      logger: { warn: (m) => warnings.push(m) },
      retry: { attempts: 1 },
    });
    await llm.schema();
    return { server, llm, warnings };
  }

  /** Streams until three chunks arrived, then runs `fault`; returns the stream's error. */
  async function streamUntil(llm: TritonLlm, fault: () => Promise<void> | void): Promise<unknown> {
    let chunks = 0;
    try {
      for await (const chunk of llm.stream({ prompt: 'Hello world', maxTokens: 2000 })) {
        if (!chunk.done && ++chunks === 3) await fault();
      }
    } catch (err) {
      return err;
    }
    return undefined;
  }

  it.each(['grpc', 'http'] as const)('not when the server dies mid-stream (%s)', async (protocol) => {
    const { server, llm, warnings } = await setUp(protocol);
    const err = await streamUntil(llm, () => server.signal('SIGKILL'));
    expect(err).toMatchObject({ name: 'TritonLlmError', code: 'unavailable' });
    expect(warnings).toEqual([]);
  });

  it('not when a keepalive fails (grpc, frozen server)', async () => {
    const { server, llm, warnings } = await setUp('grpc', true);
    const err = await streamUntil(llm, () => server.signal('SIGSTOP'));
    expect(err).toMatchObject({ name: 'TritonLlmError', code: 'unavailable' });
    expect(warnings).toEqual([]);
  });

  it.each(['grpc', 'http'] as const)(
    'when the caller breaks out, on the same setup (%s)',
    async (protocol) => {
      const { llm, warnings } = await setUp(protocol);
      for await (const chunk of llm.stream({ prompt: 'Hello world', maxTokens: 2000 }))
        if (!chunk.done) break;
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain('To free the GPU');
    },
  );

  it('when the caller’s idle timeout ends the stream (grpc, frozen server)', async () => {
    const { server, llm, warnings } = await setUp('grpc');
    let chunks = 0;
    const err = await (async () => {
      for await (const chunk of llm.stream(
        { prompt: 'Hello world', maxTokens: 2000 },
        { idleTimeoutMs: 300 },
      ))
        if (!chunk.done && ++chunks === 3) await server.signal('SIGSTOP');
    })().catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'TritonLlmError', code: 'deadline_exceeded' });
    expect(warnings).toHaveLength(1);
  });
});
