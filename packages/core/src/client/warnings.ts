import type { ModelSchema } from '../models/schema.js';
import type { GenerateRequest } from '../request/request.js';

/** Why an early end of a request to `model` may leave the server generating, and what to use instead. */
export function keepsGeneratingWarning(model: string, flavor?: string): string {
  if (flavor === 'vllm') {
    return (
      `[@trtllm/sdk] a request to '${model}' was ended early, but the vLLM model may keep generating to max_tokens: ` +
      'Triton notices a closed HTTP connection only when it next writes a response, and a request that does not ' +
      'stream writes only its last. Use stream() or the gRPC transport, whose cancel vLLM sees at once.'
    );
  }
  return (
    `[@trtllm/sdk] a request to '${model}' was ended early, but this model cannot stop its generation on the server: ` +
    'Triton ensembles and the BLS model keep generating to max_tokens after a cancel. To free the GPU, call the raw ' +
    'tensorrt_llm model with a tokenizer (TritonLlm({ model: "tensorrt_llm", tokenizer })), which honours the in-band stop.'
  );
}

// Any character outside ASCII: byte-level tokenizers may split it over several tokens.
const NON_ASCII = /[\u0080-\uffff]/;

/**
 * A text model that streams one token per response decodes each token alone: a character split
 * over several tokens arrives as U+FFFD, so a stop string holding one can be neither matched nor
 * trimmed on the client (issue 28). The warning for such a stop string, if the request has one.
 */
export function unmatchableStopWarning(
  schema: ModelSchema,
  request: GenerateRequest,
  streaming: boolean,
): string | undefined {
  if (!streaming || schema.cumulativeText || (schema.flavor !== 'ensemble' && schema.flavor !== 'bls'))
    return undefined;
  const stop = request.stopWords?.find((s) => NON_ASCII.test(s));
  if (stop === undefined) return undefined;
  return (
    `[@trtllm/sdk] stop string ${JSON.stringify(stop)} may never match on '${schema.model}': it streams one token per ` +
    'response, decoded alone, so a character split over several tokens arrives as U+FFFD and is neither matched nor ' +
    'trimmed on the client. For exact streamed text use tensorrt_llm_bls with accumulate_tokens: true, or the raw ' +
    'tensorrt_llm model with a tokenizer (TritonLlm({ model: "tensorrt_llm", tokenizer })).'
  );
}
