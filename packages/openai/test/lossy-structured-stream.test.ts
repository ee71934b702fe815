import { fakeScript, jsonSchemaInstance } from '@trtllm/testing';
import type { ChatCompletionChunk, ChatCompletionTool } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { generated, seedWhere } from './expected.js';
import { type Stack, startStack } from './stack.js';

// Characters of two and three UTF-8 bytes: the fake (like Triton) splits them over tokens, and a
// model that decodes each token alone streams U+FFFD for them.
const CITY = 'Zürich 北京';
const TOOLS: ChatCompletionTool[] = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  },
];
const call = `<tool_call>\n${JSON.stringify({ name: 'get_weather', arguments: { city: CITY } })}\n</tool_call>`;

async function chunksOf(stream: AsyncIterable<ChatCompletionChunk>): Promise<ChatCompletionChunk[]> {
  const chunks: ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

function streamedCall(chunks: readonly ChatCompletionChunk[]) {
  let name = '';
  let args = '';
  let finish: string | null = null;
  for (const chunk of chunks) {
    const choice = chunk.choices[0];
    if (choice === undefined) continue;
    for (const d of choice.delta.tool_calls ?? []) {
      name += d.function?.name ?? '';
      args += d.function?.arguments ?? '';
    }
    finish = choice.finish_reason ?? finish;
  }
  return { name, args, finish };
}

for (const model of ['ensemble', 'tensorrt_llm_bls_per_token']) {
  describe(`structured output streamed from ${model}, whose streamed text is lossy`, () => {
    let stack: Stack;
    beforeAll(async () => {
      stack = await startStack({ model, server: { logger: { warn: () => undefined } } });
    });
    afterAll(() => stack.close());

    test('plain streamed text of this model does carry U+FFFD (what the tool call must not)', async () => {
      const chunks = await chunksOf(
        await stack.client.chat.completions.create({
          model,
          messages: [{ role: 'user', content: fakeScript(CITY) }],
          stream: true,
        }),
      );
      expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toContain('\uFFFD');
    });

    test('a streamed tool call carries exactly the arguments the model wrote', async () => {
      const chunks = await chunksOf(
        await stack.client.chat.completions.create({
          model,
          messages: [{ role: 'user', content: fakeScript(call) }],
          tools: TOOLS,
          stream: true,
          stream_options: { include_usage: true },
        }),
      );
      const streamed = streamedCall(chunks);
      expect(streamed.name).toBe('get_weather');
      expect(JSON.parse(streamed.args)).toEqual({ city: CITY });
      expect(streamed.finish).toBe('tool_calls');
      expect(JSON.stringify(chunks)).not.toContain('\uFFFD');
      expect(chunks.at(-1)?.usage?.completion_tokens).toBeGreaterThan(0);
    });

    test('the streamed call is the one the non-streamed request returns', async () => {
      const request = {
        model,
        messages: [{ role: 'user' as const, content: fakeScript(call) }],
        tools: TOOLS,
      };
      const whole = await stack.client.chat.completions.create(request);
      const streamed = streamedCall(
        await chunksOf(await stack.client.chat.completions.create({ ...request, stream: true })),
      );
      const first = whole.choices[0]!.message.tool_calls?.[0] as
        | { function: { arguments: string } }
        | undefined;
      expect(streamed.args).toBe(first?.function.arguments);
    });

    test('streamed response_format output is the exact JSON the model wrote', async () => {
      const schema = {
        type: 'object',
        properties: { city: { type: 'string', enum: [CITY] } },
        required: ['city'],
      };
      const chunks = await chunksOf(
        await stack.client.chat.completions.create({
          model,
          messages: [{ role: 'user', content: 'Weather as JSON.' }],
          response_format: { type: 'json_schema', json_schema: { name: 'w', schema, strict: true } },
          stream: true,
        }),
      );
      const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
      expect(text).toBe(JSON.stringify(jsonSchemaInstance(schema)));
      expect(JSON.parse(text)).toEqual({ city: CITY });
    });
  });
}

describe('structured output streamed from a model whose streamed text is exact', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ model: 'tensorrt_llm_bls' });
  });
  afterAll(() => stack.close());

  test('still streams, a tool call in several argument deltas', async () => {
    const chunks = await chunksOf(
      await stack.client.chat.completions.create({
        model: 'tensorrt_llm_bls',
        messages: [{ role: 'user', content: fakeScript(call) }],
        tools: TOOLS,
        stream: true,
      }),
    );
    const argumentDeltas = chunks
      .flatMap((c) => c.choices[0]?.delta.tool_calls ?? [])
      .filter((d) => d.function?.arguments);
    expect(argumentDeltas.length).toBeGreaterThan(2);
    expect(JSON.parse(streamedCall(chunks).args)).toEqual({ city: CITY });
  });
});

describe('text cut by max_tokens inside a character', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ model: 'ensemble' });
  });
  afterAll(() => stack.close());

  test('ends without the remnant of the character, on both endpoints', async () => {
    const prompt = 'What is ML?';
    const maxTokens = 6;
    const seed = seedWhere(prompt, maxTokens, (text) => text.endsWith('\uFFFD'));
    const whole = generated(prompt, { maxTokens, seed })[0]!.text;
    const completion = await stack.client.completions.create({
      model: 'ensemble',
      prompt,
      max_tokens: maxTokens,
      seed,
    });
    expect(completion.choices[0]!.finish_reason).toBe('length');
    expect(completion.choices[0]!.text).toBe(whole.slice(0, -1));
    expect(completion.choices[0]!.text.endsWith('\uFFFD')).toBe(false);
  });
});
