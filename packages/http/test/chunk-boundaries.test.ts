import type { AddressInfo } from 'node:net';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { httpTransport } from '@trtllm/http';
import { tensorNumbers } from '@trtllm/sdk';
import { generateTokens } from '@trtllm/testing';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useFakeTriton } from './fake.js';
import { drain, rawRequest } from './helpers.js';

const fake = useFakeTriton();
const PROMPT = [259, 260, 261];

/**
 * A TCP relay in front of the fake that passes the client's bytes through and cuts the server's
 * answer (status line, headers, chunk sizes, SSE lines, UTF-8) at the offsets it is given, each
 * piece sent on its own after a pause so that the client reads it separately.
 */
class SplittingRelay {
  private server: Server | undefined;
  cuts: number[] = [];
  url = '';

  async start(target: string): Promise<void> {
    const { hostname, port } = new URL(target);
    this.server = createServer((client: Socket) => {
      const upstream = connect({ host: hostname, port: Number(port) });
      client.pipe(upstream);
      const cuts = [...this.cuts];
      let offset = 0;
      let chain = Promise.resolve();
      upstream.on('data', (data: Buffer) => {
        chain = chain.then(async () => {
          let at = 0;
          while (cuts.length > 0 && (cuts[0] as number) < offset + data.length) {
            const cut = Math.max((cuts.shift() as number) - offset, at);
            if (cut > at) client.write(data.subarray(at, cut));
            at = cut;
            await sleep(1);
          }
          client.write(data.subarray(at));
          offset += data.length;
        });
      });
      upstream.on('end', () => void chain.then(() => client.end()));
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
      client.on('close', () => upstream.destroy());
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

const relay = new SplittingRelay();
beforeAll(() => relay.start(fake().httpUrl));
afterAll(() => relay.close());

describe('a /generate_stream answer cut anywhere (Node sockets)', () => {
  it('yields the same tokens and one final response for every way of cutting the bytes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.integer({ min: 1, max: 1500 }), { maxLength: 12 }),
        fc.integer({ min: 1, max: 6 }),
        async (cuts, maxTokens) => {
          relay.cuts = cuts.sort((a, b) => a - b);
          // A fresh transport: each case's cuts count from the first byte of its own connection.
          const transport = httpTransport({ baseUrl: relay.url });
          const { responses, error } = await drain(
            transport.stream(rawRequest('cut', PROMPT, maxTokens, { streaming: true })),
          );
          await transport.close();
          expect(error).toBeUndefined();
          const tokens = responses.flatMap((r) =>
            r.outputs.filter((t) => t.name === 'output_ids').flatMap((t) => tensorNumbers(t)),
          );
          expect(tokens).toEqual(generateTokens(PROMPT, { maxTokens })[0]?.tokens);
          expect(responses.filter((r) => r.final)).toHaveLength(1);
          expect(responses.at(-1)?.final).toBe(true);
        },
      ),
      { numRuns: 40 },
    );
  }, 120_000);
});
