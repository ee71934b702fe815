import { once } from 'node:events';
import { createServer, type Http2Server, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { create, type MessageInitShape, toBinary } from '@bufbuild/protobuf';
import { grpcTransport } from '@trtllm/grpc';
import type { InferRequest } from '@trtllm/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { ModelStreamInferResponseSchema } from '../src/gen/inference/grpc_service_pb.js';
import { drain } from './support.js';

// After an in-stream `error_message` the request has failed, but the server may still answer it:
// NVIDIA's tensorrt_llm_bls sends a flags-only final after its error. A reset (RST_STREAM CANCEL)
// racing that final crashed the real Triton 2.51 (SIGSEGV in ModelStreamInferHandler::Process), so
// the client half-closes and lets the server end the call. These servers record what the client did.

const servers: Http2Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise<void>((resolve) => s.close(() => resolve()));
});

interface Seen {
  /** The client half-closed its side (END_STREAM), as opposed to resetting the stream. */
  halfClosed: boolean;
  /** The server had sent its final response when the client's error was raised. */
  finalSent: boolean;
  /** How the stream closed on the server: its RST code (0 when it ended cleanly). */
  closed: Promise<number>;
}

/**
 * A ModelStreamInfer server that answers every call with an error message and then, when
 * `finalAfterHalfClose`, a flags-only final and status OK once the client half-closed; otherwise
 * it sends nothing more and leaves the call open.
 */
async function serve(finalAfterHalfClose: boolean): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer();
  servers.push(server);
  server.on('stream', (stream: ServerHttp2Stream) => {
    const s: Seen = {
      halfClosed: false,
      finalSent: false,
      closed: new Promise((resolve) => stream.on('close', () => resolve(stream.rstCode ?? 0))),
    };
    seen.push(s);
    stream.on('error', () => {});
    stream.once('data', () => {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      stream.write(frame({ errorMessage: "request parameter 'fake_script' must be a string" }));
    });
    stream.on('end', () => {
      s.halfClosed = true;
      if (!finalAfterHalfClose) return;
      // Later than the error, as the official BLS's final comes after its error response.
      setTimeout(() => {
        s.finalSent = true;
        stream.end(
          frame({
            inferResponse: {
              modelName: 'tensorrt_llm_bls',
              id: 'bls-1',
              parameters: { triton_final_response: { parameterChoice: { case: 'boolParam', value: true } } },
            },
          }),
        );
      }, 50);
    });
    stream.resume();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

function frame(fields: MessageInitShape<typeof ModelStreamInferResponseSchema>): Buffer {
  const message = toBinary(ModelStreamInferResponseSchema, create(ModelStreamInferResponseSchema, fields));
  const out = Buffer.alloc(5 + message.length);
  out.writeUInt32BE(message.length, 1);
  out.set(message, 5);
  return out;
}

const request: InferRequest = {
  model: 'tensorrt_llm_bls',
  id: 'bls-1',
  inputs: [],
  parameters: { fake_script: 5 },
};

describe('a stream whose request failed in the stream', () => {
  it('hands the error on at once and lets the server end the call: half-close, no reset', async () => {
    const { url, seen } = await serve(true);
    await using transport = grpcTransport({ baseUrl: url });
    const { responses, error } = await drain(transport.stream(request));
    expect(responses).toEqual([]);
    expect(error?.serverMessage).toBe("request parameter 'fake_script' must be a string");
    expect(error?.requestId).toBe('bls-1');
    // The error did not wait for the server's final.
    expect(seen[0]!.finalSent).toBe(false);
    expect(await seen[0]!.closed).toBe(0);
    expect(seen[0]!.halfClosed).toBe(true);
    expect(seen[0]!.finalSent).toBe(true);
    // The connection serves the next call as before.
    expect((await drain(transport.stream({ ...request, id: 'bls-2' }))).error?.code).toBe(error?.code);
  });

  it('resets the call after all when the server keeps it open past the grace period', async () => {
    const { url, seen } = await serve(false);
    await using transport = grpcTransport({ baseUrl: url });
    const { error } = await drain(transport.stream(request));
    expect(error?.serverMessage).toBe("request parameter 'fake_script' must be a string");
    const closed = seen[0]!.closed.then((code) => ({ code }));
    // Still open a second after the error: the client waits for the server rather than resetting.
    expect(
      await Promise.race([closed, new Promise((resolve) => setTimeout(() => resolve('open'), 1000))]),
    ).toBe('open');
    expect(seen[0]!.halfClosed).toBe(true);
    // NGHTTP2_CANCEL: the grace period (5 s) ran out.
    expect(await closed).toEqual({ code: 8 });
  }, 15_000);
});
