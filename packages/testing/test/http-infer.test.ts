import { decode, encode, generateTokens } from '@trtllm/testing';
import { describe, expect, it } from 'vitest';
import { post, useFake } from './support/fake.js';

const h = useFake();

function int32s(values: readonly number[]): Buffer {
  const b = Buffer.alloc(values.length * 4);
  for (const [i, v] of values.entries()) b.writeInt32LE(v, i * 4);
  return b;
}

function bytesTensor(text: string): Buffer {
  const s = Buffer.from(text);
  const len = Buffer.alloc(4);
  len.writeUInt32LE(s.length);
  return Buffer.concat([len, s]);
}

describe('HTTP /infer', () => {
  it('runs a non-decoupled model with JSON data in and out', async () => {
    const res = await post(h.fake, '/v2/models/ensemble_unary/infer', {
      id: 'j1',
      inputs: [
        { name: 'text_input', shape: [1, 1], datatype: 'BYTES', data: [['What is ML?']] },
        { name: 'max_tokens', shape: [1, 1], datatype: 'INT32', data: [4] },
      ],
      outputs: [{ name: 'text_output' }, { name: 'cum_log_probs' }],
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      id: string;
      outputs: { name: string; data: unknown[]; shape: number[] }[];
    };
    const tokens = generateTokens(encode('What is ML?'), { maxTokens: 4 })[0]!.tokens;
    expect(body.id).toBe('j1');
    expect(body.outputs.map((o) => o.name)).toEqual(['text_output', 'cum_log_probs']);
    expect(body.outputs[0]).toMatchObject({
      shape: [1, 1],
      data: [decode([...encode('What is ML?'), ...tokens])],
    });
  });

  it('takes binary inputs and returns binary outputs (Inference-Header-Content-Length)', async () => {
    const ids = encode('Hello world');
    const header = Buffer.from(
      JSON.stringify({
        inputs: [
          {
            name: 'input_ids',
            shape: [1, ids.length],
            datatype: 'INT32',
            parameters: { binary_data_size: ids.length * 4 },
          },
          { name: 'input_lengths', shape: [1, 1], datatype: 'INT32', parameters: { binary_data_size: 4 } },
          { name: 'request_output_len', shape: [1, 1], datatype: 'INT32', data: [5] },
        ],
        outputs: [{ name: 'output_ids', parameters: { binary_data: true } }, { name: 'sequence_length' }],
      }),
    );
    const res = await post(
      h.fake,
      '/v2/models/tensorrt_llm_unary/infer',
      Buffer.concat([header, int32s(ids), int32s([ids.length])]),
      {
        headers: {
          'Content-Type': 'application/octet-stream',
          'Inference-Header-Content-Length': String(header.length),
        },
      },
    );
    expect(res.status).toBe(200);
    const payload = Buffer.from(await res.arrayBuffer());
    const jsonLength = Number(res.headers.get('inference-header-content-length'));
    const json = JSON.parse(payload.subarray(0, jsonLength).toString()) as {
      outputs: {
        name: string;
        shape: number[];
        data?: number[];
        parameters?: { binary_data_size: number };
      }[];
    };
    const [ids_, lengths] = json.outputs;
    expect(lengths).toMatchObject({ name: 'sequence_length', data: [ids.length + 5] });
    expect(ids_!.shape).toEqual([1, 1, ids.length + 5]);
    const blob = payload.subarray(jsonLength, jsonLength + ids_!.parameters!.binary_data_size);
    const got = Array.from({ length: blob.length / 4 }, (_, i) => blob.readInt32LE(i * 4));
    expect(got).toEqual([...ids, ...generateTokens(ids, { maxTokens: 5 })[0]!.tokens]);
  });

  it('returns every output binary with binary_data_output', async () => {
    const header = Buffer.from(
      JSON.stringify({
        inputs: [
          {
            name: 'QUERY',
            shape: [1, 1],
            datatype: 'BYTES',
            parameters: { binary_data_size: bytesTensor(' data').length },
          },
          { name: 'REQUEST_OUTPUT_LEN', shape: [1, 1], datatype: 'INT32', data: [7] },
        ],
        parameters: { binary_data_output: true },
      }),
    );
    const res = await post(
      h.fake,
      '/v2/models/preprocessing/infer',
      Buffer.concat([header, bytesTensor(' data')]),
      {
        headers: { 'Inference-Header-Content-Length': String(header.length) },
      },
    );
    expect(res.status).toBe(200);
    const payload = Buffer.from(await res.arrayBuffer());
    const jsonLength = Number(res.headers.get('inference-header-content-length'));
    const json = JSON.parse(payload.subarray(0, jsonLength).toString()) as {
      outputs: { name: string; parameters: { binary_data_size: number } }[];
    };
    expect(json.outputs.every((o) => o.parameters.binary_data_size > 0)).toBe(true);
    expect(json.outputs[0]!.name).toBe('INPUT_ID');
    expect(payload.subarray(jsonLength, jsonLength + 4).readInt32LE(0)).toBe(encode(' data')[0]);
  });

  it('answers a wrong data type with 400 naming the input and both types', async () => {
    const res = await post(h.fake, '/v2/models/ensemble_unary/infer', {
      inputs: [
        { name: 'text_input', shape: [1, 1], datatype: 'BYTES', data: ['Hi'] },
        { name: 'max_tokens', shape: [1, 1], datatype: 'UINT32', data: [4] },
      ],
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error:
        "[request id: <id_unknown>] inference input 'max_tokens' data-type is 'UINT32', but model 'ensemble_unary' expects 'INT32'",
    });
  });

  it('answers an unknown model with 404', async () => {
    const res = await post(h.fake, '/v2/models/nope/infer', { inputs: [] });
    expect(res.status).toBe(404);
  });
});
