/**
 * A model as its metadata, config and statistics answers describe it. The objects use the proto's
 * field names, so the same object serves the gRPC answer and the HTTP JSON.
 */
import type { ModelCounts } from '../engine/statistics.js';
import { MODEL_VERSION, type ModelDef } from './repository.js';
import { configDataType, type TensorSpec } from './tensor-spec.js';

export const SERVER_NAME = 'triton';
export const SERVER_VERSION = '2.51.0';
export const SERVER_EXTENSIONS = [
  'classification',
  'sequence',
  'model_repository',
  'model_repository(unload_dependents)',
  'schedule_policy',
  'model_configuration',
  'system_shared_memory',
  'cuda_shared_memory',
  'binary_tensor_data',
  'parameters',
  'statistics',
  'trace',
  'logging',
];

function shapeOf(spec: TensorSpec, model: ModelDef): number[] {
  return model.maxBatchSize > 0 ? [-1, ...spec.dims] : [...spec.dims];
}

export function modelMetadata(model: ModelDef) {
  const tensor = (s: TensorSpec) => ({ name: s.name, datatype: s.datatype, shape: shapeOf(s, model) });
  return {
    name: model.name,
    versions: [MODEL_VERSION],
    platform: model.platform || model.backend,
    inputs: model.inputs.map(tensor),
    outputs: model.outputs.map(tensor),
  };
}

export function modelConfig(model: ModelDef) {
  return {
    name: model.name,
    platform: model.platform,
    backend: model.backend,
    max_batch_size: model.maxBatchSize,
    input: model.inputs.map((s) => ({
      name: s.name,
      data_type: configDataType(s.datatype),
      format: 'FORMAT_NONE',
      dims: [...s.dims],
      ...(s.reshapeToScalar ? { reshape: { shape: [] } } : {}),
      is_shape_tensor: false,
      allow_ragged_batch: false,
      optional: s.optional,
    })),
    output: model.outputs.map((s) => ({
      name: s.name,
      data_type: configDataType(s.datatype),
      dims: [...s.dims],
      label_filename: '',
      is_shape_tensor: false,
    })),
    ...(model.ensembleSteps
      ? { ensemble_scheduling: { step: model.ensembleSteps } }
      : { dynamic_batching: {} }),
    parameters: Object.fromEntries(
      Object.entries(model.parameters).map(([k, v]) => [k, { string_value: v }]),
    ),
    model_transaction_policy: { decoupled: model.decoupled },
  };
}

function duration(count: number, ns: number) {
  return { count, ns };
}

export function modelStatistics(model: ModelDef, c: ModelCounts) {
  const requests = c.success + c.fail;
  const zero = duration(0, 0);
  return {
    name: model.name,
    version: MODEL_VERSION,
    last_inference: c.lastInference,
    inference_count: c.success,
    execution_count: requests,
    inference_stats: {
      success: duration(c.success, c.successNs),
      fail: duration(c.fail, c.failNs),
      queue: zero,
      compute_input: zero,
      compute_infer: duration(c.success, c.successNs),
      compute_output: zero,
      cache_hit: zero,
      cache_miss: zero,
    },
    batch_stats: [],
    response_stats: {},
  };
}
