import { grpcTransport } from '@trtllm/grpc';
import { type Transport, tensorNumbers } from '@trtllm/sdk';
import { type FakeTriton, generateTokens, startFakeTriton } from '@trtllm/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { output, rawRequest } from './fake-models.js';
import { rejection } from './support.js';

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

describe('unary infer', () => {
  it('returns the generated ids after the prompt as one final response', async () => {
    const input = [259, 260, 261];
    const r = await transport.infer(
      rawRequest('u-1', input, 5, { model: 'tensorrt_llm_unary', streaming: false }),
    );
    const [expected] = generateTokens(input, { maxTokens: 5 });
    expect(r.final).toBe(true);
    expect(r.id).toBe('u-1');
    expect(r.model).toBe('tensorrt_llm_unary');
    expect(tensorNumbers(output(r, 'output_ids'))).toEqual([...input, ...(expected?.tokens ?? [])]);
    expect(output(r, 'output_ids').shape).toEqual([1, 1, input.length + (expected?.tokens.length ?? 0)]);
  });

  it('returns only the requested outputs', async () => {
    const r = await transport.infer({
      ...rawRequest('u-2', [7, 8], 3, { model: 'tensorrt_llm_unary', streaming: false }),
      outputs: ['sequence_length'],
    });
    expect(r.outputs.map((o) => o.name)).toEqual(['sequence_length']);
    expect(tensorNumbers(output(r, 'sequence_length'))).toEqual([5]);
  });

  it('fails with not_found for an unknown model, keeping the server message', async () => {
    const err = await rejection(transport.infer(rawRequest('u-3', [5], 1, { model: 'no_such_model' })));
    expect(err.code).toBe('not_found');
    expect(err.serverMessage).toContain("'no_such_model'");
    expect(err.model).toBe('no_such_model');
    expect(err.requestId).toBe('u-3');
  });

  it('refuses a decoupled model, whose responses need a stream', async () => {
    const err = await rejection(transport.infer(rawRequest('u-4', [5], 1, { model: 'tensorrt_llm' })));
    expect(err.serverMessage).toMatch(/decoupled/);
    expect(err.code).toBe('unimplemented');
  });

  it('reports a missing required input as invalid_argument naming it', async () => {
    const request = rawRequest('u-5', [5], 1, { model: 'tensorrt_llm_unary', streaming: false });
    const err = await rejection(
      transport.infer({ ...request, inputs: request.inputs.filter((t) => t.name !== 'request_output_len') }),
    );
    expect(err.code).toBe('invalid_argument');
    expect(err.serverMessage).toContain('request_output_len');
  });

  it('keeps the code and message of an injected status', async () => {
    fake.setFaults({ statusOnce: { grpc: 14, http: 503, message: 'server is draining' } });
    const err = await rejection(
      transport.infer(rawRequest('u-6', [5], 1, { model: 'tensorrt_llm_unary', streaming: false })),
    );
    expect(err.code).toBe('unavailable');
    expect(err.retryable).toBe(true);
    expect(err.serverMessage).toBe('server is draining');
    expect(err.grpcStatus).toBe(14);
  });
});

describe('deadlines and cancellation', () => {
  let slow: FakeTriton;
  let slowTransport: Transport;
  beforeAll(async () => {
    slow = await startFakeTriton({ grpcPort: 0, httpPort: 0, ttftMs: 5000 });
    slowTransport = grpcTransport({ baseUrl: slow.grpcUrl });
  });
  afterAll(async () => {
    await slowTransport.close();
    await slow.close();
  });

  it('fails with deadline_exceeded when timeoutMs passes', async () => {
    const err = await rejection(
      slowTransport.infer(rawRequest('d-1', [5], 2, { model: 'tensorrt_llm_unary', streaming: false }), {
        timeoutMs: 200,
      }),
    );
    expect(err.code).toBe('deadline_exceeded');
  });

  it('fails with cancelled when the caller aborts', async () => {
    const controller = new AbortController();
    const call = slowTransport.infer(
      rawRequest('d-2', [5], 2, { model: 'tensorrt_llm_unary', streaming: false }),
      {
        signal: controller.signal,
      },
    );
    await slow.waitForEvent((e) => e.id === 'd-2' && e.event === 'received');
    controller.abort();
    const err = await rejection(call);
    expect(err.code).toBe('cancelled');
    const seen = await slow.waitForEvent((e) => e.id === 'd-2' && e.event === 'cancelled');
    expect(seen.protocol).toBe('grpc');
  });

  it('does not send a call whose signal is already aborted', async () => {
    const err = await rejection(slowTransport.serverLive({ signal: AbortSignal.abort() }));
    expect(err.code).toBe('cancelled');
  });
});

describe('connection', () => {
  it('fails with unavailable when nothing listens', async () => {
    const t = grpcTransport({ baseUrl: 'http://127.0.0.1:1' });
    const err = await rejection(t.serverLive());
    expect(err.code).toBe('unavailable');
    await t.close();
  });

  it('fails with unavailable after close()', async () => {
    const t = grpcTransport({ baseUrl: fake.grpcUrl });
    expect(await t.serverLive()).toBe(true);
    await t.close();
    const err = await rejection(t.serverLive());
    expect(err.code).toBe('unavailable');
  });
});
