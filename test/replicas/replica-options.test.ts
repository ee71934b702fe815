import { grpcTransport } from '@trtllm/grpc';
import { httpTransport } from '@trtllm/http';
import { TritonLlmError } from '@trtllm/sdk';
import { describe, expect, it } from 'vitest';

function refused(make: () => unknown): TritonLlmError {
  try {
    make();
  } catch (err) {
    expect(err).toBeInstanceOf(TritonLlmError);
    expect((err as TritonLlmError).code).toBe('invalid_argument');
    return err as TritonLlmError;
  }
  throw new Error('expected invalid_argument');
}

describe('replica options of the transports', () => {
  it.each([
    ['grpc', (o: object) => grpcTransport(o as Parameters<typeof grpcTransport>[0])],
    ['http', (o: object) => httpTransport(o as Parameters<typeof httpTransport>[0])],
  ] as const)('%s refuses unusable lists of base URLs, naming the field', (_, make) => {
    expect(refused(() => make({ baseUrls: [] })).message).toMatch(/^baseUrls:/);
    expect(refused(() => make({ baseUrls: ['http://a:1', 'http://a:1'] })).message).toMatch(
      /^baseUrls\[1\]:/,
    );
    expect(refused(() => make({ baseUrls: ['http://a:1', 42] })).message).toMatch(/^baseUrls\[1\]:/);
    expect(refused(() => make({ baseUrl: 'http://a:1', baseUrls: ['http://b:1'] })).message).toMatch(
      /^baseUrl:/,
    );
    expect(refused(() => make({ baseUrls: ['ftp://a:1'] })).message).toMatch(/baseUrl/);
    expect(refused(() => make({ baseUrls: ['http://a:1'], failoverAttempts: -1 })).message).toMatch(
      /^failoverAttempts:/,
    );
  });

  it('grpc refuses a dns option that is not host:port', () => {
    for (const dns of ['triton', 'http://triton:8001', 'triton:0', 'triton:70000', '::1:8001', '']) {
      expect(refused(() => grpcTransport({ dns })).message).toMatch(/^dns:/);
    }
    expect(
      refused(() => grpcTransport({ dns: 'a:1', baseUrls: ['http://a:1'] } as unknown as { dns: string }))
        .message,
    ).toMatch(/^dns:/);
  });

  it('returns a replica transport whose endpoints are named by their URLs', async () => {
    const t = httpTransport({
      baseUrls: ['http://127.0.0.1:1', 'http://127.0.0.1:2/triton'],
      healthIntervalMs: 0,
    });
    expect(t.protocol).toBe('http');
    expect(t.endpointStats().map((s) => [s.name, s.state, s.requests])).toEqual([
      ['http://127.0.0.1:1', 'healthy', 0],
      ['http://127.0.0.1:2/triton', 'healthy', 0],
    ]);
    await t.close();
  });
});
