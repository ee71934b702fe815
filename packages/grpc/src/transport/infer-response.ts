import { create } from '@bufbuild/protobuf';
import { type InferResponse, type Tensor, type TensorData, TritonLlmError } from '@trtllm/sdk';
import { decodeTensorData } from '@trtllm/sdk/transport';
import {
  InferTensorContentsSchema,
  type ModelInferResponse,
  type ModelInferResponse_InferOutputTensor,
} from '../gen/inference/grpc_service_pb.js';
import { tensorDataFromContents } from './contents.js';
import { wireDataType } from './datatype.js';
import { fromInferParameters } from './parameters.js';

/**
 * A gRPC `ModelInferResponse` as a core response. Outputs come from `raw_output_contents` (one
 * entry per output, in order) or, when a server sent none, from each output's typed `contents`.
 * Anything that cannot be read is a `protocol` error: the server broke the wire contract.
 */
export function fromModelInferResponse(r: ModelInferResponse, final: boolean): InferResponse {
  const raw = r.rawOutputContents;
  if (raw.length > 0 && raw.length !== r.outputs.length) {
    throw malformedResponse(
      r.modelName,
      r.id,
      `${r.outputs.length} outputs but ${raw.length} raw output contents`,
    );
  }
  return {
    model: r.modelName,
    modelVersion: r.modelVersion,
    id: r.id,
    outputs: r.outputs.map((o, i) => outputTensor(r, o, raw[i])),
    parameters: fromInferParameters(r.parameters),
    final,
  };
}

function outputTensor(
  r: ModelInferResponse,
  o: ModelInferResponse_InferOutputTensor,
  raw: Uint8Array | undefined,
): Tensor {
  const datatype = wireDataType(o.datatype);
  if (datatype === undefined) {
    throw malformedResponse(
      r.modelName,
      r.id,
      `output '${o.name}' has unknown datatype ${JSON.stringify(o.datatype)}`,
    );
  }
  const shape = o.shape.map((d) => {
    if (d < 0n || d > BigInt(Number.MAX_SAFE_INTEGER)) {
      throw malformedResponse(r.modelName, r.id, `output '${o.name}' has dimension ${d}`);
    }
    return Number(d);
  });
  let data: TensorData | undefined;
  try {
    data =
      raw !== undefined
        ? decodeTensorData(datatype, shape, raw)
        : tensorDataFromContents(datatype, o.contents ?? create(InferTensorContentsSchema));
  } catch (err) {
    throw malformedResponse(r.modelName, r.id, `output '${o.name}' cannot be decoded`, err);
  }
  if (data === undefined) {
    throw malformedResponse(r.modelName, r.id, `output '${o.name}' (${datatype}) has no raw contents`);
  }
  if (raw === undefined && data.length !== shape.reduce((a, b) => a * b, 1)) {
    throw malformedResponse(
      r.modelName,
      r.id,
      `output '${o.name}' has ${data.length} elements for shape [${shape.join(',')}]`,
    );
  }
  return { name: o.name, datatype, shape, data };
}

/** The `protocol` error of a response the server sent against the wire contract. */
export function malformedResponse(model: string, id: string, why: string, cause?: unknown): TritonLlmError {
  return new TritonLlmError('protocol', `malformed response from model '${model}': ${why}`, {
    model,
    requestId: id,
    ...(cause !== undefined ? { cause } : {}),
  });
}
