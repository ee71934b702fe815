/** One HTTP request and its response, with Triton's error bodies and write backpressure. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { destroyAfterFlush } from '../drop.js';
import type { Delivery } from '../engine/request.js';
import { httpStatusOf, type TritonError } from '../errors.js';
import { stringify } from './json.js';

// How often a write held back by a full socket looks whether it has emptied (see Exchange.drained).
const DRAIN_POLL_MS = 5;

export class Exchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** Resolves when the connection closes (client gone, or the response ended and the socket went). */
  readonly closed: Promise<void>;

  constructor(req: IncomingMessage, res: ServerResponse) {
    this.req = req;
    this.res = res;
    this.closed = new Promise((resolve) => res.once('close', () => resolve()));
  }

  /** Whether the client can no longer be written to. Triton only finds out when it next writes. */
  get gone(): boolean {
    return this.res.destroyed || this.res.writableEnded || this.req.socket.destroyed;
  }

  async body(): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of this.req) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  json(status: number, body: unknown): void {
    this.send(status, 'application/json', stringify(body));
  }

  send(status: number, contentType: string, text: string): void {
    if (this.gone) return;
    this.res.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(text) });
    this.res.end(text);
  }

  error(error: TritonError): void {
    this.json(httpStatusOf(error), { error: error.message });
  }

  /** Triton's answer with no body (health and readiness), typed text/plain as Triton's is. */
  empty(status: number): void {
    this.send(status, 'text/plain', '');
  }

  /** Writes, waiting for the socket to drain when its buffer is full. */
  async write(chunk: string | Buffer): Promise<Delivery> {
    if (this.gone) return 'cancelled';
    if (this.res.write(chunk)) return 'ok';
    await this.drained();
    return this.gone ? 'cancelled' : 'ok';
  }

  /**
   * Settles once the response can take more. On Node 26 a response can wait for a 'drain' that
   * never comes, after its socket has drained and without the socket's own 'drain' reaching us
   * either (seen in backpressure.test.ts: response and socket both empty, the response's
   * `writableNeedDrain` still set, the generator stalled for good). So besides both events, an
   * empty socket is looked for every few milliseconds while the wait lasts; a socket with nothing
   * queued needs no wait at all.
   */
  private drained(): Promise<void> {
    const socket = this.req.socket;
    if (!socket.writableNeedDrain && socket.writableLength === 0) {
      return new Promise((resolve) => setImmediate(resolve));
    }
    return new Promise<void>((resolve) => {
      const poll = setInterval(() => {
        if (!socket.writableNeedDrain && socket.writableLength === 0) done();
      }, DRAIN_POLL_MS);
      const done = () => {
        clearInterval(poll);
        this.res.off('drain', done);
        socket.off('drain', done);
        resolve();
      };
      this.res.on('drain', done);
      socket.on('drain', done);
      void this.closed.then(done);
    });
  }

  /** Cuts the connection without finishing the response, once what was written has left. */
  destroy(): Promise<void> {
    return destroyAfterFlush(this.req.socket);
  }
}
