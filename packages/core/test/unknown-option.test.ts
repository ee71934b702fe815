import { describe, expect, it } from 'vitest';
import { type GenerateRequest, TritonLlmError } from '../src/index.js';
import { validateRequest } from '../src/transport-kit.js';

const refusal = (extra: Record<string, unknown>): TritonLlmError => {
  try {
    validateRequest({ prompt: 'hi', ...extra } as unknown as GenerateRequest);
  } catch (err) {
    if (err instanceof TritonLlmError) return err;
    throw err;
  }
  throw new Error('the request was accepted');
};

describe('a misspelt option', () => {
  it.each([
    ['maxToken', 'maxTokens'],
    ['max_tokens', 'maxTokens'],
    ['temprature', 'temperature'],
    ['TopP', 'topP'],
    ['stop_words', 'stopWords'],
  ])('%s is refused with a suggestion of %s', (key, known) => {
    const err = refusal({ [key]: 4 });
    expect(err.code).toBe('invalid_argument');
    expect(err.field).toBe(key);
    expect(err.message).toBe(`${key}: unknown option; did you mean ${known}? (got 4)`);
  });

  it('that resembles no option is refused without a guess', () => {
    expect(refusal({ colour: 'red' }).message).toBe('colour: unknown option (got "red")');
  });
});
