import { grpcTransport } from '@trtllm/grpc';
import { httpTransport } from '@trtllm/http';
import type { Transport } from '@trtllm/sdk';
import { type FakeTriton, type FakeTritonOptions, startFakeTriton } from '@trtllm/testing';
import { afterAll, beforeAll } from 'vitest';

export type Protocol = 'grpc' | 'http';
export const PROTOCOLS: readonly Protocol[] = ['grpc', 'http'];

/** Creates a transport of the given protocol for a running fake. */
export function transportFor(protocol: Protocol, triton: FakeTriton): Transport {
  return protocol === 'grpc'
    ? grpcTransport({ baseUrl: triton.grpcUrl })
    : httpTransport({ baseUrl: triton.httpUrl });
}

/**
 * Starts one fake Triton for a test file and closes it (and every transport made through
 * `transport()`) afterwards.
 */
export function useFakeTriton(options: FakeTritonOptions = {}): {
  readonly triton: () => FakeTriton;
  readonly transport: (protocol: Protocol) => Transport;
} {
  let triton: FakeTriton | undefined;
  const transports: Transport[] = [];
  beforeAll(async () => {
    triton = await startFakeTriton(options);
  });
  afterAll(async () => {
    await Promise.all(transports.map((t) => t.close()));
    await triton?.close();
  });
  return {
    triton: () => {
      if (triton === undefined) throw new Error('fake Triton not started');
      return triton;
    },
    transport: (protocol) => {
      if (triton === undefined) throw new Error('fake Triton not started');
      const t = transportFor(protocol, triton);
      transports.push(t);
      return t;
    },
  };
}
