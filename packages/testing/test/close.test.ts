import { createServer } from 'node:net';
import { startFakeTriton } from '@trtllm/testing';
import { describe, expect, it } from 'vitest';
import { bool, connect, inferRequest, rawInputs } from './support/grpc-client.js';
import { openStream, readEvents } from './support/streams.js';

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

describe('close()', () => {
  it('ends open calls, including stalled ones, and frees both ports', async () => {
    const fake = await startFakeTriton({ itlMs: 2 });
    const client = connect(fake.grpcUrl);
    const s = openStream(client);
    s.call.write(
      inferRequest('tensorrt_llm', rawInputs([5], 100_000, [bool('streaming', true)]), { id: 'long' }),
    );
    await s.received(1);
    fake.setFaults({ stallAfterTokens: 1 });
    const res = await fetch(`${fake.httpUrl}/v2/models/ensemble/generate_stream`, {
      method: 'POST',
      body: JSON.stringify({ text_input: 'Hi', max_tokens: 50, stream: true }),
    });
    const { reader } = await readEvents(res, 1);
    await fake.close();
    expect(await s.ended).toBeDefined();
    await expect(reader.read()).rejects.toThrow();
    expect(fake.activeRequests()).toBe(0);
    expect(await canListen(fake.grpcPort)).toBe(true);
    expect(await canListen(fake.httpPort)).toBe(true);
    client.close();
  });
});
