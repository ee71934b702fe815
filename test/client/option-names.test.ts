import { transportFromUrl } from '@trtllm/connect';
import { grpcTransport } from '@trtllm/grpc';
import { httpTransport } from '@trtllm/http';
import { type Transport, TritonLlm, TritonLlmError } from '@trtllm/sdk';
import { afterAll, describe, expect, it } from 'vitest';
import { useFakeTriton } from '../support/fake.js';

// Issue 53: misspelt options on constructors and transports get "did you mean", as request options
// do, and grpcTransport takes the grpc:// and grpcs:// addresses every other entry point takes.

/** The error `make` throws, which must be an invalid_argument TritonLlmError. */
function refused(make: () => unknown): TritonLlmError {
  try {
    make();
  } catch (err) {
    expect(err).toBeInstanceOf(TritonLlmError);
    expect((err as TritonLlmError).code).toBe('invalid_argument');
    return err as TritonLlmError;
  }
  throw new Error('expected the call to throw');
}

// Options as a user's untyped code (or a JavaScript caller) writes them.
type Loose = never;

describe('misspelt option names', () => {
  const transports: Transport[] = [];
  const fake = useFakeTriton();
  afterAll(async () => {
    await Promise.all(transports.map((t) => t.close()));
  });
  const transport = () => {
    const t = httpTransport({ baseUrl: fake.triton().httpUrl });
    transports.push(t);
    return t;
  };

  it.each([
    [
      'new TritonLlm',
      () => new TritonLlm({ transport: transport(), modle: 'ensemble' } as Loose),
      'modle',
      'model',
    ],
    [
      'new TritonLlm defaults',
      () => new TritonLlm({ transport: transport(), model: 'ensemble', defaults: { timoutMs: 5 } } as Loose),
      'defaults.timoutMs',
      'timeoutMs',
    ],
    [
      'grpcTransport',
      () => grpcTransport({ baseURL: 'http://localhost:8001' } as Loose),
      'baseURL',
      'baseUrl',
    ],
    [
      'transportFromUrl',
      () => transportFromUrl('grpc://localhost:8001', { header: {} } as Loose),
      'header',
      'headers',
    ],
    [
      'httpTransport',
      () => httpTransport({ baseURL: 'http://localhost:8000' } as Loose),
      'baseURL',
      'baseUrl',
    ],
    [
      'grpcTransport tls',
      () => grpcTransport({ baseUrl: 'https://localhost:8001', tls: { rejectUnauthorised: false } } as Loose),
      'tls.rejectUnauthorised',
      'rejectUnauthorized',
    ],
    [
      'grpcTransport replicas',
      () => grpcTransport({ baseUrls: ['http://a:8001'], healthIntervalMS: 0 } as Loose),
      'healthIntervalMS',
      'healthIntervalMs',
    ],
    [
      'httpTransport replicas',
      () => httpTransport({ baseUrls: ['http://a:8000'], failoverAtempts: 1 } as Loose),
      'failoverAtempts',
      'failoverAttempts',
    ],
    [
      'grpcTransport keepalive',
      () => grpcTransport({ baseUrl: 'http://a:1', keepAliveMs: 1 } as Loose),
      'keepAliveMs',
      'keepaliveMs',
    ],
  ])('%s names the option and the closest one', (_, make, field, near) => {
    const err = refused(make);
    expect(err.field).toBe(field);
    expect(err.message.startsWith(`${field}: unknown option; did you mean ${near}? (got `)).toBe(true);
  });

  it('an option with no near name is refused without a guess', () => {
    const err = refused(
      () => new TritonLlm({ transport: transport(), model: 'ensemble', colour: 'red' } as Loose),
    );
    expect(err.message).toBe('colour: unknown option (got "red")');
  });

  it('the front ends that build clients still pass (known options only)', async () => {
    const llm = new TritonLlm({
      transport: transport(),
      model: 'ensemble',
      modelVersion: '1',
      retry: { attempts: 1 },
      defaults: { timeoutMs: 5000, idleTimeoutMs: 5000, headers: {} },
      logger: { warn: () => undefined },
      onEvent: () => undefined,
    });
    expect((await llm.generate({ prompt: 'Hello', maxTokens: 2 })).finishReason).toBe('length');
  });
});

describe('misspelt per-call options', () => {
  const fake = useFakeTriton();
  const message = 'timeoutMS: unknown option; did you mean timeoutMs? (got 5)';

  /** The invalid_argument error `call` rejects with, naming timeoutMS. */
  async function rejected(call: () => Promise<unknown>): Promise<void> {
    const err = await call().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TritonLlmError);
    expect((err as TritonLlmError).code).toBe('invalid_argument');
    expect((err as TritonLlmError).field).toBe('timeoutMS');
    expect((err as TritonLlmError).message).toContain(message);
  }

  it.each(['grpc', 'http'] as const)(
    'generate, stream, generateBatch and infer refuse them before sending (%s)',
    async (protocol) => {
      const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'tensorrt_llm' });
      fake.triton().clearEvents();
      const bad = { timeoutMS: 5 } as Loose;
      await rejected(() => llm.generate({ inputIds: [259], maxTokens: 2 }, bad));
      // stream throws at the call, as a bad request does.
      const err = refused(() => llm.stream({ inputIds: [259], maxTokens: 2 }, bad));
      expect(err.message).toBe(message);
      await rejected(() => llm.generateBatch([{ inputIds: [259], maxTokens: 2 }], bad));
      await expect(
        llm.generateBatch([{ inputIds: [259], maxTokens: 2 }], { concurency: 2 } as Loose),
      ).rejects.toThrow('concurency: unknown option; did you mean concurrency? (got 2)');
      await rejected(async () => llm.infer({ model: 'tensorrt_llm', inputs: [] }, bad));
      expect(
        fake
          .triton()
          .events()
          .filter((e) => e.event === 'received'),
      ).toEqual([]);
    },
  );

  it.each(['grpc', 'http'] as const)('the introspection calls refuse them (%s)', async (protocol) => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'tensorrt_llm' });
    const bad = { timeoutMS: 5 } as Loose;
    for (const call of [
      () => llm.health(bad),
      () => llm.ready(bad),
      () => llm.modelReady(bad),
      () => llm.serverMetadata(bad),
      () => llm.modelConfig(bad),
      () => llm.modelMetadata(bad),
      () => llm.statistics(bad),
      () => llm.schema(bad),
    ])
      await rejected(call);
  });

  it('every known per-call option passes', async () => {
    const llm = new TritonLlm({ transport: fake.transport('grpc'), model: 'ensemble' });
    const options = {
      signal: new AbortController().signal,
      timeoutMs: 5000,
      idleTimeoutMs: 5000,
      headers: {},
      retry: { attempts: 1 },
    };
    expect((await llm.generate({ prompt: 'Hi', maxTokens: 2 }, options)).finishReason).toBe('length');
    const results = await llm.generateBatch([{ prompt: 'Hi', maxTokens: 2 }], {
      ...options,
      concurrency: 1,
      batch: false,
    });
    expect(results.map((r) => r.finishReason)).toEqual(['length']);
    const { idleTimeoutMs: _, ...callOptions } = options;
    expect(await llm.health(callOptions)).toBe(true);
  });
});

describe('grpcTransport addresses, by the rule of transportFromUrl', () => {
  const fake = useFakeTriton();

  it('takes grpc:// as plaintext gRPC and streams over it', async () => {
    const url = fake.triton().grpcUrl.replace(/^http:/, 'grpc:');
    const transport = grpcTransport({ baseUrl: url });
    try {
      const llm = new TritonLlm({ transport, model: 'tensorrt_llm' });
      let tokens = 0;
      for await (const chunk of llm.stream({ inputIds: [259], maxTokens: 4 }))
        if (!chunk.done) tokens += chunk.tokenIds.length;
      expect(tokens).toBe(4);
    } finally {
      await transport.close();
    }
  });

  it('takes grpc:// for each of several replicas', async () => {
    const url = fake.triton().grpcUrl.replace(/^http:/, 'grpc:');
    const transport = grpcTransport({ baseUrls: [url], healthIntervalMs: 0 });
    try {
      const result = await new TritonLlm({ transport, model: 'ensemble' }).generate({
        prompt: 'Hi',
        maxTokens: 3,
      });
      expect(result.finishReason).toBe('length');
      expect(transport.endpointStats().map((e) => e.name)).toEqual([url]);
    } finally {
      await transport.close();
    }
  });

  it('takes grpcs:// as TLS (tls options need it or https://)', async () => {
    const transport = grpcTransport({ baseUrl: 'grpcs://localhost:1', tls: {} });
    await transport.close();
    const err = refused(() => grpcTransport({ baseUrl: 'grpc://localhost:1', tls: {} }));
    expect(err.message).toContain('grpcs://');
  });

  it.each([
    ['http://localhost:8001/v2', 'has no path'],
    ['ftp://localhost:8001', 'must start with grpc://, grpcs://, http://, https:// or dns:'],
    ['dns:triton:8001', "grpcTransport({ dns: 'host:port' })"],
  ])('refuses %s, saying why', (url, why) => {
    const err = refused(() => grpcTransport({ baseUrl: url }));
    expect(err.field).toBe('baseUrl');
    expect(err.message).toContain(why);
  });
});
