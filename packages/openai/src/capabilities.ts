import { type TritonLlm, TritonLlmError } from '@trtllm/sdk';

/**
 * Refuses log probs up front, naming the OpenAI parameter, when the deployed model has no
 * `return_log_probs` input (the LLM-API model, older custom models). Resolves to whether the model
 * also returns the most likely alternatives of each token (`top_logprobs`): only vLLM's does.
 */
export async function requireLogProbs(llm: TritonLlm, param: string, signal: AbortSignal): Promise<boolean> {
  const schema = await llm.schema({ signal });
  if (schema.flavor === 'vllm') return true;
  if (!schema.inputs.has('return_log_probs')) {
    throw new TritonLlmError(
      'invalid_argument',
      `${param}: model '${schema.model}' (${schema.flavor}) does not return log probs; leave ${param} unset`,
      { model: schema.model },
    );
  }
  return false;
}

/**
 * The input each flavor takes image URLs in (NVIDIA/TensorRT-LLM `triton_backend/all_models/`), as
 * the SDK maps `images`: the SDK refuses images on any other model too, but only this server
 * knows which `image_url` part of which message to name.
 */
const IMAGE_INPUTS: Readonly<Partial<Record<string, string>>> = {
  llmapi: 'image_url',
  ensemble: 'image_url_input',
  bls: 'image_url_input',
};

/**
 * Refuses, naming the first `image_url` part and the model, images sent to a model without an
 * image input (a text-only model would otherwise never see them).
 */
export async function requireImages(llm: TritonLlm, param: string, signal: AbortSignal): Promise<void> {
  const schema = await llm.schema({ signal });
  const input = IMAGE_INPUTS[schema.flavor];
  if (input === undefined || !schema.inputs.has(input)) {
    throw new TritonLlmError(
      'invalid_argument',
      `${param}: model '${schema.model}' (${schema.flavor}) takes no images (it declares no ${input ?? 'image input'}); ` +
        'send text only, or serve a multimodal model (LLM API with image_url, the multimodal ensemble, a BLS with image_url_input)',
      { model: schema.model },
    );
  }
}

/**
 * Refuses a request for a model this server does not serve, as OpenAI does (404, `model_not_found`),
 * naming the model it serves.
 */
export function requireModel(requested: string, served: string): void {
  if (requested !== served) throw unknownModel(requested, served);
}

/** The 404 of a model this server does not serve (`field: 'model'` makes it `model_not_found`). */
export function unknownModel(requested: string, served: string): TritonLlmError {
  return new TritonLlmError(
    'not_found',
    `The model '${requested}' does not exist; this server serves '${served}' (the only model in GET /v1/models)`,
    { field: 'model' },
  );
}

/**
 * Refuses, naming the OpenAI parameter, a request that needs guided decoding (a required or named
 * `tool_choice`, a JSON `response_format`) when the deployed model has no `guided_decoding_guide_type`
 * input: the server will not pretend the output is constrained.
 */
export async function requireGuidedDecoding(
  llm: TritonLlm,
  param: string,
  value: unknown,
  signal: AbortSignal,
): Promise<void> {
  const schema = await llm.schema({ signal });
  // vLLM takes the guide in its sampling_parameters JSON (structured_outputs), not in an input.
  if (!schema.inputs.has('guided_decoding_guide_type') && schema.flavor !== 'vllm') {
    throw new TritonLlmError(
      'invalid_argument',
      `${param}: ${JSON.stringify(value)} needs guided decoding, and model '${schema.model}' (${schema.flavor}) has none (no guided_decoding_guide_type input)`,
      { model: schema.model },
    );
  }
}
