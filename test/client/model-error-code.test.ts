import { TritonLlm, TritonLlmError } from '@trtllm/sdk';
import { fakeTokenizer, generateTokens } from '@trtllm/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { PROTOCOLS, useFakeTriton } from '../support/fake.js';

// Issue 53: on Triton 2.51 a Python model that fails before its first response was `internal` over
// gRPC (an in-stream error with no status) and `invalid_argument` over HTTP (Triton answers it with
// 400 on /generate_stream, whatever the model's error code). The fake answers as the real server.
describe.each(PROTOCOLS)('a model that fails before its first response, over %s', (protocol) => {
  const fake = useFakeTriton();
  afterEach(() => fake.triton().setFaults(undefined));

  async function failure(model: string, streaming: boolean): Promise<TritonLlmError> {
    fake.triton().setFaults({ model, errorAfterTokens: 0 });
    const llm = new TritonLlm({ transport: fake.transport(protocol), model, retry: { attempts: 1 } });
    const request = { prompt: 'Hello', maxTokens: 5 };
    const err = await (streaming
      ? (async () => {
          for await (const _ of llm.stream(request));
        })()
      : llm.generate(request)
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TritonLlmError);
    return err as TritonLlmError;
  }

  it.each(['ensemble', 'tensorrt_llm_bls'])(
    '%s streamed: internal, the model said so, not retryable',
    async (model) => {
      const err = await failure(model, true);
      expect({ code: err.code, retryable: err.retryable }).toEqual({ code: 'internal', retryable: false });
      expect(err.serverMessage).toContain('injected error after 0 tokens');
      // Over HTTP the status is Triton's 400 (kept for whoever needs it), yet it does not decide the code.
      if (protocol === 'http') expect(err.httpStatus).toBe(400);
    },
  );

  it('the same cause through generate() on a decoupled model: internal too', async () => {
    const err = await failure('tensorrt_llm_bls', false);
    expect(err.code).toBe('internal');
  });

  it('the official-shaped BLS failing before its first response (nothing generated): internal', async () => {
    // Its first token is end_id: the inner request ends with a flags-only final, which the
    // official BLS cannot decode (the very case seen on Triton 2.51, see test/conformance).
    const first = generateTokens(fakeTokenizer.encode('Hello'), { maxTokens: 1 })[0]!.tokens[0]!;
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'tensorrt_llm_bls_official' });
    const err = await (async () => {
      for await (const _ of llm.stream({ prompt: 'Hello', maxTokens: 5, endId: first }));
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TritonLlmError);
    const { code, serverMessage, httpStatus } = err as TritonLlmError;
    expect({ code, serverMessage }).toEqual({
      code: 'internal',
      serverMessage: 'Expected output_ids tensor to have 3 dims.',
    });
    expect(httpStatus).toBe(protocol === 'http' ? 400 : undefined);
  });

  it('a refusal the text names is still invalid_argument on both transports', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: 'tensorrt_llm' });
    const err = await (async () => {
      for await (const _ of llm.stream({ prompt: 'Hello', maxTokens: 5, parameters: { fake_script: 7 } }));
    })().catch((e: unknown) => e);
    expect((err as TritonLlmError).code).toBe('invalid_argument');
  });
});
