import { once } from 'node:events';
import { createServer as createHttpServer, type ServerResponse } from 'node:http';
import { createServer as createHttp2Server, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { create, toBinary } from '@bufbuild/protobuf';
import { ModelStreamInferResponseSchema } from '../../../packages/grpc/src/gen/inference/grpc_service_pb.js';

/** The shape of a flood: `responses` responses of `idsPerResponse` token ids, each padded with `padBytes`. */
export interface FloodShape {
  readonly responses: number;
  readonly idsPerResponse: number;
  readonly padBytes: number;
}

/**
 * A server that streams a fixed, large answer to every `ModelStreamInfer` call (gRPC) or
 * `/generate_stream` request (HTTP) as fast as the connection takes it, and not faster: it waits
 * for `drain` whenever a write is refused, as a well-behaved server does. `written()` counts the
 * responses handed to the socket so far, so a test can see how far ahead of its reader it got.
 */
export interface FloodServer {
  readonly url: string;
  written(): number;
  /** Bytes of one response on the wire (without framing). */
  readonly responseBytes: number;
  close(): Promise<void>;
}

/** The ids of response `i`: a fixed run, so the reader can check every one. */
export function floodIds(shape: FloodShape): number[] {
  return Array.from({ length: shape.idsPerResponse }, (_, k) => 3 + (k % 256));
}

function int32Bytes(values: readonly number[]): Uint8Array {
  const out = new Uint8Array(values.length * 4);
  const view = new DataView(out.buffer);
  for (const [i, v] of values.entries()) view.setInt32(i * 4, v, true);
  return out;
}

/**
 * A `ModelStreamInferResponse` of the raw model as protobuf bytes: `ids` as one response's
 * `output_ids` (with `sequence_length`, and a BYTES output of `padBytes` the client ignores), or
 * an empty final response.
 */
export function streamResponseBytes(ids: readonly number[], padBytes: number, final: boolean): Uint8Array {
  const pad = new Uint8Array(4 + padBytes).fill(0x78);
  new DataView(pad.buffer).setUint32(0, padBytes, true);
  const message = create(ModelStreamInferResponseSchema, {
    inferResponse: {
      modelName: 'tensorrt_llm',
      modelVersion: '1',
      outputs: final
        ? []
        : [
            { name: 'output_ids', datatype: 'INT32', shape: [1n, 1n, BigInt(ids.length)] },
            { name: 'sequence_length', datatype: 'INT32', shape: [1n, 1n] },
            { name: 'padding', datatype: 'BYTES', shape: [1n] },
          ],
      rawOutputContents: final ? [] : [int32Bytes(ids), int32Bytes([ids.length]), pad],
      parameters: { triton_final_response: { parameterChoice: { case: 'boolParam', value: final } } },
    },
  });
  return toBinary(ModelStreamInferResponseSchema, message);
}

function grpcMessage(shape: FloodShape, final: boolean): Uint8Array {
  const body = streamResponseBytes(floodIds(shape), shape.padBytes, final);
  const frame = new Uint8Array(5 + body.length);
  new DataView(frame.buffer).setUint32(1, body.length);
  frame.set(body, 5);
  return frame;
}

async function writeAll(
  write: (chunk: Uint8Array | string) => boolean,
  waitDrain: () => Promise<boolean>,
  shape: FloodShape,
  message: Uint8Array | string,
  count: () => void,
): Promise<boolean> {
  for (let i = 0; i < shape.responses; i++) {
    const accepted = write(message);
    count();
    if (!accepted && !(await waitDrain())) return false;
  }
  return true;
}

/** Resolves true on `drain`, false when the stream closed instead (the client went away). */
function drained(emitter: ServerHttp2Stream | ServerResponse): Promise<boolean> {
  return Promise.race([once(emitter, 'drain').then(() => true), once(emitter, 'close').then(() => false)]);
}

export async function startGrpcFlood(shape: FloodShape): Promise<FloodServer> {
  const data = grpcMessage(shape, false);
  const final = grpcMessage(shape, true);
  let written = 0;
  const server = createHttp2Server();
  server.on('stream', (stream: ServerHttp2Stream, headers) => {
    stream.on('error', () => undefined);
    if (!String(headers[':path']).endsWith('/ModelStreamInfer')) {
      stream.respond(
        { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '12' },
        { endStream: true },
      );
      return;
    }
    stream.once('data', async () => {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      const done = await writeAll(
        (c) => stream.write(c),
        () => drained(stream),
        shape,
        data,
        () => written++,
      );
      if (done && !stream.destroyed) stream.end(final);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    written: () => written,
    responseBytes: data.length - 5,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export async function startSseFlood(shape: FloodShape): Promise<FloodServer> {
  const event = `data: ${JSON.stringify({
    model_name: 'tensorrt_llm',
    model_version: '1',
    output_ids: floodIds(shape),
    sequence_length: shape.idsPerResponse,
    padding: 'x'.repeat(shape.padBytes),
  })}\n\n`;
  let written = 0;
  const server = createHttpServer((req, res) => {
    req.resume();
    req.on('end', async () => {
      if (!req.url?.endsWith('/generate_stream')) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const done = await writeAll(
        (c) => res.write(c),
        () => drained(res),
        shape,
        event,
        () => written++,
      );
      if (done) res.end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    written: () => written,
    responseBytes: Buffer.byteLength(event),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
