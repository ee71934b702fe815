import { grpcTransport } from '@trtllm/grpc';
import { type Transport, tensorNumbers } from '@trtllm/sdk';
import { type FakeTriton, generateTokens, startFakeTriton } from '@trtllm/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { output, rawRequest, streamedIds } from './fake-models.js';
import { drain } from './support.js';

let fake: FakeTriton;
let transport: Transport;

beforeAll(async () => {
  fake = await startFakeTriton({ grpcPort: 0, httpPort: 0 });
  transport = grpcTransport({ baseUrl: fake.grpcUrl, gzip: true });
});

afterAll(async () => {
  await transport.close();
  await fake.close();
});

describe('gzip', () => {
  it('round-trips a large request and response compressed', async () => {
    // 4,000 prompt ids (16 KB on the wire) come back in output_ids: both directions exceed the
    // 1 KiB compression threshold.
    const input = Array.from({ length: 4000 }, (_, i) => 3 + (i % 256));
    const r = await transport.infer(
      rawRequest('g-1', input, 4, { model: 'tensorrt_llm_unary', streaming: false }),
    );
    const expected = generateTokens(input, { maxTokens: 4 })[0]?.tokens ?? [];
    expect(tensorNumbers(output(r, 'output_ids'))).toEqual([...input, ...expected]);
  });

  it('streams with gzip enabled', async () => {
    const input = [259, 260, 261];
    const { responses, error } = await drain(transport.stream(rawRequest('g-2', input, 5)));
    expect(error).toBeUndefined();
    expect(streamedIds(responses)).toEqual(generateTokens(input, { maxTokens: 5 })[0]?.tokens);
  });

  // Issue 55: the flood limits (PING, SETTINGS, resets, empty frames per stream and connection)
  // stay far from a real server's traffic: long streams, many at once, on one connection.
  it('thousands of tokens on concurrent streams trip no flood limit', async () => {
    const input = [300, 301, 302];
    const runs = await Promise.all(
      Array.from({ length: 8 }, (_, i) => drain(transport.stream(rawRequest(`g-long-${i}`, input, 2000)))),
    );
    const expected = generateTokens(input, { maxTokens: 2000 })[0]?.tokens;
    for (const { responses, error } of runs) {
      expect(error).toBeUndefined();
      expect(streamedIds(responses)).toEqual(expected);
    }
  });
});
