/**
 * Tensor tables of the TensorRT-LLM model repository, transcribed from
 * shared/protocol/trtllm-models.md (v0.8.0, v0.11.0, 2025-03 columns, plus the 2026 renames).
 */
import { row, type TableRow } from './tensor-spec.js';

const R = { renamed: true } as const;
const N26 = { since: '2026' } as const;
const N25 = { since: '2025' } as const;
const N11 = { since: 'v0.11' } as const;

/** Inputs that the ensemble and the BLS model share, in their config order. */
const TEXT_MODEL_HEAD: readonly TableRow[] = [
  row('text_input', 'BYTES', [1], { opt: false, v011: [-1] }),
  row('max_tokens', 'INT32', [1], { opt: false, v011: [-1] }),
  row('bad_words', 'BYTES', [-1]),
  row('stop_words', 'BYTES', [-1]),
  row('end_id', 'INT32', [1]),
  row('pad_id', 'INT32', [1]),
  row('top_k', 'INT32', [1]),
  row('top_p', 'FP32', [1]),
  row('temperature', 'FP32', [1]),
  row('length_penalty', 'FP32', [1]),
  row('repetition_penalty', 'FP32', [1]),
  row('min_length', 'INT32', [1], R),
  row('min_tokens', 'INT32', [1], N26),
  row('presence_penalty', 'FP32', [1]),
  row('frequency_penalty', 'FP32', [1]),
  row('random_seed', 'UINT64', [1], R),
  row('seed', 'UINT64', [1], N26),
];

export const ENSEMBLE_INPUTS: readonly TableRow[] = [
  ...TEXT_MODEL_HEAD,
  row('return_log_probs', 'BOOL', [1]),
  row('return_context_logits', 'BOOL', [1]),
  row('return_generation_logits', 'BOOL', [1]),
  row('beam_width', 'INT32', [1]),
  row('stream', 'BOOL', [1]),
  row('prompt_embedding_table', 'FP16', [-1, -1]),
  row('prompt_vocab_size', 'INT32', [1]),
  row('embedding_bias_words', 'BYTES', [-1]),
  row('embedding_bias_weights', 'FP32', [-1]),
  row('decoder_text_input', 'BYTES', [1], { ...N11, v011: [-1] }),
  row('num_return_sequences', 'INT32', [1], N25),
  row('exclude_input_in_output', 'BOOL', [1], N25),
  row('return_perf_metrics', 'BOOL', [1], N25),
  row('prompt_table_extra_id', 'UINT64', [1], N25),
  row('lora_task_id', 'UINT64', [1], N25),
  row('lora_weights', 'FP16', [-1, -1], N25),
  row('lora_config', 'INT32', [-1, 3], N25),
  row('guided_decoding_guide_type', 'BYTES', [1], N25),
  row('guided_decoding_guide', 'BYTES', [1], N25),
  row('return_num_input_tokens', 'BOOL', [1], N26),
  row('return_num_output_tokens', 'BOOL', [1], N26),
];

export const BLS_INPUTS: readonly TableRow[] = [
  ...TEXT_MODEL_HEAD,
  row('return_log_probs', 'BOOL', [1], { scalar: true }),
  row('return_context_logits', 'BOOL', [1], { scalar: true }),
  row('return_generation_logits', 'BOOL', [1], { scalar: true }),
  row('beam_width', 'INT32', [1]),
  row('stream', 'BOOL', [1]),
  row('prompt_embedding_table', 'FP16', [-1, -1]),
  row('prompt_vocab_size', 'INT32', [1]),
  row('embedding_bias_words', 'BYTES', [-1]),
  row('embedding_bias_weights', 'FP32', [-1]),
  row('decoder_text_input', 'BYTES', [1], { ...N11, v011: [-1] }),
  row('num_draft_tokens', 'INT32', [1], N11),
  row('use_draft_logits', 'BOOL', [1], { ...N11, scalar: true }),
  row('image_input', 'FP16', [-1, 3, -1, -1], N25),
  row('image_bytes_input', 'UINT8', [-1, -1, -1, -1], N25),
  row('image_url_input', 'BYTES', [1], N25),
  row('video_bytes_input', 'UINT8', [-1, -1, -1, -1], N25),
  row('exclude_input_in_output', 'BOOL', [1], N25),
  row('num_return_sequences', 'INT32', [1], { ...N25, scalar: true }),
  row('prompt_table_extra_id', 'UINT64', [1], N25),
  row('lora_task_id', 'UINT64', [1], { ...N25, scalar: true }),
  row('lora_weights', 'FP16', [-1, -1], N25),
  row('lora_config', 'INT32', [-1, 3], N25),
  row('return_perf_metrics', 'BOOL', [1], { ...N25, scalar: true }),
  row('guided_decoding_guide_type', 'BYTES', [1], N25),
  row('guided_decoding_guide', 'BYTES', [1], N25),
  row('return_num_input_tokens', 'BOOL', [1], N26),
  row('return_num_output_tokens', 'BOOL', [1], N26),
];

/**
 * The multimodal ensemble (NVIDIA/TensorRT-LLM `triton_backend/all_models/multimodal/ensemble`,
 * 1c748b9), in its config order: the text ensemble's core plus image and video inputs; no
 * `exclude_input_in_output`, `num_return_sequences`, perf metrics, LoRA or guided decoding. The
 * fake serves it with the newest tables only (`image_url_input` was [1] before 2026, when
 * `image_sizes_input` came).
 */
export const MULTIMODAL_INPUTS: readonly TableRow[] = [
  row('text_input', 'BYTES', [1], { opt: false }),
  row('decoder_text_input', 'BYTES', [1]),
  row('image_input', 'FP16', [-1, -1, -1, -1]),
  row('image_bytes_input', 'UINT8', [-1, -1, -1, -1]),
  row('image_url_input', 'BYTES', [-1]),
  row('image_sizes_input', 'INT64', [-1, 2]),
  row('video_bytes_input', 'UINT8', [-1, -1, -1, -1]),
  row('max_tokens', 'INT32', [1], { opt: false }),
  row('bad_words', 'BYTES', [-1]),
  row('stop_words', 'BYTES', [-1]),
  row('end_id', 'INT32', [1]),
  row('pad_id', 'INT32', [1]),
  row('top_k', 'INT32', [1]),
  row('top_p', 'FP32', [1]),
  row('temperature', 'FP32', [1]),
  row('length_penalty', 'FP32', [1]),
  row('repetition_penalty', 'FP32', [1]),
  row('min_tokens', 'INT32', [1]),
  row('presence_penalty', 'FP32', [1]),
  row('frequency_penalty', 'FP32', [1]),
  row('seed', 'UINT64', [1]),
  row('return_log_probs', 'BOOL', [1]),
  row('return_context_logits', 'BOOL', [1]),
  row('return_generation_logits', 'BOOL', [1]),
  row('beam_width', 'INT32', [1]),
  row('stream', 'BOOL', [1]),
  row('prompt_table_extra_id', 'UINT64', [1]),
  row('embedding_bias_words', 'BYTES', [-1]),
  row('embedding_bias_weights', 'FP32', [-1]),
];

export const MULTIMODAL_OUTPUTS: readonly TableRow[] = [
  row('text_output', 'BYTES', [-1]),
  row('cum_log_probs', 'FP32', [-1]),
  row('output_log_probs', 'FP32', [-1, -1]),
  row('context_logits', 'FP32', [-1, -1]),
  row('generation_logits', 'FP32', [-1, -1, -1]),
  row('batch_index', 'INT32', [1]),
  row('sequence_index', 'INT32', [1]),
];

/**
 * The disaggregated-serving BLS (NVIDIA/TensorRT-LLM `triton_backend/all_models/disaggregated_serving/
 * disaggregated_serving_bls`, 37311ba), in its config order: driven like the raw model, with
 * `early_stopping` declared INT32 (BOOL in the raw model) and `prompt_ignore_length`. The fake
 * serves it with the newest tables only.
 */
export const DISAGGREGATED_INPUTS: readonly TableRow[] = [
  row('input_ids', 'INT32', [-1], { opt: false }),
  row('input_lengths', 'INT32', [1], { opt: false }),
  row('request_output_len', 'INT32', [1], { opt: false }),
  row('num_return_sequences', 'INT32', [1]),
  row('draft_input_ids', 'INT32', [-1]),
  row('decoder_input_ids', 'INT32', [-1]),
  row('decoder_input_lengths', 'INT32', [1]),
  row('draft_logits', 'FP32', [-1, -1]),
  row('draft_acceptance_threshold', 'FP32', [1]),
  row('end_id', 'INT32', [1]),
  row('pad_id', 'INT32', [1]),
  row('stop_words_list', 'INT32', [2, -1]),
  row('bad_words_list', 'INT32', [2, -1]),
  row('embedding_bias', 'FP32', [-1]),
  row('beam_width', 'INT32', [1]),
  row('temperature', 'FP32', [1]),
  row('runtime_top_k', 'INT32', [1]),
  row('runtime_top_p', 'FP32', [1]),
  row('runtime_top_p_min', 'FP32', [1]),
  row('runtime_top_p_decay', 'FP32', [1]),
  row('runtime_top_p_reset_ids', 'INT32', [1]),
  row('len_penalty', 'FP32', [1]),
  row('early_stopping', 'INT32', [1]),
  row('prompt_ignore_length', 'INT32', [1]),
  row('repetition_penalty', 'FP32', [1]),
  row('min_tokens', 'INT32', [1]),
  row('beam_search_diversity_rate', 'FP32', [1]),
  row('presence_penalty', 'FP32', [1]),
  row('frequency_penalty', 'FP32', [1]),
  row('seed', 'UINT64', [1]),
  row('return_log_probs', 'BOOL', [1]),
  row('return_context_logits', 'BOOL', [1]),
  row('return_generation_logits', 'BOOL', [1]),
  row('return_perf_metrics', 'BOOL', [1], { scalar: true }),
  row('exclude_input_in_output', 'BOOL', [1]),
  row('stop', 'BOOL', [1]),
  row('streaming', 'BOOL', [1]),
  row('prompt_embedding_table', 'FP16', [-1, -1]),
  row('prompt_table_extra_ids', 'UINT64', [-1]),
  row('prompt_vocab_size', 'INT32', [1]),
  row('lora_task_id', 'UINT64', [1]),
  row('lora_weights', 'FP16', [-1, -1]),
  row('lora_config', 'INT32', [-1, 3]),
  row('guided_decoding_guide_type', 'BYTES', [1]),
  row('guided_decoding_guide', 'BYTES', [1]),
  row('return_num_output_tokens', 'BOOL', [1]),
  row('return_num_input_tokens', 'BOOL', [1]),
];

/** Outputs after the model-specific ones, shared by `tensorrt_llm`, the ensemble and BLS. */
const METRIC_OUTPUTS: readonly TableRow[] = [
  row('kv_cache_alloc_new_blocks', 'INT32', [1], N25),
  row('kv_cache_reused_blocks', 'INT32', [1], N25),
  row('kv_cache_alloc_total_blocks', 'INT32', [1], N25),
  row('arrival_time_ns', 'INT64', [1], N25),
  row('first_scheduled_time_ns', 'INT64', [1], N25),
  row('first_token_time_ns', 'INT64', [1], N25),
  row('last_token_time_ns', 'INT64', [1], N25),
  row('acceptance_rate', 'FP32', [1], N25),
  row('total_accepted_draft_tokens', 'INT32', [1], N25),
  row('total_draft_tokens', 'INT32', [1], N25),
  row('num_input_tokens', 'INT32', [1], N26),
  row('num_output_tokens', 'INT32', [1], N26),
];

export const TEXT_MODEL_OUTPUTS: readonly TableRow[] = [
  row('text_output', 'BYTES', [-1]),
  row('cum_log_probs', 'FP32', [-1]),
  row('output_log_probs', 'FP32', [-1, -1]),
  row('context_logits', 'FP32', [-1, -1]),
  row('generation_logits', 'FP32', [-1, -1, -1]),
  row('batch_index', 'INT32', [1], N25),
  row('sequence_index', 'INT32', [1], N25),
  ...METRIC_OUTPUTS,
];

const S = { scalar: true } as const;
const S11 = { scalar: true, since: 'v0.11' } as const;
const S25 = { scalar: true, since: '2025' } as const;

export const TRTLLM_INPUTS: readonly TableRow[] = [
  row('input_ids', 'INT32', [-1]),
  row('input_lengths', 'INT32', [1], { opt: false, scalar: true }),
  row('request_output_len', 'INT32', [1], { opt: false, scalar: true }),
  row('draft_input_ids', 'INT32', [-1]),
  row('end_id', 'INT32', [1], S),
  row('pad_id', 'INT32', [1], S),
  row('stop_words_list', 'INT32', [2, -1]),
  row('bad_words_list', 'INT32', [2, -1]),
  row('embedding_bias', 'FP32', [-1]),
  row('beam_width', 'INT32', [1], S),
  row('temperature', 'FP32', [1], S),
  row('runtime_top_k', 'INT32', [1], S),
  row('runtime_top_p', 'FP32', [1], S),
  row('len_penalty', 'FP32', [1], S),
  row('repetition_penalty', 'FP32', [1], S),
  row('min_length', 'INT32', [1], { ...S, renamed: true }),
  row('min_tokens', 'INT32', [1], { ...S, since: '2026' }),
  row('presence_penalty', 'FP32', [1], S),
  row('frequency_penalty', 'FP32', [1], S),
  row('random_seed', 'UINT64', [1], { ...S, renamed: true }),
  row('seed', 'UINT64', [1], { ...S, since: '2026' }),
  row('return_log_probs', 'BOOL', [1], S),
  row('return_context_logits', 'BOOL', [1], S),
  row('return_generation_logits', 'BOOL', [1], S),
  row('stop', 'BOOL', [1], S),
  row('streaming', 'BOOL', [1], S),
  row('prompt_embedding_table', 'FP16', [-1, -1]),
  row('prompt_vocab_size', 'INT32', [1], S),
  row('lora_weights', 'FP16', [-1, -1]),
  row('lora_config', 'INT32', [-1, 3]),
  row('decoder_input_ids', 'INT32', [-1], N11),
  row('decoder_input_lengths', 'INT32', [1], S11),
  row('draft_logits', 'FP32', [-1, -1], N11),
  row('draft_acceptance_threshold', 'FP32', [1], S11),
  row('runtime_top_p_min', 'FP32', [1], S11),
  row('runtime_top_p_decay', 'FP32', [1], S11),
  row('runtime_top_p_reset_ids', 'INT32', [1], S11),
  row('early_stopping', 'BOOL', [1], S11),
  row('beam_search_diversity_rate', 'FP32', [1], S11),
  row('lora_task_id', 'UINT64', [1], S11),
  row('encoder_input_features', 'FP32', [-1, -1], N25),
  row('encoder_output_lengths', 'INT32', [1], S25),
  row('num_return_sequences', 'INT32', [1], S25),
  row('return_perf_metrics', 'BOOL', [1], S25),
  row('exclude_input_in_output', 'BOOL', [1], S25),
  row('prompt_table_extra_ids', 'UINT64', [-1], N25),
  row('cross_attention_mask', 'BOOL', [-1, -1], N25),
  row('mrope_rotary_cos_sin', 'FP32', [-1], N25),
  row('mrope_position_deltas', 'INT64', [1], N25),
  row('context_phase_params', 'UINT8', [-1], N25),
  row('skip_cross_attn_blocks', 'BOOL', [1], N25),
  row('retention_token_range_starts', 'INT32', [-1], N25),
  row('retention_token_range_ends', 'INT32', [-1], N25),
  row('retention_token_range_priorities', 'INT32', [-1], N25),
  row('retention_token_range_durations_ms', 'INT32', [-1], N25),
  row('retention_decode_priority', 'INT32', [1], N25),
  row('retention_decode_duration_ms', 'INT32', [1], N25),
  row('guided_decoding_guide_type', 'BYTES', [1], N25),
  row('guided_decoding_guide', 'BYTES', [1], N25),
  row('lookahead_window_size', 'INT32', [1], N25),
  row('lookahead_ngram_size', 'INT32', [1], N25),
  row('lookahead_verification_set_size', 'INT32', [1], N25),
  row('return_num_input_tokens', 'BOOL', [1], { ...S, since: '2026' }),
  row('return_num_output_tokens', 'BOOL', [1], { ...S, since: '2026' }),
];

export const TRTLLM_OUTPUTS: readonly TableRow[] = [
  row('output_ids', 'INT32', [-1, -1]),
  row('sequence_length', 'INT32', [-1]),
  row('cum_log_probs', 'FP32', [-1]),
  row('output_log_probs', 'FP32', [-1, -1]),
  row('context_logits', 'FP32', [-1, -1]),
  row('generation_logits', 'FP32', [-1, -1, -1]),
  row('batch_index', 'INT32', [1], N25),
  row('sequence_index', 'INT32', [1], N25),
  row('context_phase_params', 'UINT8', [-1], N25),
  ...METRIC_OUTPUTS,
];

/** The disaggregated-serving BLS's outputs: the raw model's, without `context_phase_params`. */
export const DISAGGREGATED_OUTPUTS: readonly TableRow[] = TRTLLM_OUTPUTS.filter(
  (r) => r.name !== 'context_phase_params',
);

/** The LLM-API flavor (NVIDIA/TensorRT-LLM `triton_backend/all_models/llmapi/`, 2026); one version. */
export const LLMAPI_INPUTS: readonly TableRow[] = [
  row('text_input', 'BYTES', [-1], { opt: false }),
  row('image_url', 'BYTES', [-1]),
  row('streaming', 'BOOL', [1]),
  row('sampling_param_best_of', 'INT32', [1]),
  row('sampling_param_temperature', 'FP32', [1]),
  row('sampling_param_top_k', 'INT32', [1]),
  row('sampling_param_top_p', 'FP32', [1]),
  row('sampling_param_frequency_penalty', 'FP32', [1]),
  row('sampling_param_presence_penalty', 'FP32', [1]),
  row('sampling_param_max_tokens', 'INT32', [1]),
  row('sampling_param_stop', 'BYTES', [-1]),
  row('sampling_param_seed', 'UINT64', [1]),
  row('sampling_param_exclude_input_from_output', 'BOOL', [1]),
  row('sampling_param_return_perf_metrics', 'BOOL', [1]),
  row('return_finish_reason', 'BOOL', [1]),
  row('return_stop_reason', 'BOOL', [1]),
  row('return_cumulative_logprob', 'BOOL', [1]),
  row('stop', 'BOOL', [1]),
  row('lora_id', 'UINT64', [1]),
  row('lora_name', 'BYTES', [1]),
  row('lora_path', 'BYTES', [1]),
  row('lora_ckpt_source', 'BYTES', [1]),
];

export const LLMAPI_OUTPUTS: readonly TableRow[] = [
  row('text_output', 'BYTES', [-1]),
  row('finish_reason', 'BYTES', [-1]),
  row('stop_reason', 'BYTES', [-1]),
  row('cumulative_logprob', 'FP32', [-1]),
  row('kv_cache_reused_block', 'INT32', [-1]),
  row('kv_cache_missed_block', 'INT32', [-1]),
  row('kv_cache_alloc_new_blocks', 'INT32', [-1]),
  row('kv_cache_alloc_total_blocks', 'INT32', [-1]),
  row('kv_cache_hit_rate', 'FP32', [-1]),
  row('arrival_time_ns', 'INT64', [1]),
  row('first_scheduled_time_ns', 'INT64', [1]),
  row('first_token_time_ns', 'INT64', [1]),
  row('last_token_time_ns', 'INT64', [1]),
  row('acceptance_rate', 'FP32', [1]),
  row('total_accepted_draft_tokens', 'INT32', [1]),
  row('total_draft_tokens', 'INT32', [1]),
];

/** The tokenizer steps of the ensemble (the subset of the official models the fake needs). */
export const PREPROCESSING_INPUTS: readonly TableRow[] = [
  row('QUERY', 'BYTES', [1], { opt: false }),
  row('REQUEST_OUTPUT_LEN', 'INT32', [1], { opt: false }),
  row('BAD_WORDS_DICT', 'BYTES', [-1]),
  row('STOP_WORDS_DICT', 'BYTES', [-1]),
  row('END_ID', 'INT32', [1]),
  row('PAD_ID', 'INT32', [1]),
];

export const PREPROCESSING_OUTPUTS: readonly TableRow[] = [
  row('INPUT_ID', 'INT32', [-1]),
  row('REQUEST_INPUT_LEN', 'INT32', [1]),
  row('BAD_WORDS_IDS', 'INT32', [2, -1]),
  row('STOP_WORDS_IDS', 'INT32', [2, -1]),
  row('REQUEST_OUTPUT_LEN', 'INT32', [-1]),
  row('OUT_END_ID', 'INT32', [1]),
  row('OUT_PAD_ID', 'INT32', [1]),
];

export const POSTPROCESSING_INPUTS: readonly TableRow[] = [
  row('TOKENS_BATCH', 'INT32', [-1, -1], { opt: false }),
  row('SEQUENCE_LENGTH', 'INT32', [-1], { opt: false }),
];

export const POSTPROCESSING_OUTPUTS: readonly TableRow[] = [row('OUTPUT', 'BYTES', [-1])];

/**
 * Triton's vLLM backend (triton-inference-server/vllm_backend `src/model.py`), as its
 * `auto_complete_config` declares it: decoupled, `max_batch_size` 0, so no batch dimension.
 */
export const VLLM_INPUTS: readonly TableRow[] = [
  row('text_input', 'BYTES', [1], { opt: false }),
  row('image', 'BYTES', [-1]),
  row('stream', 'BOOL', [1]),
  row('sampling_parameters', 'BYTES', [1]),
  row('exclude_input_in_output', 'BOOL', [1]),
  row('return_finish_reason', 'BOOL', [1]),
  row('return_cumulative_logprob', 'BOOL', [1]),
  row('return_logprobs', 'BOOL', [1]),
  row('return_num_input_tokens', 'BOOL', [1]),
  row('return_num_output_tokens', 'BOOL', [1]),
  row('embedding_request', 'BYTES', [1]),
];

export const VLLM_OUTPUTS: readonly TableRow[] = [
  row('text_output', 'BYTES', [-1]),
  row('finish_reason', 'BYTES', [-1]),
  row('cumulative_logprob', 'FP32', [-1]),
  row('logprobs', 'BYTES', [-1]),
  row('num_input_tokens', 'UINT32', [1]),
  row('num_output_tokens', 'UINT32', [-1]),
];
