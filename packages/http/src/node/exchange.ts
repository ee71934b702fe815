import type { Exchange, ResponseHandler } from '../engine/index.js';
import type { Connection, ConnectionOwner, ConnectionPool } from './connection.js';
import { keepAliveMs } from './request-head.js';
import { type ResponseHead, ResponseParser, type ResponseSink } from './response-parser.js';

/**
 * One request on a keep-alive connection and its answer, read straight from the socket's bytes by
 * {@link ResponseParser} and handed on as head, body ranges and end. A connection reused from the
 * pool that closes before any byte of the answer is the keep-alive race (the server closed it as
 * the request went out): the request is sent once more on a new connection. An answer read to its
 * end gives its connection back to the pool when the server allows it.
 */
export class NodeExchange implements Exchange, ConnectionOwner, ResponseSink {
  private connection: Connection | undefined;
  private parser: ResponseParser | undefined;
  /** The request as written, until the answer starts (then it is never sent again). */
  private wire: string;
  /** The connection may carry another request after this answer; for how long idle (server's hint). */
  private keepAlive = false;
  private idleMs: number | undefined;
  /** Completed, failed or aborted: nothing more reaches the handler. */
  private ended = false;
  private paused = false;
  /** Inside a read: a pause waits for its end, when the connection may have gone back to the pool. */
  private reading = false;
  private retried = false;
  /** The connection carrying the request came from the pool. */
  private reused = false;

  constructor(
    private readonly pool: ConnectionPool,
    wire: string,
    private readonly handler: ResponseHandler,
    private readonly maxChunkBytes: number | undefined,
  ) {
    this.wire = wire;
    this.send(pool.acquire());
  }

  pause(): void {
    if (this.paused) return;
    this.paused = true;
    if (!this.reading) this.connection?.socket.pause();
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.connection?.socket.resume();
  }

  abort(): void {
    if (this.ended) return;
    this.ended = true;
    const connection = this.connection;
    this.connection = undefined;
    connection?.destroy();
  }

  onBytes(bytes: Buffer): void {
    const parser = this.parser as ResponseParser;
    this.reading = true;
    try {
      parser.push(bytes);
    } catch (err) {
      this.fail(err);
      return;
    } finally {
      this.reading = false;
    }
    const connection = this.connection;
    if (connection === undefined) return;
    if (parser.done) {
      this.connection = undefined;
      if (this.keepAlive && !parser.trailing) this.pool.release(connection, this.idleMs);
      else connection.destroy();
    } else if (this.paused) {
      connection.socket.pause();
    }
  }

  onClose(error: Error | undefined): void {
    const parser = this.parser;
    this.connection = undefined;
    if (parser === undefined || this.ended) return;
    if (parser.end()) return;
    if (!parser.started && this.reused && !this.retried) {
      this.retried = true;
      this.send(this.pool.connect());
      return;
    }
    this.fail(error ?? new Error('the connection closed before the response ended'));
  }

  onHead(head: ResponseHead): void {
    this.wire = '';
    this.keepAlive = head.keepAlive;
    if (head.keepAlive) this.idleMs = keepAliveMs(head);
    if (!this.ended) this.handler.onHead(head);
  }

  onBody(bytes: Buffer, from: number, to: number): void {
    if (!this.ended) this.handler.onBody(bytes, from, to);
  }

  onComplete(): void {
    if (this.ended) return;
    this.ended = true;
    this.handler.onEnd();
  }

  private send(connection: Connection): void {
    this.connection = connection;
    this.reused = connection.reused;
    this.parser = new ResponseParser(this, this.maxChunkBytes);
    connection.owner = this;
    connection.socket.write(this.wire);
  }

  /** Closes the connection (its response was not read to the end) and reports `error` once. */
  private fail(error: unknown): void {
    if (this.ended) return;
    this.ended = true;
    const connection = this.connection;
    this.connection = undefined;
    connection?.destroy();
    this.handler.onError(error);
  }
}
