import { createTriton, type TritonProvider, type TritonProviderOptions } from '@trtllm/ai-sdk';
import { REQUEST_OPTIONS, TritonLlmError } from '@trtllm/sdk';
import {
  decode,
  encode,
  type FakeTriton,
  fakeTokenizer,
  generateTokens,
  startFakeTriton,
} from '@trtllm/testing';
import { generateText } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTritonOptions } from '../src/provider-options.js';

(globalThis as { AI_SDK_LOG_WARNINGS?: unknown }).AI_SDK_LOG_WARNINGS = false;

const FIELD = 'providerOptions.trtllm';

/** The error `fn` rejects with, which must be a TritonLlmError. */
async function failure(fn: () => Promise<unknown>): Promise<TritonLlmError> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof TritonLlmError) return err;
    throw err;
  }
  throw new Error('the call succeeded');
}

describe('providerOptions.trtllm follows the SDK option descriptor', () => {
  let fake: FakeTriton;
  let triton: TritonProvider;
  beforeAll(async () => {
    fake = await startFakeTriton({ itlMs: 0 });
    triton = createTriton({ grpcUrl: fake.grpcUrl });
  });
  afterAll(async () => {
    await triton.close();
    await fake.close();
  });

  const received = (): number => fake.events().filter((e) => e.event === 'received').length;

  it('every descriptor option is a provider option or refused with the reason, naming the field', () => {
    for (const key of Object.keys(REQUEST_OPTIONS)) {
      let refusal: unknown;
      try {
        // A value of the wrong type: a provider option fails the SDK's check of that type instead.
        parseTritonOptions({ [key]: Symbol('wrong') }, FIELD);
      } catch (err) {
        refusal = err;
      }
      expect(refusal).toBeInstanceOf(TritonLlmError);
      const err = refusal as TritonLlmError;
      expect([key, err.field]).toEqual([key, `${FIELD}.${key}`]);
      expect(err.message).not.toContain('unknown option');
    }
  });

  it('a raw-model option of the descriptor reaches the raw model', async () => {
    const options: TritonProviderOptions = { draftAcceptanceThreshold: 0.5 };
    const r = await generateText({
      model: triton('tensorrt_llm', { tokenizer: fakeTokenizer }),
      prompt: 'What is ML?',
      maxOutputTokens: 6,
      providerOptions: { trtllm: options },
    });
    const prompt = '<|im_start|>user\nWhat is ML?<|im_end|>\n<|im_start|>assistant\n';
    expect(r.text).toBe(decode(generateTokens(encode(prompt), { maxTokens: 6 })[0]!.tokens));
  });

  it('the same option on a model without its input is a typed error naming it, and nothing is sent', async () => {
    const before = received();
    const err = await failure(() =>
      generateText({
        model: triton('ensemble'),
        prompt: 'Hello',
        maxRetries: 0,
        providerOptions: { trtllm: { draftAcceptanceThreshold: 0.5 } },
      }),
    );
    expect([err.code, err.field, err.model]).toEqual([
      'invalid_argument',
      'draftAcceptanceThreshold',
      'ensemble',
    ]);
    expect(received()).toBe(before);
  });

  it('an AI SDK setting given as a provider option names the setting to use', async () => {
    const err = await failure(() =>
      generateText({
        model: triton('ensemble'),
        prompt: 'Hello',
        maxRetries: 0,
        providerOptions: { trtllm: { maxTokens: 5 } },
      }),
    );
    expect(err.field).toBe(`${FIELD}.maxTokens`);
    expect(err.message).toContain("set the AI SDK's maxOutputTokens instead");
  });

  it('a misspelt option is refused with the closest provider option', async () => {
    const err = await failure(() =>
      generateText({
        model: triton('ensemble'),
        prompt: 'Hello',
        maxRetries: 0,
        providerOptions: { trtllm: { beam_width: 2 } },
      }),
    );
    expect(err.field).toBe(`${FIELD}.beam_width`);
    expect(err.message).toBe(`${FIELD}.beam_width: unknown option; did you mean beamWidth? (got 2)`);
  });
});
