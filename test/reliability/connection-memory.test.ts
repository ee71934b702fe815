import { grpcTransport } from '@trtllm/grpc';
import { type StreamChunk, TritonLlm } from '@trtllm/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { liveBytes } from './support/heap.js';
import { type InspectableServer, startFakeProcess } from './support/processes.js';

// Past a server's stream limit every stream may need a connection of its own. What a connection
// keeps for its whole life must be its own bytes: a small Buffer cut from Node's shared pool keeps
// the pool's whole slab alive (64 KB per slab on Node 24 and later), and the HPACK decoder's
// scratch buffer once did so for every connection.
const CONNECTIONS = 32;

let fake: InspectableServer;
beforeAll(async () => {
  // In its own process, so that this one holds only the client. One stream per connection; the
  // second token of every stream comes a minute later.
  fake = await startFakeProcess({ grpcMaxConcurrentStreams: 1, itlMs: 60_000 });
});
afterAll(async () => {
  await fake.close();
});

function arrayBufferBytes(): number {
  liveBytes();
  return process.memoryUsage().arrayBuffers;
}

describe('memory of idle connections', () => {
  it('a connection holding an idle stream keeps well under one pool slab of buffers', async () => {
    const transport = grpcTransport({ baseUrl: fake.grpcUrl, maxConnections: CONNECTIONS + 1 });
    const llm = new TritonLlm({ transport, model: 'ensemble' });
    try {
      // Schema, code and the first connection are not what is measured.
      await llm.generate({ prompt: 'warm', maxTokens: 1 });
      const before = arrayBufferBytes();
      const iterators: AsyncIterator<StreamChunk>[] = [];
      const garbage: Buffer[] = [];
      for (let i = 0; i < CONNECTIONS; i++) {
        // Connections open one after another while the process does other work with small
        // Buffers (as any server does), which moves Node's pool on to fresh slabs in between.
        for (let k = 0; k < 512; k++) garbage.push(Buffer.from(`request ${i}.${k} `.padEnd(200, '.')));
        garbage.length = 0;
        const it = llm.stream({ prompt: `idle ${i}`, maxTokens: 2 })[Symbol.asyncIterator]();
        iterators.push(it);
        const first = await it.next();
        expect(first.done === false && first.value.done === false).toBe(true);
      }
      const perConnection = (arrayBufferBytes() - before) / CONNECTIONS;
      expect(perConnection).toBeLessThan(16 * 1024);
      await Promise.all(iterators.map((it) => it.return?.()));
    } finally {
      await transport.close();
    }
  });
});
