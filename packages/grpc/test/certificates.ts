import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** PEM files of a throwaway PKI: one CA, a server certificate for localhost/127.0.0.1, a client certificate. */
export interface TestPki {
  readonly ca: string;
  readonly serverCert: string;
  readonly serverKey: string;
  readonly clientCert: string;
  readonly clientKey: string;
}

/** Makes a fresh CA and certificates it signed, with the openssl CLI, valid for one day. */
export function createTestPki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'trtllm-grpc-pki-'));
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  try {
    ssl(
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=trtllm test CA',
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
    );
    leaf(ssl, dir, 'server', 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth');
    leaf(ssl, dir, 'client', 'extendedKeyUsage=clientAuth');
    const read = (f: string) => readFileSync(join(dir, f), 'utf8');
    return {
      ca: read('ca.pem'),
      serverCert: read('server.pem'),
      serverKey: read('server.key'),
      clientCert: read('client.pem'),
      clientKey: read('client.key'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function leaf(ssl: (...args: string[]) => Buffer, dir: string, name: string, extensions: string): void {
  writeFileSync(join(dir, `${name}.ext`), `${extensions}\n`);
  ssl(
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-subj',
    `/CN=${name === 'server' ? 'localhost' : 'trtllm test client'}`,
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.csr`,
  );
  ssl(
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '1',
    '-extfile',
    `${name}.ext`,
    '-out',
    `${name}.pem`,
  );
}
