import type { StreamEngineFactory } from '../stream-engine.js';
import { ConnectionPool, originOf } from './connection.js';
import { NodeEventStream } from './event-stream.js';
import type { NodeStreamShared } from './request-head.js';

/**
 * Streams over Node's sockets: keep-alive HTTP/1.1 connections to the base URL's origin, the
 * event stream read from the response bytes (no fetch, web streams or per-read buffers).
 */
export const nodeStreamEngine: StreamEngineFactory = (baseUrl) => {
  const origin = originOf(baseUrl);
  const shared: NodeStreamShared = { pool: new ConnectionPool(origin), origin, heads: new Map() };
  return {
    stream: (client, request, options) => new NodeEventStream(client, shared, request, options),
    close: () => shared.pool.close(),
  };
};
