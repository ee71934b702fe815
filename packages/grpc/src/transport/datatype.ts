import type { DataType } from '@trtllm/sdk';
import { dataTypeFromConfig, isDataType } from '@trtllm/sdk/transport';
import { DataType as ConfigDataType } from '../gen/inference/model_config_pb.js';

/** A `datatype` string of an inference message or model metadata, or undefined when unknown. */
export function wireDataType(s: string): DataType | undefined {
  return isDataType(s) ? s : undefined;
}

/** A model config's `DataType` enum value (`TYPE_STRING` is `BYTES`), or undefined for TYPE_INVALID / unknown. */
export function configDataType(t: ConfigDataType): DataType | undefined {
  const name = ConfigDataType[t];
  if (t === ConfigDataType.TYPE_INVALID || name === undefined) return undefined;
  return dataTypeFromConfig(name);
}
