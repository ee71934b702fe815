import { httpTransport } from '@trtllm/http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rejection } from './helpers.js';
import { sendJson, startScriptedServer } from './scripted-server.js';

// Triton versions differ in how they print 64-bit fields: numbers or numeric strings.
const config = {
  name: 'ensemble',
  platform: 'ensemble',
  max_batch_size: '64',
  input: [
    { name: 'text_input', data_type: 'TYPE_STRING', dims: ['1'] },
    { name: 'stop_words', data_type: 'TYPE_STRING', dims: [-1], optional: true },
    { name: 'embedding', data_type: 'TYPE_FP16', dims: ['-1', 8], reshape: { shape: ['8'] } },
  ],
  output: [{ name: 'text_output', data_type: 'TYPE_STRING', dims: ['-1'] }],
  model_transaction_policy: { decoupled: true },
  parameters: { accumulate_tokens: { string_value: 'true' } },
  ensemble_scheduling: {
    step: [
      {
        model_name: 'preprocessing',
        model_version: '-1',
        input_map: { QUERY: 'text_input' },
        output_map: { INPUT_ID: '_INPUT_ID' },
      },
    ],
  },
};

const stats = {
  model_stats: [
    {
      name: 'ensemble',
      version: '1',
      last_inference: '1700000000000',
      inference_count: '12',
      execution_count: 12,
      inference_stats: { success: { count: '12', ns: '3400000' }, fail: { count: 0, ns: 0 } },
    },
  ],
};

let server: Awaited<ReturnType<typeof startScriptedServer>>;
beforeAll(async () => {
  server = await startScriptedServer((req, res) => {
    if (req.url === '/v2/models/ensemble/versions/1/config') return sendJson(res, 200, config);
    if (req.url === '/v2/models/stats') return sendJson(res, 200, stats);
    if (req.url === '/v2/models/odd/config')
      return sendJson(res, 200, { ...config, input: [{ name: 'x', data_type: 'TYPE_WEIRD' }] });
    sendJson(res, 404, { error: 'nope' });
  });
});
afterAll(() => server.close());

describe('model config and statistics JSON', () => {
  it('maps the config JSON to ModelConfig, accepting numeric strings', async () => {
    const transport = httpTransport({ baseUrl: server.url });
    const result = await transport.modelConfig('ensemble', '1');
    expect(result.maxBatchSize).toBe(64);
    expect(result.decoupled).toBe(true);
    expect(result.parameters).toEqual({ accumulate_tokens: 'true' });
    expect(result.inputs).toEqual([
      { name: 'text_input', datatype: 'BYTES', dims: [1], optional: false },
      { name: 'stop_words', datatype: 'BYTES', dims: [-1], optional: true },
      { name: 'embedding', datatype: 'FP16', dims: [-1, 8], optional: false, reshape: [8] },
    ]);
    expect(result.outputs[0]).toMatchObject({ name: 'text_output', datatype: 'BYTES', dims: [-1] });
    expect(result.ensembleSteps).toEqual([
      {
        modelName: 'preprocessing',
        modelVersion: -1,
        inputMap: { QUERY: 'text_input' },
        outputMap: { INPUT_ID: '_INPUT_ID' },
      },
    ]);
  });

  it('refuses a config with an unknown data type as protocol', async () => {
    const err = await rejection(httpTransport({ baseUrl: server.url }).modelConfig('odd'));
    expect(err.code).toBe('protocol');
    expect(err.message).toContain('TYPE_WEIRD');
  });

  it('maps statistics whose counters arrive as strings', async () => {
    const [entry] = await httpTransport({ baseUrl: server.url }).modelStatistics();
    expect(entry).toEqual({
      name: 'ensemble',
      version: '1',
      lastInference: 1_700_000_000_000,
      inferenceCount: 12,
      executionCount: 12,
      inferenceStats: { success: { count: 12, ns: 3_400_000 }, fail: { count: 0, ns: 0 } },
    });
  });
});
