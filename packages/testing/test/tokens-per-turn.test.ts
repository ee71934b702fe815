import { generateTokens, startFakeTriton } from '@trtllm/testing';
import { describe, expect, it } from 'vitest';
import { useFake } from './support/fake.js';
import { bool, inferRequest, isFinal, output, rawInputs, streamAll } from './support/grpc-client.js';

const ids = ['t1', 't2', 't3'];
const MAX_TOKENS = 8;

/** Three generations on one call; each response's request id, in the order they came. */
async function order(h: ReturnType<typeof useFake>): Promise<string[]> {
  const requests = ids.map((id, i) =>
    inferRequest('tensorrt_llm', rawInputs([20 + i], MAX_TOKENS, [bool('streaming', true)]), { id }),
  );
  const { messages, error } = await streamAll(h.grpc, requests);
  expect(error).toBeUndefined();
  const responses = messages.map((m) => m.infer_response!);
  // Whatever the order, each request gets its own tokens, the last one final.
  for (const [i, id] of ids.entries()) {
    const mine = responses.filter((r) => r.id === id);
    expect(mine.map((r) => output(r, 'output_ids').values[0])).toEqual(
      generateTokens([20 + i], { maxTokens: MAX_TOKENS })[0]!.tokens,
    );
    expect(mine.map((r) => isFinal(r))).toEqual(mine.map((_, k) => k === MAX_TOKENS - 1));
  }
  return responses.map((r) => r.id);
}

/** Whether some other request's response came between the first and the last of `id`'s. */
function interleaved(sequence: readonly string[], id: string): boolean {
  const first = sequence.indexOf(id);
  const last = sequence.lastIndexOf(id);
  return sequence.slice(first, last + 1).some((other) => other !== id);
}

describe('tokensPerTurn: 1', () => {
  const h = useFake({ tokensPerTurn: 1 });

  it('sends one token of each generation in turn, as in-flight batching does', async () => {
    const sequence = await order(h);
    expect(sequence).toHaveLength(ids.length * MAX_TOKENS);
    for (const id of ids) expect(interleaved(sequence, id), `${id} in ${sequence.join(' ')}`).toBe(true);
  });
});

describe('tokensPerTurn (default)', () => {
  const h = useFake();

  it('serves the same tokens whatever the turn size', async () => {
    expect(await order(h)).toHaveLength(ids.length * MAX_TOKENS);
  });
});

it('refuses a turn that is not a whole number of tokens >= 1, naming the option and the value', async () => {
  for (const bad of [0, -1, 1.5, Number.NaN]) {
    await expect(startFakeTriton({ tokensPerTurn: bad })).rejects.toThrow(
      new TypeError(`startFakeTriton: tokensPerTurn must be a whole number >= 1, got ${bad}`),
    );
  }
});
