import { grpcTransport } from '@trtllm/grpc';
import type { Transport } from '@trtllm/sdk';
import { type FakeTriton, startFakeTriton } from '@trtllm/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest } from './fake-models.js';
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

describe('health', () => {
  it('reports the server live and ready', async () => {
    expect(transport.protocol).toBe('grpc');
    expect(await transport.serverLive()).toBe(true);
    expect(await transport.serverReady()).toBe(true);
  });

  it('reports a served model ready, in any version and in version 1', async () => {
    expect(await transport.modelReady('tensorrt_llm')).toBe(true);
    expect(await transport.modelReady('ensemble', '1')).toBe(true);
  });

  it('reports an unknown model not ready', async () => {
    expect(await transport.modelReady('no_such_model')).toBe(false);
  });
});

describe('metadata', () => {
  it('reads the server metadata', async () => {
    const m = await transport.serverMetadata();
    expect(m.name).not.toBe('');
    expect(m.version).not.toBe('');
    expect(m.extensions.length).toBeGreaterThan(0);
  });

  it('reads model metadata with wire data types and -1 for variable dims', async () => {
    const m = await transport.modelMetadata('ensemble');
    expect(m.name).toBe('ensemble');
    expect(m.versions).toContain('1');
    expect(m.platform).toBe('ensemble');
    const text = m.inputs.find((t) => t.name === 'text_input');
    expect(text?.datatype).toBe('BYTES');
    expect(text?.shape[0]).toBe(-1);
    expect(m.outputs.map((t) => t.name)).toContain('text_output');
  });

  it('fails with not_found for the metadata of an unknown model', async () => {
    const err = await rejection(transport.modelMetadata('no_such_model'));
    expect(err.code).toBe('not_found');
    expect(err.serverMessage).toContain('no_such_model');
  });
});

describe('model config', () => {
  it('maps the raw model config: data types, dims, optional inputs, decoupled', async () => {
    const c = await transport.modelConfig('tensorrt_llm');
    expect(c.name).toBe('tensorrt_llm');
    expect(c.maxBatchSize).toBe(64);
    expect(c.decoupled).toBe(true);
    expect(c.ensembleSteps).toBeUndefined();
    const ids = c.inputs.find((t) => t.name === 'input_ids');
    expect(ids).toMatchObject({ datatype: 'INT32', dims: [-1], optional: true });
    expect(c.inputs.find((t) => t.name === 'request_output_len')).toMatchObject({ optional: false });
    expect(c.outputs.find((t) => t.name === 'output_ids')).toMatchObject({
      datatype: 'INT32',
      dims: [-1, -1],
    });
  });

  it('tells a non-decoupled model from a decoupled one', async () => {
    expect((await transport.modelConfig('tensorrt_llm_unary')).decoupled).toBe(false);
    expect((await transport.modelConfig('tensorrt_llm_bls')).decoupled).toBe(true);
  });

  it('maps an ensemble: TYPE_STRING as BYTES and its steps in order', async () => {
    const c = await transport.modelConfig('ensemble');
    expect(c.platform).toBe('ensemble');
    expect(c.inputs.find((t) => t.name === 'text_input')?.datatype).toBe('BYTES');
    expect(c.ensembleSteps?.map((s) => s.modelName)).toEqual([
      'preprocessing',
      'tensorrt_llm',
      'postprocessing',
    ]);
    expect(c.ensembleSteps?.[0]?.inputMap.QUERY).toBe('text_input');
    expect(c.ensembleSteps?.[0]?.modelVersion).toBe(-1);
  });

  it('reads string parameters of a model', async () => {
    const c = await transport.modelConfig('tensorrt_llm_bls');
    expect(c.parameters.accumulate_tokens).toBe('true');
  });
});

describe('statistics', () => {
  it('counts an inference in the model statistics', async () => {
    const [before] = await transport.modelStatistics('tensorrt_llm_unary');
    await transport.infer(
      rawRequest('stats-1', [5, 6], 2, { model: 'tensorrt_llm_unary', streaming: false }),
    );
    const [after] = await transport.modelStatistics('tensorrt_llm_unary', '1');
    expect(after?.name).toBe('tensorrt_llm_unary');
    expect(after?.inferenceCount).toBe((before?.inferenceCount ?? 0) + 1);
    expect(after?.inferenceStats.success?.count).toBe((before?.inferenceStats.success?.count ?? 0) + 1);
  });

  it('lists every model when no model is named', async () => {
    const all = await transport.modelStatistics();
    expect(all.map((s) => s.name)).toEqual(
      expect.arrayContaining(['ensemble', 'tensorrt_llm', 'preprocessing']),
    );
  });
});
