import { createTensor, type InferResponse, TritonLlm, TritonLlmError } from '@trtllm/sdk';
import { describe, expect, it } from 'vitest';
import { failure } from '../support/failure.js';
import { PROTOCOLS, useFakeTriton } from '../support/fake.js';

// The fake's `echo` model: decoupled, of no flavor the SDK knows (INT32 `INPUT0` in, one `OUTPUT0`
// response per element out, itl_ms apart), so only its tensors can drive it.
const MODEL = 'echo';

function echoed(response: InferResponse): number | undefined {
  const out = response.outputs.find((t) => t.name === 'OUTPUT0');
  return out === undefined ? undefined : Number(out.data[0]);
}

/** The error the first read of a stream fails with. */
const firstReadFailure = (stream: AsyncIterable<InferResponse>) =>
  failure(stream[Symbol.asyncIterator]().next());

/** What the fake saw of one request id: nothing, for a call refused before sending. */
const eventsOf = (fake: ReturnType<typeof useFakeTriton>, id: string) =>
  fake
    .triton()
    .events()
    .filter((e) => e.id === id);

describe.each(PROTOCOLS)('streamInfer over %s', (protocol) => {
  const fake = useFakeTriton({ itlMs: 2 });

  it('streams a decoupled model the SDK has no flavor for, one response per answer, the last final', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: MODEL });
    await expect(llm.schema()).rejects.toMatchObject({ code: 'failed_precondition' });
    const values = [7, -3, 42, 1000];
    const responses: InferResponse[] = [];
    for await (const r of llm.streamInfer({
      model: MODEL,
      id: 'echo-1',
      inputs: [createTensor('INPUT0', 'INT32', [1, values.length], values)],
    })) {
      responses.push(r);
    }
    // Over HTTP an event stream says it is over only by ending, so the final flag comes on one more,
    // empty response; over gRPC it rides on the last answer.
    const answers = responses.filter((r) => r.outputs.length > 0);
    expect(answers.map(echoed)).toEqual(values);
    expect(responses.filter((r) => r.final)).toEqual([responses.at(-1)]);
    expect(responses.length - answers.length).toBe(protocol === 'http' ? 1 : 0);
    expect(responses.every((r) => r.id === 'echo-1' && r.model === MODEL)).toBe(true);
    const events = fake
      .triton()
      .events()
      .filter((e) => e.id === 'echo-1');
    expect(events.map((e) => e.event)).toEqual(['received', 'completed']);
  });

  it('refuses the same decoupled model through unary infer(), which streamInfer() replaces', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: MODEL });
    // The fake answers a unary call on a decoupled model as Triton does: refused, nothing run.
    const err = await failure(
      llm.infer({ model: MODEL, inputs: [createTensor('INPUT0', 'INT32', [1, 1], [1])] }),
    );
    expect(err.code).toBe('unimplemented');
    expect(err.message).toContain('decoupled transaction policy');
  });

  it('aborting the signal cancels the request on the server and fails the loop with cancelled', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: MODEL });
    const id = `echo-abort-${protocol}`;
    const values = Array.from({ length: 500 }, (_, i) => i);
    const controller = new AbortController();
    const seen: number[] = [];
    const reading = (async () => {
      for await (const r of llm.streamInfer(
        { model: MODEL, id, inputs: [createTensor('INPUT0', 'INT32', [1, values.length], values)] },
        { signal: controller.signal },
      )) {
        seen.push(echoed(r) ?? -1);
        if (seen.length === 3) controller.abort();
      }
    })();
    const err = await failure(reading);
    expect(err).toMatchObject({ code: 'cancelled' });
    expect(seen).toEqual([0, 1, 2]);
    const ended = await fake.triton().waitForEvent((e) => e.id === id && e.event !== 'received');
    expect(ended.event).toBe('cancelled');
    expect(ended.tokens).toBeLessThan(values.length);
  });

  it('breaking out of the loop cancels the request on the server', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: MODEL });
    const id = `echo-break-${protocol}`;
    const values = Array.from({ length: 500 }, (_, i) => i);
    for await (const r of llm.streamInfer({
      model: MODEL,
      id,
      inputs: [createTensor('INPUT0', 'INT32', [1, values.length], values)],
    })) {
      if (echoed(r) === 1) break;
    }
    const ended = await fake.triton().waitForEvent((e) => e.id === id && e.event !== 'received');
    expect(ended.event).toBe('cancelled');
  });

  it('an already aborted signal sends nothing and fails with cancelled', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: MODEL });
    const id = `echo-pre-aborted-${protocol}`;
    const stream = llm.streamInfer(
      { model: MODEL, id, inputs: [createTensor('INPUT0', 'INT32', [1, 1], [5])] },
      { signal: AbortSignal.abort() },
    );
    const err = await firstReadFailure(stream);
    expect(err).toMatchObject({ code: 'cancelled' });
    expect(eventsOf(fake, id)).toEqual([]);
  });

  it('names the model and the call when the model is not served', async () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: MODEL });
    const err = await firstReadFailure(
      llm.streamInfer({ model: 'nope', inputs: [createTensor('INPUT0', 'INT32', [1, 1], [5])] }),
    );
    expect(err).toMatchObject({ code: 'not_found', model: 'nope' });
    expect((err as Error).message).toContain('streamInfer');
    expect((err as Error).message).toContain('echo');
  });

  it('refuses a misspelt option and a bad request id at the call', () => {
    const llm = new TritonLlm({ transport: fake.transport(protocol), model: MODEL });
    const inputs = [createTensor('INPUT0', 'INT32', [1, 1], [5])];
    expect(() =>
      llm.streamInfer({ model: MODEL, inputs }, { timeoutMS: 5 } as unknown as { timeoutMs: number }),
    ).toThrow(/timeoutMs/);
    expect(() => llm.streamInfer({ model: MODEL, inputs }, { timeoutMs: -1 })).toThrow(TritonLlmError);
  });
});

describe('streamInfer over HTTP: tensors JSON cannot carry', () => {
  const fake = useFakeTriton();

  it('fails naming the input, before anything is sent, for a tensor of two dimensions besides the batch', async () => {
    const llm = new TritonLlm({ transport: fake.transport('http'), model: MODEL });
    const id = 'echo-3d';
    const err = await firstReadFailure(
      llm.streamInfer({
        model: MODEL,
        id,
        inputs: [createTensor('INPUT0', 'INT32', [1, 2, 2], [1, 2, 3, 4])],
      }),
    );
    expect(err).toMatchObject({ code: 'unimplemented' });
    expect((err as Error).message).toContain("input 'INPUT0'");
    expect(eventsOf(fake, id)).toEqual([]);
  });

  it('fails naming the input for bytes that are not UTF-8', async () => {
    const llm = new TritonLlm({ transport: fake.transport('http'), model: MODEL });
    const bytes = createTensor('BLOB', 'BYTES', [1, 1], [new Uint8Array([0xff, 0xfe])]);
    const err = await firstReadFailure(llm.streamInfer({ model: MODEL, inputs: [bytes] }));
    expect(err).toMatchObject({ code: 'invalid_argument' });
    expect((err as Error).message).toContain('BLOB');
  });
});
