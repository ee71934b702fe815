import { TritonLlm, TritonLlmError } from '@trtllm/sdk';
import { fakeTokenizer, generateTokens } from '@trtllm/testing';
import { expect, it } from 'vitest';
import { describeEachServer, useServer } from './servers.js';

// Issue 53, one code per cause: a Python model that fails before its first response. Triton 2.51
// carries the failure in the gRPC stream with no status, and answers /generate_stream with HTTP 400
// whatever the model's error code; the model said INTERNAL, and so does the SDK on both transports.
// The failure: the official-shaped BLS decodes every inner response, and an inner request whose
// first token is end_id ends with a flags-only final it cannot decode.
const firstToken = (prompt: string): number =>
  generateTokens(fakeTokenizer.encode(prompt), { maxTokens: 1 })[0]!.tokens[0]!;

describeEachServer('a model failing before its first response: %s Triton over %s', (kind, protocol) => {
  const server = useServer(kind);

  it('is internal, not retryable, with the model text verbatim', async () => {
    const llm = new TritonLlm({
      transport: server().transport(protocol),
      model: 'tensorrt_llm_bls_official',
    });
    const err = await (async () => {
      for await (const _ of llm.stream({ prompt: 'Hello', maxTokens: 5, endId: firstToken('Hello') }));
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TritonLlmError);
    const { code, retryable, serverMessage, httpStatus } = err as TritonLlmError;
    expect({ code, retryable, serverMessage }).toEqual({
      code: 'internal',
      retryable: false,
      serverMessage: 'Expected output_ids tensor to have 3 dims.',
    });
    // The status Triton sent is kept; it does not decide the code.
    expect(httpStatus).toBe(protocol === 'http' ? 400 : undefined);
  });

  it('an unknown model lists what the server has and suggests the closest', async () => {
    const transport = server().transport(protocol);
    const served = (await transport.repositoryIndex!()).map((m) => m.name);
    expect(served).toContain('tensorrt_llm_bls_official');
    const err = await new TritonLlm({ transport, model: 'ensembel' })
      .generate({ prompt: 'Hello', maxTokens: 2 })
      .catch((e: unknown) => e);
    expect((err as TritonLlmError).code).toBe('not_found');
    expect((err as TritonLlmError).message).toContain(
      `the server has ${served.join(', ')}; did you mean 'ensemble'?`,
    );
  });
});
