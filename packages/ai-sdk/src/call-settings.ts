import {
  type LanguageModelV4CallOptions,
  type SharedV4Warning,
  UnsupportedFunctionalityError,
} from '@ai-sdk/provider';
import { type GenerateRequest, type ModelSchema, TritonLlmError } from '@trtllm/sdk';
import type { TritonCallSettings, TritonRequestOptions } from './provider-options.js';

/**
 * The AI SDK's sampling settings and the inputs that carry them in each model flavor (raw model,
 * ensemble/BLS, LLM-API). A model whose config declares none of them cannot honour the setting.
 */
const SAMPLING_INPUTS = {
  temperature: ['temperature', 'sampling_param_temperature'],
  topP: ['top_p', 'runtime_top_p', 'sampling_param_top_p'],
  topK: ['top_k', 'runtime_top_k', 'sampling_param_top_k'],
  presencePenalty: ['presence_penalty', 'sampling_param_presence_penalty'],
  frequencyPenalty: ['frequency_penalty', 'sampling_param_frequency_penalty'],
  seed: ['seed', 'random_seed', 'sampling_param_seed'],
} as const satisfies Record<string, readonly string[]>;

type SamplingSetting = keyof typeof SAMPLING_INPUTS;

const GUIDE_TYPE_INPUT = 'guided_decoding_guide_type';

/** One call, ready for `TritonLlm`: the request without its prompt, call options and the warnings. */
export interface PreparedCall {
  readonly request: Omit<GenerateRequest, 'prompt'>;
  readonly call: TritonCallSettings;
  readonly warnings: SharedV4Warning[];
}

/**
 * Maps the AI SDK's call settings and the TensorRT-LLM options onto one SDK request for the
 * deployed model: settings the model has no input for are left out with an `unsupported` warning;
 * a JSON response format becomes guided decoding, or an error on a model without it, because
 * ignoring it would return text where the caller expects an object. `toolGuide` is the guide of a
 * required or named tool choice, which no other guide may join.
 */
export function prepareCall(
  options: LanguageModelV4CallOptions,
  schema: ModelSchema,
  trtllm: { readonly request: TritonRequestOptions; readonly call: TritonCallSettings },
  defaultMaxTokens: number,
  toolGuide?: TritonRequestOptions['guidedDecoding'],
): PreparedCall {
  const warnings: SharedV4Warning[] = [];
  const sampling: Partial<Record<SamplingSetting, number>> = {};
  const has = (setting: SamplingSetting): boolean =>
    SAMPLING_INPUTS[setting].some((name) => schema.inputs.has(name));
  for (const setting of Object.keys(SAMPLING_INPUTS) as SamplingSetting[]) {
    const value = options[setting];
    if (value === undefined) continue;
    if (has(setting)) sampling[setting] = value;
    else {
      warnings.push({
        type: 'unsupported',
        feature: setting,
        details: `model '${schema.model}' (${schema.flavor}) has no input for it (looked for ${SAMPLING_INPUTS[setting].join(', ')}); it was not sent`,
      });
    }
  }
  // The AI SDK's temperature 0 asks for greedy decoding; TensorRT-LLM spells that top_k 1.
  if (sampling.temperature === 0 && has('topK')) {
    delete sampling.temperature;
    sampling.topK ??= 1;
  }
  const stopWords = [...(options.stopSequences ?? []), ...(trtllm.request.stopWords ?? [])];
  const guided = guidedDecoding(options.responseFormat, schema, trtllm.request.guidedDecoding);
  if (toolGuide !== undefined && guided !== undefined) {
    throw new TritonLlmError(
      'invalid_argument',
      `toolChoice: ${options.toolChoice?.type} constrains the output to tool calls with guided decoding; it cannot be combined with a JSON responseFormat or providerOptions.trtllm.guidedDecoding`,
    );
  }
  if (options.reasoning !== undefined && options.reasoning !== 'provider-default') {
    warnings.push({
      type: 'unsupported',
      feature: 'reasoning',
      details: 'Triton TensorRT-LLM models have no reasoning-effort input',
    });
  }
  const { stopWords: _merged, guidedDecoding: _guided, ...rest } = trtllm.request;
  return {
    request: {
      ...rest,
      maxTokens: options.maxOutputTokens ?? defaultMaxTokens,
      ...sampling,
      ...(stopWords.length > 0 ? { stopWords } : {}),
      ...(guided !== undefined ? { guidedDecoding: guided } : {}),
      ...(toolGuide !== undefined ? { guidedDecoding: toolGuide } : {}),
    },
    call: trtllm.call,
    warnings,
  };
}

function guidedDecoding(
  format: LanguageModelV4CallOptions['responseFormat'],
  schema: ModelSchema,
  explicit: TritonRequestOptions['guidedDecoding'],
): TritonRequestOptions['guidedDecoding'] {
  if (format === undefined || format.type === 'text') return explicit;
  if (explicit !== undefined) {
    throw new TritonLlmError(
      'invalid_argument',
      'providerOptions.trtllm.guidedDecoding: give either a JSON responseFormat (generateObject, Output.object) or guidedDecoding, not both',
    );
  }
  // vLLM takes the guide in its sampling_parameters JSON (structured_outputs), not in an input.
  if (!schema.inputs.has(GUIDE_TYPE_INPUT) && schema.flavor !== 'vllm') {
    throw new UnsupportedFunctionalityError({
      functionality: 'responseFormat json',
      message:
        `JSON output (generateObject, Output.object, responseFormat json) needs guided decoding, and model '${schema.model}' ` +
        `(${schema.flavor}) has none: its config declares no '${GUIDE_TYPE_INPUT}' input. Use a TensorRT-LLM model ` +
        'deployed with guided decoding (the ensemble, BLS or raw model of the 2025 backend or later, with a guided decoding backend).',
    });
  }
  return format.schema !== undefined
    ? { type: 'json_schema', guide: JSON.stringify(format.schema) }
    : { type: 'json' };
}
