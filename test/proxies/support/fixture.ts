import { grpcTransport } from '@trtllm/grpc';
import { type Transport, TritonLlm } from '@trtllm/sdk';
import { type FakeTriton, type FakeTritonOptions, startFakeTriton } from '@trtllm/testing';
import { afterAll, beforeAll } from 'vitest';
import { createTestPki, type TestPki } from '../../../packages/grpc/test/certificates.js';
import {
  PROXY_KINDS,
  PROXY_MODES,
  type ProxyKind,
  type ProxyMode,
  type RunningProxy,
  startProxy,
} from './proxies.js';

/** Every proxy and mode, as `describe.each` rows. */
export const PROXY_CASES: readonly (readonly [ProxyKind, ProxyMode])[] = PROXY_KINDS.flatMap((kind) =>
  PROXY_MODES.map((mode) => [kind, mode] as const),
);

export interface ProxiedFake {
  readonly fake: () => FakeTriton;
  readonly proxy: (kind: ProxyKind, mode: ProxyMode) => RunningProxy;
  /** A new transport to the proxy (its connection opens on the first call); closed after the file. */
  readonly transport: (kind: ProxyKind, mode: ProxyMode) => Transport;
  /** A new transport straight to the fake. */
  readonly direct: () => Transport;
  /** A client of the ensemble model over `transport`. */
  readonly llm: (transport: Transport) => TritonLlm;
}

/**
 * One fake Triton for a test file and every proxy in front of it (nginx and HAProxy, h2c and
 * TLS), started together before the file's tests and closed after them.
 */
export function useProxiedFake(
  options: {
    readonly fake?: FakeTritonOptions;
    readonly serverTimeoutS?: number;
    readonly clientTimeoutS?: number;
  } = {},
): ProxiedFake {
  let fake: FakeTriton | undefined;
  let pki: TestPki | undefined;
  const proxies = new Map<string, RunningProxy>();
  const transports: Transport[] = [];
  const key = (kind: ProxyKind, mode: ProxyMode) => `${kind}/${mode}`;

  beforeAll(async () => {
    pki = createTestPki();
    fake = await startFakeTriton(options.fake ?? {});
    const upstreamPort = fake.grpcPort;
    const started = await Promise.allSettled(
      PROXY_CASES.map(async ([kind, mode]) => {
        const proxy = await startProxy({
          kind,
          mode,
          upstreamPort,
          ...(pki !== undefined ? { pki } : {}),
          ...(options.serverTimeoutS !== undefined ? { serverTimeoutS: options.serverTimeoutS } : {}),
          ...(options.clientTimeoutS !== undefined ? { clientTimeoutS: options.clientTimeoutS } : {}),
        });
        proxies.set(key(kind, mode), proxy);
      }),
    );
    const failed = started.find((s) => s.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
  });

  afterAll(async () => {
    await Promise.all(transports.map((t) => t.close()));
    await Promise.all([...proxies.values()].map((p) => p.close()));
    await fake?.close();
  });

  const started = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`${what} not started`);
    return value;
  };
  const keep = (t: Transport) => {
    transports.push(t);
    return t;
  };
  return {
    fake: () => started(fake, 'fake Triton'),
    proxy: (kind, mode) => started(proxies.get(key(kind, mode)), `${kind} (${mode})`),
    transport: (kind, mode) => {
      const proxy = started(proxies.get(key(kind, mode)), `${kind} (${mode})`);
      return keep(
        grpcTransport({
          baseUrl: proxy.url,
          ...(mode === 'tls' ? { tls: { ca: started(pki, 'pki').ca } } : {}),
        }),
      );
    },
    direct: () => keep(grpcTransport({ baseUrl: started(fake, 'fake Triton').grpcUrl })),
    // Retries off: a refused or failed stream must show, not be hidden by a second attempt. The
    // ensemble's warning that an early end cannot stop its generation is expected here.
    llm: (transport) =>
      new TritonLlm({
        transport,
        model: 'ensemble',
        retry: { attempts: 1 },
        logger: { warn: () => undefined },
      }),
  };
}
