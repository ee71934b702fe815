import type { EngineRequest } from '../engine/index.js';
import type { Origin } from './connection.js';
import type { ResponseHead } from './response-parser.js';

/**
 * The header lines of each headers object the engine was given, with the Host line: requests
 * without headers of the call's own share one object (see EngineRequest.headers), so their lines
 * are written once, not per request. Weak: a call's own headers go with it.
 */
export type HeaderLines = WeakMap<Headers, string>;

/** The request's head and body as one write (one packet for a small request). */
export function requestText(lines: HeaderLines, origin: Origin, request: EngineRequest): string {
  let head = lines.get(request.headers);
  if (head === undefined) {
    head = headerLines(origin, request.headers);
    lines.set(request.headers, head);
  }
  const body = typeof request.body === 'string' ? request.body : '';
  return `${request.method} ${origin.prefix}${request.path} HTTP/1.1\r\n${head}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

function headerLines(origin: Origin, headers: Headers): string {
  let lines = '';
  let host = `host: ${origin.host}\r\n`;
  headers.forEach((value, name) => {
    // The framing is ours; a caller's Host wins (virtual hosts behind a proxy).
    if (name === 'content-length' || name === 'transfer-encoding' || name === 'connection') return;
    if (name === 'host') host = '';
    lines += `${name}: ${value}\r\n`;
  });
  return lines + host;
}

/** How long the server keeps an idle connection, from its `Keep-Alive: timeout=N` hint, less a second. */
export function keepAliveMs(head: ResponseHead): number | undefined {
  const hint = /(?:^|[,\s])timeout=(\d+)/i.exec(head.headers.get('keep-alive') ?? '')?.[1];
  return hint === undefined ? undefined : Number(hint) * 1000 - 1000;
}
