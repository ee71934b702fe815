import { grpcTransport } from '@trtllm/grpc';
import { httpTransport } from '@trtllm/http';
import { createTensor, type InferRequest, type Transport, TritonLlm } from '@trtllm/sdk';
import type { CallOptions } from '@trtllm/sdk/transport';
import { type FakeTriton, startFakeTriton } from '@trtllm/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collected } from './support/heap.js';

// What a stream keeps while it waits for its next token is what thousands of open streams cost.
// Each test holds a weak reference to what a waiting stream no longer needs and checks that full
// collections free it.

let fake: FakeTriton;

beforeAll(async () => {
  // The first token at once, the second a minute later: every stream below waits between them.
  fake = await startFakeTriton({ grpcPort: 0, httpPort: 0, itlMs: 60_000 });
});

afterAll(async () => {
  await fake.close();
});

/** A streamed request of the raw model, as the SDK would encode it. */
function rawRequest(id: string): InferRequest {
  const inputIds = [300, 301, 302];
  return {
    model: 'tensorrt_llm',
    id,
    inputs: [
      createTensor('input_ids', 'INT32', [1, inputIds.length], inputIds),
      createTensor('input_lengths', 'INT32', [1, 1], [inputIds.length]),
      createTensor('request_output_len', 'INT32', [1, 1], [8]),
      createTensor('streaming', 'BOOL', [1, 1], [true]),
    ],
  };
}

const transports: [string, () => Transport][] = [
  ['gRPC, a call per request', () => grpcTransport({ baseUrl: fake.grpcUrl })],
  ['gRPC, multiplex: true', () => grpcTransport({ baseUrl: fake.grpcUrl, multiplex: true })],
  ['HTTP generate_stream', () => httpTransport({ baseUrl: fake.httpUrl })],
  // A fetch of the caller's puts every call on fetch, the path of browsers and edge runtimes.
  [
    'HTTP generate_stream over fetch',
    () => httpTransport({ baseUrl: fake.httpUrl, fetch: (u, i) => fetch(u, i) }),
  ],
  // Balanced: the replica transport's stream keeps what a move to another endpoint would need
  // only until the first response (after it, a request never moves).
  [
    'gRPC balanced over two addresses (baseUrls)',
    () => grpcTransport({ baseUrls: [fake.grpcUrl, fake.grpcUrl.replace('127.0.0.1', 'localhost')] }),
  ],
  [
    'HTTP balanced over two addresses (baseUrls)',
    () => httpTransport({ baseUrls: [fake.httpUrl, fake.httpUrl.replace('127.0.0.1', 'localhost')] }),
  ],
];

describe.each(transports)('a stream waiting for its next token (%s)', (_, make) => {
  it('keeps none of its request, input tensors included', async () => {
    const transport = make();
    try {
      // Made in a function of its own, so that the test keeps only the weak references.
      const open = () => {
        const request = rawRequest('idle-1');
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
    const transport = make();
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
