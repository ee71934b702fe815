import type { CallOptions } from '@trtllm/sdk';
import type { HttpClient, Send } from '../client.js';
import type { ConnectionPool, Origin } from './connection.js';
import type { ResponseHead } from './response-parser.js';

/** What the streams of one transport share: its connections and the request heads it wrote. */
export interface NodeStreamShared {
  readonly pool: ConnectionPool;
  readonly origin: Origin;
  /** Request heads by path, for calls without headers of their own (the same every time). */
  readonly heads: Map<string, string>;
}

// Distinct paths are models and versions: a handful. The bound only guards against a caller
// cycling through endless names.
const MAX_CACHED_HEADS = 64;

/** The request's head and body as one write (one packet for a small request). */
export function requestText(
  shared: NodeStreamShared,
  send: Send,
  client: HttpClient,
  options: CallOptions | undefined,
) {
  const reusable = options?.headers === undefined;
  let head = reusable ? shared.heads.get(send.path) : undefined;
  if (head === undefined) {
    head = requestHead(shared.origin, send, client.headersFor(send, options));
    if (reusable && shared.heads.size < MAX_CACHED_HEADS) shared.heads.set(send.path, head);
  }
  const body = typeof send.body === 'string' ? send.body : '';
  return `${head}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

function requestHead(origin: Origin, send: Send, headers: Headers): string {
  let head = `POST ${origin.prefix}${send.path} HTTP/1.1\r\n`;
  let host = `host: ${origin.host}\r\n`;
  headers.forEach((value, name) => {
    // The framing is ours; a caller's Host wins (virtual hosts behind a proxy).
    if (name === 'content-length' || name === 'transfer-encoding' || name === 'connection') return;
    if (name === 'host') host = '';
    head += `${name}: ${value}\r\n`;
  });
  return head + host;
}

/** How long the server keeps an idle connection, from its `Keep-Alive: timeout=N` hint, less a second. */
export function keepAliveMs(head: ResponseHead): number | undefined {
  const hint = /(?:^|[,\s])timeout=(\d+)/i.exec(head.headers.get('keep-alive') ?? '')?.[1];
  return hint === undefined ? undefined : Number(hint) * 1000 - 1000;
}
