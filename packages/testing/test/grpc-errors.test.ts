import { type ServiceError, status } from '@grpc/grpc-js';
import { encode, generateTokens } from '@trtllm/testing';
import { describe, expect, it } from 'vitest';
import { useFake } from './support/fake.js';
import {
  bool,
  type InferResponseObject,
  inferRequest,
  output,
  rawInputs,
  streamAll,
  type TestTensor,
  text,
  textInputs,
} from './support/grpc-client.js';

const h = useFake();

async function inferError(model: string, inputs: readonly TestTensor[]): Promise<ServiceError> {
  try {
    await h.grpc.unary('ModelInfer', inferRequest(model, inputs));
  } catch (err) {
    return err as ServiceError;
  }
  throw new Error('ModelInfer succeeded');
}

describe('gRPC errors, as the real Triton 2.51 answers', () => {
  it('refuses ModelInfer on a decoupled model with UNIMPLEMENTED naming the transaction policy', async () => {
    const err = await inferError('ensemble', textInputs('Hi', 2));
    expect(err.code).toBe(status.UNIMPLEMENTED);
    expect(err.details).toBe("ModelInfer RPC doesn't support models with decoupled transaction policy");
  });

  it('answers an unknown model with NOT_FOUND', async () => {
    const err = await inferError('nope', textInputs('Hi', 2));
    expect(err.code).toBe(status.NOT_FOUND);
    expect(err.details).toBe("Request for unknown model: 'nope' is not found");
  });

  it('names missing inputs', async () => {
    const err = await inferError('ensemble_unary', [text('text_input', ['Hi'])]);
    expect(err.code).toBe(status.INVALID_ARGUMENT);
    expect(err.details).toMatch(
      /expected number of inputs between 2 and \d+ but got 1 inputs for model 'ensemble_unary'/,
    );
    expect(err.details).toContain("missing required input(s) ['max_tokens']");
  });

  it('refuses UINT32 where the model expects INT32', async () => {
    const err = await inferError('ensemble_unary', [
      text('text_input', ['Hi']),
      { name: 'max_tokens', datatype: 'UINT32', shape: [1, 1], data: [3] },
    ]);
    expect(err.code).toBe(status.INVALID_ARGUMENT);
    expect(err.details).toBe(
      "[request id: <id_unknown>] inference input 'max_tokens' data-type is 'UINT32', but model 'ensemble_unary' expects 'INT32'",
    );
  });

  it('refuses an input the model does not have, and a wrong shape', async () => {
    const unknown = await inferError('ensemble_unary', [...textInputs('Hi', 2), text('nonsense', ['x'])]);
    expect(unknown.details).toMatch(/unexpected inference input 'nonsense' for model 'ensemble_unary'/);
    const shape = await inferError('ensemble_unary', [
      text('text_input', ['Hi']),
      { name: 'max_tokens', datatype: 'INT32', shape: [1, 2], data: [1, 2] },
    ]);
    expect(shape.details).toMatch(
      /unexpected shape for input 'max_tokens' for model 'ensemble_unary'. Expected \[-1,1\], got \[1,2\]/,
    );
  });

  it('refuses streaming on a model that is not decoupled', async () => {
    const err = await inferError('ensemble_unary', textInputs('Hi', 2, [bool('stream', true)]));
    expect(err.code).toBe(status.INVALID_ARGUMENT);
    expect(err.details).toMatch(/^Streaming is only supported if model is deployed using decoupled mode/);
  });

  it('runs ModelInfer on a non-decoupled model', async () => {
    const ids = encode('Hello');
    const r = await h.grpc.unary<InferResponseObject>(
      'ModelInfer',
      inferRequest('tensorrt_llm_unary', rawInputs(ids, 4, [bool('exclude_input_in_output', true)]), {
        id: 'u1',
      }),
    );
    expect(r.id).toBe('u1');
    expect(output(r, 'output_ids').values).toEqual(generateTokens(ids, { maxTokens: 4 })[0]!.tokens);
  });

  it('answers the metadata methods', async () => {
    expect(await h.grpc.unary('ServerLive', {})).toEqual({ live: true });
    expect(await h.grpc.unary('ServerReady', {})).toEqual({ ready: true });
    expect(await h.grpc.unary('ModelReady', { name: 'llmapi' })).toEqual({ ready: true });
    expect(await h.grpc.unary('ModelReady', { name: 'nope' })).toEqual({ ready: false });
    expect(await h.grpc.unary('ServerMetadata', {})).toMatchObject({ name: 'triton', version: '2.51.0' });
    const meta = await h.grpc.unary<{ platform: string; inputs: { name: string; shape: string[] }[] }>(
      'ModelMetadata',
      {
        name: 'ensemble',
      },
    );
    expect(meta.platform).toBe('ensemble');
    expect(meta.inputs.find((i) => i.name === 'max_tokens')?.shape).toEqual(['-1', '1']);
    const { config } = await h.grpc.unary<{ config: Record<string, unknown> }>('ModelConfig', {
      name: 'tensorrt_llm_bls',
    });
    expect(config).toMatchObject({
      max_batch_size: 64,
      model_transaction_policy: { decoupled: true },
      parameters: { accumulate_tokens: { string_value: 'true' } },
    });
    const index = await h.grpc.unary<{ models: { name: string; state: string }[] }>('RepositoryIndex', {});
    expect(index.models.map((m) => m.name).sort()).toEqual(
      [
        'disaggregated_serving_bls',
        'echo',
        'ensemble',
        'ensemble_unary',
        'llmapi',
        'multimodal',
        'postprocessing',
        'preprocessing',
        'tensorrt_llm',
        'tensorrt_llm_bls',
        'tensorrt_llm_bls_official',
        'tensorrt_llm_bls_per_token',
        'tensorrt_llm_unary',
        'vllm',
      ].sort(),
    );
    await expect(h.grpc.unary('ModelConfig', { name: 'nope' })).rejects.toMatchObject({
      code: status.NOT_FOUND,
    });
    await streamAll(h.grpc, [inferRequest('ensemble', textInputs('Hi', 2), { id: 's' })]);
    const stats = await h.grpc.unary<{ model_stats: { name: string; inference_count: string }[] }>(
      'ModelStatistics',
      { name: 'ensemble' },
    );
    expect(Number(stats.model_stats[0]!.inference_count)).toBeGreaterThan(0);
  });
});
