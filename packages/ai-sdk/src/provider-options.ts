import { type GenerateRequest, invalidArgument, TritonLlmError, validateRequest } from '@trtllm/sdk';

/** A 2-D tensor as JSON: row-major values and `[rows, columns]`. */
export type TritonJsonMatrix = {
  readonly data: readonly number[];
  readonly shape: readonly [number, number];
};

/**
 * TensorRT-LLM options of one call, given as `providerOptions.trtllm` (or as the provider's
 * `defaults`). They are the `@trtllm/sdk` request options that JSON can carry, with the same names
 * and meanings (see `GenerateRequest`); the AI SDK's own settings (`maxOutputTokens`,
 * `temperature`, `topP`, `topK`, `presencePenalty`, `frequencyPenalty`, `seed`, `stopSequences`,
 * `responseFormat`) are given as usual and are not repeated here. An option the deployed model
 * lacks is refused before anything is sent, naming the option and the model; unknown keys and bad
 * values are refused naming the field. (A type rather than an interface, so that a variable of this
 * type is assignable to the AI SDK's JSON-valued `providerOptions`.)
 *
 * ```ts
 * await generateText({
 *   model: triton('ensemble'),
 *   prompt,
 *   providerOptions: { trtllm: { beamWidth: 2, badWords: ['ugly'] } satisfies TritonProviderOptions },
 * });
 * ```
 */
export type TritonProviderOptions = {
  /** Beam search width; every beam is in `providerMetadata.trtllm.sequences`, the first is the text. */
  readonly beamWidth?: number;
  /** Sequences returned per request (`num_return_sequences`); the first is the text. */
  readonly numReturnSequences?: number;
  /** LLM-API model: `sampling_param_best_of`. */
  readonly bestOf?: number;
  /** End-of-sequence id (raw model: defaulted from the tokenizer). */
  readonly endId?: number;
  /** Padding id. */
  readonly padId?: number;
  /** Extra stop strings, added to the AI SDK's `stopSequences`. */
  readonly stopWords?: readonly string[];
  /** Raw model: stop words as token-id sequences. */
  readonly stopWordIds?: readonly (readonly number[])[];
  /** Words the model must not generate. */
  readonly badWords?: readonly string[];
  /** Raw model: bad words as token-id sequences. */
  readonly badWordIds?: readonly (readonly number[])[];
  readonly minTokens?: number;
  readonly repetitionPenalty?: number;
  readonly lengthPenalty?: number;
  /** Raw model: `early_stopping`. */
  readonly earlyStopping?: boolean;
  /** Raw model: `runtime_top_p_min`. */
  readonly topPMin?: number;
  /** Raw model: `runtime_top_p_decay`. */
  readonly topPDecay?: number;
  /** Raw model: `runtime_top_p_reset_ids`. */
  readonly topPResetIds?: number;
  /** Raw model: `beam_search_diversity_rate`. */
  readonly beamSearchDiversityRate?: number;
  /** Per-token log probs of the first sequence in `providerMetadata.trtllm.sequences`. */
  readonly returnLogProbs?: boolean;
  /** The backend's own KV-cache and timing metrics in `providerMetadata.trtllm.perfMetrics`. */
  readonly returnPerfMetrics?: boolean;
  /** Leave the prompt out of the output (the default where the model has the input). */
  readonly excludeInputInOutput?: boolean;
  /** Ensemble/BLS: `embedding_bias_words` with their weights. */
  readonly embeddingBias?: { readonly words: readonly string[]; readonly weights: readonly number[] };
  /** Raw model: one bias per vocabulary entry. */
  readonly embeddingBiasVector?: readonly number[];
  /** `prompt_embedding_table` (FP16 `[rows, hidden]`). */
  readonly promptEmbeddingTable?: TritonJsonMatrix;
  readonly promptVocabSize?: number;
  readonly promptTableExtraId?: number;
  /** LoRA adapter: task id plus weights/config (TRT-LLM) or name and path (LLM-API). */
  readonly lora?: {
    readonly taskId?: number;
    readonly weights?: TritonJsonMatrix;
    readonly config?: readonly (readonly [number, number, number])[];
    readonly name?: string;
    readonly path?: string;
  };
  /**
   * Guided decoding given directly (`regex`, `ebnf_grammar`, `json_schema`, `json`, ...). The AI
   * SDK's JSON `responseFormat` (`generateObject`, `Output.object`) sets it for you.
   */
  readonly guidedDecoding?: { readonly type: string; readonly guide?: string };
  /** Encoder-decoder models: `decoder_text_input`. */
  readonly decoderTextInput?: string;
  /** BLS: `tensorrt_llm_model_name`. */
  readonly tensorrtLlmModelName?: string;
  /** BLS: `tensorrt_llm_draft_model_name`. */
  readonly draftModelName?: string;
  /** BLS: `num_draft_tokens`. */
  readonly numDraftTokens?: number;
  /** BLS: `use_draft_logits`. */
  readonly useDraftLogits?: boolean;
  /** The Triton request id (numeric ones work with the raw model's stop path); generated when absent. */
  readonly requestId?: string;
  /** Extra request parameters passed through unchanged (names starting with `triton_` are refused). */
  readonly parameters?: Readonly<Record<string, boolean | number | string>>;
  /** Deadline of the whole request in milliseconds (a gRPC deadline). */
  readonly timeoutMs?: number;
  /** Longest wait for the next response in milliseconds. */
  readonly idleTimeoutMs?: number;
};

/** The request options of {@link TritonProviderOptions}, as the SDK takes them. */
export type TritonRequestOptions = Omit<
  GenerateRequest,
  | 'prompt'
  | 'inputIds'
  | 'maxTokens'
  | 'topK'
  | 'topP'
  | 'temperature'
  | 'presencePenalty'
  | 'frequencyPenalty'
  | 'seed'
>;

/** Call options carried in the provider options, beside the request options. */
export interface TritonCallSettings {
  readonly timeoutMs?: number;
  readonly idleTimeoutMs?: number;
}

const REQUEST_OPTION_KEYS: ReadonlySet<string> = new Set<keyof TritonProviderOptions>([
  'beamWidth',
  'numReturnSequences',
  'bestOf',
  'endId',
  'padId',
  'stopWords',
  'stopWordIds',
  'badWords',
  'badWordIds',
  'minTokens',
  'repetitionPenalty',
  'lengthPenalty',
  'earlyStopping',
  'topPMin',
  'topPDecay',
  'topPResetIds',
  'beamSearchDiversityRate',
  'returnLogProbs',
  'returnPerfMetrics',
  'excludeInputInOutput',
  'embeddingBias',
  'embeddingBiasVector',
  'promptEmbeddingTable',
  'promptVocabSize',
  'promptTableExtraId',
  'lora',
  'guidedDecoding',
  'decoderTextInput',
  'tensorrtLlmModelName',
  'draftModelName',
  'numDraftTokens',
  'useDraftLogits',
  'requestId',
  'parameters',
]);

const CALL_KEYS: ReadonlySet<string> = new Set(['timeoutMs', 'idleTimeoutMs']);

/** The AI SDK's names of the settings the SDK's checks name otherwise. */
const SETTING_NAMES: Readonly<Record<string, string>> = {
  maxTokens: 'maxOutputTokens',
  stopWords: 'stopSequences',
};

/**
 * Reads and checks `providerOptions.trtllm` (or the provider's defaults, named by `field`): every
 * key must be a known option and every value must pass the SDK's own request validation, whose
 * error is re-thrown naming the field under `field`.
 */
export function parseTritonOptions(
  value: unknown,
  field: string,
): { readonly request: TritonRequestOptions; readonly call: TritonCallSettings } {
  if (value === undefined || value === null) return { request: {}, call: {} };
  if (typeof value !== 'object' || Array.isArray(value))
    throw invalidArgument(field, value, 'must be an object');
  const request: Record<string, unknown> = {};
  const call: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (v === undefined) continue;
    if (REQUEST_OPTION_KEYS.has(key)) request[key] = v;
    else if (CALL_KEYS.has(key)) {
      if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) {
        throw invalidArgument(`${field}.${key}`, v, 'must be a positive number of milliseconds');
      }
      call[key] = v;
    } else {
      throw invalidArgument(`${field}.${key}`, v, 'unknown option (see TritonProviderOptions)');
    }
  }
  // The SDK validates whole requests; a placeholder prompt and length make this one whole.
  checkRequest({ prompt: '-', maxTokens: 1, ...request } as GenerateRequest, (name) => `${field}.${name}`);
  return { request: request as TritonRequestOptions, call: call as TritonCallSettings };
}

/**
 * Runs the SDK's request validation on the request built from the AI SDK's settings, and names a
 * failing field as the caller spelt it (`maxOutputTokens`, not `maxTokens`).
 */
export function checkRequest(
  request: GenerateRequest,
  rename: (name: string) => string = (name) => {
    const root = name.split(/[.[]/)[0] ?? name;
    const setting = SETTING_NAMES[root];
    return setting !== undefined ? `${setting}${name.slice(root.length)}` : name;
  },
): void {
  try {
    validateRequest(request);
  } catch (err) {
    if (!(err instanceof TritonLlmError) || err.field === undefined) throw err;
    const field = rename(err.field);
    if (field === err.field) throw err;
    const message = err.message.startsWith(err.field)
      ? `${field}${err.message.slice(err.field.length)}`
      : err.message;
    throw new TritonLlmError('invalid_argument', message, { field, cause: err });
  }
}
