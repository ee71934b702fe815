import { status } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { post, sseEvents, uniqueId, useFake } from './support/fake.js';
import { bool, inferRequest, isFinal, rawInputs, textInputs } from './support/grpc-client.js';
import { openStream } from './support/streams.js';

const h = useFake();
afterEach(() => h.fake.setFaults(undefined));

const streamingRaw = (id: string, n = 10) =>
  inferRequest('tensorrt_llm', rawInputs([5], n, [bool('streaming', true)]), { id });
const sse = (id: string) => ({ id, text_input: 'Hello', max_tokens: 10, stream: true });

async function readAll(res: Response): Promise<{ text: string; failure: unknown }> {
  const reader = res.body!.getReader();
  let text = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return { text, failure: undefined };
      text += new TextDecoder().decode(value);
    }
  } catch (failure) {
    return { text, failure };
  }
}

describe('injected faults over gRPC', () => {
  it('errorAfterTokens sends error_message after that many tokens', async () => {
    h.fake.setFaults({ errorAfterTokens: 3 });
    const id = uniqueId();
    const s = openStream(h.grpc);
    s.call.write(streamingRaw(id));
    s.call.end();
    expect(await s.ended).toBeUndefined();
    expect(s.messages.slice(0, 3).every((m) => m.error_message === '')).toBe(true);
    expect(s.messages[3]!.error_message).toMatch(/error after 3 tokens/);
    expect(s.messages[3]!.infer_response?.id).toBe(id);
    expect(s.messages).toHaveLength(4);
    expect((await h.fake.waitForEvent((e) => e.id === id && e.event === 'error')).tokens).toBe(3);
  });

  it('dropConnectionAfterTokens ends the connection under the call', async () => {
    h.fake.setFaults({ dropConnectionAfterTokens: 2 });
    const s = openStream(h.grpc);
    s.call.write(streamingRaw(uniqueId()));
    const error = await s.ended;
    expect(error?.code).toBe(status.UNAVAILABLE);
    expect(s.messages).toHaveLength(2);
  });

  it('malformedAfterTokens sends bytes that are not a protobuf message', async () => {
    h.fake.setFaults({ malformedAfterTokens: 2 });
    const id = uniqueId();
    const s = openStream(h.grpc);
    s.call.write(streamingRaw(id));
    const error = await s.ended;
    expect(error?.code).toBe(status.INTERNAL);
    expect(error?.details).toMatch(/pars/i);
    expect(s.messages).toHaveLength(2);
    await h.fake.waitForEvent((e) => e.id === id && e.event === 'error');
  });

  it('omitFinalResponse ends the call OK without a final-flagged response', async () => {
    h.fake.setFaults({ omitFinalResponse: true });
    const s = openStream(h.grpc);
    s.call.write(streamingRaw(uniqueId(), 4));
    expect(await s.ended).toBeUndefined();
    expect(s.messages).toHaveLength(4);
    expect(s.messages.some((m) => isFinal(m.infer_response!))).toBe(false);
  });

  it('stallAfterTokens stops sending and keeps the call open until the client gives up', async () => {
    h.fake.setFaults({ stallAfterTokens: 2 });
    const id = uniqueId();
    const s = openStream(h.grpc, { deadline: 500 });
    s.call.write(streamingRaw(id));
    const error = await s.ended;
    expect(error?.code).toBe(status.DEADLINE_EXCEEDED);
    expect(s.messages).toHaveLength(2);
    await h.fake.waitForEvent((e) => e.id === id && e.event === 'cancelled');
  });

  it('statusOnce fails the next request with that status and message, then is spent', async () => {
    h.fake.setFaults({ statusOnce: { grpc: status.UNAVAILABLE, http: 503, message: 'warming up' } });
    const request = inferRequest('ensemble_unary', textInputs('Hi', 2));
    await expect(h.grpc.unary('ModelInfer', request)).rejects.toMatchObject({
      code: status.UNAVAILABLE,
      details: 'warming up',
    });
    await expect(h.grpc.unary('ModelInfer', request)).resolves.toBeDefined();
  });

  it('applies only to the model named', async () => {
    h.fake.setFaults({ model: 'ensemble', errorAfterTokens: 0 });
    const s = openStream(h.grpc);
    s.call.write(streamingRaw(uniqueId(), 3));
    s.call.end();
    await s.ended;
    expect(s.messages.every((m) => m.error_message === '')).toBe(true);
  });
});

describe('injected faults over HTTP', () => {
  it('dropConnectionAfterTokens cuts the socket mid-stream', async () => {
    h.fake.setFaults({ dropConnectionAfterTokens: 2 });
    const res = await post(h.fake, '/v2/models/ensemble/generate_stream', sse(uniqueId()));
    const { text, failure } = await readAll(res);
    expect(failure).toBeDefined();
    expect(sseEvents(text)).toHaveLength(2);
  });

  it('malformedAfterTokens sends a data line that is not JSON', async () => {
    h.fake.setFaults({ malformedAfterTokens: 1 });
    const res = await post(h.fake, '/v2/models/ensemble/generate_stream', sse(uniqueId()));
    const { text } = await readAll(res);
    const chunks = text.split('\n\n').filter((c) => c.startsWith('data: '));
    expect(chunks).toHaveLength(2);
    expect(() => JSON.parse(chunks[1]!.slice(6))).toThrow();
  });

  it('omitFinalResponse ends the stream abruptly', async () => {
    h.fake.setFaults({ omitFinalResponse: true });
    const res = await post(h.fake, '/v2/models/ensemble/generate_stream', sse(uniqueId()));
    const { text, failure } = await readAll(res);
    expect(failure).toBeDefined();
    expect(sseEvents(text)).toHaveLength(10);
  });

  it('stallAfterTokens keeps the stream open without sending', async () => {
    h.fake.setFaults({ stallAfterTokens: 1 });
    const res = await post(h.fake, '/v2/models/ensemble/generate_stream', sse(uniqueId()), {
      signal: AbortSignal.timeout(500),
    });
    const { text, failure } = await readAll(res);
    expect((failure as Error).name).toBe('TimeoutError');
    expect(sseEvents(text)).toHaveLength(1);
  });

  it('statusOnce answers with that status and message once', async () => {
    h.fake.setFaults({ statusOnce: { grpc: status.UNAVAILABLE, http: 503, message: 'warming up' } });
    const first = await post(h.fake, '/v2/models/ensemble/generate', { text_input: 'Hi', max_tokens: 2 });
    expect(first.status).toBe(503);
    expect(await first.json()).toEqual({ error: 'warming up' });
    const second = await post(h.fake, '/v2/models/ensemble/generate', { text_input: 'Hi', max_tokens: 2 });
    expect(second.status).toBe(200);
  });
});
