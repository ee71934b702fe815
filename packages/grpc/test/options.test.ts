import { grpcTransport } from '@trtllm/grpc';
import { TritonLlmError } from '@trtllm/sdk';
import { type FakeTriton, startFakeTriton } from '@trtllm/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest } from './fake-models.js';
import { rejection } from './support.js';

let fake: FakeTriton;

beforeAll(async () => {
  fake = await startFakeTriton({ grpcPort: 0, httpPort: 0 });
});

afterAll(async () => {
  await fake.close();
});

function invalid(make: () => unknown): TritonLlmError {
  try {
    make();
  } catch (err) {
    expect(err).toBeInstanceOf(TritonLlmError);
    expect((err as TritonLlmError).code).toBe('invalid_argument');
    return err as TritonLlmError;
  }
  throw new Error('expected invalid_argument');
}

describe('transport options', () => {
  it('refuses a response larger than maxReceiveMessageBytes', async () => {
    const t = grpcTransport({ baseUrl: fake.grpcUrl, maxReceiveMessageBytes: 256 });
    try {
      const input = Array.from({ length: 200 }, (_, i) => 3 + i);
      const request = rawRequest('o-1', input, 2, { model: 'tensorrt_llm_unary', streaming: false });
      const err = await rejection(t.infer(request));
      expect(err.code).toBe('resource_exhausted');
      // Small answers still pass.
      expect(await t.serverLive()).toBe(true);
    } finally {
      await t.close();
    }
  });

  it('refuses a request larger than maxSendMessageBytes before sending it', async () => {
    const t = grpcTransport({ baseUrl: fake.grpcUrl, maxSendMessageBytes: 256 });
    try {
      fake.clearEvents();
      const input = Array.from({ length: 200 }, (_, i) => 3 + i);
      const request = rawRequest('o-2', input, 2, { model: 'tensorrt_llm_unary', streaming: false });
      const err = await rejection(t.infer(request));
      expect(err.code).toBe('resource_exhausted');
      expect(fake.events().filter((e) => e.id === 'o-2')).toEqual([]);
    } finally {
      await t.close();
    }
  });

  it('works with keepalive pings off and on', async () => {
    for (const keepaliveMs of [0, 10_000]) {
      const t = grpcTransport({ baseUrl: fake.grpcUrl, keepaliveMs });
      try {
        expect(await t.serverLive()).toBe(true);
      } finally {
        await t.close();
      }
    }
  });

  it('refuses options out of range, naming the option', () => {
    expect(invalid(() => grpcTransport({ baseUrl: fake.grpcUrl, keepaliveMs: -1 })).message).toContain(
      'keepaliveMs',
    );
    expect(invalid(() => grpcTransport({ baseUrl: fake.grpcUrl, keepaliveTimeoutMs: 0 })).message).toMatch(
      /^keepaliveTimeoutMs: .*\(got 0\)/,
    );
    expect(
      invalid(() => grpcTransport({ baseUrl: fake.grpcUrl, maxReceiveMessageBytes: 0 })).message,
    ).toContain('maxReceiveMessageBytes');
    expect(invalid(() => grpcTransport({ baseUrl: 'ftp://localhost:8001' })).message).toContain('baseUrl');
    expect(
      invalid(() => grpcTransport({ baseUrl: 'https://localhost:1', tls: { cert: 'x' } })).message,
    ).toContain('key');
  });

  it('refuses a non-positive timeoutMs before sending', async () => {
    const t = grpcTransport({ baseUrl: fake.grpcUrl });
    try {
      const err = await rejection(t.serverLive({ timeoutMs: 0 }));
      expect(err.code).toBe('invalid_argument');
      expect(err.message).toContain('timeoutMs');
    } finally {
      await t.close();
    }
  });
});
