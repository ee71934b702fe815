import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import { grpcTransport } from '@trtllm/grpc';
import { httpTransport } from '@trtllm/http';
import { type ClientCallOptions, type Transport, TritonLlm, TritonLlmError } from '@trtllm/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { drain, rejection } from './support/streams.js';

// A server that accepts connections and never answers: the worst case for a client without
// deadlines, since nothing ever fails. Every call must end with deadline_exceeded.
let server: Server;
const sockets: Socket[] = [];
let url: string;

beforeAll(async () => {
  server = createServer((socket) => {
    sockets.push(socket);
    socket.on('error', () => undefined);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((resolve) => server.close(resolve));
});

type Call = (llm: TritonLlm, options: ClientCallOptions) => Promise<unknown>;

const CALLS: readonly (readonly [string, Call])[] = [
  ['health', (llm, o) => llm.health(o)],
  ['ready', (llm, o) => llm.ready(o)],
  ['modelReady', (llm, o) => llm.modelReady(o)],
  ['serverMetadata', (llm, o) => llm.serverMetadata(o)],
  ['modelConfig', (llm, o) => llm.modelConfig(o)],
  ['modelMetadata', (llm, o) => llm.modelMetadata(o)],
  ['statistics', (llm, o) => llm.statistics(o)],
  ['schema', (llm, o) => llm.schema(o)],
  ['infer', (llm, o) => llm.infer({ model: 'tensorrt_llm', inputs: [] }, o)],
  ['generate', (llm, o) => llm.generate({ prompt: 'hi', maxTokens: 4 }, o)],
  [
    'stream',
    async (llm, o) => {
      const { error } = await drain(llm.stream({ prompt: 'hi', maxTokens: 4 }, o));
      if (error !== undefined) throw error;
    },
  ],
];

describe.each(['grpc', 'http'] as const)(
  'deadlines over %s against a server that never answers',
  (protocol) => {
    const transports: Transport[] = [];
    afterAll(async () => {
      await Promise.all(transports.map((t) => t.close()));
    });

    function client(defaults?: { timeoutMs: number }): TritonLlm {
      const transport =
        protocol === 'grpc' ? grpcTransport({ baseUrl: url }) : httpTransport({ baseUrl: url });
      transports.push(transport);
      return new TritonLlm({
        transport,
        model: 'tensorrt_llm',
        ...(defaults !== undefined ? { defaults } : {}),
      });
    }

    it.each(CALLS)('%s ends with deadline_exceeded at its timeoutMs', async (_, call) => {
      const err = await rejection(call(client(), { timeoutMs: 100 }));
      expect(err).toBeInstanceOf(TritonLlmError);
      expect((err as TritonLlmError).code).toBe('deadline_exceeded');
    });

    it.each(CALLS)('%s ends with deadline_exceeded at the client default timeoutMs', async (_, call) => {
      const err = await rejection(call(client({ timeoutMs: 100 }), {}));
      expect((err as TritonLlmError).code).toBe('deadline_exceeded');
    });

    it('an abort ends a call that waits on a silent server', async () => {
      const controller = new AbortController();
      const pending = rejection(client().health({ signal: controller.signal }));
      setTimeout(() => controller.abort(), 50);
      expect(((await pending) as TritonLlmError).code).toBe('cancelled');
    });
  },
);

describe('deadline options', () => {
  it.each([0, -1, Number.NaN, Number.POSITIVE_INFINITY])('refuses timeoutMs %s before sending', async (t) => {
    const transport = httpTransport({ baseUrl: 'http://127.0.0.1:9' });
    const llm = new TritonLlm({ transport, model: 'm' });
    const err = (await rejection(llm.health({ timeoutMs: t }))) as TritonLlmError;
    expect(err.code).toBe('invalid_argument');
    expect(err.message).toMatch(/^timeoutMs: /);
    expect(() => llm.stream({ prompt: 'x', maxTokens: 1 }, { idleTimeoutMs: t })).not.toThrow();
    const { error } = await drain(llm.stream({ prompt: 'x', maxTokens: 1 }, { idleTimeoutMs: t }));
    expect(error?.code).toBe('invalid_argument');
    expect(() => new TritonLlm({ transport, model: 'm', defaults: { timeoutMs: t } })).toThrow(
      /defaults\.timeoutMs/,
    );
  });
});
