import type { BodyText, HttpEngine } from '../engine/index.js';
import { ConnectionPool, originOf } from './connection.js';
import { NodeExchange } from './exchange.js';
import { type HeaderLines, requestText } from './request-head.js';

// The engine hands on the socket's Buffers, which decode a range natively, without a view per read.
const bufferText: BodyText = {
  latin1: (bytes, from, to) => (bytes as Buffer).toString('latin1', from, to),
  utf8: (bytes, from, to) => (bytes as Buffer).toString('utf8', from, to),
};

/**
 * Requests over Node's sockets: keep-alive HTTP/1.1 connections to the base URL's origin, answers
 * read from the socket's bytes (no fetch, web streams or per-read buffers).
 */
export function nodeEngine(baseUrl: string): HttpEngine {
  const origin = originOf(baseUrl);
  const pool = new ConnectionPool(origin);
  const lines: HeaderLines = new WeakMap();
  return {
    request: (request, handler) =>
      new NodeExchange(pool, requestText(lines, origin, request), handler, request.maxChunkBytes),
    close: () => pool.close(),
    text: bufferText,
  };
}
