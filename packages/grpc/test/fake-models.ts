import {
  createTensor,
  type InferRequest,
  type InferResponse,
  type Tensor,
  tensorNumbers,
  tensorStrings,
} from '@trtllm/sdk';

/** A request to the raw `tensorrt_llm` model (or its unary twin) for `maxTokens` tokens after `inputIds`. */
export function rawRequest(
  id: string,
  inputIds: readonly number[],
  maxTokens: number,
  options: { model?: string; streaming?: boolean } = {},
): InferRequest {
  return {
    model: options.model ?? 'tensorrt_llm',
    id,
    inputs: [
      createTensor('input_ids', 'INT32', [1, inputIds.length], [...inputIds]),
      createTensor('input_lengths', 'INT32', [1, 1], [inputIds.length]),
      createTensor('request_output_len', 'INT32', [1, 1], [maxTokens]),
      createTensor('streaming', 'BOOL', [1, 1], [options.streaming ?? true]),
    ],
  };
}

/** The raw model's in-band stop request for the running request `id`, as the official client sends it. */
export function stopRequest(id: string): InferRequest {
  return {
    model: 'tensorrt_llm',
    id,
    inputs: [
      createTensor('input_ids', 'INT32', [1, 1], [0]),
      createTensor('input_lengths', 'INT32', [1, 1], [0]),
      createTensor('request_output_len', 'INT32', [1, 1], [0]),
      createTensor('stop', 'BOOL', [1, 1], [true]),
    ],
  };
}

/** A text request to `ensemble` (or another text model) for `maxTokens` tokens. */
export function textRequest(
  id: string,
  model: string,
  text: string,
  maxTokens: number,
  stream: boolean,
): InferRequest {
  return {
    model,
    id,
    inputs: [
      createTensor('text_input', 'BYTES', [1, 1], [text]),
      createTensor('max_tokens', 'INT32', [1, 1], [maxTokens]),
      createTensor('stream', 'BOOL', [1, 1], [stream]),
    ],
  };
}

/** The output tensor `name` of a response; fails the test when it is missing. */
export function output(r: InferResponse, name: string): Tensor {
  const t = r.outputs.find((o) => o.name === name);
  if (t === undefined)
    throw new Error(`response has no output '${name}' (has ${r.outputs.map((o) => o.name)})`);
  return t;
}

/** Token ids streamed by the raw model: each response carries `output_ids` `[1, 1, n]`. */
export function streamedIds(responses: readonly InferResponse[]): number[] {
  return responses.filter((r) => r.outputs.length > 0).flatMap((r) => tensorNumbers(output(r, 'output_ids')));
}

/** Streamed text pieces of an ensemble or BLS model. */
export function streamedText(responses: readonly InferResponse[]): string[] {
  return responses
    .filter((r) => r.outputs.length > 0)
    .flatMap((r) => tensorStrings(output(r, 'text_output')));
}
