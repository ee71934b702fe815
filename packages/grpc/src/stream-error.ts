import { type ErrorCode, TritonLlmError } from '@trtllm/sdk';

// An in-stream `error_message` carries no status code, only Triton's text: the code is read from
// the wording Triton and the TensorRT-LLM backend use.
const RULES: ReadonlyArray<readonly [RegExp, ErrorCode]> = [
  [/unknown model/i, 'not_found'],
  [/cancel/i, 'cancelled'],
  [/timed out|deadline/i, 'deadline_exceeded'],
  [
    /invalid.argument|expected .*inputs?|missing required input|unexpected (inference )?input|input '[^']*'|datatype|data type|shape|unable to parse|must be|is not supported|only supported/i,
    'invalid_argument',
  ],
];

/**
 * The error a `ModelStreamInferResponse.error_message` stands for. The server's text is kept
 * verbatim in `serverMessage`; the code is `not_found` for an unknown model, `invalid_argument`
 * for bad inputs, `internal` otherwise.
 */
export function streamErrorFromMessage(
  message: string,
  context: { model: string; requestId: string },
): TritonLlmError {
  const code = RULES.find(([re]) => re.test(message))?.[1] ?? 'internal';
  return new TritonLlmError(code, `ModelStreamInfer '${context.model}' failed: ${message}`, {
    serverMessage: message,
    model: context.model,
    requestId: context.requestId,
  });
}
