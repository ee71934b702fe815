import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { httpTransport } from '@trtllm/http';
import { type FakeTriton, startFakeTriton } from '@trtllm/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest } from './helpers.js';

// What a stream keeps while it waits for its next token is what thousands of open streams cost.
// A weak reference to the request, and a full collection, tell whether the stream still holds it.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

async function collected(ref: WeakRef<object>): Promise<boolean> {
  for (let i = 0; i < 5; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    if (ref.deref() === undefined) return true;
  }
  return false;
}

let fake: FakeTriton;

beforeAll(async () => {
  // The first token at once, the second a minute later: the stream below waits between them.
  fake = await startFakeTriton({ grpcPort: 0, httpPort: 0, itlMs: 60_000 });
});

afterAll(async () => {
  await fake.close();
});

describe('a generate_stream waiting for its next token', () => {
  it('keeps none of its request, input tensors included', async () => {
    const transport = httpTransport({ baseUrl: fake.httpUrl });
    try {
      const open = () => {
        const request = rawRequest('idle-http', [300, 301, 302], 8, { streaming: true });
        const refs = { request: new WeakRef(request), input: new WeakRef(request.inputs[0]!) };
        return { refs, it: transport.stream(request)[Symbol.asyncIterator]() };
      };
      const { refs, it } = open();
      const first = await it.next();
      expect(first.done).toBe(false);
      expect(await collected(refs.input)).toBe(true);
      expect(await collected(refs.request)).toBe(true);
      await it.return?.();
    } finally {
      await transport.close();
    }
  });
});
