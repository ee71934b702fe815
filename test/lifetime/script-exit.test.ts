import { once } from 'node:events';
import { createServer, type Http2Server } from 'node:http2';
import { type AddressInfo, createServer as createTcpServer, type Server, type Socket } from 'node:net';
import { type FakeTriton, startFakeTriton } from '@trtllm/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lastCallAt, limit, runScript, type ScriptRun } from './child-process.js';

// A script ends by itself once its last call has, as one using fetch does (issue #53): no close(),
// no process.exit(). "By itself" is measured: the child prints the time its last call returned,
// and the test takes the time the process exited.
// (On Node 20, which the packages do not support, fetch itself holds a process for up to ~0.9 s after
// a response, so the HTTP cases fail there; on 22 and later it holds none.)
const EXIT_WITHIN_MS = 1000;

/** Scripts in scripts/, each one entry point a user meets; none calls close(). */
const ENTRY_POINTS: readonly [script: string, what: string][] = [
  ['grpc', 'TritonLlm over grpcTransport, one generate()'],
  ['grpc-multiplex', 'grpcTransport({ multiplex: true }), whose shared calls stay open between requests'],
  ['http', 'TritonLlm over httpTransport, generate() and a stream'],
  ['grpc-replicas', 'grpcTransport({ baseUrls }) with health checks every 200 ms'],
  ['http-replicas', 'httpTransport({ baseUrls }) with health checks every 200 ms'],
  ['dns', "transportFromUrl('dns:localhost:PORT'), discovery and health checks on timers"],
  ['transport-from-url', 'transportFromUrl with grpc:// and http:// addresses'],
  ['grpc-break', 'a gRPC stream left with break (the ensemble keeps generating on the server)'],
  ['http-break', 'an HTTP stream left with break'],
  ['grpc-abort', 'a gRPC stream aborted by its AbortSignal'],
  ['grpc-stop', 'a gRPC stream ended with stop() (in-band stop)'],
  ['ai-sdk-generate-text', 'createTriton (@trtllm/ai-sdk) with generateText'],
  ['ai-sdk-stream-text', 'createTriton (@trtllm/ai-sdk) with streamText'],
  ['langchain-invoke', 'ChatTriton (@trtllm/langchain) with invoke'],
  ['langchain-stream', 'ChatTriton (@trtllm/langchain) with stream'],
  ['bench', 'runBenchmark (@trtllm/bench) used as a library'],
];

describe('a script ends by itself when its last call has ended', () => {
  let fake: FakeTriton;
  // Each child takes a core while tsx loads it; the machine may have two.
  const slot = limit(3);

  beforeAll(async () => {
    fake = await startFakeTriton();
  });
  afterAll(async () => {
    await fake?.close();
  });

  it.concurrent.each(ENTRY_POINTS)(
    `%s (%s) exits within ${EXIT_WITHIN_MS} ms of its last call, without close()`,
    async (script) => {
      const run = await slot(() => runScript(script, fake));
      expect(run.killed, `still running after 30 s:\n${run.stdout}\n${run.stderr}`).toBe(false);
      expect(run.code, run.stderr).toBe(0);
      const sinceLastCall = run.exitedAt - lastCallAt(run);
      expect(sinceLastCall).toBeGreaterThanOrEqual(0);
      expect(sinceLastCall).toBeLessThan(EXIT_WITHIN_MS);
    },
    60_000,
  );
});

describe('a call in flight keeps the process alive', () => {
  let slow: FakeTriton;

  beforeAll(async () => {
    // A token every 100 ms: 15 tokens keep the stream open for about 1.5 s.
    slow = await startFakeTriton({ itlMs: 100 });
  });
  afterAll(async () => {
    await slow?.close();
  });

  it('a script whose only work is an open stream lives until its final chunk, then exits', async () => {
    const run: ScriptRun = await runScript('open-stream', slow);
    expect(run.killed).toBe(false);
    // 13 would be Node's "unsettled top-level await": the loop emptied while the stream was open.
    expect(run.code, run.stderr).toBe(0);
    const started = Number(/stream started at (\d+)/.exec(run.stdout)?.[1]);
    const final = /final chunk \((\d+) tokens, finish=(\w+)\) at (\d+)/.exec(run.stdout);
    expect(final, run.stdout).not.toBeNull();
    const [, tokens, finish, at] = final!;
    expect({ tokens: Number(tokens), finish }).toEqual({ tokens: 15, finish: 'length' });
    const finalAt = Number(at);
    // The stream really was open for a while (14 gaps of 100 ms), and the process outlived it.
    expect(finalAt - started).toBeGreaterThanOrEqual(1300);
    expect(run.exitedAt).toBeGreaterThanOrEqual(finalAt);
    expect(run.exitedAt - finalAt).toBeLessThan(EXIT_WITHIN_MS);
  }, 60_000);
});

describe('a call the server leaves open after an in-stream error', () => {
  let server: Http2Server;
  let url: string;
  const halfClosed: boolean[] = [];

  beforeAll(async () => {
    // Answers every call with an error message and never ends it: the client half-closes and
    // waits (up to 5 s) for the server to end the call rather than resetting it.
    const message = Buffer.from("request parameter 'fake_script' must be a string");
    const body = Buffer.concat([Buffer.from([0x0a, message.length]), message]); // error_message = 1
    const frame = Buffer.alloc(5 + body.length);
    frame.writeUInt32BE(body.length, 1);
    body.copy(frame, 5);
    server = createServer();
    server.on('stream', (stream) => {
      const index = halfClosed.push(false) - 1;
      stream.on('error', () => {});
      stream.on('end', () => {
        halfClosed[index] = true;
      });
      stream.once('data', () => {
        stream.respond({ ':status': 200, 'content-type': 'application/grpc' });
        stream.write(frame);
      });
      stream.resume();
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.close();
  });

  it(`does not keep the script alive: it exits within ${EXIT_WITHIN_MS} ms of its last call`, async () => {
    const run = await runScript('grpc-in-stream-error', { grpcUrl: url, httpUrl: url });
    expect(run.killed).toBe(false);
    expect(run.code, run.stderr).toBe(0);
    expect(halfClosed).toEqual([true]);
    const sinceLastCall = run.exitedAt - lastCallAt(run);
    expect(sinceLastCall).toBeGreaterThanOrEqual(0);
    expect(sinceLastCall).toBeLessThan(EXIT_WITHIN_MS);
  }, 60_000);
});

describe('a first request aborted while the model config is read from a server that never answers', () => {
  let server: Server;
  let url: string;
  const sockets = new Set<Socket>();

  beforeAll(async () => {
    // Accepts connections and never writes a byte: the config read waits until the client gives up.
    server = createTcpServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    server.close();
  });

  it(`gRPC and HTTP: the read ends with the wait, and the script exits within ${EXIT_WITHIN_MS} ms of its last call`, async () => {
    const run = await runScript('config-read-abort', { grpcUrl: url, httpUrl: url });
    expect(run.killed, `still running after 30 s:\n${run.stdout}\n${run.stderr}`).toBe(false);
    expect(run.code, run.stderr).toBe(0);
    // Each request failed at its own signal's deadline, in the caller's words.
    expect(run.stdout).toMatch(/^grpc: .*ModelConfig 'ensemble': the caller's signal timed out$/m);
    expect(run.stdout).toMatch(/^http: .*ModelConfig 'ensemble': the caller's signal timed out$/m);
    const sinceLastCall = run.exitedAt - lastCallAt(run);
    expect(sinceLastCall).toBeGreaterThanOrEqual(0);
    expect(sinceLastCall).toBeLessThan(EXIT_WITHIN_MS);
  }, 60_000);
});
