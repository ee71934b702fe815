import { grpcTransport } from '@trtllm/grpc';
import { httpTransport } from '@trtllm/http';
import { type Transport, TritonLlm } from '@trtllm/sdk';
import { type FakeTriton, startFakeTriton } from '@trtllm/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failure } from '../support/failure.js';

// Issue 53: an unknown model did not list the models the server has. The client asks for the
// repository index only after the server said not found, and suggests the closest name.

let fakes: FakeTriton[] = [];
const transports: Transport[] = [];
beforeAll(async () => {
  fakes = await Promise.all([startFakeTriton(), startFakeTriton()]);
});
afterAll(async () => {
  await Promise.all(transports.map((t) => t.close()));
  await Promise.all(fakes.map((f) => f.close()));
});

const TRANSPORTS: Record<string, () => Transport> = {
  grpc: () => grpcTransport({ baseUrl: fakes[0]!.grpcUrl }),
  http: () => httpTransport({ baseUrl: fakes[0]!.httpUrl }),
  'grpc replicas': () => grpcTransport({ baseUrls: fakes.map((f) => f.grpcUrl) }),
  'http replicas': () => httpTransport({ baseUrls: fakes.map((f) => f.httpUrl) }),
};

describe.each(Object.keys(TRANSPORTS))('an unknown model over %s', (name) => {
  let transport: Transport;
  let served: string[];
  beforeAll(async () => {
    transport = TRANSPORTS[name]!();
    transports.push(transport);
    // What the server says it has, read the way a user would: the same list the error must give.
    served = (await transport.repositoryIndex!()).map((m) => m.name);
    expect(served).toContain('ensemble');
  });

  it('generate() lists the server models and suggests the closest name', async () => {
    const err = await failure(
      new TritonLlm({ transport, model: 'ensembel' }).generate({ prompt: 'Hi', maxTokens: 2 }),
    );
    expect(err.code).toBe('not_found');
    expect(err.model).toBe('ensembel');
    expect(err.serverMessage).toMatch(/unknown model.*ensembel/);
    expect(err.message).toMatch(/^generate on 'ensembel' failed: /);
    expect(err.message).toContain(`the server has ${served.join(', ')}; did you mean 'ensemble'?`);
  });

  it.each([
    ['stream', (llm: TritonLlm) => llm.stream({ prompt: 'Hi', maxTokens: 2 })[Symbol.asyncIterator]().next()],
    ['schema', (llm: TritonLlm) => llm.schema()],
    ['modelConfig', (llm: TritonLlm) => llm.modelConfig()],
    ['modelMetadata', (llm: TritonLlm) => llm.modelMetadata()],
  ])('%s() says the same', async (operation, call) => {
    const err = await failure(call(new TritonLlm({ transport, model: 'Tensorrt-LLM' })));
    expect(err.code).toBe('not_found');
    expect(err.message).toMatch(new RegExp(`^${operation} on 'Tensorrt-LLM' failed: `));
    expect(err.message).toContain("did you mean 'tensorrt_llm'?");
  });

  it('a name far from every model gets the list and no guess', async () => {
    const err = await failure(new TritonLlm({ transport, model: 'llama' }).schema());
    expect(err.message).toMatch(new RegExp(`the server has ${served.join(', ')}$`));
  });

  it('infer() on an unknown model lists them too', async () => {
    const llm = new TritonLlm({ transport, model: 'ensemble' });
    const err = await failure(llm.infer({ model: 'preprocesing', inputs: [] }));
    expect(err.code).toBe('not_found');
    expect(err.message).toContain("did you mean 'preprocessing'?");
  });
});

describe('the repository index is read only after a not found', () => {
  it('a known model never asks for it; an unknown one asks once per failure', async () => {
    const base = grpcTransport({ baseUrl: fakes[0]!.grpcUrl });
    transports.push(base);
    let asked = 0;
    // The transport as the client sees it, counting its index reads (the fake has no event for them).
    const transport: Transport = {
      ...base,
      close: () => base.close(),
      repositoryIndex: (o) => {
        asked++;
        return base.repositoryIndex!(o);
      },
    };
    const known = new TritonLlm({ transport, model: 'ensemble' });
    await known.generate({ prompt: 'Hi', maxTokens: 2 });
    for await (const _ of known.stream({ prompt: 'Hi', maxTokens: 2 }));
    expect(asked).toBe(0);
    await failure(new TritonLlm({ transport, model: 'ensembel' }).schema());
    expect(asked).toBe(1);
  });

  it('a transport without an index keeps the server message alone', async () => {
    const base = httpTransport({ baseUrl: fakes[0]!.httpUrl });
    transports.push(base);
    const { repositoryIndex: _, ...rest } = base;
    const transport: Transport = { ...rest, close: () => base.close() };
    const err = await failure(new TritonLlm({ transport, model: 'ensembel' }).schema());
    expect(err.code).toBe('not_found');
    expect(err.message).not.toContain('the server has');
  });
});
