import { decode, encode, generateTokens } from '@trtllm/testing';
import { describe, expect, it } from 'vitest';
import { uniqueId, useFake } from './support/fake.js';
import {
  bool,
  inferRequest,
  int32,
  isFinal,
  output,
  rawInputs,
  streamAll,
  textInputs,
} from './support/grpc-client.js';

const h = useFake();

describe('ModelStreamInfer', () => {
  it('streams one response per token, the last one flagged final as the C++ backend does', async () => {
    const ids = encode('Hello world');
    const { messages, error } = await streamAll(h.grpc, [
      inferRequest('tensorrt_llm', rawInputs(ids, 6, [bool('streaming', true)]), { id: 'a1' }),
    ]);
    expect(error).toBeUndefined();
    const expected = generateTokens(ids, { maxTokens: 6 })[0]!.tokens;
    const data = messages.map((m) => m.infer_response!);
    expect(data.map((r) => output(r, 'output_ids').values[0])).toEqual(expected);
    expect(data.every((r) => r.id === 'a1')).toBe(true);
    expect(data.map((r) => isFinal(r))).toEqual(expected.map((_, i) => i === expected.length - 1));
    expect(data.map((r) => output(r, 'output_ids').shape)).toEqual(expected.map(() => [1, 1, 1]));
  });

  it('flags the last response of the ensemble whether or not the request asks for empty finals', async () => {
    for (const emptyFinal of [true, false]) {
      const { messages } = await streamAll(h.grpc, [
        inferRequest('ensemble', textInputs('What is ML?', 4, [bool('stream', true)]), { emptyFinal }),
      ]);
      expect(messages.map((m) => isFinal(m.infer_response!))).toEqual([false, false, false, true]);
    }
  });

  it('ends the BLS with a flags-only final, sent only to a request that enables empty final responses', async () => {
    const bls = (emptyFinal: boolean) =>
      streamAll(h.grpc, [
        inferRequest('tensorrt_llm_bls', textInputs('What is ML?', 4, [bool('stream', true)]), {
          emptyFinal,
        }),
      ]);
    const off = (await bls(false)).messages.map((m) => m.infer_response!);
    expect(off.map((r) => [isFinal(r), r.outputs.length > 0])).toEqual(Array(4).fill([false, true]));
    const on = (await bls(true)).messages.map((m) => m.infer_response!);
    expect(on.map((r) => [isFinal(r), r.outputs.length > 0])).toEqual([
      ...Array(4).fill([false, true]),
      [true, false],
    ]);
  });

  it('carries several requests on one call, each response echoing its id', async () => {
    const requests = ['x1', 'x2', 'x3'].map((id, i) =>
      inferRequest('tensorrt_llm', rawInputs([10 + i], 3, [bool('streaming', true)]), { id }),
    );
    const { messages } = await streamAll(h.grpc, requests);
    for (const [i, id] of ['x1', 'x2', 'x3'].entries()) {
      const mine = messages.map((m) => m.infer_response!).filter((r) => r.id === id);
      const tokens = mine.map((r) => output(r, 'output_ids').values[0]);
      expect(tokens).toEqual(generateTokens([10 + i], { maxTokens: 3 })[0]!.tokens);
      expect(mine.filter((r) => isFinal(r))).toHaveLength(1);
    }
  });

  it('answers a non-decoupled model with exactly one response, flagged final', async () => {
    const { messages } = await streamAll(h.grpc, [
      inferRequest('ensemble_unary', textInputs('What is ML?', 5)),
    ]);
    expect(messages).toHaveLength(1);
    const r = messages[0]!.infer_response!;
    expect(isFinal(r)).toBe(true);
    const tokens = generateTokens(encode('What is ML?'), { maxTokens: 5 })[0]!.tokens;
    expect(output(r, 'text_output').values).toEqual([decode([...encode('What is ML?'), ...tokens])]);
  });

  it('reports a per-request error as error_message with the id, and keeps the call open', async () => {
    const { messages, error } = await streamAll(h.grpc, [
      inferRequest('nope', textInputs('x', 1), { id: 'bad' }),
      inferRequest('tensorrt_llm', rawInputs([5], 2, [bool('streaming', true)]), { id: 'good' }),
    ]);
    expect(error).toBeUndefined();
    const bad = messages.find((m) => m.error_message !== '');
    expect(bad?.error_message).toBe("Request for unknown model: 'nope' is not found");
    expect(bad?.infer_response?.id).toBe('bad');
    expect(messages.filter((m) => m.infer_response?.id === 'good')).toHaveLength(2);
  });

  it('accepts typed contents as well as raw contents', async () => {
    const ids = encode('Hi');
    const { messages } = await streamAll(h.grpc, [
      inferRequest('tensorrt_llm', rawInputs(ids, 3, [bool('streaming', false)]), {
        typed: true,
        id: uniqueId(),
      }),
    ]);
    const r = messages[0]!.infer_response!;
    const expected = generateTokens(ids, { maxTokens: 3 })[0]!.tokens;
    expect(output(r, 'output_ids').values).toEqual([...ids, ...expected]);
    expect(output(r, 'sequence_length').values).toEqual([ids.length + 3]);
  });

  it('refuses beam search with streaming', async () => {
    const { messages } = await streamAll(h.grpc, [
      inferRequest('tensorrt_llm', rawInputs([5], 3, [bool('streaming', true), int32('beam_width', [2])])),
    ]);
    expect(messages[0]!.error_message).toMatch(/beam_width > 1.*streaming/i);
  });
});
