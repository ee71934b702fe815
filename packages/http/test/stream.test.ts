import { httpTransport } from '@trtllm/http';
import { createTensor, type InferResponse, tensorNumbers, tensorStrings } from '@trtllm/sdk';
import { fakeTokenizer, generateTokens } from '@trtllm/testing';
import { describe, expect, it } from 'vitest';
import { useFakeTriton } from './fake.js';
import { drain, ensembleRequest, rawRequest } from './helpers.js';

const fake = useFakeTriton();
const transport = () => httpTransport({ baseUrl: fake().httpUrl });
const PROMPT = [259, 260, 261];

const tokensOf = (responses: readonly InferResponse[]) =>
  responses.flatMap((r) => r.outputs.filter((t) => t.name === 'output_ids').flatMap((t) => tensorNumbers(t)));

describe('streaming over /generate_stream', () => {
  it('yields one response per token of the raw model, then exactly one final', async () => {
    const { responses, error } = await drain(
      transport().stream(rawRequest('s-1', PROMPT, 6, { streaming: true })),
    );
    expect(error).toBeUndefined();
    const expected = generateTokens(PROMPT, { maxTokens: 6 })[0]?.tokens ?? [];
    expect(tokensOf(responses)).toEqual(expected);
    expect(responses.filter((r) => r.final)).toHaveLength(1);
    expect(responses.at(-1)?.final).toBe(true);
    expect(responses.every((r) => r.id === 's-1')).toBe(true);
    const completed = await fake().waitForEvent((e) => e.id === 's-1' && e.event === 'completed');
    expect(completed.tokens).toBe(expected.length);
    expect(completed.protocol).toBe('http');
  });

  it('streams ensemble text as BYTES, one piece per token', async () => {
    const { responses } = await drain(transport().stream(ensembleRequest('s-2', 'Hello', 5, true)));
    const pieces = responses.flatMap((r) =>
      r.outputs.filter((t) => t.name === 'text_output').flatMap((t) => tensorStrings(t)),
    );
    const expected = generateTokens(fakeTokenizer.encode('Hello'), { maxTokens: 5 })[0]?.tokens ?? [];
    expect(pieces).toEqual(expected.map((id) => fakeTokenizer.decode([id])));
  });

  it('refuses a raw word list before sending, pointing to gRPC', async () => {
    const request = rawRequest('s-4', PROMPT, 5, { streaming: true });
    const words = createTensor('stop_words_list', 'INT32', [1, 2, 2], [274, 259, 1, 2]);
    const { responses, error } = await drain(
      transport().stream({ ...request, inputs: [...request.inputs, words] }),
    );
    expect(responses).toEqual([]);
    expect(error?.code).toBe('unimplemented');
    expect(error?.message).toContain('gRPC');
    expect(
      fake()
        .events()
        .filter((e) => e.id === 's-4'),
    ).toEqual([]);
  });

  it('can be iterated only once', async () => {
    const stream = transport().stream(rawRequest('s-5', PROMPT, 2, { streaming: true }));
    await drain(stream);
    expect(() => stream[Symbol.asyncIterator]()).toThrow(
      expect.objectContaining({ code: 'failed_precondition' }),
    );
  });
});
