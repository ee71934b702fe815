/** Binding a front end's server to its address. */
import type { Server } from 'node:net';

/** Listens on `host:port` (port 0: any free one) and resolves to the port bound, or rejects with the bind error. */
export async function listen(server: Server, port: number, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  return typeof address === 'object' && address ? address.port : port;
}
