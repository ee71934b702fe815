import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { credentials } from '@grpc/grpc-js';
import { startFakeTriton } from '@trtllm/testing';
import { describe, expect, it } from 'vitest';
import { connect } from './support/grpc-client.js';

const cert = readFileSync(new URL('./fixtures/localhost.crt', import.meta.url));
const key = readFileSync(new URL('./fixtures/localhost.key', import.meta.url));

function httpsStatus(url: string, options: { ca: Buffer; cert?: Buffer; key?: Buffer }): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/v2/health/ready`, options, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('TLS', () => {
  it('serves gRPC and HTTPS with the given certificate', async () => {
    const fake = await startFakeTriton({ tls: { cert, key } });
    try {
      expect(fake.grpcUrl).toMatch(/^https:\/\//);
      expect(fake.httpUrl).toMatch(/^https:\/\//);
      const client = connect(fake.grpcUrl.replace('127.0.0.1', 'localhost'), credentials.createSsl(cert));
      expect(await client.unary('ServerLive', {})).toEqual({ live: true });
      client.close();
      expect(await httpsStatus(fake.httpUrl, { ca: cert })).toBe(200);
    } finally {
      await fake.close();
    }
  });

  it('requires a client certificate when asked to', async () => {
    const fake = await startFakeTriton({ tls: { cert, key, ca: cert, requireClientCert: true } });
    try {
      await expect(httpsStatus(fake.httpUrl, { ca: cert })).rejects.toThrow();
      expect(await httpsStatus(fake.httpUrl, { ca: cert, cert, key })).toBe(200);
      const anonymous = connect(fake.grpcUrl.replace('127.0.0.1', 'localhost'), credentials.createSsl(cert));
      await expect(anonymous.unary('ServerLive', {})).rejects.toBeDefined();
      anonymous.close();
      const mutual = connect(
        fake.grpcUrl.replace('127.0.0.1', 'localhost'),
        credentials.createSsl(cert, key, cert),
      );
      expect(await mutual.unary('ServerLive', {})).toEqual({ live: true });
      mutual.close();
    } finally {
      await fake.close();
    }
  });
});
