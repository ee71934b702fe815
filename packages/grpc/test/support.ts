import { type InferResponse, TritonLlmError } from '@trtllm/sdk';

/** Every response of a stream, or the error that ended it together with the responses before it. */
export async function drain(
  stream: AsyncIterable<InferResponse>,
): Promise<{ responses: InferResponse[]; error: TritonLlmError | undefined }> {
  const responses: InferResponse[] = [];
  try {
    for await (const r of stream) responses.push(r);
    return { responses, error: undefined };
  } catch (err) {
    if (!(err instanceof TritonLlmError)) throw err;
    return { responses, error: err };
  }
}

/** The TritonLlmError a promise rejects with; fails the test when it resolves or throws anything else. */
export async function rejection(p: Promise<unknown>): Promise<TritonLlmError> {
  const outcome = await p.then(
    (value: unknown) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!('error' in outcome)) throw new Error('expected a rejection, got a value');
  if (!(outcome.error instanceof TritonLlmError)) throw outcome.error;
  return outcome.error;
}
