import type { DataType, ModelConfig } from '@trtllm/sdk';
import { TritonLlmError } from '@trtllm/sdk';
import type { EnsembleStep, TensorSpec } from '@trtllm/sdk/transport';
import type {
  DataType as ConfigDataType,
  ModelConfig as ModelConfigMessage,
  ModelTensorReshape,
} from '../gen/inference/model_config_pb.js';
import { configDataType } from './datatype.js';

/**
 * A proto `ModelConfig` as core's `ModelConfig`: `TYPE_*` enums become wire data type names
 * (`TYPE_STRING` -> `BYTES`), int64 dims become numbers, `decoupled` comes from the model
 * transaction policy and ensemble steps from the ensemble scheduling.
 */
export function fromModelConfig(c: ModelConfigMessage): ModelConfig {
  const steps =
    c.schedulingChoice.case === 'ensembleScheduling'
      ? c.schedulingChoice.value.step.map(
          (s): EnsembleStep => ({
            modelName: s.modelName,
            modelVersion: Number(s.modelVersion),
            inputMap: { ...s.inputMap },
            outputMap: { ...s.outputMap },
          }),
        )
      : undefined;
  return {
    name: c.name,
    platform: c.platform,
    backend: c.backend,
    maxBatchSize: c.maxBatchSize,
    inputs: c.input.map((i) => spec(c.name, i.name, i.dataType, i.dims, i.optional, i.reshape)),
    outputs: c.output.map((o) => spec(c.name, o.name, o.dataType, o.dims, false, o.reshape)),
    decoupled: c.modelTransactionPolicy?.decoupled ?? false,
    parameters: Object.fromEntries(Object.entries(c.parameters).map(([k, v]) => [k, v.stringValue])),
    ...(steps !== undefined ? { ensembleSteps: steps } : {}),
  };
}

function spec(
  model: string,
  name: string,
  dataType: ConfigDataType,
  dims: readonly bigint[],
  optional: boolean,
  reshape: ModelTensorReshape | undefined,
): TensorSpec {
  return {
    name,
    datatype: dataTypeOf(model, name, dataType),
    dims: dims.map(Number),
    optional,
    ...(reshape !== undefined ? { reshape: reshape.shape.map(Number) } : {}),
  };
}

function dataTypeOf(model: string, tensor: string, t: ConfigDataType): DataType {
  const dt = configDataType(t);
  if (dt === undefined) {
    throw new TritonLlmError(
      'protocol',
      `config of model '${model}': tensor '${tensor}' has data type ${t}`,
      {
        model,
      },
    );
  }
  return dt;
}
