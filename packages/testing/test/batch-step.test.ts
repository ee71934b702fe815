import { setTimeout as sleep } from 'node:timers/promises';
import { generateTokens, startFakeTriton } from '@trtllm/testing';
import { describe, expect, it } from 'vitest';
import { type Harness, useFake } from './support/fake.js';
import { bool, inferRequest, isFinal, output, rawInputs, streamAll } from './support/grpc-client.js';

const STEP_MS = 150;
const MAX_TOKENS = 3;
// The second request starts this long after the first: less than half a step.
const OFFSET_MS = 60;

/** Two generations, the second started OFFSET_MS after the first; when each call ended, from the first's start. */
async function endTimes(h: Harness): Promise<[number, number]> {
  // The connection is opened first: otherwise the first request alone waits for it (tens of ms
  // on a loaded machine), and arrives less than OFFSET_MS before the second.
  const warm = await streamAll(h.grpc, [
    inferRequest('tensorrt_llm', rawInputs([29], 1, [bool('streaming', true)])),
  ]);
  expect(warm.error).toBeUndefined();
  const started = performance.now();
  const run = async (id: string, input: number): Promise<number> => {
    const request = inferRequest('tensorrt_llm', rawInputs([input], MAX_TOKENS, [bool('streaming', true)]), {
      id,
    });
    const { messages, error } = await streamAll(h.grpc, [request]);
    const ended = performance.now() - started;
    expect(error).toBeUndefined();
    const responses = messages.map((m) => m.infer_response!);
    expect(responses.map((r) => output(r, 'output_ids').values[0])).toEqual(
      generateTokens([input], { maxTokens: MAX_TOKENS })[0]!.tokens,
    );
    expect(responses.map((r) => isFinal(r))).toEqual([false, false, true]);
    return ended;
  };
  const first = run('first', 30);
  await sleep(OFFSET_MS);
  const second = run('second', 31);
  return [await first, await second];
}

describe(`batchStepMs: ${STEP_MS}`, () => {
  const h = useFake({ batchStepMs: STEP_MS });

  it('gives generations started apart their tokens at the same steps of one clock, as in-flight batching does', async () => {
    const [first, second] = await endTimes(h);
    // Each of the 3 tokens waits for a step (the first for the next one after its arrival).
    expect(first).toBeGreaterThanOrEqual(2 * STEP_MS);
    // Started 60 ms apart, both joined the same step and got their last token at the same one.
    expect(Math.abs(second - first)).toBeLessThan(OFFSET_MS / 2);
  });
});

describe(`itlMs: ${STEP_MS} (each generation on its own schedule)`, () => {
  const h = useFake({ itlMs: STEP_MS });

  it('ends the same two generations as far apart as they started', async () => {
    const [first, second] = await endTimes(h);
    expect(second - first).toBeGreaterThanOrEqual(OFFSET_MS / 2);
  });
});

it('refuses a step that is not a number > 0, naming the option and the value', async () => {
  for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
    await expect(startFakeTriton({ batchStepMs: bad })).rejects.toThrow(
      new TypeError(`startFakeTriton: batchStepMs must be a number > 0, got ${bad}`),
    );
  }
});
