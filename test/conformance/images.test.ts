import { HumanMessage } from '@langchain/core/messages';
import { createTriton } from '@trtllm/ai-sdk';
import { ChatTriton } from '@trtllm/langchain';
import { createOpenAiServer } from '@trtllm/openai';
import { TritonLlm } from '@trtllm/sdk';
import { fakeTokenizer } from '@trtllm/testing';
import { generateText, streamText } from 'ai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { described, JPEG, PNG, URL_TEXT, url } from '../support/images.js';
import { describeEachServer, useServer } from './servers.js';

const jpeg = { kind: 'data' as const, bytes: JPEG };

// NVIDIA/TensorRT-LLM triton_backend/all_models/multimodal/ensemble/config.pbtxt (1c748b9), in its order.
const MULTIMODAL_INPUTS = [
  ['text_input', 'BYTES', [1], false],
  ['decoder_text_input', 'BYTES', [1], true],
  ['image_input', 'FP16', [-1, -1, -1, -1], true],
  ['image_bytes_input', 'UINT8', [-1, -1, -1, -1], true],
  ['image_url_input', 'BYTES', [-1], true],
  ['image_sizes_input', 'INT64', [-1, 2], true],
  ['video_bytes_input', 'UINT8', [-1, -1, -1, -1], true],
  ['max_tokens', 'INT32', [1], false],
  ['bad_words', 'BYTES', [-1], true],
  ['stop_words', 'BYTES', [-1], true],
  ['end_id', 'INT32', [1], true],
  ['pad_id', 'INT32', [1], true],
  ['top_k', 'INT32', [1], true],
  ['top_p', 'FP32', [1], true],
  ['temperature', 'FP32', [1], true],
  ['length_penalty', 'FP32', [1], true],
  ['repetition_penalty', 'FP32', [1], true],
  ['min_tokens', 'INT32', [1], true],
  ['presence_penalty', 'FP32', [1], true],
  ['frequency_penalty', 'FP32', [1], true],
  ['seed', 'UINT64', [1], true],
  ['return_log_probs', 'BOOL', [1], true],
  ['return_context_logits', 'BOOL', [1], true],
  ['return_generation_logits', 'BOOL', [1], true],
  ['beam_width', 'INT32', [1], true],
  ['stream', 'BOOL', [1], true],
  ['prompt_table_extra_id', 'UINT64', [1], true],
  ['embedding_bias_words', 'BYTES', [-1], true],
  ['embedding_bias_weights', 'FP32', [-1], true],
] as const;

(globalThis as { AI_SDK_LOG_WARNINGS?: unknown }).AI_SDK_LOG_WARNINGS = false;

describeEachServer('conformance: images on the %s Triton over %s', (kind, protocol) => {
  const server = useServer(kind);
  const llm = (model: string) => new TritonLlm({ transport: server().transport(protocol), model });

  it('the multimodal ensemble has the inputs of NVIDIA’s newest config (names, types, dims, optional) and batches', async () => {
    const schema = await llm('multimodal').schema();
    expect(schema.flavor).toBe('ensemble');
    expect(schema.config.maxBatchSize).toBeGreaterThan(0);
    expect([...schema.inputs.values()].map((s) => [s.name, s.datatype, [...s.dims], s.optional])).toEqual(
      MULTIMODAL_INPUTS.map(([name, type, dims, optional]) => [name, type, [...dims], optional]),
    );
  });

  it('generate: JPEG bytes and a URL reach the multimodal ensemble intact, in order', async () => {
    const r = await llm('multimodal').generate({
      prompt: 'What is this?',
      maxTokens: 200,
      images: [{ data: JPEG, mediaType: 'image/jpeg' }, { url: URL_TEXT }],
    });
    expect(r.text).toBe(described([jpeg, url]));
  });

  it.each(['multimodal', 'llmapi', 'tensorrt_llm_bls'])(
    'stream: an image reaches %s intact',
    async (model) => {
      let text = '';
      for await (const chunk of llm(model).stream({
        prompt: 'What is this?',
        maxTokens: 200,
        images: [{ data: JPEG, mediaType: 'image/jpeg' }],
      })) {
        if (!chunk.done && chunk.sequenceIndex === 0) text += chunk.text;
      }
      expect(text).toBe(described([jpeg]));
    },
  );

  it('generate: a URL and PNG bytes reach the LLM-API model’s image_url intact', async () => {
    const r = await llm('llmapi').generate({
      prompt: 'Compare them.',
      maxTokens: 200,
      images: [{ url: URL_TEXT }, { data: PNG, mediaType: 'image/png' }],
    });
    expect(r.text).toBe(described([url, { kind: 'data', bytes: PNG }]));
    expect(r.finishReason).toBe('stop');
  });

  it('a text-only model refuses images by name before anything is sent', async () => {
    const before = server().events().length;
    await expect(
      llm('ensemble').generate({ prompt: 'Hi', maxTokens: 5, images: [{ url: URL_TEXT }] }),
    ).rejects.toMatchObject({
      code: 'invalid_argument',
      message: expect.stringMatching(/images: model 'ensemble' \(ensemble\) has no image input/),
    });
    expect(server().events().length).toBe(before);
  });

  it('the AI SDK provider: an image part reaches the multimodal ensemble and the LLM-API model, streamed and not', async () => {
    const triton = createTriton({ transport: server().transport(protocol), tokenizer: fakeTokenizer });
    const messages = [
      {
        role: 'user' as const,
        content: [
          { type: 'text' as const, text: 'What is this?' },
          { type: 'image' as const, image: JPEG, mediaType: 'image/jpeg' },
        ],
      },
    ];
    try {
      const whole = await generateText({ model: triton('multimodal'), messages, maxOutputTokens: 200 });
      expect(whole.text).toBe(described([jpeg]));
      let text = '';
      const result = streamText({ model: triton('llmapi'), messages, maxOutputTokens: 200 });
      for await (const delta of result.textStream) text += delta;
      expect(text).toBe(described([jpeg]));
    } finally {
      await triton.close();
    }
  });

  it('LangChain: an image block reaches the multimodal ensemble and the LLM-API model, streamed and not', async () => {
    const chat = (model: string) =>
      new ChatTriton({
        transport: server().transport(protocol),
        model,
        tokenizer: fakeTokenizer,
        maxTokens: 200,
        logger: { warn: () => undefined },
      });
    const message = new HumanMessage({
      content: [
        { type: 'text', text: 'What is this?' },
        { type: 'image', mimeType: 'image/jpeg', data: JPEG },
        { type: 'image_url', image_url: URL_TEXT },
      ],
    });
    const [multimodal, llmapi] = [chat('multimodal'), chat('llmapi')];
    try {
      const reply = await multimodal.invoke([message]);
      expect(reply.content).toBe(described([jpeg, url]));
      let text = '';
      for await (const chunk of await llmapi.stream([message])) text += chunk.text;
      expect(text).toBe(described([jpeg, url]));
    } finally {
      await Promise.all([multimodal.close(), llmapi.close()]);
    }
  });

  describe('through trtllm-openai', () => {
    let close: () => Promise<void>;
    let client: OpenAI;
    beforeAll(async () => {
      const api = createOpenAiServer({
        transport: server().transport(protocol),
        model: 'multimodal',
        tokenizer: fakeTokenizer,
        chatTemplate: 'chatml',
        logger: { warn: () => undefined },
      });
      const baseURL = await api.listen(0, '127.0.0.1');
      close = () => api.close();
      client = new OpenAI({ baseURL, apiKey: 'unused', maxRetries: 0 });
    });
    afterAll(() => close?.());

    it('a chat image_url part (a JPEG data: URL) reaches the multimodal ensemble, streamed and not', async () => {
      const request = {
        model: 'multimodal',
        messages: [
          {
            role: 'user' as const,
            content: [
              { type: 'text' as const, text: 'What is this?' },
              {
                type: 'image_url' as const,
                image_url: { url: `data:image/jpeg;base64,${Buffer.from(JPEG).toString('base64')}` },
              },
            ],
          },
        ],
        max_tokens: 200,
      };
      const whole = await client.chat.completions.create(request);
      expect(whole.choices[0]?.message.content).toBe(described([jpeg]));
      let text = '';
      for await (const chunk of await client.chat.completions.create({ ...request, stream: true })) {
        text += chunk.choices[0]?.delta.content ?? '';
      }
      expect(text).toBe(described([jpeg]));
    });
  });
});
