import { httpTransport } from '@trtllm/http';
import { describe, expect, it } from 'vitest';
import { useFakeTriton } from './fake.js';
import { drain, rawRequest, rejection } from './helpers.js';

const fake = useFakeTriton();

describe('an injected fetch', () => {
  it('carries every call: health, unary, stream', async () => {
    const seen: string[] = [];
    const transport = httpTransport({
      baseUrl: fake().httpUrl,
      fetch: (url, init) => {
        seen.push(`${init.method} ${new URL(url).pathname}`);
        return fetch(url, init);
      },
    });
    await transport.serverReady();
    await transport.infer({
      ...rawRequest('j-1', [259], 2, { model: 'tensorrt_llm_unary' }),
      endpoint: 'generate',
    });
    await drain(transport.stream(rawRequest('j-2', [259], 2, { streaming: true })));
    expect(seen).toEqual([
      'GET /v2/health/ready',
      'POST /v2/models/tensorrt_llm_unary/generate',
      'POST /v2/models/tensorrt_llm/generate_stream',
    ]);
  });

  it('turns a failing fetch into unavailable', async () => {
    const transport = httpTransport({
      baseUrl: fake().httpUrl,
      fetch: () => Promise.reject(new TypeError('fetch failed', { cause: new Error('connect ECONNRESET') })),
    });
    const err = await rejection(transport.serverMetadata());
    expect(err.code).toBe('unavailable');
    expect(err.message).toContain('ECONNRESET');
  });

  it('after close(), aborts the calls in flight and refuses new ones', async () => {
    const transport = httpTransport({ baseUrl: fake().httpUrl });
    fake().setFaults({ stallAfterTokens: 1 });
    const stream = transport.stream(rawRequest('j-3', [259], 100, { streaming: true }));
    const result = drain(stream, () => void transport.close());
    const { error } = await result;
    expect(error?.code).toBe('unavailable');
    expect((await rejection(transport.serverLive())).code).toBe('unavailable');
  });
});
