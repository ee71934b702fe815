import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createOpenAiServer, transportFromUrl } from '@trtllm/openai';
import { TritonLlm, TritonLlmError } from '@trtllm/sdk';
import { type FakeTriton, fakeTokenizer, startFakeTriton } from '@trtllm/testing';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

// The raw tensorrt_llm model takes and returns token ids: a server with no tokenizer cannot serve
// its text, and says so in createOpenAiServer's options, not as core's `create TritonLlm with a
// tokenizer` (issue 53).
describe('createOpenAiServer on the raw model without a tokenizer', () => {
  let fake: FakeTriton;
  let transport: ReturnType<typeof transportFromUrl>;
  beforeAll(async () => {
    fake = await startFakeTriton({ grpcPort: 0, httpPort: 0 });
    transport = transportFromUrl(fake.grpcUrl.replace(/^http:/, 'grpc:'));
  });
  afterAll(async () => {
    await transport.close();
    await fake.close();
  });

  test('ready() rejects failed_precondition naming the tokenizer option, and resolves with one', async () => {
    const err = await createOpenAiServer({ transport, model: 'tensorrt_llm' })
      .ready()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TritonLlmError);
    expect(err).toMatchObject({ code: 'failed_precondition', field: 'tokenizer', model: 'tensorrt_llm' });
    expect((err as Error).message).toBe(
      "model 'tensorrt_llm' on Triton is the raw tensorrt_llm model, which takes and returns token ids, " +
        'and this server has no tokenizer to turn text into them: give createOpenAiServer a tokenizer ' +
        '(tokenizer: await loadTokenizerDir(dir) of @trtllm/tokenizers)',
    );
    await createOpenAiServer({ transport, model: 'tensorrt_llm', tokenizer: fakeTokenizer }).ready();
    // Models that tokenize on the server need none.
    await createOpenAiServer({ transport, model: 'ensemble' }).ready();
  });

  test('ready() with tokenizerDir alone says that it gives the chat template only', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trtllm-openai-raw-'));
    try {
      await writeFile(join(dir, 'chat_template.jinja'), '{{ messages[0].content }}');
      const err = await createOpenAiServer({ transport, model: 'tensorrt_llm', tokenizerDir: dir })
        .ready()
        .catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'failed_precondition', field: 'tokenizer' });
      expect((err as Error).message).toContain('tokenizerDir alone gives the chat template only');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  async function answers(
    server: ReturnType<typeof createOpenAiServer>,
    call: (client: OpenAI) => Promise<unknown>,
  ): Promise<InstanceType<typeof OpenAI.APIError>> {
    const baseURL = await server.listen(0);
    try {
      const client = new OpenAI({ baseURL, apiKey: 'unused', maxRetries: 0 });
      const err = await call(client).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.APIError);
      return err as InstanceType<typeof OpenAI.APIError>;
    } finally {
      await server.close();
    }
  }

  test('without ready(), each text request is a 400 led by the request, naming the tokenizer option', async () => {
    const requests: [string, (client: OpenAI) => Promise<unknown>][] = [
      [
        'POST /v1/chat/completions',
        (c) =>
          c.chat.completions.create({
            model: 'tensorrt_llm',
            messages: [{ role: 'user', content: 'Hello' }],
            max_tokens: 3,
          }),
      ],
      [
        'POST /v1/chat/completions',
        async (c) => {
          const stream = await c.chat.completions.create({
            model: 'tensorrt_llm',
            messages: [{ role: 'user', content: 'Hello' }],
            max_tokens: 3,
            stream: true,
          });
          for await (const _ of stream);
        },
      ],
      [
        'POST /v1/completions',
        (c) => c.completions.create({ model: 'tensorrt_llm', prompt: 'Hello', max_tokens: 3 }),
      ],
      // Token ids in, but a stop string still needs the tokenizer.
      [
        'POST /v1/completions',
        (c) => c.completions.create({ model: 'tensorrt_llm', prompt: [5, 6, 7], max_tokens: 3, stop: ['x'] }),
      ],
    ];
    for (const [request, call] of requests) {
      const err = await answers(createOpenAiServer({ transport, model: 'tensorrt_llm' }), call);
      expect(err.status, request).toBe(400);
      expect(err.message).toContain(
        `${request} failed: model 'tensorrt_llm' is the raw tensorrt_llm model, which takes and returns token ids`,
      );
      expect(err.message).toContain('give createOpenAiServer a tokenizer');
      expect(err.message).not.toContain('create TritonLlm with a tokenizer');
    }
  });

  test('a client given as llm cannot be checked by ready(); its requests name the llm option', async () => {
    const llm = new TritonLlm({ transport, model: 'tensorrt_llm' });
    await createOpenAiServer({ llm }).ready();
    const err = await answers(createOpenAiServer({ llm }), (c) =>
      c.completions.create({ model: 'tensorrt_llm', prompt: 'Hello', max_tokens: 3 }),
    );
    expect(err.status).toBe(400);
    expect(err.message).toContain(
      "POST /v1/completions failed: model 'tensorrt_llm' is the raw tensorrt_llm model",
    );
    expect(err.message).toContain('create the TritonLlm given to createOpenAiServer as llm with a tokenizer');
  });
});
