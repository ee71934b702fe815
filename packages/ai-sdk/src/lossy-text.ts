import type { ModelSchema } from '@trtllm/sdk';

/** Where exact streamed text comes from, for the messages below. */
const EXACT_STREAMING =
  "stream from 'tensorrt_llm_bls' with accumulate_tokens: true, or from the raw 'tensorrt_llm' model with a tokenizer";

/**
 * Whether a model streams each token decoded on its own (`ensemble`; a BLS model without
 * `accumulate_tokens`): a character whose bytes span tokens arrives as U+FFFD and no later
 * response repairs it (real Triton streams so). The whole text of such a stream is only the lossy
 * pieces joined, so it is no exact source either; `generate()` is: the server decodes all tokens
 * at once.
 */
export function streamsLossyText(schema: ModelSchema): boolean {
  return schema.flavor === 'ensemble' || (schema.flavor === 'bls' && !schema.cumulativeText);
}

/**
 * Who a warning names: the model's streamed call, not an AI SDK function. `doStream` is called the
 * same way by `streamText`, `streamObject` and whatever wraps them (agents, middleware); nothing in
 * the call options says which, so naming one would be false for the others.
 */
function streamedCall(model: string): string {
  return `Streamed call on '${model}'`;
}

/** The warning of a streamed call whose text lost characters. */
export function lossyTextWarning(model: string): string {
  return (
    `${streamedCall(model)}: the streamed text has U+FFFD where characters were split over tokens ` +
    `('${model}' decodes each streamed token on its own; the server cannot repair them). ` +
    `For exact text call generateText, or ${EXACT_STREAMING}.`
  );
}

/** The warning of a streamed call that was generated whole to keep its tool calls or JSON exact. */
export function wholeGenerationWarning(model: string): string {
  return (
    `${streamedCall(model)}: tool calls and JSON output need the exact text, and '${model}' decodes each ` +
    'streamed token on its own (characters split over tokens would arrive as U+FFFD), so this call was ' +
    `generated whole and its output arrives at once. To stream it, ${EXACT_STREAMING}.`
  );
}
