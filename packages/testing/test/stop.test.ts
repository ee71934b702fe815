import { encode, type FakeTriton, generateTokens } from '@trtllm/testing';
import { describe, expect, it } from 'vitest';
import { post, sseEvents, uniqueId, useFake } from './support/fake.js';
import { bool, inferRequest, int32, isFinal, output, rawInputs, text } from './support/grpc-client.js';
import { openStream, readEvents } from './support/streams.js';

const h = useFake({ itlMs: 4 });

const stopInputs = () => rawInputs([0], 0, [bool('stop', true)]);

/** The raw model's in-band stop of request `id`, sent as its own HTTP request. */
const postStop = (fake: FakeTriton, id: string) =>
  post(fake, '/v2/models/tensorrt_llm/generate_stream', {
    id,
    input_ids: [0],
    input_lengths: 1,
    request_output_len: 0,
    stop: true,
  });

describe('in-band stop', () => {
  it('on the same gRPC stream ends the running request gracefully; the stop gets its own empty final', async () => {
    const id = uniqueId('stop');
    const ids = encode('Hello');
    const s = openStream(h.grpc);
    s.call.write(inferRequest('tensorrt_llm', rawInputs(ids, 5000, [bool('streaming', true)]), { id }));
    await s.received(3);
    s.call.write(inferRequest('tensorrt_llm', stopInputs(), { id }));
    const stopped = await h.fake.waitForEvent((e) => e.id === id && e.event === 'stopped');
    s.call.end();
    expect(await s.ended).toBeUndefined();
    expect(stopped.tokens).toBeLessThan(5000);
    const responses = s.messages.map((m) => m.infer_response!);
    expect(responses.every((r) => r.id === id)).toBe(true);
    const finals = responses.filter((r) => isFinal(r));
    expect(finals).toHaveLength(2);
    expect(finals.every((r) => r.outputs.length === 0)).toBe(true);
    const tokens = responses.filter((r) => !isFinal(r)).map((r) => output(r, 'output_ids').values[0]);
    expect(tokens).toEqual(generateTokens(ids, { maxTokens: tokens.length })[0]!.tokens);
    expect(tokens).toHaveLength(stopped.tokens);
  });

  it('sent as a separate HTTP request ends a running generate_stream', async () => {
    const id = uniqueId('http-stop');
    const res = await post(h.fake, '/v2/models/tensorrt_llm/generate_stream', {
      id,
      input_ids: [9],
      input_lengths: 1,
      request_output_len: 5000,
      streaming: true,
    });
    const { text: first, reader } = await readEvents(res, 2);
    const stop = await postStop(h.fake, id);
    expect(stop.status).toBe(200);
    expect(await stop.text()).toBe('');
    let rest = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      rest += new TextDecoder().decode(value);
    }
    const stopped = await h.fake.waitForEvent((e) => e.id === id && e.event === 'stopped');
    expect(sseEvents(first + rest)).toHaveLength(stopped.tokens);
  });

  it('stops the LLM-API model by request id too', async () => {
    const id = uniqueId('llmapi-stop');
    const s = openStream(h.grpc);
    s.call.write(
      inferRequest(
        'llmapi',
        [text('text_input', ['Hello']), int32('sampling_param_max_tokens', [5000]), bool('streaming', true)],
        { id },
      ),
    );
    await s.received(2);
    s.call.write(inferRequest('llmapi', [text('text_input', ['']), bool('stop', true)], { id }));
    await h.fake.waitForEvent((e) => e.id === id && e.model === 'llmapi' && e.event === 'stopped');
    s.call.end();
    expect(await s.ended).toBeUndefined();
    expect(s.messages.filter((m) => isFinal(m.infer_response!))).toHaveLength(2);
  });
});

describe('in-band stop between two tokens', () => {
  // Tokens far apart: the stop and the client's disconnect both land while the generation waits.
  const slow = useFake({ itlMs: 60_000 });

  it('is answered as a stop even when the client closes its stream right after the stop is accepted', async () => {
    const id = uniqueId('stop-then-close');
    const controller = new AbortController();
    const res = await post(
      slow.fake,
      '/v2/models/tensorrt_llm/generate_stream',
      { id, input_ids: [9], input_lengths: 1, request_output_len: 50, streaming: true },
      { signal: controller.signal },
    );
    await readEvents(res, 1);
    const stop = await postStop(slow.fake, id);
    expect(stop.status).toBe(200);
    controller.abort();
    const end = await slow.fake.waitForEvent((e) => e.id === id && e.event !== 'received', 10_000);
    expect(end).toMatchObject({ event: 'stopped', tokens: 1 });
  });
});
