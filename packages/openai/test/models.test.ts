import { NotFoundError } from 'openai';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Stack, startStack } from './stack.js';

describe('GET /v1/models', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ model: 'ensemble', server: { modelName: 'my-llm' } });
  });
  afterAll(() => stack.close());

  test('lists the served model under its public name', async () => {
    const ids: string[] = [];
    for await (const model of stack.client.models.list()) ids.push(model.id);
    expect(ids).toEqual(['my-llm']);
  });

  test('retrieves the served model and 404s any other', async () => {
    const model = await stack.client.models.retrieve('my-llm');
    expect(model.object).toBe('model');
    await expect(stack.client.models.retrieve('gpt-4o')).rejects.toBeInstanceOf(NotFoundError);
  });

  test('requests naming another model get 404 model not found', async () => {
    const err = await stack.client.completions
      .create({ model: 'ensemble', prompt: 'Hi', max_tokens: 2 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect((err as NotFoundError).message).toContain("'ensemble' does not exist");
  });
});
