import { grpcTransport } from '@trtllm/grpc';
import { createTensor, type Transport, tensorNumbers } from '@trtllm/sdk';
import { decode, encode, type FakeTriton, generateTokens, startFakeTriton } from '@trtllm/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { output, rawRequest, streamedIds, streamedText, textRequest } from './fake-models.js';
import { drain } from './support.js';

let fake: FakeTriton;
let transport: Transport;

beforeAll(async () => {
  fake = await startFakeTriton({ grpcPort: 0, httpPort: 0 });
  transport = grpcTransport({ baseUrl: fake.grpcUrl });
});

afterAll(async () => {
  await transport.close();
  await fake.close();
});

afterEach(() => {
  fake.setFaults(undefined);
});

function expectedTokens(input: readonly number[], maxTokens: number): number[] {
  return [...(generateTokens(input, { maxTokens })[0]?.tokens ?? [])];
}

describe('streaming', () => {
  it('yields one token per response and flags only the last response final', async () => {
    const input = [259, 260];
    const { responses, error } = await drain(transport.stream(rawRequest('s-1', input, 6)));
    expect(error).toBeUndefined();
    expect(streamedIds(responses)).toEqual(expectedTokens(input, 6));
    expect(responses.map((r) => r.final)).toEqual([...responses.slice(1).map(() => false), true]);
    expect(responses.every((r) => r.id === 's-1' && r.model === 'tensorrt_llm')).toBe(true);
    for (const r of responses.filter((x) => x.outputs.length > 0)) {
      expect(output(r, 'output_ids').shape).toEqual([1, 1, 1]);
    }
  });

  it('streams ensemble text, each token decoded alone', async () => {
    const prompt = 'What is ML?';
    const { responses, error } = await drain(
      transport.stream(textRequest('s-2', 'ensemble', prompt, 8, true)),
    );
    expect(error).toBeUndefined();
    expect(streamedText(responses)).toEqual(expectedTokens(encode(prompt), 8).map((t) => decode([t])));
    expect(responses.at(-1)?.final).toBe(true);
  });

  it('leaves the bytes of delivered text outputs as they were while later responses are read', async () => {
    const prompt = 'What is ML?';
    const first = await drain(transport.stream(textRequest('s-kept', 'ensemble', prompt, 8, true)));
    expect(first.error).toBeUndefined();
    // BYTES elements are views of what the connection read: later reads must not write over them.
    const later = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        drain(transport.stream(textRequest(`s-later-${i}`, 'ensemble', `Another prompt ${i}`, 32, true))),
      ),
    );
    expect(later.map((l) => l.error)).toEqual(later.map(() => undefined));
    expect(later.map((l) => streamedText(l.responses).length)).toEqual(later.map(() => 32));
    expect(streamedText(first.responses)).toEqual(expectedTokens(encode(prompt), 8).map((t) => decode([t])));
  });

  it('answers a non-decoupled model on a stream with one final response', async () => {
    const input = [5, 6, 7];
    const request = rawRequest('s-3', input, 4, { model: 'tensorrt_llm_unary', streaming: false });
    const { responses, error } = await drain(transport.stream(request));
    expect(error).toBeUndefined();
    expect(responses).toHaveLength(1);
    expect(responses[0]?.final).toBe(true);
    expect(tensorNumbers(output(responses[0]!, 'output_ids'))).toEqual([
      ...input,
      ...expectedTokens(input, 4),
    ]);
  });

  it('runs streams side by side on one transport, each to its own end', async () => {
    const inputs = [[5], [6, 7], [8, 9, 10]];
    const results = await Promise.all(
      inputs.map((input, i) => drain(transport.stream(rawRequest(`s-4-${i}`, input, 5)))),
    );
    results.forEach((r, i) => {
      expect(r.error).toBeUndefined();
      expect(streamedIds(r.responses)).toEqual(expectedTokens(inputs[i]!, 5));
    });
  });
});

describe('stream errors', () => {
  it('throws the model error after the responses delivered before it', async () => {
    fake.setFaults({ model: 'tensorrt_llm', errorAfterTokens: 2 });
    const input = [11, 12];
    const { responses, error } = await drain(transport.stream(rawRequest('e-1', input, 10)));
    expect(streamedIds(responses)).toEqual(expectedTokens(input, 10).slice(0, 2));
    expect(responses.some((r) => r.final)).toBe(false);
    expect(error?.code).toBe('internal');
    expect(error?.serverMessage).not.toBe('');
    expect(error?.requestId).toBe('e-1');
  });

  it('reports bad input found by the model as invalid_argument', async () => {
    const request = rawRequest('e-2', [5], 4);
    const { responses, error } = await drain(
      transport.stream({
        ...request,
        inputs: [...request.inputs, createTensor('beam_width', 'INT32', [1, 1], [2])],
      }),
    );
    expect(responses).toHaveLength(0);
    expect(error?.code).toBe('invalid_argument');
  });

  it('reports an unknown model as not_found', async () => {
    const { error } = await drain(transport.stream(rawRequest('e-3', [5], 4, { model: 'no_such_model' })));
    expect(error?.code).toBe('not_found');
    expect(error?.serverMessage).toContain('no_such_model');
  });

  it('a call that ends without the final response is a protocol error', async () => {
    fake.setFaults({ model: 'tensorrt_llm', omitFinalResponse: true });
    const input = [13];
    const { responses, error } = await drain(transport.stream(rawRequest('e-4', input, 3)));
    expect(streamedIds(responses)).toEqual(expectedTokens(input, 3));
    expect(error?.code).toBe('protocol');
  });

  it('a message that is not protobuf is a protocol error', async () => {
    fake.setFaults({ model: 'tensorrt_llm', malformedAfterTokens: 1 });
    const { responses, error } = await drain(transport.stream(rawRequest('e-5', [14], 5)));
    expect(streamedIds(responses)).toHaveLength(1);
    expect(error?.code).toBe('protocol');
  });

  it('a dropped connection is unavailable, and the next call reconnects', async () => {
    fake.setFaults({ model: 'tensorrt_llm', dropConnectionAfterTokens: 1 });
    const { responses, error } = await drain(transport.stream(rawRequest('e-6', [15], 5)));
    // A response already in flight may die with the connection: at most the one before the drop.
    expect(streamedIds(responses).length).toBeLessThanOrEqual(1);
    expect(error?.code).toBe('unavailable');
    fake.setFaults(undefined);
    expect(await transport.serverLive()).toBe(true);
  });

  it('a stalled stream ends with deadline_exceeded at timeoutMs', async () => {
    fake.setFaults({ model: 'tensorrt_llm', stallAfterTokens: 2 });
    const { responses, error } = await drain(
      transport.stream(rawRequest('e-7', [16], 5), { timeoutMs: 500 }),
    );
    expect(streamedIds(responses)).toHaveLength(2);
    expect(error?.code).toBe('deadline_exceeded');
  });
});
