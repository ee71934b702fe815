import { isIP, connect as netConnect, type Socket } from 'node:net';
import { type ConnectionOptions, type TLSSocket, connect as tlsConnect } from 'node:tls';
import type { TritonLlmError } from '@trtllm/sdk';
import { notGrpcEndpoint } from './errors.js';

/**
 * The socket of a connection to `url`: plaintext for `http://` (HTTP/2 with prior knowledge), TLS
 * with ALPN h2 for `https://`. A TLS server that does not choose h2 is not a gRPC endpoint:
 * `refuse` hears why.
 */
export function openSocket(
  url: URL,
  tls: ConnectionOptions | undefined,
  refuse: (err: TritonLlmError) => void,
): Socket {
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  // URL brackets IPv6 literals; sockets want them bare.
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (url.protocol !== 'https:') return netConnect({ host, port });
  const socket: TLSSocket = tlsConnect({
    host,
    port,
    ALPNProtocols: ['h2'],
    ...(isIP(host) === 0 ? { servername: host } : {}),
    ...tls,
  });
  socket.once('secureConnect', () => {
    if (socket.alpnProtocol !== 'h2') {
      const chose = socket.alpnProtocol === false ? 'no protocol' : `'${socket.alpnProtocol}'`;
      refuse(notGrpcEndpoint(url, `answered TLS without HTTP/2 (ALPN h2; it chose ${chose})`));
    }
  });
  return socket;
}
