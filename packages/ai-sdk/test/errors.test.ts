import { createTriton, type TritonProvider } from '@trtllm/ai-sdk';
import { TritonLlmError } from '@trtllm/sdk';
import {
  decode,
  encode,
  type FakeTriton,
  fakeTokenizer,
  generateTokens,
  startFakeTriton,
} from '@trtllm/testing';
import { generateText, streamText } from 'ai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

(globalThis as { AI_SDK_LOG_WARNINGS?: unknown }).AI_SDK_LOG_WARNINGS = false;

const chatml = (user: string): string => `<|im_start|>user\n${user}<|im_end|>\n<|im_start|>assistant\n`;

describe.each(['grpc', 'http'] as const)('AI SDK errors and aborts of whole calls over %s', (protocol) => {
  let fake: FakeTriton;
  let triton: TritonProvider;
  beforeAll(async () => {
    fake = await startFakeTriton({ itlMs: 2 });
    triton = createTriton({
      ...(protocol === 'grpc' ? { grpcUrl: fake.grpcUrl } : { httpUrl: fake.httpUrl }),
      tokenizer: fakeTokenizer,
      retry: { attempts: 1 },
    });
  });
  afterEach(() => fake.setFaults(undefined));
  afterAll(async () => {
    await triton.close();
    await fake.close();
  });

  it('a server error mid-stream keeps the text already streamed, then reports the error', async () => {
    fake.setFaults({ model: 'tensorrt_llm_bls', errorAfterTokens: 5 });
    const errors: unknown[] = [];
    const result = streamText({
      model: triton('tensorrt_llm_bls'),
      prompt: 'What is ML?',
      maxOutputTokens: 50,
      onError: ({ error }) => {
        errors.push(error);
      },
    });
    let text = '';
    for await (const part of result.fullStream) if (part.type === 'text-delta') text += part.text;
    const five = generateTokens(encode(chatml('What is ML?')), { maxTokens: 5 })[0]!.tokens;
    // An incomplete character at the cut (this reply is Chinese) is held back, never shown.
    expect(text).toBe(decode(five).replace(/\uFFFD+$/u, ''));
    expect(text.length).toBeGreaterThan(0);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(TritonLlmError);
  });

  it('a server error before any text rejects generateText with the TritonLlmError', async () => {
    fake.setFaults({ model: 'tensorrt_llm_bls', errorAfterTokens: 0 });
    await expect(
      generateText({
        model: triton('tensorrt_llm_bls'),
        prompt: 'What is ML?',
        maxOutputTokens: 20,
        maxRetries: 0,
      }),
    ).rejects.toBeInstanceOf(TritonLlmError);
  });

  it('aborting generateText stops the raw model on the server', async () => {
    const controller = new AbortController();
    const requestId = protocol === 'grpc' ? '5550001' : '5550002';
    const call = generateText({
      model: triton('tensorrt_llm'),
      prompt: 'What is ML?',
      maxOutputTokens: 2000,
      abortSignal: controller.signal,
      maxRetries: 0,
      providerOptions: { trtllm: { requestId } },
    });
    call.catch(() => undefined);
    await fake.waitForEvent((e) => e.id === requestId && e.event === 'received');
    controller.abort();
    await call.catch(() => undefined);
    const seen = await fake.waitForEvent(
      (e) => e.id === requestId && e.model === 'tensorrt_llm' && e.event !== 'received',
    );
    expect(['cancelled', 'stopped']).toContain(seen.event);
    expect(seen.tokens).toBeLessThan(2000);
  });
});
