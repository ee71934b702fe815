import type { CallbackManagerForLLMRun } from '@langchain/core/callbacks/manager';
import { ModelAbortError } from '@langchain/core/errors';
import { AIMessageChunk } from '@langchain/core/messages';
import type { GenerateResult } from '@trtllm/sdk';
import { messageFields } from './chunks.js';
import { responseMetadata, usageMetadata } from './metadata.js';

/** A request's text deltas, then its whole result. */
export type Run = AsyncGenerator<string, GenerateResult>;

/**
 * LangChain reports an aborted model call as `ModelAbortError` with the partial reply; the reply's
 * `response_metadata.early_stop` carries the SDK's report: whether the server was told and whether it
 * stops generating (it does not for `ensemble` and BLS models).
 */
export function throwIfAborted(result: GenerateResult, countPrompt: () => number | undefined): void {
  const early = result.earlyStop;
  if (early?.trigger !== 'abort') return;
  const metadata = responseMetadata(result);
  const partial = new AIMessageChunk(
    messageFields(result.text, metadata, usageMetadata(result, countPrompt)),
  );
  const server = early.serverStopsGenerating
    ? 'the server stops generating'
    : 'the server keeps generating to maxTokens (this model has no stop; the raw tensorrt_llm model with a tokenizer has)';
  throw new ModelAbortError(
    `request ${result.requestId} to model '${result.model}' was aborted after ${result.usage.completionTokens} tokens; ${server}`,
    partial,
  );
}

/**
 * Runs an aborted request to its end (a few responses at most: the SDK has told the server) and hands
 * the outcome to the callbacks' `handleLLMError`: a `ModelAbortError` whose partial reply carries the
 * early-stop report, or the error the request ended with.
 */
export async function drainAborted(
  run: Run,
  countPrompt: () => number | undefined,
  runManager: CallbackManagerForLLMRun | undefined,
): Promise<void> {
  try {
    let step = await run.next();
    while (step.done !== true) step = await run.next();
    throwIfAborted(step.value, countPrompt);
  } catch (err) {
    await runManager?.handleLLMError(err);
  }
}

/** Ends a run that may still be streaming (a no-op once it finished). */
export async function closeRun(run: Run): Promise<void> {
  await run.return(undefined as unknown as GenerateResult);
}
