import type { EngineRequest, Exchange, HttpEngine, ResponseHandler } from '../engine/index.js';

/** The `fetch` the engine calls (the transport's `fetch` option, or the global one). */
export type Fetch = (input: string, init: RequestInit) => Promise<Response>;

// What fetch sees as the abort reason: without one every abort builds a DOMException with a stack.
const ABORTED = Object.freeze(new Error('the call was ended by the client'));

const ignore = (): void => undefined;

/**
 * Requests over `fetch`, which every runtime has (browsers, Deno, Bun, edge workers, Node). The
 * body is read one network chunk at a time, only while the handler is not paused.
 */
export function fetchEngine(baseUrl: string, fetch: Fetch): HttpEngine {
  return {
    request: (request, handler) => new FetchExchange(`${baseUrl}${request.path}`, fetch, request, handler),
    // fetch keeps its own connections; nothing of ours to close.
    close: ignore,
    // A web stream's chunk belongs to its reader once read: an unfinished event keeps it as it is.
    ownBuffers: true,
  };
}

class FetchExchange implements Exchange {
  private readonly controller = new AbortController();
  private reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  private ended = false;
  private paused = false;
  private reading = false;

  constructor(
    url: string,
    fetch: Fetch,
    request: EngineRequest,
    private readonly handler: ResponseHandler,
  ) {
    void this.start(url, fetch, request);
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    void this.pump();
  }

  abort(): void {
    if (this.ended) return;
    this.ended = true;
    this.controller.abort(ABORTED);
    // Not awaited: aborting the signal closes the connection anyway.
    this.reader?.cancel().catch(ignore);
  }

  private async start(url: string, fetch: Fetch, request: EngineRequest): Promise<void> {
    try {
      const { method, headers, body } = request;
      const response = await fetch(url, {
        method,
        headers,
        signal: this.controller.signal,
        ...(body !== undefined ? { body } : {}),
      });
      if (this.ended) {
        response.body?.cancel().catch(ignore);
        return;
      }
      this.handler.onHead(response);
      if (response.body === null) {
        this.end();
        return;
      }
      this.reader = response.body.getReader();
      if (this.ended) {
        this.reader.cancel().catch(ignore);
        return;
      }
    } catch (err) {
      this.fail(err);
      return;
    }
    await this.pump();
  }

  private async pump(): Promise<void> {
    const reader = this.reader;
    if (reader === undefined || this.reading) return;
    this.reading = true;
    try {
      while (!this.paused && !this.ended) {
        const chunk = await reader.read();
        if (this.ended) return;
        if (chunk.done) {
          this.end();
          return;
        }
        this.handler.onBody(chunk.value, 0, chunk.value.byteLength);
      }
    } catch (err) {
      this.fail(err);
    } finally {
      this.reading = false;
    }
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.handler.onEnd();
  }

  private fail(error: unknown): void {
    if (this.ended) return;
    this.ended = true;
    this.handler.onError(error);
  }
}
