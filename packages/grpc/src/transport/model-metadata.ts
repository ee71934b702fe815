import type { ModelMetadata, ModelStatistics } from '@trtllm/sdk';
import { TritonLlmError } from '@trtllm/sdk';
import type { StatisticDuration, TensorMetadata } from '@trtllm/sdk/transport';
import type {
  InferStatistics,
  ModelMetadataResponse,
  ModelMetadataResponse_TensorMetadata,
  ModelStatistics as ModelStatisticsMessage,
} from '../gen/inference/grpc_service_pb.js';
import { wireDataType } from './datatype.js';

/** `ModelMetadataResponse` as core's `ModelMetadata`. */
export function fromModelMetadata(m: ModelMetadataResponse): ModelMetadata {
  return {
    name: m.name,
    versions: [...m.versions],
    platform: m.platform,
    inputs: m.inputs.map((t) => tensorMetadata(m.name, t)),
    outputs: m.outputs.map((t) => tensorMetadata(m.name, t)),
  };
}

function tensorMetadata(model: string, t: ModelMetadataResponse_TensorMetadata): TensorMetadata {
  const datatype = wireDataType(t.datatype);
  if (datatype === undefined) {
    throw new TritonLlmError(
      'protocol',
      `metadata of model '${model}': tensor '${t.name}' has unknown datatype ${JSON.stringify(t.datatype)}`,
      { model },
    );
  }
  return { name: t.name, datatype, shape: t.shape.map(Number) };
}

// Names as Triton's HTTP statistics use them, so both transports report the same keys.
const STAT_NAMES = [
  ['success', 'success'],
  ['fail', 'fail'],
  ['queue', 'queue'],
  ['compute_input', 'computeInput'],
  ['compute_infer', 'computeInfer'],
  ['compute_output', 'computeOutput'],
  ['cache_hit', 'cacheHit'],
  ['cache_miss', 'cacheMiss'],
] as const;

/** One proto `ModelStatistics` as core's `ModelStatistics`; absent durations count as zero. */
export function fromModelStatistics(s: ModelStatisticsMessage): ModelStatistics {
  return {
    name: s.name,
    version: s.version,
    lastInference: Number(s.lastInference),
    inferenceCount: Number(s.inferenceCount),
    executionCount: Number(s.executionCount),
    inferenceStats: inferenceStats(s.inferenceStats),
  };
}

function inferenceStats(stats: InferStatistics | undefined): Record<string, StatisticDuration> {
  const out: Record<string, StatisticDuration> = {};
  for (const [wire, field] of STAT_NAMES) {
    const d = stats?.[field];
    out[wire] = { count: Number(d?.count ?? 0n), ns: Number(d?.ns ?? 0n) };
  }
  return out;
}
