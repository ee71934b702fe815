import type { ModelMetadata, ServerMetadata } from '@trtllm/sdk';
import type { RepositoryModel, TensorMetadata } from '@trtllm/sdk/transport';
import type { ErrorContext } from '../errors.js';
import { arrayAt, dataTypeAt, numberAt, objectAt, stringAt } from './wire-json.js';

/** `GET /v2` as core's `ServerMetadata`. */
export function serverMetadataFromJson(json: unknown, context: ErrorContext): ServerMetadata {
  const body = objectAt(json, 'server metadata', context);
  return {
    name: stringAt(body.name, 'name', context, ''),
    version: stringAt(body.version, 'version', context, ''),
    extensions: arrayAt(body.extensions, 'extensions', context).map((v, i) =>
      stringAt(v, `extensions[${i}]`, context),
    ),
  };
}

/** `POST /v2/repository/index`: an array of `{ name, version?, state?, reason? }`. */
export function repositoryIndexFromJson(json: unknown, context: ErrorContext): RepositoryModel[] {
  return arrayAt(json, 'repository index', context).map((v, i) => {
    const m = objectAt(v, `repository index[${i}]`, context);
    return {
      name: stringAt(m.name, `[${i}].name`, context),
      version: stringAt(m.version, `[${i}].version`, context, ''),
      state: stringAt(m.state, `[${i}].state`, context, ''),
      reason: stringAt(m.reason, `[${i}].reason`, context, ''),
    };
  });
}

/** `GET /v2/models/{m}` as core's `ModelMetadata`. */
export function modelMetadataFromJson(json: unknown, context: ErrorContext): ModelMetadata {
  const body = objectAt(json, 'model metadata', context);
  return {
    name: stringAt(body.name, 'name', context),
    versions: arrayAt(body.versions, 'versions', context).map((v, i) =>
      stringAt(v, `versions[${i}]`, context),
    ),
    platform: stringAt(body.platform, 'platform', context, ''),
    inputs: arrayAt(body.inputs, 'inputs', context).map((v, i) => tensorMetadata(v, `inputs[${i}]`, context)),
    outputs: arrayAt(body.outputs, 'outputs', context).map((v, i) =>
      tensorMetadata(v, `outputs[${i}]`, context),
    ),
  };
}

function tensorMetadata(value: unknown, path: string, context: ErrorContext): TensorMetadata {
  const tensor = objectAt(value, path, context);
  return {
    name: stringAt(tensor.name, `${path}.name`, context),
    datatype: dataTypeAt(tensor.datatype, `${path}.datatype`, context),
    shape: arrayAt(tensor.shape, `${path}.shape`, context).map((d, i) =>
      numberAt(d, `${path}.shape[${i}]`, context),
    ),
  };
}
