import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import { grpcTransport } from '@trtllm/grpc';
import type { Transport } from '@trtllm/sdk';
import { type FakeTriton, startFakeTriton } from '@trtllm/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestPki, type TestPki } from './certificates.js';
import { rawRequest, streamedIds } from './fake-models.js';
import { drain, rejection } from './support.js';

let pki: TestPki;
let strangers: TestPki;

beforeAll(() => {
  pki = createTestPki();
  strangers = createTestPki();
});

async function withTransport<T>(t: Transport, use: (t: Transport) => Promise<T>): Promise<T> {
  try {
    return await use(t);
  } finally {
    await t.close();
  }
}

describe('TLS', () => {
  let fake: FakeTriton;
  beforeAll(async () => {
    fake = await startFakeTriton({
      grpcPort: 0,
      httpPort: 0,
      tls: { cert: pki.serverCert, key: pki.serverKey },
    });
  });
  afterAll(async () => {
    await fake.close();
  });

  it('calls and streams over TLS with a private CA', async () => {
    expect(fake.grpcUrl).toMatch(/^https:/);
    await withTransport(grpcTransport({ baseUrl: fake.grpcUrl, tls: { ca: pki.ca } }), async (t) => {
      expect(await t.serverLive()).toBe(true);
      const { responses, error } = await drain(t.stream(rawRequest('tls-1', [5], 3)));
      expect(error).toBeUndefined();
      expect(streamedIds(responses)).toHaveLength(3);
    });
  });

  it('accepts the CA as bytes and a server name override', async () => {
    const url = new URL(fake.grpcUrl);
    const baseUrl = `https://127.0.0.1:${url.port}`;
    const ca = new TextEncoder().encode(pki.ca);
    await withTransport(grpcTransport({ baseUrl, tls: { ca, serverName: 'localhost' } }), async (t) => {
      expect(await t.serverReady()).toBe(true);
    });
  });

  it('refuses a server whose certificate another CA signed', async () => {
    await withTransport(grpcTransport({ baseUrl: fake.grpcUrl, tls: { ca: strangers.ca } }), async (t) => {
      const err = await rejection(t.serverLive());
      expect(err.code).toBe('unavailable');
      expect(err.retryable).toBe(false);
      expect(err.message).toMatch(/TLS/);
    });
  });

  it('refuses plaintext tls options on an http:// URL', () => {
    expect(() => grpcTransport({ baseUrl: 'http://localhost:1', tls: { ca: pki.ca } })).toThrow(/https/);
  });
});

describe('mutual TLS', () => {
  let fake: FakeTriton;
  beforeAll(async () => {
    fake = await startFakeTriton({
      grpcPort: 0,
      httpPort: 0,
      tls: { cert: pki.serverCert, key: pki.serverKey, ca: pki.ca, requireClientCert: true },
    });
  });
  afterAll(async () => {
    await fake.close();
  });

  it('calls with a client certificate the server trusts', async () => {
    const tls = { ca: pki.ca, cert: pki.clientCert, key: pki.clientKey };
    await withTransport(grpcTransport({ baseUrl: fake.grpcUrl, tls }), async (t) => {
      expect(await t.serverLive()).toBe(true);
    });
  });

  it('is refused without a client certificate', async () => {
    await withTransport(grpcTransport({ baseUrl: fake.grpcUrl, tls: { ca: pki.ca } }), async (t) => {
      const err = await rejection(t.serverLive());
      expect(err.code).toBe('unavailable');
    });
  });

  it('is refused with a client certificate from another CA', async () => {
    const tls = { ca: pki.ca, cert: strangers.clientCert, key: strangers.clientKey };
    await withTransport(grpcTransport({ baseUrl: fake.grpcUrl, tls }), async (t) => {
      const err = await rejection(t.serverLive());
      expect(err.code).toBe('unavailable');
    });
  });
});

describe('TLS without HTTP/2', () => {
  it('refuses a TLS server that does not offer HTTP/2 (ALPN h2), saying so', async () => {
    // A TLS server with a certificate the client trusts, but no ALPN: an HTTP/1.1-only endpoint
    // behind the gRPC port (a proxy set up for the wrong protocol).
    const server = createTlsServer({ cert: pki.serverCert, key: pki.serverKey }, (socket) => {
      socket.on('error', () => undefined);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      await withTransport(grpcTransport({ baseUrl: url, tls: { ca: pki.ca } }), async (t) => {
        const { responses, error } = await drain(t.stream(rawRequest('no-h2', [1, 2], 2)));
        expect(responses).toEqual([]);
        expect(error?.code).toBe('unavailable');
        expect(error?.message).toContain('answered TLS without HTTP/2 (ALPN h2');
        expect(error?.message).toContain('this is not a gRPC endpoint');
        expect(error?.retryable).toBe(false);
      });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
