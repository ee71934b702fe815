import { type FakeEvent, type FakeTriton, startFakeTriton } from '@trtllm/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { post, uniqueId } from './support/fake.js';

const started: FakeTriton[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((f) => f.close()));
});

async function fake(maxEvents?: number): Promise<FakeTriton> {
  const f = await startFakeTriton(maxEvents === undefined ? {} : { maxEvents });
  started.push(f);
  return f;
}

/** One ensemble request over /generate, returned once its last event is recorded. */
async function generate(f: FakeTriton, id: string): Promise<void> {
  const done = f.waitForEvent((e) => e.model === 'ensemble' && e.id === id && e.event === 'completed');
  const res = await post(f, '/v2/models/ensemble/generate', { id, text_input: 'Hello', max_tokens: 2 });
  expect(res.status).toBe(200);
  await res.text();
  await done;
}

const shape = (events: FakeEvent[]) => events.map((e) => `${e.model}:${e.id}:${e.event}`);

describe('the event log is bounded', () => {
  it('keeps the newest maxEvents events, the same ones an unbounded log ends with', async () => {
    const [small, all] = await Promise.all([fake(3), fake(Number.POSITIVE_INFINITY)]);
    const ids = Array.from({ length: 5 }, () => uniqueId('bounded'));
    for (const id of ids) {
      await generate(small, id);
      await generate(all, id);
    }
    const everything = all.events();
    expect(everything.length).toBeGreaterThan(3 * 2);
    expect(shape(small.events())).toEqual(shape(everything.slice(-3)));
    expect(small.events().some((e) => e.id === ids[0])).toBe(false);
  });

  it('waiting finds a past event still kept, and not one forgotten', async () => {
    const f = await fake(3);
    const [first, last] = [uniqueId('forgotten'), uniqueId('kept')];
    await generate(f, first);
    await generate(f, last);
    const kept = await f.waitForEvent((e) => e.id === last && e.event === 'completed', 50);
    expect(kept.id).toBe(last);
    await expect(f.waitForEvent((e) => e.id === first, 50)).rejects.toThrow(/no matching fake Triton event/);
  });

  it('with maxEvents 0 keeps none, and waiting for a future event still works', async () => {
    const f = await fake(0);
    const id = uniqueId('none');
    await generate(f, id);
    expect(f.events()).toEqual([]);
  });

  it('refuses a bad maxEvents by name and value', async () => {
    await expect(startFakeTriton({ maxEvents: -1 })).rejects.toThrow(/maxEvents .*-1/);
    await expect(startFakeTriton({ maxEvents: 2.5 })).rejects.toThrow(/maxEvents .*2\.5/);
  });

  it('keeps 10,000 by default, however many requests the fake serves', async () => {
    const f = await fake();
    const requests = 2_600;
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < requests) {
          next++;
          const res = await post(f, '/v2/models/ensemble/generate', { text_input: 'Hi', max_tokens: 1 });
          await res.text();
        }
      }),
    );
    // Four events per ensemble request (its own and its tensorrt_llm request's): 10,400 recorded.
    expect(f.events().length).toBe(10_000);
  }, 60_000);
});
