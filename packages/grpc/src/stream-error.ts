import { codeFromServerError, TritonLlmError } from '@trtllm/sdk';

/**
 * The error a `ModelStreamInferResponse.error_message` stands for. The server's text is kept
 * verbatim in `serverMessage`; the code is `not_found` for an unknown model, `invalid_argument`
 * for bad inputs, `internal` otherwise.
 */
export function streamErrorFromMessage(
  message: string,
  context: { model: string; requestId: string },
): TritonLlmError {
  // An in-stream `error_message` carries no status code, only Triton's text.
  const code = codeFromServerError(message);
  return new TritonLlmError(code, `ModelStreamInfer '${context.model}' failed: ${message}`, {
    serverMessage: message,
    model: context.model,
    requestId: context.requestId,
  });
}
