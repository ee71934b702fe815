import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** One request as the scripted server received it. */
export interface Received {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  /** Which connection carried it: 1 for the server's first, 2 for its second... */
  readonly connection: number;
}

export type Script = (req: Received, res: ServerResponse) => unknown;

/**
 * A real HTTP server on loopback that answers each request with a test's own script: the edge
 * cases (odd SSE framing, a socket cut mid-body, string-typed JSON numbers) the fake Triton does
 * not produce. It records every request and whether its connection closed before the answer ended.
 */
export async function startScriptedServer(script: Script) {
  const received: Received[] = [];
  const closedEarly: string[] = [];
  const connections = new WeakMap<Socket, number>();
  let opened = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
        connection: connections.get(req.socket) ?? 0,
      };
      received.push(r);
      res.on('close', () => {
        if (!res.writableFinished) closedEarly.push(r.url);
      });
      Promise.resolve(script(r, res)).catch((err: unknown) => {
        res.destroy(err instanceof Error ? err : new Error(String(err)));
      });
    });
  });
  server.on('connection', (socket: Socket) => connections.set(socket, ++opened));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    closedEarly,
    /** Connections accepted so far. */
    connections: () => opened,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Sends `json` with `status`. */
export function sendJson(res: ServerResponse, status: number, json: unknown): void {
  const body = JSON.stringify(json);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
