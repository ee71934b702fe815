import { transportFromUrl } from '@trtllm/connect';
import { type Transport, TritonLlm, TritonLlmError } from '@trtllm/sdk';
import { type FakeTriton, fakeScript, startFakeTriton } from '@trtllm/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestPki } from '../../grpc/test/certificates.js';
import { pathsThroughGateway } from './gateway.js';

const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

describe('transportFromUrl against the fake Triton', () => {
  let fake: FakeTriton;
  const opened: Transport[] = [];
  const llm = (transport: Transport): TritonLlm => {
    opened.push(transport);
    return new TritonLlm({ transport, model: 'ensemble' });
  };
  const lastReceived = () =>
    fake
      .events()
      .filter((e) => e.event === 'received')
      .at(-1);

  beforeAll(async () => {
    fake = await startFakeTriton();
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((t) => t.close()));
  });
  afterAll(() => fake.close());

  const grpcAddress = () => fake.grpcUrl.replace(/^http:/, 'grpc:');
  const hostPort = () => new URL(fake.grpcUrl).host;

  it.each([
    ['grpc://host:port', 'grpc', () => grpcAddress(), {}],
    ['http://host:port with protocol grpc', 'grpc', () => fake.grpcUrl, { protocol: 'grpc' } as const],
    ['dns:host:port', 'grpc', () => `dns:${hostPort()}`, {}],
    ['dns:///host:port', 'grpc', () => `dns:///${hostPort()}`, {}],
    ['http://host:port', 'http', () => fake.httpUrl, {}],
  ])('%s streams over %s, with the headers it was given', async (_, protocol, url, options) => {
    const stream = llm(transportFromUrl(url(), { ...options, headers: { traceparent: TRACEPARENT } })).stream(
      {
        prompt: `Hi ${fakeScript('over the address')}`,
        maxTokens: 16,
      },
    );
    let text = '';
    for await (const chunk of stream) if (!chunk.done) text += chunk.text;
    expect(text).toBe('over the address');
    expect(lastReceived()).toMatchObject({ protocol, traceparent: TRACEPARENT });
  });

  it('an http address keeps its path prefix: every request goes through the gateway under it', async () => {
    const paths = await pathsThroughGateway(fake.httpUrl, async (url) => {
      const result = await llm(transportFromUrl(url)).generate({
        prompt: fakeScript('through the gateway'),
        maxTokens: 16,
      });
      expect(result.text).toBe('through the gateway');
    });
    expect(paths.length).toBeGreaterThan(0);
    expect(paths.every((p) => p.startsWith('/triton/v2/'))).toBe(true);
    expect(lastReceived()?.protocol).toBe('http');
  });

  it('an unknown scheme is invalid_argument naming the address, before anything connects', () => {
    const before = fake.events().length;
    const err = (() => {
      try {
        transportFromUrl(`ftp://${hostPort()}`, { field: '--triton' });
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(TritonLlmError);
    expect(err).toMatchObject({ code: 'invalid_argument' });
    expect((err as Error).message).toContain(`--triton: `);
    expect((err as Error).message).toContain(`"ftp://${hostPort()}"`);
    expect(fake.events().length).toBe(before);
  });

  it('tls on a plaintext gRPC address, or on an HTTP address, is refused by name', () => {
    expect(() => transportFromUrl(grpcAddress(), { tls: {} })).toThrow(
      /url: is a plaintext address; tls options need grpcs:\/\//,
    );
    expect(() => transportFromUrl(fake.httpUrl, { tls: {} })).toThrow(/tls: applies to gRPC/);
  });
});

describe('transportFromUrl over TLS', () => {
  const pki = createTestPki();
  let fake: FakeTriton;
  beforeAll(async () => {
    fake = await startFakeTriton({ tls: { cert: pki.serverCert, key: pki.serverKey } });
  });
  afterAll(() => fake.close());

  it.each([
    ['grpcs://', () => fake.grpcUrl.replace(/^https:/, 'grpcs:')],
    ['dns: with tls', () => `dns:${new URL(fake.grpcUrl).host}`],
  ])('%s passes the certificates through and streams', async (_, url) => {
    // The certificate names localhost; the address is 127.0.0.1 (Node refuses an IP as a TLS server name).
    const transport = transportFromUrl(url(), { tls: { ca: pki.ca, serverName: 'localhost' } });
    try {
      const result = await new TritonLlm({ transport, model: 'ensemble' }).generate({
        prompt: fakeScript('sealed'),
        maxTokens: 8,
      });
      expect(result.text).toBe('sealed');
      expect(fake.events().at(-1)?.protocol).toBe('grpc');
    } finally {
      await transport.close();
    }
  });

  it('grpcs:// without the private CA is refused by the certificate check', async () => {
    const transport = transportFromUrl(fake.grpcUrl.replace(/^https:/, 'grpcs:'));
    try {
      await expect(new TritonLlm({ transport, model: 'ensemble' }).health()).rejects.toMatchObject({
        code: 'unavailable',
      });
    } finally {
      await transport.close();
    }
  });
});
