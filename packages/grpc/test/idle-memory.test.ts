import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { grpcTransport } from '@trtllm/grpc';
import { type CallOptions, type InferRequest, type Transport, TritonLlm } from '@trtllm/sdk';
import { type FakeTriton, startFakeTriton } from '@trtllm/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest } from './fake-models.js';

// What a stream keeps while it waits for its next token is what thousands of open streams cost.
// These tests hold a weak reference to what the stream no longer needs and check that a full
// collection frees it. The test process is not started with --expose-gc; a context made after
// setting the flag has `gc`.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Whether `ref`'s object is collected once nothing but the waiting stream could hold it. */
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
  // The first token at once, the second a minute later: every stream below waits between them.
  fake = await startFakeTriton({ grpcPort: 0, httpPort: 0, itlMs: 60_000 });
});

afterAll(async () => {
  await fake.close();
});

describe.each([
  ['a call per request', {}],
  ['multiplex: true', { multiplex: true }],
] as const)('a stream waiting for its next token (%s)', (_, options) => {
  it('keeps none of its request, input tensors included', async () => {
    const transport = grpcTransport({ baseUrl: fake.grpcUrl, ...options });
    try {
      // Made in a function of its own, so that the test keeps only the weak references.
      const open = () => {
        const request = rawRequest('idle-1', [300, 301, 302], 8);
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

  it('through TritonLlm, keeps neither the request sent nor its retry plan once it has answered', async () => {
    const transport = grpcTransport({ baseUrl: fake.grpcUrl, ...options });
    // The client's transport, with a look at what the client hands it (the calls go through).
    let sent: { request: WeakRef<InferRequest>; plan: WeakRef<object> | undefined } | undefined;
    const watched: Transport = Object.create(transport);
    watched.stream = (request: InferRequest, callOptions?: CallOptions) => {
      const plan = callOptions?.retryPlan;
      sent = { request: new WeakRef(request), plan: plan === undefined ? undefined : new WeakRef(plan) };
      return transport.stream(request, callOptions);
    };
    const llm = new TritonLlm({ transport: watched, model: 'tensorrt_llm' });
    try {
      const it = llm.stream({ inputIds: [300, 301, 302], maxTokens: 8 })[Symbol.asyncIterator]();
      const first = await it.next();
      expect(first.done).toBe(false);
      expect(sent?.plan).toBeDefined();
      expect(await collected(sent!.request)).toBe(true);
      expect(await collected(sent!.plan!)).toBe(true);
      // Still a working stream: the second token is a minute away, and leaving ends it cleanly.
      expect(await it.return?.()).toEqual({ done: true, value: undefined });
    } finally {
      await transport.close();
    }
  });
});
