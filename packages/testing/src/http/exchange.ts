/** One HTTP request and its response, with Triton's error bodies and write backpressure. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { destroyAfterFlush } from '../drop.js';
import type { Delivery } from '../engine/request.js';
import { httpStatusOf, type TritonError } from '../errors.js';
import { stringify } from './json.js';

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

  empty(status: number): void {
    if (this.gone) return;
    this.res.writeHead(status, { 'Content-Length': 0 });
    this.res.end();
  }

  /** Writes, waiting for the socket to drain when its buffer is full. */
  async write(chunk: string | Buffer): Promise<Delivery> {
    if (this.gone) return 'cancelled';
    if (this.res.write(chunk)) return 'ok';
    await Promise.race([new Promise((resolve) => this.res.once('drain', resolve)), this.closed]);
    return this.gone ? 'cancelled' : 'ok';
  }

  /** Cuts the connection without finishing the response, once what was written has left. */
  destroy(): Promise<void> {
    return destroyAfterFlush(this.req.socket);
  }
}
