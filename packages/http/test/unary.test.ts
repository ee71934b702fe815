import { httpTransport } from '@trtllm/http';
import { createTensor, tensorBigInts, tensorNumbers, tensorStrings } from '@trtllm/sdk';
import { fakeTokenizer, generateTokens } from '@trtllm/testing';
import { describe, expect, it } from 'vitest';
import { useFakeTriton } from './fake.js';
import { ensembleRequest, rawRequest, rejection } from './helpers.js';

const fake = useFakeTriton();
const transport = () => httpTransport({ baseUrl: fake().httpUrl });
const PROMPT = [259, 260, 261];

describe('unary calls over /generate', () => {
  it('returns the ensemble text the generator predicts', async () => {
    const request = ensembleRequest('g-1', 'What is ML?', 6, false);
    const response = await transport().infer({
      ...request,
      model: 'ensemble_unary',
      endpoint: 'generate',
      inputs: [...request.inputs, createTensor('exclude_input_in_output', 'BOOL', [1, 1], [true])],
    });
    const expected = generateTokens(fakeTokenizer.encode('What is ML?'), { maxTokens: 6 })[0]?.tokens ?? [];
    const text = response.outputs.find((t) => t.name === 'text_output');
    expect(text?.datatype).toBe('BYTES');
    expect(tensorStrings(text!)).toEqual([fakeTokenizer.decode(expected)]);
    expect(response.id).toBe('g-1');
    expect(response.final).toBe(true);
  });

  it('fails a decoupled model that answers several times with unimplemented, though HTTP says 200', async () => {
    const err = await rejection(
      transport().infer({ ...rawRequest('g-2', PROMPT, 4, { streaming: true }), endpoint: 'generate' }),
    );
    expect(err.code).toBe('unimplemented');
    expect(err.httpStatus).toBe(200);
    expect(err.serverMessage).toMatch(/generate stream/);
  });

  it('fails an unknown model with not_found and the server message verbatim', async () => {
    const err = await rejection(
      transport().infer({ ...rawRequest('g-3', PROMPT, 4), model: 'nope', endpoint: 'generate' }),
    );
    expect(err.code).toBe('not_found');
    expect(err.httpStatus).toBe(404);
    expect(err.serverMessage).toContain('nope');
  });

  it('maps an injected 503 to a retryable unavailable error', async () => {
    fake().setFaults({ statusOnce: { grpc: 14, http: 503, message: 'server is overloaded' } });
    const err = await rejection(
      transport().infer({
        ...rawRequest('g-4', PROMPT, 4),
        model: 'tensorrt_llm_unary',
        endpoint: 'generate',
      }),
    );
    expect(err.code).toBe('unavailable');
    expect(err.retryable).toBe(true);
    expect(err.serverMessage).toBe('server is overloaded');
  });
});

describe('unary calls over /infer (binary tensors)', () => {
  it('returns typed output ids: the prompt then the generated tokens', async () => {
    const response = await transport().infer(rawRequest('i-1', PROMPT, 5, { model: 'tensorrt_llm_unary' }));
    const expected = generateTokens(PROMPT, { maxTokens: 5 })[0]?.tokens ?? [];
    const ids = response.outputs.find((t) => t.name === 'output_ids');
    expect(ids?.datatype).toBe('INT32');
    expect(ids?.shape).toEqual([1, 1, PROMPT.length + expected.length]);
    expect(tensorNumbers(ids!)).toEqual([...PROMPT, ...expected]);
    expect(response.id).toBe('i-1');
  });

  it('sends a UINT64 seed above 2^53 exactly', async () => {
    const seed = 2n ** 64n - 1n;
    const request = rawRequest('i-2', PROMPT, 5, { model: 'tensorrt_llm_unary' });
    const response = await transport().infer({
      ...request,
      inputs: [...request.inputs, createTensor('seed', 'UINT64', [1, 1], [seed])],
    });
    const expected = generateTokens(PROMPT, { maxTokens: 5, seed })[0]?.tokens ?? [];
    // The seed a lossy float would carry must lead elsewhere, or this test proves nothing.
    expect(generateTokens(PROMPT, { maxTokens: 5, seed: 2n ** 64n })[0]?.tokens).not.toEqual(expected);
    const ids = response.outputs.find((t) => t.name === 'output_ids');
    expect(tensorBigInts(ids!).slice(PROMPT.length).map(Number)).toEqual(expected);
  });

  it('returns only the outputs asked for', async () => {
    const response = await transport().infer({
      ...rawRequest('i-3', PROMPT, 3, { model: 'tensorrt_llm_unary' }),
      outputs: ['sequence_length'],
    });
    expect(response.outputs.map((t) => t.name)).toEqual(['sequence_length']);
    expect(tensorNumbers(response.outputs[0]!)).toEqual([PROMPT.length + 3]);
  });

  it('refuses /infer on a decoupled model with unimplemented', async () => {
    const err = await rejection(transport().infer(rawRequest('i-4', PROMPT, 3)));
    expect(err.code).toBe('unimplemented');
    expect(err.httpStatus).toBe(501);
  });
});
