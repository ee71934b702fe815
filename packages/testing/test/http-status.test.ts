import { decode, encode, generateTokens } from '@trtllm/testing';
import { describe, expect, it } from 'vitest';
import { post, sseEvents, useFake } from './support/fake.js';

const h = useFake();

describe('HTTP status codes, as the real Triton 2.51 answers', () => {
  it('streams flat JSON values as one data event per response, one-element outputs as scalars', async () => {
    const res = await post(h.fake, '/v2/models/tensorrt_llm/generate_stream', {
      input_ids: [5, 6],
      input_lengths: 2,
      request_output_len: 3,
      streaming: true,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const events = sseEvents(await res.text());
    expect(events.map((e) => e.output_ids)).toEqual(generateTokens([5, 6], { maxTokens: 3 })[0]!.tokens);
    expect(events[0]).toMatchObject({ model_name: 'tensorrt_llm', model_version: '1', sequence_length: 1 });
  });

  it('answers nested arrays on the generate extension with 500 and the shape message', async () => {
    const res = await post(h.fake, '/v2/models/tensorrt_llm/generate_stream', {
      input_ids: [[5, 6]],
      input_lengths: 2,
      request_output_len: 3,
    });
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({
      error: "Unable to parse 'data': Shape does not match true shape of 'data' field",
    });
  });

  it('answers a missing required input with 400 naming it', async () => {
    const res = await post(h.fake, '/v2/models/tensorrt_llm/generate_stream', {
      input_ids: [5],
      input_lengths: 1,
    });
    expect(res.status).toBe(400);
    const { error } = (await res.json()) as { error: string };
    expect(error).toMatch(
      /^\[request id: <id_unknown>\] expected number of inputs between 2 and \d+ but got 2 inputs/,
    );
    expect(error).toContain("missing required input(s) ['request_output_len']");
  });

  it('answers a body that is not JSON with 500', async () => {
    const res = await post(h.fake, '/v2/models/ensemble/generate', 'not json');
    expect(res.status).toBe(500);
    expect(((await res.json()) as { error: string }).error).toMatch(
      /^failed to parse the request JSON buffer: /,
    );
  });

  it('answers a value of the wrong JSON type with 500', async () => {
    const res = await post(h.fake, '/v2/models/tensorrt_llm/generate_stream', {
      input_ids: [5],
      input_lengths: 1,
      request_output_len: 'abc',
    });
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({
      error: "Unable to parse 'data': attempt to access JSON non-signed-integer as signed-integer",
    });
  });

  it('answers an unknown model on generate_stream with 404', async () => {
    const res = await post(h.fake, '/v2/models/nope/generate_stream', { text_input: 'x', max_tokens: 1 });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: "Request for unknown model: 'nope' is not found" });
  });

  it('answers /generate on a decoupled model that sends several responses with 200 and an error body', async () => {
    const res = await post(h.fake, '/v2/models/ensemble/generate', {
      text_input: 'Hi',
      max_tokens: 3,
      stream: true,
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      error:
        'generate expects model to produce exactly 1 response, use generate stream for model that generates various number of responses',
    });
  });

  it('answers /generate on the decoupled BLS model with that error too, and works on the ensemble', async () => {
    const bls = await post(h.fake, '/v2/models/tensorrt_llm_bls/generate', {
      text_input: 'Hi',
      max_tokens: 3,
    });
    expect(bls.status).toBe(200);
    expect(((await bls.json()) as { error: string }).error).toMatch(
      /^generate expects model to produce exactly 1/,
    );
    const ens = await post(h.fake, '/v2/models/ensemble/generate', {
      text_input: 'Hi',
      max_tokens: 3,
      id: '42',
    });
    expect(ens.status).toBe(200);
    const body = (await ens.json()) as Record<string, unknown>;
    const tokens = generateTokens(encode('Hi'), { maxTokens: 3 })[0]!.tokens;
    expect(body).toMatchObject({
      id: '42',
      model_name: 'ensemble',
      text_output: decode([...encode('Hi'), ...tokens]),
    });
  });

  it('answers /infer on a decoupled model with 501', async () => {
    const res = await post(h.fake, '/v2/models/ensemble/infer', {
      inputs: [{ name: 'text_input', shape: [1, 1], datatype: 'BYTES', data: ['Hi'] }],
    });
    expect(res.status).toBe(501);
    expect(await res.json()).toEqual({
      error: "HTTP end point doesn't support models with decoupled transaction policy",
    });
  });

  it('sends a mid-stream model error as a data event under the 200 already sent', async () => {
    h.fake.setFaults({ errorAfterTokens: 2 });
    try {
      const res = await post(h.fake, '/v2/models/ensemble/generate_stream', {
        text_input: 'Hi',
        max_tokens: 5,
        stream: true,
      });
      expect(res.status).toBe(200);
      const events = sseEvents(await res.text());
      expect(events).toHaveLength(3);
      expect(events[2]).toEqual({ error: expect.stringMatching(/error after 2 tokens/) });
    } finally {
      h.fake.setFaults(undefined);
    }
  });

  it('answers health, metadata, config and readiness', async () => {
    const get = (path: string) => fetch(`${h.fake.httpUrl}${path}`);
    expect((await get('/v2/health/live')).status).toBe(200);
    expect((await get('/v2/health/ready')).status).toBe(200);
    expect(await (await get('/v2')).json()).toMatchObject({ name: 'triton' });
    expect((await get('/v2/models/ensemble/ready')).status).toBe(200);
    expect((await get('/v2/models/nope/ready')).status).toBe(400);
    const meta = (await (await get('/v2/models/ensemble/versions/1')).json()) as { inputs: unknown[] };
    expect(meta.inputs).toContainEqual({ name: 'text_input', datatype: 'BYTES', shape: [-1, 1] });
    const config = (await (await get('/v2/models/tensorrt_llm/config')).json()) as Record<string, unknown>;
    expect(config).toMatchObject({
      name: 'tensorrt_llm',
      backend: 'tensorrtllm',
      max_batch_size: 64,
      model_transaction_policy: { decoupled: true },
      parameters: { decoupled_mode: { string_value: 'true' } },
    });
    expect(config.input).toContainEqual(
      expect.objectContaining({ name: 'seed', data_type: 'TYPE_UINT64', dims: [1], optional: true }),
    );
    const ens = (await (await get('/v2/models/ensemble/config')).json()) as Record<string, unknown>;
    expect(ens).toMatchObject({ platform: 'ensemble', ensemble_scheduling: { step: expect.any(Array) } });
    expect((await get('/v2/models/nope/config')).status).toBe(404);
    const stats = (await (await get('/v2/models/stats')).json()) as { model_stats: { name: string }[] };
    expect(stats.model_stats.map((s) => s.name)).toContain('tensorrt_llm_bls');
  });
});
