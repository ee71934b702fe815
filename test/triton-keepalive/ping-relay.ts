import { once } from 'node:events';
import { type AddressInfo, createServer, connect as tcpConnect } from 'node:net';

const PREFACE_BYTES = 24;
const PING = 0x6;
const GOAWAY = 0x7;
const ACK = 0x1;

/** What one relayed HTTP/2 connection carried, as far as keepalive goes. */
export interface RelayedConnection {
  /** PINGs the client sent (not its ACKs of the server's). */
  clientPings: number;
  /** The server's GOAWAY, if it sent one. */
  goaway?: { readonly code: number; readonly lastStreamId: number; readonly debug: string };
}

/**
 * A TCP relay in front of a server that reads the HTTP/2 frames passing through: the client's
 * PINGs and the server's GOAWAY. It shows what the client really sent and what the server really
 * answered, which the client's own account cannot.
 */
export async function startPingRelay(
  target: string,
): Promise<{ url: string; connections: RelayedConnection[]; close(): Promise<void> }> {
  const connections: RelayedConnection[] = [];
  const { port } = new URL(target);
  const relay = createServer((client) => {
    const seen: RelayedConnection = { clientPings: 0 };
    connections.push(seen);
    const upstream = tcpConnect(Number(port), '127.0.0.1');
    client.pipe(upstream);
    upstream.pipe(client);
    client.on(
      'data',
      frameReader(PREFACE_BYTES, (type, flags) => {
        if (type === PING && (flags & ACK) === 0) seen.clientPings++;
      }),
    );
    upstream.on(
      'data',
      frameReader(0, (type, _flags, payload) => {
        if (type !== GOAWAY || payload.length < 8) return;
        seen.goaway = {
          lastStreamId: payload.readUInt32BE(0) & 0x7fffffff,
          code: payload.readUInt32BE(4),
          debug: payload.subarray(8).toString('latin1'),
        };
      }),
    );
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.on('close', () => upstream.destroy());
  });
  relay.listen(0, '127.0.0.1');
  await once(relay, 'listening');
  return {
    url: `http://127.0.0.1:${(relay.address() as AddressInfo).port}`,
    connections,
    close: () => new Promise((resolve) => relay.close(() => resolve())),
  };
}

/** Calls `frame` for every whole frame of a byte stream, after `skip` bytes (the client's preface). */
function frameReader(
  skip: number,
  frame: (type: number, flags: number, payload: Buffer) => void,
): (chunk: Buffer) => void {
  let pending = Buffer.alloc(0);
  let toSkip = skip;
  return (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    const skipped = Math.min(toSkip, pending.length);
    pending = pending.subarray(skipped);
    toSkip -= skipped;
    for (;;) {
      if (pending.length < 9) return;
      const length = pending.readUIntBE(0, 3);
      if (pending.length < 9 + length) return;
      frame(pending[3] as number, pending[4] as number, pending.subarray(9, 9 + length));
      pending = pending.subarray(9 + length);
    }
  };
}
