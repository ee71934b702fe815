import { TritonLlm, TritonLlmError } from '@trtllm/sdk';
import { describe, expect, it } from 'vitest';
import { PROTOCOLS, useFakeTriton } from '../support/fake.js';

// A server's RESOURCE_EXHAUSTED (429 on HTTP) says it is overloaded for now: marked retryable for
// the caller, unlike a message over the client's own limit, which would be over it on every attempt
// (test/reliability/hostile-floods.test.ts, hostile-server.test.ts, hostile-http1.test.ts).
const fake = useFakeTriton();

describe.each(PROTOCOLS)("the server's resource_exhausted over %s", (protocol) => {
  it('stays retryable', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'tensorrt_llm' });
    await llm.schema();
    fake.triton().setFaults({ statusOnce: { grpc: 8, http: 429, message: 'too many requests' } });
    const err = await llm.generate({ inputIds: [259], maxTokens: 2 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TritonLlmError);
    expect({ code: (err as TritonLlmError).code, retryable: (err as TritonLlmError).retryable }).toEqual({
      code: 'resource_exhausted',
      retryable: true,
    });
    expect((err as TritonLlmError).message).toContain('too many requests');
  });
});
