import { createTensor, type InferRequest, type InferResponse, TritonLlmError } from '@trtllm/sdk';
import type { InferStream } from '@trtllm/sdk/transport';

/** The error a promise rejects with, which must be a `TritonLlmError`. */
export async function rejection(promise: Promise<unknown>): Promise<TritonLlmError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof TritonLlmError) return err;
    throw new Error(`expected a TritonLlmError, got ${String(err)}`, { cause: err });
  }
  throw new Error('expected the call to fail, but it succeeded');
}

/** Every response a stream yields, and the error that ended it, if any. */
export async function drain(
  stream: InferStream,
  onResponse?: (response: InferResponse, index: number) => void,
): Promise<{ responses: InferResponse[]; error: TritonLlmError | undefined }> {
  const responses: InferResponse[] = [];
  try {
    for await (const response of stream) {
      onResponse?.(response, responses.length);
      responses.push(response);
    }
  } catch (err) {
    if (err instanceof TritonLlmError) return { responses, error: err };
    throw err;
  }
  return { responses, error: undefined };
}

/** An ensemble text request for `/generate` or `/generate_stream`. */
export function ensembleRequest(id: string, text: string, maxTokens: number, stream: boolean): InferRequest {
  return {
    model: 'ensemble',
    id,
    inputs: [
      createTensor('text_input', 'BYTES', [1, 1], [text]),
      createTensor('max_tokens', 'INT32', [1, 1], [maxTokens]),
      createTensor('stream', 'BOOL', [1, 1], [stream]),
    ],
  };
}

/** A raw `tensorrt_llm` request on token ids. */
export function rawRequest(
  id: string,
  inputIds: number[],
  outputLen: number,
  options: { model?: string; streaming?: boolean; endpoint?: 'generate' | 'infer' } = {},
): InferRequest {
  return {
    model: options.model ?? 'tensorrt_llm',
    id,
    inputs: [
      createTensor('input_ids', 'INT32', [1, inputIds.length], inputIds),
      createTensor('input_lengths', 'INT32', [1, 1], [inputIds.length]),
      createTensor('request_output_len', 'INT32', [1, 1], [outputLen]),
      ...(options.streaming === undefined
        ? []
        : [createTensor('streaming', 'BOOL', [1, 1], [options.streaming])]),
    ],
    ...(options.endpoint !== undefined ? { endpoint: options.endpoint } : {}),
  };
}

/** The in-band stop request of the raw model for request `id`. */
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
