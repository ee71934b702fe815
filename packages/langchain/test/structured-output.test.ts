import { ChatPromptTemplate } from '@langchain/core/prompts';
import { toJsonSchema } from '@langchain/core/utils/json_schema';
import { ChatTriton } from '@trtllm/langchain';
import { type FakeTriton, fakeScript, jsonSchemaInstance, startFakeTriton } from '@trtllm/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';

const Answer = z.object({
  topic: z.string(),
  confidence: z.number().min(0.5),
  tags: z.array(z.enum(['ml', 'data'])),
});

// withStructuredOutput through the deployed model's guided decoding (GENERATOR.md "Guided decoding").
describe('ChatTriton.withStructuredOutput', () => {
  let fake: FakeTriton;
  const models: ChatTriton[] = [];
  const chatModel = (model: string) => {
    const m = new ChatTriton({ grpcUrl: fake.grpcUrl, model, maxTokens: 200 });
    models.push(m);
    return m;
  };
  beforeAll(async () => {
    fake = await startFakeTriton();
  });
  afterAll(async () => {
    await Promise.all(models.map((m) => m.close()));
    await fake.close();
  });

  it('a zod schema becomes a json_schema guide, and the reply is parsed into the object', async () => {
    const chain = ChatPromptTemplate.fromMessages([['human', 'Classify: {text}']]).pipe(
      chatModel('tensorrt_llm_bls').withStructuredOutput(Answer),
    );
    const answer = await chain.invoke({ text: 'Models learn patterns from data.' });
    expect(answer).toEqual(jsonSchemaInstance(toJsonSchema(Answer)));
    const received = fake.events().filter((e) => e.event === 'received' && e.model === 'tensorrt_llm_bls');
    expect(received.at(-1)?.guide).toBe('json_schema');
  });

  it('includeRaw returns the message beside the parsed object', async () => {
    const reply = '{"topic":"ML","confidence":0.9,"tags":["ml"]}';
    const result = await chatModel('ensemble')
      .withStructuredOutput(Answer, { includeRaw: true })
      .invoke(`Classify ${fakeScript(reply)}`);
    expect(result.parsed).toEqual(JSON.parse(reply));
    expect(result.raw.content).toBe(reply);
  });

  it('a reply that does not match the schema is an error, not a silent object', async () => {
    const bad = chatModel('ensemble').withStructuredOutput(Answer);
    await expect(bad.invoke(`x ${fakeScript('{"topic":"ML","confidence":0.1,"tags":[]}')}`)).rejects.toThrow(
      /confidence/,
    );
  });

  it('functionCalling, and a model without guided decoding, are refused before anything is sent', async () => {
    expect(() => chatModel('ensemble').withStructuredOutput(Answer, { method: 'functionCalling' })).toThrow(
      /method: .*guided decoding/,
    );
    const before = fake.events().length;
    await expect(
      chatModel('llmapi').withStructuredOutput(Answer).invoke('Classify this'),
    ).rejects.toMatchObject({
      code: 'invalid_argument',
      message: expect.stringContaining('guidedDecoding'),
    });
    expect(fake.events().length).toBe(before);
  });
});
