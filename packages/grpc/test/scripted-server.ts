import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';

/** What a scripted server answers to one call: message bodies (already protobuf, or garbage) and a status. */
export interface ScriptedAnswer {
  readonly messages: readonly Uint8Array[];
  readonly status?: number;
  readonly statusMessage?: string;
}

/** A gRPC server on loopback that answers every call from a script, to show how the client copes. */
export interface ScriptedServer {
  readonly baseUrl: string;
  /** Request headers of every call so far, in order. */
  readonly calls: IncomingHttpHeaders[];
  close(): Promise<void>;
}

/**
 * Starts a plaintext HTTP/2 server speaking just enough gRPC framing to send `answer(path)` as soon
 * as a call's first request message arrives, whatever protobuf the messages hold.
 */
export async function startScriptedServer(answer: (path: string) => ScriptedAnswer): Promise<ScriptedServer> {
  const calls: IncomingHttpHeaders[] = [];
  const server = createServer();
  server.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
    calls.push(headers);
    stream.once('data', () => respond(stream, answer(String(headers[':path']))));
    stream.on('error', () => {});
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
      }),
  };
}

function respond(stream: ServerHttp2Stream, a: ScriptedAnswer): void {
  if (stream.destroyed) return;
  stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
  stream.on('wantTrailers', () => {
    stream.sendTrailers({
      'grpc-status': String(a.status ?? 0),
      ...(a.statusMessage !== undefined ? { 'grpc-message': encodeURIComponent(a.statusMessage) } : {}),
    });
  });
  for (const m of a.messages) {
    const frame = new Uint8Array(5 + m.length);
    new DataView(frame.buffer).setUint32(1, m.length);
    frame.set(m, 5);
    stream.write(frame);
  }
  stream.end();
}
