import { setTimeout as sleep } from 'node:timers/promises';
import { grpcTransport } from '@trtllm/grpc';
import { httpTransport } from '@trtllm/http';
import { type FinalChunk, type Transport, TritonLlm } from '@trtllm/sdk';
import { afterAll, describe, expect, it } from 'vitest';
import { useFakeTriton } from '../support/fake.js';
import { liveBytes, MiB } from './support/heap.js';
import { type FloodServer, floodIds, startGrpcFlood, startSseFlood } from './support/token-flood.js';

// One million tokens, in 20,000 responses of 50 ids, each padded to about 8 KiB: some 160 MiB
// on the wire. A client that buffered ahead of its reader would hold most of it; one with real
// backpressure holds a few windows' worth, and the server waits on it.
const SHAPE = { responses: 20_000, idsPerResponse: 50, padBytes: 8 * 1024 } as const;
const TOKENS = SHAPE.responses * SHAPE.idsPerResponse;
// Socket buffers and flow-control windows on loopback, with a wide margin: far below what runs ahead.
const MAX_LEAD_BYTES = 24 * MiB;
// The result keeps every token id (8 bytes each, plus array slack: 8-12 MiB here), and network
// buffers in flight come and go (up to some 20 MiB between samples); buffering the stream would
// take most of its 160 MiB.
const MAX_HEAP_GROWTH = 64 * MiB;

describe.each(['grpc', 'http'] as const)('a slow reader of a million tokens over %s', (protocol) => {
  // The model config comes from the fake; the flood server serves only the stream.
  const fake = useFakeTriton();
  const closers: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
  });

  it('keeps client memory bounded while the server waits for it', { timeout: 120_000 }, async () => {
    const flood: FloodServer = protocol === 'grpc' ? await startGrpcFlood(SHAPE) : await startSseFlood(SHAPE);
    closers.push(() => flood.close());
    const data =
      protocol === 'grpc' ? grpcTransport({ baseUrl: flood.url }) : httpTransport({ baseUrl: flood.url });
    closers.push(() => data.close());
    const meta = fake.transport(protocol);
    const transport: Transport = { ...meta, stream: (request, options) => data.stream(request, options) };
    const llm = new TritonLlm({ transport, model: 'tensorrt_llm' });
    await llm.schema();

    const ids = floodIds(SHAPE);
    const heap: number[] = [];
    const leads: number[] = [];
    let responses = 0;
    let tokens = 0;
    let wrongIds = 0;
    let final: FinalChunk | undefined;
    for await (const chunk of llm.stream({ inputIds: [5], maxTokens: TOKENS })) {
      if (chunk.done) {
        final = chunk;
        continue;
      }
      responses++;
      tokens += chunk.tokenIds.length;
      if (chunk.tokenIds.some((id, k) => id !== ids[k])) wrongIds++;
      // A slow reader: a pause every 200 responses, a long one half way, samples every 2,000.
      if (responses % 200 === 0) await sleep(1);
      if (responses === SHAPE.responses / 2) await sleep(500);
      if (responses % 2000 === 0) {
        leads.push(flood.written() - responses);
        heap.push(liveBytes());
      }
    }

    expect(tokens).toBe(TOKENS);
    expect(wrongIds).toBe(0);
    expect(final?.result.usage.completionTokens).toBe(TOKENS);
    expect(final?.finishReason).toBe('length');
    expect(flood.written()).toBe(SHAPE.responses);
    const maxLeadBytes = Math.max(...leads) * flood.responseBytes;
    const growth = Math.max(...heap) - heap[0]!;
    console.info(
      `[backpressure ${protocol}] ${TOKENS} tokens, ${((SHAPE.responses * flood.responseBytes) / MiB).toFixed(0)} MiB streamed; ` +
        `server lead at most ${(maxLeadBytes / MiB).toFixed(1)} MiB; live heap ${heap.map((h) => (h / MiB).toFixed(1)).join(' ')} MiB`,
    );
    expect(maxLeadBytes).toBeLessThan(MAX_LEAD_BYTES);
    expect(growth).toBeLessThan(MAX_HEAP_GROWTH);
  });
});
