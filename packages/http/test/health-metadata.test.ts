import { httpTransport } from '@trtllm/http';
import { describe, expect, it } from 'vitest';
import { useFakeTriton } from './fake.js';
import { rejection } from './helpers.js';

const fake = useFakeTriton();
const transport = () => httpTransport({ baseUrl: fake().httpUrl });

describe('health, metadata, config and statistics over HTTP', () => {
  it('reports the server live and ready', async () => {
    expect(await transport().serverLive()).toBe(true);
    expect(await transport().serverReady()).toBe(true);
  });

  it('reports a served model ready and an unknown one not ready', async () => {
    expect(await transport().modelReady('ensemble')).toBe(true);
    expect(await transport().modelReady('tensorrt_llm', '1')).toBe(true);
    expect(await transport().modelReady('no_such_model')).toBe(false);
  });

  it('reads server metadata', async () => {
    const metadata = await transport().serverMetadata();
    expect(metadata.name).not.toBe('');
    expect(metadata.version).not.toBe('');
    expect(Array.isArray(metadata.extensions)).toBe(true);
  });

  it('reads model metadata with wire data types', async () => {
    const metadata = await transport().modelMetadata('tensorrt_llm');
    expect(metadata.name).toBe('tensorrt_llm');
    expect(metadata.inputs.find((t) => t.name === 'input_ids')).toEqual({
      name: 'input_ids',
      datatype: 'INT32',
      shape: [-1, -1],
    });
  });

  it('maps model configs: types, dims, decoupled, ensemble steps', async () => {
    const raw = await transport().modelConfig('tensorrt_llm');
    expect(raw.maxBatchSize).toBe(64);
    expect(raw.decoupled).toBe(true);
    expect(raw.inputs.find((t) => t.name === 'input_ids')).toMatchObject({ datatype: 'INT32', dims: [-1] });
    expect((await transport().modelConfig('tensorrt_llm_unary')).decoupled).toBe(false);
    const ensemble = await transport().modelConfig('ensemble');
    expect(ensemble.platform).toBe('ensemble');
    expect(ensemble.inputs.find((t) => t.name === 'text_input')?.datatype).toBe('BYTES');
    expect(ensemble.ensembleSteps?.map((s) => s.modelName)).toEqual(
      expect.arrayContaining(['preprocessing', 'tensorrt_llm', 'postprocessing']),
    );
  });

  it('fails metadata and config of an unknown model with the server message', async () => {
    const err = await rejection(transport().modelConfig('no_such_model'));
    expect(['not_found', 'invalid_argument']).toContain(err.code);
    expect(err.serverMessage).toContain('no_such_model');
    const meta = await rejection(transport().modelMetadata('no_such_model'));
    expect(meta.httpStatus).toBeGreaterThanOrEqual(400);
  });

  it('reads statistics of one model and of all', async () => {
    const one = await transport().modelStatistics('ensemble');
    expect(one.map((s) => s.name)).toEqual(['ensemble']);
    const all = await transport().modelStatistics();
    expect(all.map((s) => s.name)).toEqual(expect.arrayContaining(['ensemble', 'tensorrt_llm']));
  });
});
