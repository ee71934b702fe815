import { inspect } from 'node:util';
import { grpcTransport } from '@trtllm/grpc';
import { httpTransport } from '@trtllm/http';
import { type GenerationEvent, type Transport, TritonLlm, TritonLlmError } from '@trtllm/sdk';
import { type FakeTriton, startFakeTriton } from '@trtllm/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestPki, type TestPki } from '../../packages/grpc/test/certificates.js';
import { httpsFetch } from './support/https-fetch.js';
import { freePorts } from './support/processes.js';
import { drain, expectedIds, rejection } from './support/streams.js';

const SECRET = 'sk-live-7f3a9c1e5b';
const BASIC = 'dXNlcjpwYXNzd29yZA'; // base64 of user:password
const SECRETS = [SECRET, BASIC, 'password'];

/** Everything an error shows a log or a debugger: message, stack, every field, every cause, deeply. */
function everything(value: unknown): string {
  const parts = [inspect(value, { depth: 12, showHidden: true, getters: true })];
  for (let e: unknown = value, i = 0; e instanceof Error && i < 8; e = e.cause, i++) {
    parts.push(String(e), e.stack ?? '', JSON.stringify(e, Object.getOwnPropertyNames(e)) ?? '');
  }
  return parts.join('\n');
}

function expectNoSecret(where: string, text: string): void {
  for (const secret of SECRETS) {
    if (text.includes(secret)) throw new Error(`${where} shows a credential: ${text.slice(0, 400)}`);
  }
}

describe.each(['grpc', 'http'] as const)('credentials over %s', (protocol) => {
  let fake: FakeTriton;
  let refusedUrl: string;
  const transports: Transport[] = [];
  const warnings: string[] = [];
  const events: GenerationEvent[] = [];

  beforeAll(async () => {
    fake = await startFakeTriton({ itlMs: 2 });
    const [port] = await freePorts(1);
    refusedUrl = `http://127.0.0.1:${port}`;
  });
  afterEach(() => fake.setFaults(undefined));
  afterAll(async () => {
    await Promise.all(transports.map((t) => t.close()));
    await fake.close();
  });

  function client(baseUrl: string): TritonLlm {
    const headers = { authorization: `Bearer ${SECRET}`, 'x-basic': `Basic ${BASIC}` };
    const transport =
      protocol === 'grpc' ? grpcTransport({ baseUrl, headers }) : httpTransport({ baseUrl, headers });
    transports.push(transport);
    return new TritonLlm({
      transport,
      model: 'tensorrt_llm',
      defaults: { headers: { 'x-api-key': SECRET } },
      retry: { attempts: 2, initialDelayMs: 1, maxDelayMs: 2 },
      logger: { warn: (m) => warnings.push(m) },
      onEvent: (e) => events.push(e),
    });
  }

  const url = () => (protocol === 'grpc' ? fake.grpcUrl : fake.httpUrl);
  const streamOf = async (llm: TritonLlm, options = {}) => {
    const { error } = await drain(
      llm.stream({ inputIds: [259], maxTokens: 30 }, { headers: { 'x-call': SECRET }, ...options }),
    );
    return error;
  };

  const failures: readonly (readonly [string, () => Promise<unknown>])[] = [
    ['a refused connection', () => client(refusedUrl).health()],
    ['a refused stream', () => streamOf(client(refusedUrl))],
    [
      'an unauthenticated answer',
      async () => {
        fake.setFaults({ statusOnce: { grpc: 16, http: 401, message: 'bad credentials' } });
        return streamOf(client(url()));
      },
    ],
    [
      'a model error mid-stream',
      async () => {
        fake.setFaults({ model: 'tensorrt_llm', errorAfterTokens: 2 });
        return streamOf(client(url()));
      },
    ],
    [
      'a dropped connection',
      async () => {
        fake.setFaults({ model: 'tensorrt_llm', dropConnectionAfterTokens: 2 });
        return streamOf(client(url()));
      },
    ],
    [
      'a malformed answer',
      async () => {
        fake.setFaults({ model: 'tensorrt_llm', malformedAfterTokens: 2 });
        return streamOf(client(url()));
      },
    ],
    [
      'a deadline',
      async () => {
        fake.setFaults({ model: 'tensorrt_llm', stallAfterTokens: 2 });
        return streamOf(client(url()), { timeoutMs: 200 });
      },
    ],
    [
      'a header value with CR/LF',
      () => client(url()).health({ headers: { 'x-token': `${SECRET}\r\nx-injected: 1` } }),
    ],
    [
      'a header value with LF in the defaults',
      () => streamOf(client(url()), { headers: { 'x-t': `a\n${SECRET}` } }),
    ],
  ];

  it.each(failures)('%s: the error, its causes, logs and events show no credential', async (_, provoke) => {
    const outcome = await provoke().catch((e: unknown) => e);
    const error = outcome instanceof TritonLlmError ? outcome : undefined;
    expect(error, 'the failure must surface as a TritonLlmError').toBeInstanceOf(TritonLlmError);
    expectNoSecret('the error', everything(error));
    expectNoSecret('a warning', warnings.join('\n'));
    expectNoSecret('an event', inspect(events, { depth: 12, showHidden: true }));
  });

  it('refuses a header value with CR or LF before sending, naming the header', async () => {
    const err = (await rejection(
      client(url()).health({ headers: { 'x-token': `a\r\nb` } }),
    )) as TritonLlmError;
    expect(err.code).toBe('invalid_argument');
    expect(err.message).toContain('x-token');
  });

  it.each([
    `http://user:${SECRET}@127.0.0.1:1`,
    `ftp://user:${SECRET}@127.0.0.1:1`,
    `http://user:${SECRET}@127.0.0.1:1/?q=1`,
    `not a url user:${SECRET}@`,
  ])('refuses the base URL %#, with credentials in it, without showing them', (baseUrl) => {
    const make = () => (protocol === 'grpc' ? grpcTransport({ baseUrl }) : httpTransport({ baseUrl }));
    let err: unknown;
    try {
      transports.push(make());
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TritonLlmError);
    expect((err as TritonLlmError).code).toBe('invalid_argument');
    expectNoSecret('the error', everything(err));
  });
});

describe('HTTPS with certificates made for the test', () => {
  let pki: TestPki;
  let strangers: TestPki;
  let fake: FakeTriton;
  let mutual: FakeTriton;
  const transports: Transport[] = [];

  beforeAll(async () => {
    pki = createTestPki();
    strangers = createTestPki();
    fake = await startFakeTriton({ tls: { cert: pki.serverCert, key: pki.serverKey } });
    mutual = await startFakeTriton({
      tls: { cert: pki.serverCert, key: pki.serverKey, ca: pki.ca, requireClientCert: true },
    });
  });
  afterAll(async () => {
    await Promise.all(transports.map((t) => t.close()));
    await fake.close();
    await mutual.close();
  });

  function llm(baseUrl: string, fetch?: ReturnType<typeof httpsFetch>): TritonLlm {
    const transport = httpTransport({ baseUrl, ...(fetch !== undefined ? { fetch } : {}) });
    transports.push(transport);
    return new TritonLlm({ transport, model: 'tensorrt_llm' });
  }

  it('streams over HTTPS from a server whose certificate the private CA signed', async () => {
    const { tokens, error } = await drain(
      llm(fake.httpUrl, httpsFetch({ ca: pki.ca })).stream({ inputIds: [259], maxTokens: 6 }),
    );
    expect(error).toBeUndefined();
    expect(tokens).toEqual(expectedIds([259], 6));
  });

  it.each([
    ['a CA that did not sign it', () => httpsFetch({ ca: strangers.ca })],
    ['the system roots (global fetch)', () => undefined],
  ])('refuses the server certificate with %s: unavailable, not retryable, says TLS', async (_, fetch) => {
    const err = (await rejection(llm(fake.httpUrl, fetch()).health())) as TritonLlmError;
    expect(err).toBeInstanceOf(TritonLlmError);
    expect(err.code).toBe('unavailable');
    expect(err.retryable).toBe(false);
    expect(err.message).toMatch(/TLS/);
  });

  it('mutual TLS: served with a client certificate the server trusts', async () => {
    const fetch = httpsFetch({ ca: pki.ca, cert: pki.clientCert, key: pki.clientKey });
    expect(await llm(mutual.httpUrl, fetch).health()).toBe(true);
  });

  it.each([
    ['no client certificate', () => httpsFetch({ ca: pki.ca })],
    [
      'a client certificate another CA signed',
      () => httpsFetch({ ca: pki.ca, cert: strangers.clientCert, key: strangers.clientKey }),
    ],
  ])('mutual TLS: refused with %s', async (_, fetch) => {
    const err = (await rejection(llm(mutual.httpUrl, fetch()).health())) as TritonLlmError;
    expect(err).toBeInstanceOf(TritonLlmError);
    expect(err.code).toBe('unavailable');
  });
});
