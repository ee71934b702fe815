import type { DataType, ModelConfig } from '@trtllm/sdk';
import { dataTypeFromConfig, type EnsembleStep, type TensorSpec } from '@trtllm/sdk/transport';
import { type ErrorContext, protocolError } from '../errors.js';
import { arrayAt, booleanAt, type JsonObject, numberAt, objectAt, stringAt } from './wire-json.js';

/**
 * `GET .../config` (the model config with the proto's field names) as core's `ModelConfig`.
 * `dims` and 64-bit fields arrive as numbers or numeric strings depending on the server version.
 */
export function modelConfigFromJson(json: unknown, context: ErrorContext): ModelConfig {
  const config = objectAt(json, 'config', context);
  const policy =
    config.model_transaction_policy === undefined
      ? {}
      : objectAt(config.model_transaction_policy, 'model_transaction_policy', context);
  const steps =
    config.ensemble_scheduling === undefined
      ? undefined
      : arrayAt(objectAt(config.ensemble_scheduling, 'ensemble_scheduling', context).step, 'step', context);
  return {
    name: stringAt(config.name, 'name', context, ''),
    platform: stringAt(config.platform, 'platform', context, ''),
    backend: stringAt(config.backend, 'backend', context, ''),
    maxBatchSize: numberAt(config.max_batch_size, 'max_batch_size', context, 0),
    inputs: arrayAt(config.input, 'input', context).map((v, i) => tensorSpec(v, `input[${i}]`, context)),
    outputs: arrayAt(config.output, 'output', context).map((v, i) => tensorSpec(v, `output[${i}]`, context)),
    decoupled: booleanAt(policy.decoupled, 'model_transaction_policy.decoupled', context, false),
    parameters: stringParameters(config.parameters, context),
    ...(steps !== undefined
      ? { ensembleSteps: steps.map((v, i) => ensembleStep(v, `ensemble_scheduling.step[${i}]`, context)) }
      : {}),
  };
}

function tensorSpec(value: unknown, path: string, context: ErrorContext): TensorSpec {
  const spec = objectAt(value, path, context);
  const reshape =
    spec.reshape === undefined ? undefined : objectAt(spec.reshape, `${path}.reshape`, context).shape;
  return {
    name: stringAt(spec.name, `${path}.name`, context),
    datatype: dataType(spec.data_type, `${path}.data_type`, context),
    dims: dims(spec.dims, `${path}.dims`, context),
    optional: booleanAt(spec.optional, `${path}.optional`, context, false),
    ...(reshape !== undefined ? { reshape: dims(reshape, `${path}.reshape.shape`, context) } : {}),
  };
}

function dataType(value: unknown, path: string, context: ErrorContext): DataType {
  const name = stringAt(value, path, context);
  try {
    return dataTypeFromConfig(name);
  } catch (err) {
    throw protocolError(`${path} is an unknown data type ${JSON.stringify(name)}`, context, err);
  }
}

function dims(value: unknown, path: string, context: ErrorContext): number[] {
  return arrayAt(value, path, context).map((d, i) => numberAt(d, `${path}[${i}]`, context));
}

function stringParameters(value: unknown, context: ErrorContext): Record<string, string> {
  const out: Record<string, string> = {};
  if (value === undefined) return out;
  for (const [key, entry] of Object.entries(objectAt(value, 'parameters', context))) {
    out[key] = stringAt(
      objectAt(entry, `parameters.${key}`, context).string_value,
      `parameters.${key}.string_value`,
      context,
      '',
    );
  }
  return out;
}

function ensembleStep(value: unknown, path: string, context: ErrorContext): EnsembleStep {
  const step = objectAt(value, path, context);
  return {
    modelName: stringAt(step.model_name, `${path}.model_name`, context),
    modelVersion: numberAt(step.model_version, `${path}.model_version`, context, -1),
    inputMap: stringMap(step.input_map, `${path}.input_map`, context),
    outputMap: stringMap(step.output_map, `${path}.output_map`, context),
  };
}

function stringMap(value: unknown, path: string, context: ErrorContext): Record<string, string> {
  const out: Record<string, string> = {};
  if (value === undefined) return out;
  const map: JsonObject = objectAt(value, path, context);
  for (const [key, v] of Object.entries(map)) out[key] = stringAt(v, `${path}.${key}`, context);
  return out;
}
