import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { httpTransport as nodeHttpTransport } from '@trtllm/http';
import {
  createTensor,
  type InferRequest,
  type InferResponse,
  TritonLlm,
  TritonLlmError,
  tensorNumbers,
} from '@trtllm/sdk';
import { afterEach, describe, expect, it } from 'vitest';
// The fetch build, as browsers, Deno, Bun and edge workers load it: every call over fetch.
import { httpTransport as fetchHttpTransport } from '../../packages/http/src/index.js';
import { freePorts, type ServerProcess, startFakeCli } from './support/processes.js';
import { drain, expectedIds } from './support/streams.js';

// Issue 55: HTTP/1.1 has no PING, so a stream whose server froze (SIGSTOP) or vanished without a
// word after the answer began waited for ever. A stream that has begun and then receives no byte
// for silenceTimeoutMs now fails `unavailable` (retryable, as the gRPC keepalive's failure is) and
// closes its connection; the consumer's own pauses do not count.
const SILENCE_MS = 300;
const INPUT = [259, 260];

const BUILDS = { 'Node sockets': nodeHttpTransport, fetch: fetchHttpTransport } as const;

type Answer = (res: ServerResponse, call: number) => void;

/** A real HTTP server on loopback whose n-th `/generate_stream` answer is `answer(res, n)`. */
async function startServer(answer: Answer) {
  let calls = 0;
  const sockets = new Set<Socket>();
  const closedEarly: number[] = [];
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const call = ++calls;
      res.on('close', () => {
        if (!res.writableFinished) closedEarly.push(call);
      });
      answer(res, call);
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    closedEarly,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

const event = (token: number): string =>
  `data: {"model_name":"tensorrt_llm","model_version":"1","id":"s","output_ids":${token}}\n\n`;

function streamRequest(id: string): InferRequest {
  return {
    model: 'tensorrt_llm',
    id,
    inputs: [
      createTensor('input_ids', 'INT32', [1, 2], INPUT),
      createTensor('input_lengths', 'INT32', [1, 1], [2]),
      createTensor('request_output_len', 'INT32', [1, 1], [4]),
    ],
  };
}

async function read(stream: AsyncIterable<InferResponse>) {
  const responses: InferResponse[] = [];
  try {
    for await (const r of stream) responses.push(r);
  } catch (err) {
    if (!(err instanceof TritonLlmError)) throw err;
    return { responses, error: err };
  }
  return { responses, error: undefined };
}

const tokensOf = (responses: readonly InferResponse[]): number[] =>
  responses.flatMap((r) => r.outputs.filter((t) => t.name === 'output_ids').flatMap((t) => tensorNumbers(t)));

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

describe.each(Object.keys(BUILDS) as (keyof typeof BUILDS)[])('a silent stream (%s)', (build) => {
  const httpTransport = BUILDS[build];

  it('that sends its head and one event, then nothing, fails unavailable naming silenceTimeoutMs; the next call works', async () => {
    const server = await startServer((res, call) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(event(7));
      // The first answer goes silent with its connection open; the second is whole.
      if (call > 1) res.end(event(8));
    });
    cleanup.push(server.close);
    const transport = httpTransport({ baseUrl: server.url, silenceTimeoutMs: SILENCE_MS });
    cleanup.push(() => transport.close());

    const first = await read(transport.stream(streamRequest('silent-1')));
    expect(tokensOf(first.responses)).toEqual([7]);
    expect(first.error?.code).toBe('unavailable');
    expect(first.error?.retryable).toBe(true);
    expect(first.error?.requestId).toBe('silent-1');
    expect(first.error?.message).toContain(
      `the server sent nothing for ${SILENCE_MS} ms after its answer began`,
    );
    expect(first.error?.message).toContain('httpTransport({ silenceTimeoutMs })');
    // The connection was closed: how the server learns the client gave up.
    await expect.poll(() => server.closedEarly).toEqual([1]);

    const second = await read(transport.stream(streamRequest('silent-2')));
    expect(second.error).toBeUndefined();
    expect(tokensOf(second.responses)).toEqual([7, 8]);
    expect(second.responses.at(-1)?.final).toBe(true);
  });

  it('does not count the time a slow consumer leaves it paused', async () => {
    const BURST = 100;
    const PACED = 20;
    const server = await startServer((res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // More events than the reader queues before it pauses, then a live server's pace.
      res.write(Array.from({ length: BURST }, (_, i) => event(i)).join(''));
      let sent = 0;
      const timer = setInterval(() => {
        if (++sent === PACED) {
          clearInterval(timer);
          res.end(event(BURST + sent - 1));
        } else {
          res.write(event(BURST + sent - 1));
        }
      }, SILENCE_MS / 6);
      res.on('close', () => clearInterval(timer));
    });
    cleanup.push(server.close);
    const transport = httpTransport({ baseUrl: server.url, silenceTimeoutMs: SILENCE_MS });
    cleanup.push(() => transport.close());

    const responses: InferResponse[] = [];
    let error: unknown;
    try {
      for await (const r of transport.stream(streamRequest('paused'))) {
        responses.push(r);
        // The consumer is busy for longer than the bound once, right after the first event.
        if (responses.length === 1) await new Promise((resolve) => setTimeout(resolve, SILENCE_MS * 3));
      }
    } catch (err) {
      error = err;
    }
    expect(error).toBeUndefined();
    expect(tokensOf(responses)).toEqual(Array.from({ length: BURST + PACED }, (_, i) => i));
    expect(server.closedEarly).toEqual([]);
  });

  it('on a fake Triton frozen by SIGSTOP mid-stream fails unavailable after the tokens it sent', async () => {
    const [grpc, http] = await freePorts(2);
    const fake: ServerProcess = await startFakeCli({ grpc: grpc!, http: http! }, 10);
    cleanup.push(async () => {
      await fake.signal('SIGCONT');
      await fake.signal('SIGKILL');
    });
    const transport = httpTransport({ baseUrl: fake.httpUrl, silenceTimeoutMs: SILENCE_MS });
    cleanup.push(() => transport.close());
    const llm = new TritonLlm({ transport, model: 'tensorrt_llm', retry: { attempts: 1 } });
    await llm.schema();

    let frozen: Promise<void> | undefined;
    const stream = llm.stream({ inputIds: INPUT, maxTokens: 3000 });
    const chunks: number[] = [];
    let error: unknown;
    try {
      for await (const chunk of stream) {
        if (chunk.done) break;
        chunks.push(...chunk.tokenIds);
        if (chunks.length >= 3) frozen ??= fake.signal('SIGSTOP');
      }
    } catch (err) {
      error = err;
    }
    await frozen;
    expect(error).toBeInstanceOf(TritonLlmError);
    expect((error as TritonLlmError).code).toBe('unavailable');
    expect((error as TritonLlmError).message).toContain('silenceTimeoutMs');
    // What arrived before the freeze was handed out, in order, and nothing past the generator's output.
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    expect(chunks).toEqual(expectedIds(INPUT, 3000).slice(0, chunks.length));

    // Thawed, the same transport serves the next stream whole.
    await fake.signal('SIGCONT');
    const again = await drain(llm.stream({ inputIds: INPUT, maxTokens: 4 }));
    expect(again.error).toBeUndefined();
    expect(again.tokens).toEqual(expectedIds(INPUT, 4));
  });
});

describe('silenceTimeoutMs', () => {
  it.each([-1, Number.NaN, Number.POSITIVE_INFINITY, '300'])(
    'refuses %s before anything is sent',
    (value) => {
      let error: unknown;
      try {
        nodeHttpTransport({ baseUrl: 'http://127.0.0.1:9', silenceTimeoutMs: value as number });
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(TritonLlmError);
      expect((error as TritonLlmError).code).toBe('invalid_argument');
      expect((error as TritonLlmError).message).toContain('silenceTimeoutMs');
    },
  );
});
