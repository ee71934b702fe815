import type { GenerateRequest, Matrix, ModelFlavor } from '../request/request.js';

/** A value an option contributes to one input tensor, before the batch dimension is added. */
export type BindingValue =
  | { readonly kind: 'scalar'; readonly value: number | bigint | boolean | string }
  | { readonly kind: 'list'; readonly values: readonly (number | bigint | boolean | string)[] }
  | { readonly kind: 'matrix'; readonly matrix: Matrix }
  | { readonly kind: 'rows'; readonly rows: readonly (readonly number[])[]; readonly width: number }
  | { readonly kind: 'words'; readonly words: readonly (readonly number[])[] };

/**
 * One row of the mapping table: an SDK option, the input names it has had in each flavor (newest
 * first, so the deployed config picks the right generation), and how its value is shaped.
 */
export interface Binding {
  /** The option's path in {@link GenerateRequest}, for error messages. */
  readonly option: string;
  readonly names: Partial<Record<ModelFlavor, readonly string[]>>;
  readonly value: (r: GenerateRequest) => BindingValue | undefined;
}

const TEXT = ['ensemble', 'bls'] as const;
const TRTLLM = ['ensemble', 'bls', 'tensorrt_llm'] as const;

function names(
  flavors: readonly ModelFlavor[],
  candidates: readonly string[],
): Partial<Record<ModelFlavor, readonly string[]>> {
  return Object.fromEntries(flavors.map((f) => [f, candidates]));
}

function scalar(get: (r: GenerateRequest) => number | bigint | boolean | string | undefined) {
  return (r: GenerateRequest): BindingValue | undefined => {
    const value = get(r);
    return value === undefined ? undefined : { kind: 'scalar', value };
  };
}

function list(get: (r: GenerateRequest) => readonly (number | string)[] | Float32Array | undefined) {
  return (r: GenerateRequest): BindingValue | undefined => {
    const values = get(r);
    return values === undefined ? undefined : { kind: 'list', values: Array.from(values) };
  };
}

function matrix(get: (r: GenerateRequest) => Matrix | undefined) {
  return (r: GenerateRequest): BindingValue | undefined => {
    const m = get(r);
    return m === undefined ? undefined : { kind: 'matrix', matrix: m };
  };
}

/**
 * The table from SDK options to model inputs. Prompt, max tokens, streaming flag and word lists of
 * the raw model are handled by the request encoder, because they depend on the tokenizer and call.
 */
export const BINDINGS: readonly Binding[] = [
  {
    option: 'stopWords',
    names: { ...names(TEXT, ['stop_words']), llmapi: ['sampling_param_stop'] },
    value: list((r) => r.stopWords),
  },
  { option: 'badWords', names: names(TEXT, ['bad_words']), value: list((r) => r.badWords) },
  { option: 'endId', names: names(TRTLLM, ['end_id']), value: scalar((r) => r.endId) },
  { option: 'padId', names: names(TRTLLM, ['pad_id']), value: scalar((r) => r.padId) },
  {
    option: 'topK',
    names: { ...names(TEXT, ['top_k']), tensorrt_llm: ['runtime_top_k'], llmapi: ['sampling_param_top_k'] },
    value: scalar((r) => r.topK),
  },
  {
    option: 'topP',
    names: { ...names(TEXT, ['top_p']), tensorrt_llm: ['runtime_top_p'], llmapi: ['sampling_param_top_p'] },
    value: scalar((r) => r.topP),
  },
  { option: 'topPMin', names: { tensorrt_llm: ['runtime_top_p_min'] }, value: scalar((r) => r.topPMin) },
  {
    option: 'topPDecay',
    names: { tensorrt_llm: ['runtime_top_p_decay'] },
    value: scalar((r) => r.topPDecay),
  },
  {
    option: 'topPResetIds',
    names: { tensorrt_llm: ['runtime_top_p_reset_ids'] },
    value: scalar((r) => r.topPResetIds),
  },
  {
    option: 'temperature',
    names: { ...names(TRTLLM, ['temperature']), llmapi: ['sampling_param_temperature'] },
    value: scalar((r) => r.temperature),
  },
  {
    option: 'lengthPenalty',
    names: { ...names(TEXT, ['length_penalty']), tensorrt_llm: ['len_penalty'] },
    value: scalar((r) => r.lengthPenalty),
  },
  {
    option: 'earlyStopping',
    names: { tensorrt_llm: ['early_stopping'] },
    value: scalar((r) => r.earlyStopping),
  },
  {
    option: 'repetitionPenalty',
    names: names(TRTLLM, ['repetition_penalty']),
    value: scalar((r) => r.repetitionPenalty),
  },
  {
    option: 'presencePenalty',
    names: { ...names(TRTLLM, ['presence_penalty']), llmapi: ['sampling_param_presence_penalty'] },
    value: scalar((r) => r.presencePenalty),
  },
  {
    option: 'frequencyPenalty',
    names: { ...names(TRTLLM, ['frequency_penalty']), llmapi: ['sampling_param_frequency_penalty'] },
    value: scalar((r) => r.frequencyPenalty),
  },
  {
    option: 'minTokens',
    names: names(TRTLLM, ['min_tokens', 'min_length']),
    value: scalar((r) => r.minTokens),
  },
  {
    option: 'seed',
    names: { ...names(TRTLLM, ['seed', 'random_seed']), llmapi: ['sampling_param_seed'] },
    value: scalar((r) => r.seed),
  },
  { option: 'beamWidth', names: names(TRTLLM, ['beam_width']), value: scalar((r) => r.beamWidth) },
  {
    option: 'beamSearchDiversityRate',
    names: { tensorrt_llm: ['beam_search_diversity_rate'] },
    value: scalar((r) => r.beamSearchDiversityRate),
  },
  {
    option: 'numReturnSequences',
    names: names(TRTLLM, ['num_return_sequences']),
    value: scalar((r) => r.numReturnSequences),
  },
  { option: 'bestOf', names: { llmapi: ['sampling_param_best_of'] }, value: scalar((r) => r.bestOf) },
  {
    option: 'returnLogProbs',
    names: { ...names(TRTLLM, ['return_log_probs']), llmapi: ['return_cumulative_logprob'] },
    value: scalar((r) => r.returnLogProbs),
  },
  {
    option: 'returnContextLogits',
    names: names(TRTLLM, ['return_context_logits']),
    value: scalar((r) => r.returnContextLogits),
  },
  {
    option: 'returnGenerationLogits',
    names: names(TRTLLM, ['return_generation_logits']),
    value: scalar((r) => r.returnGenerationLogits),
  },
  {
    option: 'returnPerfMetrics',
    names: { ...names(TRTLLM, ['return_perf_metrics']), llmapi: ['sampling_param_return_perf_metrics'] },
    value: scalar((r) => r.returnPerfMetrics),
  },
  {
    option: 'returnNumTokens',
    names: names(TRTLLM, ['return_num_input_tokens']),
    value: scalar((r) => r.returnNumTokens),
  },
  {
    option: 'returnNumTokens',
    names: names(TRTLLM, ['return_num_output_tokens']),
    value: scalar((r) => r.returnNumTokens),
  },
  {
    option: 'excludeInputInOutput',
    names: {
      ...names(TRTLLM, ['exclude_input_in_output']),
      llmapi: ['sampling_param_exclude_input_from_output'],
    },
    value: scalar((r) => r.excludeInputInOutput),
  },
  {
    option: 'embeddingBias.words',
    names: names(TEXT, ['embedding_bias_words']),
    value: list((r) => r.embeddingBias?.words),
  },
  {
    option: 'embeddingBias.weights',
    names: names(TEXT, ['embedding_bias_weights']),
    value: list((r) => r.embeddingBias?.weights),
  },
  {
    option: 'embeddingBiasVector',
    names: { tensorrt_llm: ['embedding_bias'] },
    value: list((r) => r.embeddingBiasVector),
  },
  {
    option: 'promptEmbeddingTable',
    names: names(TRTLLM, ['prompt_embedding_table']),
    value: matrix((r) => r.promptEmbeddingTable),
  },
  {
    option: 'promptVocabSize',
    names: names(TRTLLM, ['prompt_vocab_size']),
    value: scalar((r) => r.promptVocabSize),
  },
  {
    option: 'promptTableExtraId',
    names: names(TEXT, ['prompt_table_extra_id']),
    value: scalar((r) => r.promptTableExtraId),
  },
  {
    option: 'lora.taskId',
    names: { ...names(TRTLLM, ['lora_task_id']), llmapi: ['lora_id'] },
    value: scalar((r) => r.lora?.taskId),
  },
  { option: 'lora.weights', names: names(TRTLLM, ['lora_weights']), value: matrix((r) => r.lora?.weights) },
  {
    option: 'lora.config',
    names: names(TRTLLM, ['lora_config']),
    value: (r) =>
      r.lora?.config === undefined ? undefined : { kind: 'rows', rows: r.lora.config, width: 3 },
  },
  { option: 'lora.name', names: { llmapi: ['lora_name'] }, value: scalar((r) => r.lora?.name) },
  { option: 'lora.path', names: { llmapi: ['lora_path'] }, value: scalar((r) => r.lora?.path) },
  {
    option: 'lora.ckptSource',
    names: { llmapi: ['lora_ckpt_source'] },
    value: scalar((r) => r.lora?.ckptSource),
  },
  {
    option: 'guidedDecoding.type',
    names: names(TRTLLM, ['guided_decoding_guide_type']),
    value: scalar((r) => r.guidedDecoding?.type),
  },
  {
    option: 'guidedDecoding.guide',
    names: names(TRTLLM, ['guided_decoding_guide']),
    value: scalar((r) => r.guidedDecoding?.guide),
  },
  {
    option: 'decoderTextInput',
    names: names(TEXT, ['decoder_text_input']),
    value: scalar((r) => r.decoderTextInput),
  },
  {
    option: 'decoderInputIds',
    names: { tensorrt_llm: ['decoder_input_ids'] },
    value: list((r) => r.decoderInputIds),
  },
  {
    option: 'decoderInputIds',
    names: { tensorrt_llm: ['decoder_input_lengths'] },
    value: scalar((r) => r.decoderInputIds?.length),
  },
  {
    option: 'tensorrtLlmModelName',
    names: { bls: ['tensorrt_llm_model_name'] },
    value: scalar((r) => r.tensorrtLlmModelName),
  },
  {
    option: 'draftModelName',
    names: { bls: ['tensorrt_llm_draft_model_name'] },
    value: scalar((r) => r.draftModelName),
  },
  { option: 'numDraftTokens', names: { bls: ['num_draft_tokens'] }, value: scalar((r) => r.numDraftTokens) },
  { option: 'useDraftLogits', names: { bls: ['use_draft_logits'] }, value: scalar((r) => r.useDraftLogits) },
  {
    option: 'draftInputIds',
    names: { tensorrt_llm: ['draft_input_ids'] },
    value: list((r) => r.draftInputIds),
  },
  { option: 'draftLogits', names: { tensorrt_llm: ['draft_logits'] }, value: matrix((r) => r.draftLogits) },
  {
    option: 'draftAcceptanceThreshold',
    names: { tensorrt_llm: ['draft_acceptance_threshold'] },
    value: scalar((r) => r.draftAcceptanceThreshold),
  },
  {
    option: 'lookahead.windowSize',
    names: { tensorrt_llm: ['lookahead_window_size'] },
    value: scalar((r) => r.lookahead?.windowSize),
  },
  {
    option: 'lookahead.ngramSize',
    names: { tensorrt_llm: ['lookahead_ngram_size'] },
    value: scalar((r) => r.lookahead?.ngramSize),
  },
  {
    option: 'lookahead.verificationSetSize',
    names: { tensorrt_llm: ['lookahead_verification_set_size'] },
    value: scalar((r) => r.lookahead?.verificationSetSize),
  },
  {
    option: 'kvCacheRetention.tokenRanges',
    names: { tensorrt_llm: ['retention_token_range_starts'] },
    value: list((r) => r.kvCacheRetention?.tokenRanges?.map(([start]) => start)),
  },
  {
    option: 'kvCacheRetention.tokenRanges',
    names: { tensorrt_llm: ['retention_token_range_ends'] },
    value: list((r) => r.kvCacheRetention?.tokenRanges?.map(([, end]) => end)),
  },
  {
    option: 'kvCacheRetention.tokenRanges',
    names: { tensorrt_llm: ['retention_token_range_priorities'] },
    value: list((r) => r.kvCacheRetention?.tokenRanges?.map(([, , priority]) => priority)),
  },
  {
    option: 'kvCacheRetention.tokenRangeDurationsMs',
    names: { tensorrt_llm: ['retention_token_range_durations_ms'] },
    value: list((r) => r.kvCacheRetention?.tokenRangeDurationsMs),
  },
  {
    option: 'kvCacheRetention.decodePriority',
    names: { tensorrt_llm: ['retention_decode_priority'] },
    value: scalar((r) => r.kvCacheRetention?.decodePriority),
  },
  {
    option: 'kvCacheRetention.decodeDurationMs',
    names: { tensorrt_llm: ['retention_decode_duration_ms'] },
    value: scalar((r) => r.kvCacheRetention?.decodeDurationMs),
  },
  {
    option: 'promptIgnoreLength',
    names: { tensorrt_llm: ['prompt_ignore_length'] },
    value: scalar((r) => r.promptIgnoreLength),
  },
];
