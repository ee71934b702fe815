import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type JSONObject, NoSuchModelError } from '@ai-sdk/provider';
import { createTriton, type TritonProvider, type TritonProviderOptions } from '@trtllm/ai-sdk';
import { TritonLlmError } from '@trtllm/sdk';
import { REQUEST_OPTIONS } from '@trtllm/sdk/transport';
import {
  decode,
  encode,
  type FakeTriton,
  fakeScript,
  fakeTokenizer,
  generateTokens,
  startFakeTriton,
} from '@trtllm/testing';
import { generateText, streamText } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTritonOptions } from '../src/provider-options.js';

(globalThis as { AI_SDK_LOG_WARNINGS?: unknown }).AI_SDK_LOG_WARNINGS = false;

const isInvalid = (field: string) => (err: unknown) =>
  err instanceof TritonLlmError &&
  err.code === 'invalid_argument' &&
  err.field === field &&
  err.message.startsWith(`${field}:`);

describe('AI SDK provider settings and warnings', () => {
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

  it('settings the model cannot honour come back as AI SDK warnings, never silently', async () => {
    const r = await generateText({
      model: triton('tensorrt_llm_bls'),
      maxOutputTokens: 5,
      reasoning: 'high',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in this recording?' },
            // Images go to the model (images.test.ts); audio has nowhere to go.
            { type: 'file', data: new Uint8Array([82, 73, 70, 70]), mediaType: 'audio/wav' },
          ],
        },
      ],
    });
    const features = (r.warnings ?? []).map((w) => ('feature' in w ? w.feature : w.type));
    expect(features).toEqual(expect.arrayContaining(['reasoning', 'file parts (audio/wav)']));
    // The text part still reached the model: the prompt is the text alone.
    const prompt = '<|im_start|>user\nWhat is in this recording?<|im_end|>\n<|im_start|>assistant\n';
    expect(r.text).toBe(decode(generateTokens(encode(prompt), { maxTokens: 5 })[0]!.tokens));
  });

  it('streamText reports the warnings at the start of the stream', async () => {
    const result = streamText({
      model: triton('ensemble'),
      maxOutputTokens: 3,
      reasoning: 'low',
      prompt: 'Hello world',
    });
    await result.consumeStream();
    expect((await result.warnings)?.map((w) => ('feature' in w ? w.feature : w.type))).toContain('reasoning');
  });

  it('bad providerOptions.trtllm values are refused naming the field, before anything is sent', async () => {
    const before = received();
    await expect(
      generateText({
        model: triton('ensemble'),
        prompt: 'Hello',
        maxRetries: 0,
        providerOptions: { trtllm: { beamWidth: 0 } },
      }),
    ).rejects.toSatisfy(isInvalid('providerOptions.trtllm.beamWidth'));
    await expect(
      generateText({
        model: triton('ensemble'),
        prompt: 'Hello',
        maxRetries: 0,
        providerOptions: { trtllm: { beamwidth: 2 } },
      }),
    ).rejects.toSatisfy(isInvalid('providerOptions.trtllm.beamwidth'));
    await expect(
      generateText({
        model: triton('ensemble'),
        prompt: 'Hello',
        maxRetries: 0,
        providerOptions: { trtllm: { lora: { taskId: -1 } } },
      }),
    ).rejects.toSatisfy(isInvalid('providerOptions.trtllm.lora.taskId'));
    expect(received()).toBe(before);
  });

  it('the AI SDK settings are checked under their AI SDK names', async () => {
    await expect(
      generateText({ model: triton('ensemble'), prompt: 'Hello', maxRetries: 0, topP: 1.5 }),
    ).rejects.toSatisfy(isInvalid('topP'));
    await expect(
      generateText({ model: triton('ensemble'), prompt: 'Hello', maxRetries: 0, stopSequences: [''] }),
    ).rejects.toSatisfy(isInvalid('stopSequences[0]'));
  });

  it('an option the deployed model lacks is refused by the SDK, naming the option and the model', async () => {
    await expect(
      generateText({
        model: triton('llmapi'),
        prompt: 'Hello',
        maxRetries: 0,
        providerOptions: { trtllm: { badWords: ['x'] } },
      }),
    ).rejects.toSatisfy(
      (err: unknown) =>
        err instanceof TritonLlmError &&
        err.field === 'badWords' &&
        err.message.includes('badWords') &&
        err.message.includes("model 'llmapi'"),
    );
  });

  /** What a call on the ensemble with these provider options is refused with; nothing is sent. */
  const refusalOf = async (trtllm: JSONObject): Promise<TritonLlmError> => {
    const before = received();
    const call = generateText({
      model: triton('ensemble'),
      prompt: 'Hello',
      maxRetries: 0,
      providerOptions: { trtllm },
    });
    const err = await call.then(
      () => new Error('the call succeeded'),
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TritonLlmError);
    expect(received()).toBe(before);
    return err as TritonLlmError;
  };

  it('every option of the SDK descriptor is a provider option, or refused saying why, naming the field', () => {
    for (const key of Object.keys(REQUEST_OPTIONS)) {
      // A value of no option's type: a provider option fails the SDK's check of its type instead.
      const err = (() => {
        try {
          parseTritonOptions({ [key]: Symbol('wrong') }, 'providerOptions.trtllm');
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(TritonLlmError);
      expect([key, (err as TritonLlmError).field]).toEqual([key, `providerOptions.trtllm.${key}`]);
      expect((err as TritonLlmError).message).not.toContain('unknown option');
    }
  });

  it('a raw-model option of the descriptor reaches the raw model, and is refused by name where there is no input', async () => {
    const options: TritonProviderOptions = { draftAcceptanceThreshold: 0.5 };
    const r = await generateText({
      model: triton('tensorrt_llm', { tokenizer: fakeTokenizer }),
      prompt: 'What is ML?',
      maxOutputTokens: 6,
      providerOptions: { trtllm: options },
    });
    const prompt = '<|im_start|>user\nWhat is ML?<|im_end|>\n<|im_start|>assistant\n';
    // Cut by maxTokens inside a character: its remnant is dropped, as OpenAI and vLLM do.
    const ids = generateTokens(encode(prompt), { maxTokens: 6 })[0]!.tokens;
    expect(r.text).toBe(decode(ids).replace(/\uFFFD$/u, ''));
    const err = await refusalOf(options);
    expect([err.code, err.field, err.model]).toEqual([
      'invalid_argument',
      'draftAcceptanceThreshold',
      'ensemble',
    ]);
  });

  it('an AI SDK setting given as a provider option names the setting to use', async () => {
    const err = await refusalOf({ maxTokens: 5 });
    expect(err.field).toBe('providerOptions.trtllm.maxTokens');
    expect(err.message).toContain("set the AI SDK's maxOutputTokens instead");
  });

  it('a misspelt provider option is refused with the closest one', async () => {
    const err = await refusalOf({ beam_width: 2 });
    expect(err.message).toBe(
      'providerOptions.trtllm.beam_width: unknown option; did you mean beamWidth? (got 2)',
    );
  });

  it('provider defaults apply to every call and a call overrides them', async () => {
    const scripted = createTriton({
      grpcUrl: fake.grpcUrl,
      defaults: { parameters: { fake_script: 'from the defaults' } },
      defaultMaxTokens: 50,
    });
    try {
      const a = await generateText({ model: scripted('tensorrt_llm_bls'), prompt: 'Hello' });
      expect(a.text).toBe('from the defaults');
      const b = await generateText({
        model: scripted('tensorrt_llm_bls'),
        prompt: 'Hello',
        providerOptions: { trtllm: { parameters: { fake_script: 'from the call' } } },
      });
      expect(b.text).toBe('from the call');
    } finally {
      await scripted.close();
    }
  });

  it('a chosen built-in chat template formats the prompt', async () => {
    const llama3 = createTriton({ grpcUrl: fake.grpcUrl, chatTemplate: 'llama3' });
    try {
      const r = await generateText({
        model: llama3('tensorrt_llm_bls'),
        prompt: `Hi ${fakeScript('ok')}`,
        maxOutputTokens: 10,
      });
      expect(r.text).toBe('ok');
      expect(r.usage.inputTokens).toBeGreaterThan(encode(`Hi ${fakeScript('ok')}`).length);
    } finally {
      await llama3.close();
    }
  });

  it("auto uses the chat template in the tokenizer directory's tokenizer_config.json", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trtllm-template-'));
    writeFileSync(
      join(dir, 'tokenizer_config.json'),
      JSON.stringify({
        chat_template: '{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}[assistant] ',
      }),
    );
    const own = createTriton({ grpcUrl: fake.grpcUrl, tokenizerDir: dir });
    try {
      const prompt = `Hi ${fakeScript('templated')}`;
      const r = await generateText({ model: own('tensorrt_llm_bls'), prompt, maxOutputTokens: 20 });
      expect(r.text).toBe('templated');
      expect(r.usage.inputTokens).toBe(encode(`[user] ${prompt}\n[assistant] `).length);
    } finally {
      await own.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('embedding and image models are NoSuchModelError', () => {
    expect(() => triton.embeddingModel('ensemble')).toThrow(NoSuchModelError);
    expect(() => triton.imageModel('ensemble')).toThrow(NoSuchModelError);
  });

  it('createTriton takes one server: two are refused', () => {
    expect(() => createTriton({ grpcUrl: fake.grpcUrl, httpUrl: fake.httpUrl })).toThrow(
      /give one of grpcUrl, httpUrl or transport/,
    );
  });

  it('without a server in settings or environment the first call says what to set', async () => {
    const saved = { grpc: process.env.TRITON_GRPC_URL, http: process.env.TRITON_HTTP_URL };
    delete process.env.TRITON_GRPC_URL;
    delete process.env.TRITON_HTTP_URL;
    try {
      const nowhere = createTriton();
      await expect(
        generateText({ model: nowhere('ensemble'), prompt: 'Hello', maxRetries: 0 }),
      ).rejects.toThrow(/TRITON_GRPC_URL/);
      process.env.TRITON_HTTP_URL = fake.httpUrl;
      const fromEnv = createTriton();
      const r = await generateText({
        model: fromEnv('tensorrt_llm_bls'),
        prompt: `Hello ${fakeScript('env')}`,
        maxOutputTokens: 10,
      });
      expect(r.text).toBe('env');
      await fromEnv.close();
    } finally {
      if (saved.grpc === undefined) delete process.env.TRITON_GRPC_URL;
      else process.env.TRITON_GRPC_URL = saved.grpc;
      if (saved.http === undefined) delete process.env.TRITON_HTTP_URL;
      else process.env.TRITON_HTTP_URL = saved.http;
    }
  });
});
