import { isIP, connect as netConnect, type Socket } from 'node:net';
import { type ConnectionOptions, type TLSSocket, connect as tlsConnect } from 'node:tls';
import type { TritonLlmError } from '@trtllm/sdk';
import { notGrpcEndpoint } from './errors.js';

/** What the peer sent, one socket read: a buffer of its own, which the caller may keep views of. */
export type BytesListener = (chunk: Buffer) => void;

/**
 * The socket of a connection to `url`: plaintext for `http://` (HTTP/2 with prior knowledge), TLS
 * with ALPN h2 for `https://`. Every read goes to `onBytes`. A TLS server that does not choose h2
 * is not a gRPC endpoint: `refuse` hears why.
 */
export function openSocket(
  url: URL,
  tls: ConnectionOptions | undefined,
  refuse: (err: TritonLlmError) => void,
  onBytes: BytesListener,
): Socket {
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  // URL brackets IPv6 literals; sockets want them bare.
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (url.protocol !== 'https:') {
    // A plaintext socket reads into one buffer shared by every connection and hands each read to
    // `onBytes` as a copy of its own size: no 'data' event and no Readable stream bookkeeping per
    // read, and no 64 KiB allocation per read for Node to shrink afterwards. The copy is needed:
    // decoded responses keep views of the read (a BYTES tensor's elements), and the shared buffer
    // is overwritten by the next read. Node hands each read over before it makes the next, so sharing
    // it is safe; runtimes that read otherwise take the buffer away (see `readBuffer`).
    return netConnect({
      host,
      port,
      onread: {
        buffer: TRANSFERS_READ_BUFFER ? readBuffer : readBuffer(),
        callback: (read: number, buffer: Uint8Array): boolean => {
          const chunk = Buffer.allocUnsafe(read);
          chunk.set(buffer.subarray(0, read));
          onBytes(chunk);
          return true; // false would pause the socket: flow control is HTTP/2's, per stream
        },
      },
    });
  }
  const socket: TLSSocket = tlsConnect({
    host,
    port,
    ALPNProtocols: ['h2'],
    ...(isIP(host) === 0 ? { servername: host } : {}),
    ...tls,
  });
  // Node reads TLS through its stream, not into a caller's buffer.
  socket.on('data', onBytes);
  socket.once('secureConnect', () => {
    if (socket.alpnProtocol !== 'h2') {
      const chose = socket.alpnProtocol === false ? 'no protocol' : `'${socket.alpnProtocol}'`;
      refuse(notGrpcEndpoint(url, `answered TLS without HTTP/2 (ALPN h2; it chose ${chose})`));
    }
  });
  return socket;
}

// The size libuv asks for when it reads a socket: one read never brings more.
const READ_BUFFER_BYTES = 64 * 1024;
let sharedReadBuffer: Buffer | undefined;

/**
 * workerd reads a socket through a BYOB stream reader, which transfers the buffer it reads into:
 * there the buffer is asked for before each read, and a detached (empty) one is replaced. Elsewhere
 * the socket keeps one buffer: asking before each read costs Node what sharing saves.
 */
const TRANSFERS_READ_BUFFER =
  typeof navigator !== 'undefined' && navigator.userAgent === 'Cloudflare-Workers';

function readBuffer(): Buffer {
  if (sharedReadBuffer === undefined || sharedReadBuffer.byteLength === 0) {
    sharedReadBuffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);
  }
  return sharedReadBuffer;
}
