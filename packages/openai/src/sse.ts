import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { toOpenAiError } from './api-error.js';

/**
 * Server-sent events as OpenAI clients parse them: `data: <json>` blocks and a final
 * `data: [DONE]`. Writes wait for the socket to drain, so a slow reader slows the upstream
 * iteration instead of growing a buffer.
 */
export class SseWriter {
  private opened = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly headers: Readonly<Record<string, string>> = {},
  ) {}

  /** True once the client has gone away. */
  get closed(): boolean {
    return this.res.destroyed || this.res.writableEnded;
  }

  get started(): boolean {
    return this.opened;
  }

  /** Sends the status line and headers; called by the first write. */
  open(): void {
    if (this.opened) return;
    this.opened = true;
    this.res.writeHead(200, {
      ...this.headers,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      // Proxies such as nginx buffer responses unless told not to, which would hold every token back.
      'x-accel-buffering': 'no',
    });
    this.res.flushHeaders();
  }

  /** Undefined when the socket took the event at once: the caller awaits only a full socket. */
  send(data: unknown): Promise<void> | undefined {
    return this.write(`data: ${JSON.stringify(data)}\n\n`);
  }

  /** Ends a successful stream with the sentinel OpenAI clients stop on. */
  async done(): Promise<void> {
    await this.write('data: [DONE]\n\n');
    this.res.end();
  }

  /**
   * Reports an error after the stream has begun. The status line is already gone, so the error
   * travels as a data event, which the official clients raise as an API error.
   */
  async fail(err: unknown): Promise<void> {
    await this.write(`data: ${JSON.stringify(toOpenAiError(err).body)}\n\n`);
    this.res.end();
  }

  private write(text: string): Promise<void> | undefined {
    this.open();
    if (this.closed || this.res.write(text)) return undefined;
    return this.drained();
  }

  private async drained(): Promise<void> {
    const settle = new AbortController();
    try {
      await Promise.race([
        once(this.res, 'drain', { signal: settle.signal }),
        once(this.res, 'close', { signal: settle.signal }),
      ]);
    } finally {
      // Removes the listener that lost the race; its rejection is absorbed by the race.
      settle.abort();
    }
  }
}
