/**
 * The flavors of model the client knows how to drive:
 * - `ensemble`: platform ensemble preprocessing -> tensorrt_llm -> postprocessing (text in, text out);
 * - `bls`: `tensorrt_llm_bls`, the same through Python business logic (may accumulate streamed text);
 * - `tensorrt_llm`: the raw model, token ids in and out (text with a {@link Tokenizer});
 * - `llmapi`: the LLM-API (PyTorch) `tensorrt_llm` model with `sampling_param_*` inputs;
 * - `vllm`: Triton's vLLM backend (`text_input` and one `sampling_parameters` JSON, no batch dimension).
 */
export type ModelFlavor = 'ensemble' | 'bls' | 'tensorrt_llm' | 'llmapi' | 'vllm';

/** A 2-D tensor given by its row-major values and its shape `[rows, columns]`. */
export interface Matrix {
  readonly data: Float32Array | readonly number[];
  readonly shape: readonly [number, number];
}

/** LoRA adapter selection. Task id plus weights/config for TRT-LLM; id, name and path for the LLM-API model. */
export interface LoraOptions {
  /** `lora_task_id` (TRT-LLM) or `lora_id` (LLM-API). */
  readonly taskId?: number | bigint;
  /** `lora_weights`, FP16 `[rows, columns]`: only on the first request of a task. */
  readonly weights?: Matrix;
  /** `lora_config`, INT32 rows of `[module_id, layer_idx, adapter_size]`. */
  readonly config?: readonly (readonly [number, number, number])[];
  /** LLM-API only: `lora_name`. */
  readonly name?: string;
  /** LLM-API only: `lora_path`. */
  readonly path?: string;
  /** LLM-API only: `lora_ckpt_source`, the adapter's checkpoint format: `hf` (the model's default) or `nemo`. */
  readonly ckptSource?: 'hf' | 'nemo';
}

/**
 * One image of a request, for a multimodal model: a URL (`http:`, `https:` or a `data:` URI), or
 * the bytes of an image file with their media type (`image/jpeg`, `image/png`...). The client sends
 * each the way the deployed model takes images: the LLM-API model's `image_url` and the multimodal
 * ensemble's `image_url_input` take a list of URLs, the BLS's `image_url_input` one URL; bytes travel
 * as a `data:` URI (base64). A model without an image input refuses `images` before anything is sent.
 */
export type ImageInput = { readonly url: string } | { readonly data: Uint8Array; readonly mediaType: string };

/**
 * One generation request, in one TypeScript shape for every flavor. The client maps each option to
 * the tensor name and data type that the deployed model declares (names changed across backend
 * versions, e.g. `min_tokens`/`min_length`, `seed`/`random_seed`); an option the deployed model does
 * not have is refused before anything is sent, naming the option and the model.
 */
export interface GenerateRequest {
  /** The prompt. Text models take it as is; the raw model needs the client's tokenizer. */
  readonly prompt?: string;
  /** Prompt token ids for the raw `tensorrt_llm` model (instead of `prompt`). */
  readonly inputIds?: readonly number[];
  /**
   * Images the prompt is about (multimodal models): LLM-API `image_url`, multimodal ensemble and
   * BLS `image_url_input`. See {@link ImageInput}.
   */
  readonly images?: readonly ImageInput[];
  /** Upper bound on generated tokens (`max_tokens`, `request_output_len`, `sampling_param_max_tokens`). */
  readonly maxTokens: number;

  /** Stop strings: sent to the server where the model takes them, and always enforced by the client across chunk boundaries (the matched text is trimmed). */
  readonly stopWords?: readonly string[];
  /** Raw model: stop words as token-id sequences (`stop_words_list`). */
  readonly stopWordIds?: readonly (readonly number[])[];
  /** Words the model must not generate (`bad_words`). */
  readonly badWords?: readonly string[];
  /** Raw model: bad words as token-id sequences (`bad_words_list`). */
  readonly badWordIds?: readonly (readonly number[])[];
  readonly endId?: number;
  readonly padId?: number;

  readonly topK?: number;
  readonly topP?: number;
  /** Raw model: `runtime_top_p_min`. */
  readonly topPMin?: number;
  /** Raw model: `runtime_top_p_decay`. */
  readonly topPDecay?: number;
  /** Raw model: `runtime_top_p_reset_ids`. */
  readonly topPResetIds?: number;
  readonly temperature?: number;
  readonly lengthPenalty?: number;
  /**
   * Raw model: `early_stopping` (BOOL; the disaggregated-serving BLS declares it INT32 and gets 1
   * or 0).
   */
  readonly earlyStopping?: boolean;
  readonly repetitionPenalty?: number;
  readonly presencePenalty?: number;
  readonly frequencyPenalty?: number;
  /** `min_tokens` (newest) or `min_length` (older backends). */
  readonly minTokens?: number;
  /** `seed` (newest) or `random_seed` (older backends); UINT64. */
  readonly seed?: number | bigint;
  readonly beamWidth?: number;
  /** Raw model: `beam_search_diversity_rate`. */
  readonly beamSearchDiversityRate?: number;
  readonly numReturnSequences?: number;
  /** LLM-API: `sampling_param_best_of`. */
  readonly bestOf?: number;

  readonly returnLogProbs?: boolean;
  /**
   * vLLM: the number of most likely alternatives (`logprobs`) returned with each generated token's log
   * prob, as `topLogProbs` of the sequence and of each chunk; log probs are returned with them.
   */
  readonly topLogProbs?: number;
  readonly returnContextLogits?: boolean;
  readonly returnGenerationLogits?: boolean;
  readonly returnPerfMetrics?: boolean;
  /** Ask for `num_input_tokens` / `num_output_tokens` where the model has them (newest backends). */
  readonly returnNumTokens?: boolean;
  /** Leave the prompt out of the output (older backends always echo it unless set). */
  readonly excludeInputInOutput?: boolean;

  /** Ensemble/BLS: `embedding_bias_words` with `embedding_bias_weights`. */
  readonly embeddingBias?: { readonly words: readonly string[]; readonly weights: readonly number[] };
  /** Raw model: `embedding_bias`, one weight per vocabulary entry. */
  readonly embeddingBiasVector?: readonly number[] | Float32Array;
  /** `prompt_embedding_table` (FP16 `[rows, hidden]`). */
  readonly promptEmbeddingTable?: Matrix;
  readonly promptVocabSize?: number;
  /**
   * Ensemble/BLS: `prompt_table_extra_id`, which their preprocessing spreads over the prompt tokens
   * that are prompt-table ids. The raw model takes one id per prompt token
   * (`prompt_table_extra_ids`) and drops a list of another length silently; the client cannot tell
   * which ids are prompt-table ids there, so it refuses this option for the raw model (send
   * `prompt_table_extra_ids` with `infer()`).
   */
  readonly promptTableExtraId?: number | bigint;
  readonly lora?: LoraOptions;
  /** Guided decoding: `guided_decoding_guide_type` (e.g. "json", "json_schema", "regex", "ebnf_grammar") and guide. */
  readonly guidedDecoding?: { readonly type: string; readonly guide?: string };
  /** Encoder-decoder models: `decoder_text_input`. */
  readonly decoderTextInput?: string;
  /** Raw encoder-decoder models: `decoder_input_ids`. */
  readonly decoderInputIds?: readonly number[];

  /**
   * Custom BLS models only: an input `tensorrt_llm_model_name`. NVIDIA's `tensorrt_llm_bls` has it
   * as a config parameter (since 2024-03), not an input, so it refuses this option.
   */
  readonly tensorrtLlmModelName?: string;
  /**
   * Custom BLS models only: an input `tensorrt_llm_draft_model_name`. NVIDIA's `tensorrt_llm_bls`
   * has it as a config parameter, not an input, so it refuses this option.
   */
  readonly draftModelName?: string;
  /** BLS: `num_draft_tokens`. */
  readonly numDraftTokens?: number;
  /** BLS: `use_draft_logits`. */
  readonly useDraftLogits?: boolean;
  /** Raw model: `draft_input_ids`. */
  readonly draftInputIds?: readonly number[];
  /** Raw model: `draft_logits` `[tokens, vocab]`. */
  readonly draftLogits?: Matrix;
  /** Raw model: `draft_acceptance_threshold`. */
  readonly draftAcceptanceThreshold?: number;
  /**
   * Raw model: lookahead decoding for this request (`lookahead_window_size`,
   * `lookahead_ngram_size`, `lookahead_verification_set_size`), on an engine built for it.
   */
  readonly lookahead?: {
    readonly windowSize: number;
    readonly ngramSize: number;
    readonly verificationSetSize: number;
  };
  /**
   * Raw model: KV-cache retention (the six `retention_*` inputs): how long, and at which priority
   * (0-100), the blocks of prompt token ranges and of generated tokens stay cached.
   */
  readonly kvCacheRetention?: {
    /**
     * Rows of `[start, end, priority]`: prompt tokens `start` up to `end` (exclusive) are kept at
     * `priority` (`retention_token_range_starts`, `_ends`, `_priorities`).
     */
    readonly tokenRanges?: readonly (readonly [number, number, number])[];
    /** One duration per token range, in ms, after which its priority lapses (`retention_token_range_durations_ms`). */
    readonly tokenRangeDurationsMs?: readonly number[];
    /** Priority of the blocks that generated tokens fill (`retention_decode_priority`). */
    readonly decodePriority?: number;
    /** How long, in ms, the decode priority holds (`retention_decode_duration_ms`). */
    readonly decodeDurationMs?: number;
  };
  /**
   * Disaggregated-serving BLS: `prompt_ignore_length`, the prompt tokens at the start that
   * presence and frequency penalties ignore.
   */
  readonly promptIgnoreLength?: number;

  /** The request id. Generated (numeric, as the TRT-LLM stop path needs) when absent. */
  readonly requestId?: string;
  /** Extra request parameters passed through unchanged (names starting with `triton_` are refused). */
  readonly parameters?: Readonly<Record<string, boolean | number | string>>;
}
