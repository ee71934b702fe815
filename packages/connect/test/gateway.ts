import { createServer, type IncomingHttpHeaders, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A running {@link startGateway}: its address with the prefix, and every path it was asked for. */
export interface Gateway {
  readonly url: string;
  readonly seen: readonly string[];
  close(): Promise<void>;
}

/**
 * A real HTTP gateway on loopback that serves Triton's HTTP API under `/triton` (the prefix is cut
 * before forwarding to `target`) and answers 404 elsewhere, so a client that drops the prefix fails.
 */
export async function startGateway(target: string): Promise<Gateway> {
  const seen: string[] = [];
  const upstream = new URL(target);
  const server: Server = createServer((req, res) => {
    const path = req.url ?? '/';
    seen.push(path);
    if (!path.startsWith('/triton/')) {
      res.writeHead(404).end('no such route');
      return;
    }
    const headers: IncomingHttpHeaders = { ...req.headers, host: upstream.host };
    const forward = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: path.slice('/triton'.length),
        headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/triton/`,
    seen,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Runs `call` with the address of a {@link startGateway} in front of `target` and resolves with the
 * paths the gateway was asked for, for tests that show a front end keeps the path prefix.
 */
export async function pathsThroughGateway(
  target: string,
  call: (url: string) => Promise<void>,
): Promise<readonly string[]> {
  const gateway = await startGateway(target);
  try {
    await call(gateway.url);
    return [...gateway.seen];
  } finally {
    await gateway.close();
  }
}
