#!/usr/bin/env python3
"""Writes the model repository test/triton/models/ (config.pbtxt + 1/model.py of every model).

The tensors are the newest backend's (shared/protocol/trtllm-models.md, 2025-03 column plus the 2026
renames `min_tokens`, `seed`, `return_num_input_tokens`, `return_num_output_tokens`). The configs are
generated so the twin models (tensorrt_llm / tensorrt_llm_unary, ensemble / ensemble_unary, the two BLS)
cannot drift apart. Run it after changing a table; commit its output.
"""

from pathlib import Path

MODELS = Path(__file__).resolve().parent / "models"
MAX_BATCH_SIZE = 64
OPT, REQ, RESHAPE = "opt", "req", "reshape"  # optional flag; RESHAPE = optional + reshape to []

# --- tensorrt_llm -----------------------------------------------------------------------------
TRTLLM_INPUTS = [
    ("input_ids", "INT32", [-1], OPT),
    ("input_lengths", "INT32", [1], "req-reshape"),
    ("request_output_len", "INT32", [1], "req-reshape"),
    ("draft_input_ids", "INT32", [-1], OPT),
    ("decoder_input_ids", "INT32", [-1], OPT),
    ("decoder_input_lengths", "INT32", [1], RESHAPE),
    ("draft_logits", "FP32", [-1, -1], OPT),
    ("draft_acceptance_threshold", "FP32", [1], RESHAPE),
    ("end_id", "INT32", [1], RESHAPE),
    ("pad_id", "INT32", [1], RESHAPE),
    ("stop_words_list", "INT32", [2, -1], OPT),
    ("bad_words_list", "INT32", [2, -1], OPT),
    ("embedding_bias", "FP32", [-1], OPT),
    ("beam_width", "INT32", [1], RESHAPE),
    ("temperature", "FP32", [1], RESHAPE),
    ("runtime_top_k", "INT32", [1], RESHAPE),
    ("runtime_top_p", "FP32", [1], RESHAPE),
    ("runtime_top_p_min", "FP32", [1], RESHAPE),
    ("runtime_top_p_decay", "FP32", [1], RESHAPE),
    ("runtime_top_p_reset_ids", "INT32", [1], RESHAPE),
    ("len_penalty", "FP32", [1], RESHAPE),
    ("early_stopping", "BOOL", [1], RESHAPE),
    ("repetition_penalty", "FP32", [1], RESHAPE),
    ("min_tokens", "INT32", [1], RESHAPE),
    ("beam_search_diversity_rate", "FP32", [1], RESHAPE),
    ("presence_penalty", "FP32", [1], RESHAPE),
    ("frequency_penalty", "FP32", [1], RESHAPE),
    ("seed", "UINT64", [1], RESHAPE),
    ("return_log_probs", "BOOL", [1], RESHAPE),
    ("return_context_logits", "BOOL", [1], RESHAPE),
    ("return_generation_logits", "BOOL", [1], RESHAPE),
    ("return_perf_metrics", "BOOL", [1], RESHAPE),
    ("return_num_input_tokens", "BOOL", [1], RESHAPE),
    ("return_num_output_tokens", "BOOL", [1], RESHAPE),
    ("exclude_input_in_output", "BOOL", [1], RESHAPE),
    ("stop", "BOOL", [1], RESHAPE),
    ("streaming", "BOOL", [1], RESHAPE),
    ("prompt_embedding_table", "FP16", [-1, -1], OPT),
    ("prompt_table_extra_ids", "UINT64", [-1], OPT),
    ("prompt_vocab_size", "INT32", [1], RESHAPE),
    ("cross_attention_mask", "BOOL", [-1, -1], OPT),
    ("mrope_rotary_cos_sin", "FP32", [-1], OPT),
    ("mrope_position_deltas", "INT64", [1], OPT),
    ("lora_task_id", "UINT64", [1], RESHAPE),
    ("lora_weights", "FP16", [-1, -1], OPT),
    ("lora_config", "INT32", [-1, 3], OPT),
    ("encoder_input_features", "FP32", [-1, -1], OPT),
    ("encoder_output_lengths", "INT32", [1], RESHAPE),
    ("num_return_sequences", "INT32", [1], RESHAPE),
    ("context_phase_params", "UINT8", [-1], OPT),
    ("skip_cross_attn_blocks", "BOOL", [1], OPT),
    ("retention_token_range_starts", "INT32", [-1], OPT),
    ("retention_token_range_ends", "INT32", [-1], OPT),
    ("retention_token_range_priorities", "INT32", [-1], OPT),
    ("retention_token_range_durations_ms", "INT32", [-1], OPT),
    ("retention_decode_priority", "INT32", [1], OPT),
    ("retention_decode_duration_ms", "INT32", [1], OPT),
    ("guided_decoding_guide_type", "STRING", [1], OPT),
    ("guided_decoding_guide", "STRING", [1], OPT),
    ("lookahead_window_size", "INT32", [1], OPT),
    ("lookahead_ngram_size", "INT32", [1], OPT),
    ("lookahead_verification_set_size", "INT32", [1], OPT),
]
PERF_OUTPUTS = [
    ("kv_cache_alloc_new_blocks", "INT32", [1]),
    ("kv_cache_reused_blocks", "INT32", [1]),
    ("kv_cache_alloc_total_blocks", "INT32", [1]),
    ("arrival_time_ns", "INT64", [1]),
    ("first_scheduled_time_ns", "INT64", [1]),
    ("first_token_time_ns", "INT64", [1]),
    ("last_token_time_ns", "INT64", [1]),
    ("acceptance_rate", "FP32", [1]),
    ("total_accepted_draft_tokens", "INT32", [1]),
    ("total_draft_tokens", "INT32", [1]),
    ("num_input_tokens", "INT32", [1]),
    ("num_output_tokens", "INT32", [1]),
]
COMMON_OUTPUTS = [
    ("cum_log_probs", "FP32", [-1]),
    ("output_log_probs", "FP32", [-1, -1]),
    ("context_logits", "FP32", [-1, -1]),
    ("generation_logits", "FP32", [-1, -1, -1]),
    ("batch_index", "INT32", [1]),
    ("sequence_index", "INT32", [1]),
]
TRTLLM_OUTPUTS = [
    ("output_ids", "INT32", [-1, -1]),
    ("sequence_length", "INT32", [-1]),
    *COMMON_OUTPUTS,
    ("context_phase_params", "UINT8", [-1]),
    *PERF_OUTPUTS,
]
TEXT_OUTPUTS = [("text_output", "STRING", [-1]), *COMMON_OUTPUTS, *PERF_OUTPUTS]

# --- preprocessing / postprocessing ----------------------------------------------------------
PRE_INPUTS = [
    ("QUERY", "STRING", [1], REQ),
    ("DECODER_QUERY", "STRING", [1], OPT),
    ("REQUEST_OUTPUT_LEN", "INT32", [1], REQ),
    ("BAD_WORDS_DICT", "STRING", [-1], OPT),
    ("STOP_WORDS_DICT", "STRING", [-1], OPT),
    ("EMBEDDING_BIAS_WORDS", "STRING", [-1], OPT),
    ("EMBEDDING_BIAS_WEIGHTS", "FP32", [-1], OPT),
    ("END_ID", "INT32", [1], OPT),
    ("PAD_ID", "INT32", [1], OPT),
    ("PROMPT_TABLE_EXTRA_ID", "UINT64", [1], OPT),
]
PRE_OUTPUTS = [
    ("INPUT_ID", "INT32", [-1]),
    ("REQUEST_INPUT_LEN", "INT32", [1]),
    ("BAD_WORDS_IDS", "INT32", [2, -1]),
    ("STOP_WORDS_IDS", "INT32", [2, -1]),
    ("REQUEST_OUTPUT_LEN", "INT32", [-1]),
    ("OUT_END_ID", "INT32", [1]),
    ("OUT_PAD_ID", "INT32", [1]),
]
POST_INPUTS = [("TOKENS_BATCH", "INT32", [-1, -1], REQ), ("SEQUENCE_LENGTH", "INT32", [-1], REQ)]
POST_OUTPUTS = [("OUTPUT", "STRING", [-1])]

# --- ensemble: input -> (step, step input) ------------------------------------------------------
ENSEMBLE_INPUTS = [
    ("text_input", "STRING", [1], REQ, "pre", "QUERY"),
    ("decoder_text_input", "STRING", [1], OPT, "pre", "DECODER_QUERY"),
    ("max_tokens", "INT32", [1], REQ, "pre", "REQUEST_OUTPUT_LEN"),
    ("num_return_sequences", "INT32", [1], OPT, "llm", "num_return_sequences"),
    ("bad_words", "STRING", [-1], OPT, "pre", "BAD_WORDS_DICT"),
    ("stop_words", "STRING", [-1], OPT, "pre", "STOP_WORDS_DICT"),
    ("exclude_input_in_output", "BOOL", [1], OPT, "llm", "exclude_input_in_output"),
    ("end_id", "INT32", [1], OPT, "pre", "END_ID"),
    ("pad_id", "INT32", [1], OPT, "pre", "PAD_ID"),
    ("top_k", "INT32", [1], OPT, "llm", "runtime_top_k"),
    ("top_p", "FP32", [1], OPT, "llm", "runtime_top_p"),
    ("temperature", "FP32", [1], OPT, "llm", "temperature"),
    ("length_penalty", "FP32", [1], OPT, "llm", "len_penalty"),
    ("repetition_penalty", "FP32", [1], OPT, "llm", "repetition_penalty"),
    ("min_tokens", "INT32", [1], OPT, "llm", "min_tokens"),
    ("presence_penalty", "FP32", [1], OPT, "llm", "presence_penalty"),
    ("frequency_penalty", "FP32", [1], OPT, "llm", "frequency_penalty"),
    ("seed", "UINT64", [1], OPT, "llm", "seed"),
    ("return_log_probs", "BOOL", [1], OPT, "llm", "return_log_probs"),
    ("return_context_logits", "BOOL", [1], OPT, "llm", "return_context_logits"),
    ("return_generation_logits", "BOOL", [1], OPT, "llm", "return_generation_logits"),
    ("return_perf_metrics", "BOOL", [1], OPT, "llm", "return_perf_metrics"),
    ("return_num_input_tokens", "BOOL", [1], OPT, "llm", "return_num_input_tokens"),
    ("return_num_output_tokens", "BOOL", [1], OPT, "llm", "return_num_output_tokens"),
    ("beam_width", "INT32", [1], OPT, "llm", "beam_width"),
    ("stream", "BOOL", [1], OPT, "llm", "streaming"),
    ("prompt_embedding_table", "FP16", [-1, -1], OPT, "llm", "prompt_embedding_table"),
    ("prompt_table_extra_id", "UINT64", [1], OPT, "pre", "PROMPT_TABLE_EXTRA_ID"),
    ("prompt_vocab_size", "INT32", [1], OPT, "llm", "prompt_vocab_size"),
    ("embedding_bias_words", "STRING", [-1], OPT, "pre", "EMBEDDING_BIAS_WORDS"),
    ("embedding_bias_weights", "FP32", [-1], OPT, "pre", "EMBEDDING_BIAS_WEIGHTS"),
    ("lora_task_id", "UINT64", [1], OPT, "llm", "lora_task_id"),
    ("lora_weights", "FP16", [-1, -1], OPT, "llm", "lora_weights"),
    ("lora_config", "INT32", [-1, 3], OPT, "llm", "lora_config"),
    ("guided_decoding_guide_type", "STRING", [1], OPT, "llm", "guided_decoding_guide_type"),
    ("guided_decoding_guide", "STRING", [1], OPT, "llm", "guided_decoding_guide"),
]
# preprocessing output -> tensorrt_llm input (internal tensors named "_" + output)
PRE_TO_LLM = [
    ("INPUT_ID", "input_ids"),
    ("REQUEST_INPUT_LEN", "input_lengths"),
    ("REQUEST_OUTPUT_LEN", "request_output_len"),
    ("BAD_WORDS_IDS", "bad_words_list"),
    ("STOP_WORDS_IDS", "stop_words_list"),
    ("OUT_END_ID", "end_id"),
    ("OUT_PAD_ID", "pad_id"),
]

# --- multimodal ensemble ---------------------------------------------------------------------------
# NVIDIA/TensorRT-LLM triton_backend/all_models/multimodal/ensemble/config.pbtxt (1c748b9): its 29 inputs and
# 7 outputs in its order, types and dims. Its steps here: multimodal_preprocessing (upstream's preprocessing
# takes the image inputs; `image_input` goes to upstream's multimodal_encoders, which a stand-in without
# pictures does not need) -> tensorrt_llm_multimodal -> postprocessing.
MULTIMODAL_INPUTS = [
    ("text_input", "STRING", [1], REQ, "pre", "QUERY"),
    ("decoder_text_input", "STRING", [1], OPT, "pre", "DECODER_QUERY"),
    ("image_input", "FP16", [-1, -1, -1, -1], OPT, "pre", "IMAGE"),
    ("image_bytes_input", "UINT8", [-1, -1, -1, -1], OPT, "pre", "IMAGE_BYTES"),
    ("image_url_input", "STRING", [-1], OPT, "pre", "IMAGE_URL"),
    ("image_sizes_input", "INT64", [-1, 2], OPT, "pre", "IMAGE_SIZES"),
    ("video_bytes_input", "UINT8", [-1, -1, -1, -1], OPT, "pre", "VIDEO_BYTES"),
    ("max_tokens", "INT32", [1], REQ, "pre", "REQUEST_OUTPUT_LEN"),
    ("bad_words", "STRING", [-1], OPT, "pre", "BAD_WORDS_DICT"),
    ("stop_words", "STRING", [-1], OPT, "pre", "STOP_WORDS_DICT"),
    ("end_id", "INT32", [1], OPT, "pre", "END_ID"),
    ("pad_id", "INT32", [1], OPT, "pre", "PAD_ID"),
    ("top_k", "INT32", [1], OPT, "llm", "runtime_top_k"),
    ("top_p", "FP32", [1], OPT, "llm", "runtime_top_p"),
    ("temperature", "FP32", [1], OPT, "llm", "temperature"),
    ("length_penalty", "FP32", [1], OPT, "llm", "len_penalty"),
    ("repetition_penalty", "FP32", [1], OPT, "llm", "repetition_penalty"),
    ("min_tokens", "INT32", [1], OPT, "llm", "min_tokens"),
    ("presence_penalty", "FP32", [1], OPT, "llm", "presence_penalty"),
    ("frequency_penalty", "FP32", [1], OPT, "llm", "frequency_penalty"),
    ("seed", "UINT64", [1], OPT, "llm", "seed"),
    ("return_log_probs", "BOOL", [1], OPT, "llm", "return_log_probs"),
    ("return_context_logits", "BOOL", [1], OPT, "llm", "return_context_logits"),
    ("return_generation_logits", "BOOL", [1], OPT, "llm", "return_generation_logits"),
    ("beam_width", "INT32", [1], OPT, "llm", "beam_width"),
    ("stream", "BOOL", [1], OPT, "llm", "streaming"),
    ("prompt_table_extra_id", "UINT64", [1], OPT, "pre", "PROMPT_TABLE_EXTRA_ID"),
    ("embedding_bias_words", "STRING", [-1], OPT, "pre", "EMBEDDING_BIAS_WORDS"),
    ("embedding_bias_weights", "FP32", [-1], OPT, "pre", "EMBEDDING_BIAS_WEIGHTS"),
]
MULTIMODAL_OUTPUTS = [("text_output", "STRING", [-1]), *COMMON_OUTPUTS]
MM_PRE_INPUTS = [
    *PRE_INPUTS,
    ("IMAGE", "FP16", [-1, -1, -1, -1], OPT),
    ("IMAGE_BYTES", "UINT8", [-1, -1, -1, -1], OPT),
    ("IMAGE_URL", "STRING", [-1], OPT),
    ("IMAGE_SIZES", "INT64", [-1, 2], OPT),
    ("VIDEO_BYTES", "UINT8", [-1, -1, -1, -1], OPT),
]
# IMAGES_SCRIPT (the text naming the images, images.py) -> the stand-in generator's test-only input.
MM_PRE_OUTPUTS = [*PRE_OUTPUTS, ("IMAGES_SCRIPT", "STRING", [1])]
MM_TRTLLM_INPUTS = [*TRTLLM_INPUTS, ("fake_images_script", "STRING", [1], OPT)]

# --- tensorrt_llm_bls ----------------------------------------------------------------------------
BLS_INPUTS = [
    ("text_input", "STRING", [1], REQ),
    ("decoder_text_input", "STRING", [1], OPT),
    ("image_input", "FP16", [-1, 3, -1, -1], OPT),
    ("image_bytes_input", "UINT8", [-1, -1, -1, -1], OPT),
    ("image_url_input", "STRING", [1], OPT),
    ("video_bytes_input", "UINT8", [-1, -1, -1, -1], OPT),
    ("max_tokens", "INT32", [1], REQ),
    ("bad_words", "STRING", [-1], OPT),
    ("stop_words", "STRING", [-1], OPT),
    ("end_id", "INT32", [1], OPT),
    ("pad_id", "INT32", [1], OPT),
    ("top_k", "INT32", [1], OPT),
    ("top_p", "FP32", [1], OPT),
    ("temperature", "FP32", [1], OPT),
    ("length_penalty", "FP32", [1], OPT),
    ("repetition_penalty", "FP32", [1], OPT),
    ("min_tokens", "INT32", [1], OPT),
    ("presence_penalty", "FP32", [1], OPT),
    ("frequency_penalty", "FP32", [1], OPT),
    ("seed", "UINT64", [1], OPT),
    ("return_log_probs", "BOOL", [1], RESHAPE),
    ("return_context_logits", "BOOL", [1], RESHAPE),
    ("return_generation_logits", "BOOL", [1], RESHAPE),
    ("return_perf_metrics", "BOOL", [1], RESHAPE),
    ("return_num_input_tokens", "BOOL", [1], RESHAPE),
    ("return_num_output_tokens", "BOOL", [1], RESHAPE),
    ("num_return_sequences", "INT32", [1], RESHAPE),
    ("beam_width", "INT32", [1], OPT),
    ("stream", "BOOL", [1], OPT),
    ("exclude_input_in_output", "BOOL", [1], OPT),
    ("prompt_embedding_table", "FP16", [-1, -1], OPT),
    ("prompt_vocab_size", "INT32", [1], OPT),
    ("prompt_table_extra_id", "UINT64", [1], OPT),
    ("embedding_bias_words", "STRING", [-1], OPT),
    ("embedding_bias_weights", "FP32", [-1], OPT),
    ("num_draft_tokens", "INT32", [1], OPT),
    ("use_draft_logits", "BOOL", [1], RESHAPE),
    ("lora_task_id", "UINT64", [1], RESHAPE),
    ("lora_weights", "FP16", [-1, -1], OPT),
    ("lora_config", "INT32", [-1, 3], OPT),
    ("guided_decoding_guide_type", "STRING", [1], OPT),
    ("guided_decoding_guide", "STRING", [1], OPT),
]

# --- LLM-API flavor ------------------------------------------------------------------------------
LLMAPI_INPUTS = [
    ("text_input", "STRING", [-1], REQ),
    ("image_url", "STRING", [-1], OPT),
    ("streaming", "BOOL", [1], OPT),
    ("sampling_param_best_of", "INT32", [1], OPT),
    ("sampling_param_temperature", "FP32", [1], OPT),
    ("sampling_param_top_k", "INT32", [1], OPT),
    ("sampling_param_top_p", "FP32", [1], OPT),
    ("sampling_param_frequency_penalty", "FP32", [1], OPT),
    ("sampling_param_presence_penalty", "FP32", [1], OPT),
    ("sampling_param_max_tokens", "INT32", [1], OPT),
    ("sampling_param_stop", "STRING", [-1], OPT),
    ("sampling_param_seed", "UINT64", [1], OPT),
    ("sampling_param_exclude_input_from_output", "BOOL", [1], OPT),
    ("sampling_param_return_perf_metrics", "BOOL", [1], OPT),
    ("return_finish_reason", "BOOL", [1], OPT),
    ("return_stop_reason", "BOOL", [1], OPT),
    ("return_cumulative_logprob", "BOOL", [1], OPT),
    ("stop", "BOOL", [1], OPT),
    ("lora_id", "UINT64", [1], OPT),
    ("lora_name", "STRING", [1], OPT),
    ("lora_path", "STRING", [1], OPT),
    ("lora_ckpt_source", "STRING", [1], OPT),
]
LLMAPI_OUTPUTS = [
    ("text_output", "STRING", [-1]),
    ("finish_reason", "STRING", [-1]),
    ("stop_reason", "STRING", [-1]),
    ("cumulative_logprob", "FP32", [-1]),
    ("kv_cache_reused_block", "INT32", [-1]),
    ("kv_cache_missed_block", "INT32", [-1]),
    ("kv_cache_alloc_new_blocks", "INT32", [-1]),
    ("kv_cache_alloc_total_blocks", "INT32", [-1]),
    ("kv_cache_hit_rate", "FP32", [-1]),
    ("arrival_time_ns", "INT64", [1]),
    ("first_scheduled_time_ns", "INT64", [1]),
    ("first_token_time_ns", "INT64", [1]),
    ("last_token_time_ns", "INT64", [1]),
    ("acceptance_rate", "FP32", [1]),
    ("total_accepted_draft_tokens", "INT32", [1]),
    ("total_draft_tokens", "INT32", [1]),
]

# --- Triton's vLLM backend -----------------------------------------------------------------------
# Its auto_complete_config (triton-inference-server/vllm_backend src/model.py, 8de0c14), in its order:
# decoupled, max_batch_size 0 (no batch dimension).
VLLM_INPUTS = [
    ("text_input", "STRING", [1], REQ),
    ("image", "STRING", [-1], OPT),
    ("stream", "BOOL", [1], OPT),
    ("sampling_parameters", "STRING", [1], OPT),
    ("exclude_input_in_output", "BOOL", [1], OPT),
    ("return_finish_reason", "BOOL", [1], OPT),
    ("return_cumulative_logprob", "BOOL", [1], OPT),
    ("return_logprobs", "BOOL", [1], OPT),
    ("return_num_input_tokens", "BOOL", [1], OPT),
    ("return_num_output_tokens", "BOOL", [1], OPT),
    ("embedding_request", "STRING", [1], OPT),
]
VLLM_OUTPUTS = [
    ("text_output", "STRING", [-1]),
    ("finish_reason", "STRING", [-1]),
    ("cumulative_logprob", "FP32", [-1]),
    ("logprobs", "STRING", [-1]),
    ("num_input_tokens", "UINT32", [1]),
    ("num_output_tokens", "UINT32", [-1]),
]

HEADER = "# Generated by test/triton/gen_configs.py: edit the tables there, not this file.\n"


def _dims(dims) -> str:
    return "[ " + ", ".join(str(d) for d in dims) + " ]"


def _tensor(name, dtype, dims, flag=None) -> str:
    lines = [f'    name: "{name}"', f"    data_type: TYPE_{dtype}", f"    dims: {_dims(dims)}"]
    if flag in (OPT, RESHAPE):
        lines.append("    optional: true")
    if flag in (RESHAPE, "req-reshape"):
        lines.append("    reshape: { shape: [ ] }")
    return "  {\n" + "\n".join(lines) + "\n  }"


def _tensors(kind, rows) -> str:
    return f"{kind} [\n" + ",\n".join(_tensor(*row) for row in rows) + "\n]\n"


def _parameters(params: dict) -> str:
    return "".join(
        f'parameters {{\n  key: "{k}"\n  value: {{ string_value: "{v}" }}\n}}\n' for k, v in params.items()
    )


def python_config(name, inputs, outputs, *, decoupled=False, params=None, max_batch_size=MAX_BATCH_SIZE) -> str:
    text = HEADER + f'name: "{name}"\nbackend: "python"\nmax_batch_size: {max_batch_size}\n'
    if decoupled:
        text += "model_transaction_policy {\n  decoupled: true\n}\n"
    text += _tensors("input", inputs) + _tensors("output", outputs)
    text += _parameters(params or {})
    return text + "instance_group [\n  {\n    count: 1\n    kind: KIND_CPU\n  }\n]\n"


def _map(kind, key, value) -> str:
    return f'      {kind} {{\n        key: "{key}"\n        value: "{value}"\n      }}\n'


def ensemble_config(name, llm_model) -> str:
    text = HEADER + f'name: "{name}"\nplatform: "ensemble"\nmax_batch_size: {MAX_BATCH_SIZE}\n'
    text += _tensors("input", [row[:4] for row in ENSEMBLE_INPUTS])
    text += _tensors("output", TEXT_OUTPUTS)
    pre = "".join(_map("input_map", step_in, name_) for name_, _, _, _, step, step_in in ENSEMBLE_INPUTS if step == "pre")
    pre += "".join(_map("output_map", out, "_" + out) for out, _ in PRE_TO_LLM)
    llm = "".join(_map("input_map", llm_in, "_" + out) for out, llm_in in PRE_TO_LLM)
    llm += "".join(_map("input_map", step_in, name_) for name_, _, _, _, step, step_in in ENSEMBLE_INPUTS if step == "llm")
    llm += _map("output_map", "output_ids", "_TOKENS_BATCH") + _map("output_map", "sequence_length", "_SEQUENCE_LENGTH")
    llm += "".join(_map("output_map", out, out) for out, _, _ in TEXT_OUTPUTS if out != "text_output")
    post = _map("input_map", "TOKENS_BATCH", "_TOKENS_BATCH") + _map("input_map", "SEQUENCE_LENGTH", "_SEQUENCE_LENGTH")
    post += _map("output_map", "OUTPUT", "text_output")
    steps = [("preprocessing", pre), (llm_model, llm), ("postprocessing", post)]
    body = ",\n".join(f'    {{\n      model_name: "{m}"\n      model_version: -1\n{maps}    }}' for m, maps in steps)
    return text + "ensemble_scheduling {\n  step [\n" + body + "\n  ]\n}\n"


def multimodal_config(name, pre_model, llm_model) -> str:
    text = HEADER + f'name: "{name}"\nplatform: "ensemble"\nmax_batch_size: {MAX_BATCH_SIZE}\n'
    text += _tensors("input", [row[:4] for row in MULTIMODAL_INPUTS])
    text += _tensors("output", MULTIMODAL_OUTPUTS)
    pre = "".join(_map("input_map", step_in, n) for n, _, _, _, step, step_in in MULTIMODAL_INPUTS if step == "pre")
    pre += "".join(_map("output_map", out, "_" + out) for out, _ in PRE_TO_LLM)
    pre += _map("output_map", "IMAGES_SCRIPT", "_IMAGES_SCRIPT")
    llm = "".join(_map("input_map", llm_in, "_" + out) for out, llm_in in PRE_TO_LLM)
    llm += _map("input_map", "fake_images_script", "_IMAGES_SCRIPT")
    llm += "".join(_map("input_map", step_in, n) for n, _, _, _, step, step_in in MULTIMODAL_INPUTS if step == "llm")
    llm += _map("output_map", "output_ids", "_TOKENS_BATCH") + _map("output_map", "sequence_length", "_SEQUENCE_LENGTH")
    llm += "".join(_map("output_map", out, out) for out, _, _ in MULTIMODAL_OUTPUTS if out != "text_output")
    post = _map("input_map", "TOKENS_BATCH", "_TOKENS_BATCH") + _map("input_map", "SEQUENCE_LENGTH", "_SEQUENCE_LENGTH")
    post += _map("output_map", "OUTPUT", "text_output")
    steps = [(pre_model, pre), (llm_model, llm), ("postprocessing", post)]
    body = ",\n".join(f'    {{\n      model_name: "{m}"\n      model_version: -1\n{maps}    }}' for m, maps in steps)
    return text + "ensemble_scheduling {\n  step [\n" + body + "\n  ]\n}\n"


def model_py(module: str, cls: str = "TritonPythonModel") -> str:
    alias = "" if cls == "TritonPythonModel" else f" as TritonPythonModel"
    return (
        "# Generated by test/triton/gen_configs.py. The code lives in test/triton/fakegen/.\n"
        "import sys\n"
        "from pathlib import Path\n\n"
        "sys.path.insert(0, str(Path(__file__).resolve().parents[3]))\n\n"
        f"from fakegen.{module} import {cls}{alias}  # noqa: E402,F401\n"
    )


def main() -> None:
    timing = {"ttft_ms": "5", "itl_ms": "5"}
    python_models = {
        "preprocessing": (python_config("preprocessing", PRE_INPUTS, PRE_OUTPUTS), ("tokenizer_models", "Preprocessing")),
        "postprocessing": (
            python_config("postprocessing", POST_INPUTS, POST_OUTPUTS, params={"skip_special_tokens": "true"}),
            ("tokenizer_models", "Postprocessing"),
        ),
        "tensorrt_llm": (
            python_config("tensorrt_llm", TRTLLM_INPUTS, TRTLLM_OUTPUTS, decoupled=True, params=timing),
            ("raw_model", "TritonPythonModel"),
        ),
        "tensorrt_llm_unary": (
            python_config("tensorrt_llm_unary", TRTLLM_INPUTS, TRTLLM_OUTPUTS, params=timing),
            ("raw_model", "TritonPythonModel"),
        ),
        "tensorrt_llm_bls": (
            python_config(
                "tensorrt_llm_bls", BLS_INPUTS, TEXT_OUTPUTS, decoupled=True,
                params={"accumulate_tokens": "true", "tensorrt_llm_model_name": "tensorrt_llm"},
            ),
            ("bls_model", "TritonPythonModel"),
        ),
        "tensorrt_llm_bls_per_token": (
            python_config(
                "tensorrt_llm_bls_per_token", BLS_INPUTS, TEXT_OUTPUTS, decoupled=True,
                params={"accumulate_tokens": "false", "tensorrt_llm_model_name": "tensorrt_llm"},
            ),
            ("bls_model", "TritonPythonModel"),
        ),
        # Shaped like the official BLS (fresh inner request id, every inner response decoded, flags-only final).
        "tensorrt_llm_bls_official": (
            python_config(
                "tensorrt_llm_bls_official", BLS_INPUTS, TEXT_OUTPUTS, decoupled=True,
                params={"accumulate_tokens": "true", "tensorrt_llm_model_name": "tensorrt_llm"},
            ),
            ("official_bls_model", "TritonPythonModel"),
        ),
        "llmapi": (
            python_config("llmapi", LLMAPI_INPUTS, LLMAPI_OUTPUTS, decoupled=True, params=timing),
            ("llmapi_model", "TritonPythonModel"),
        ),
        # The steps of the multimodal ensemble.
        "multimodal_preprocessing": (
            python_config("multimodal_preprocessing", MM_PRE_INPUTS, MM_PRE_OUTPUTS),
            ("multimodal_models", "MultimodalPreprocessing"),
        ),
        "tensorrt_llm_multimodal": (
            python_config("tensorrt_llm_multimodal", MM_TRTLLM_INPUTS, TRTLLM_OUTPUTS, decoupled=True, params=timing),
            ("raw_model", "TritonPythonModel"),
        ),
        "vllm": (
            python_config("vllm", VLLM_INPUTS, VLLM_OUTPUTS, decoupled=True, params=timing, max_batch_size=0),
            ("vllm_model", "TritonPythonModel"),
        ),
    }
    for name, (config, (module, cls)) in python_models.items():
        (MODELS / name / "1").mkdir(parents=True, exist_ok=True)
        (MODELS / name / "config.pbtxt").write_text(config)
        (MODELS / name / "1" / "model.py").write_text(model_py(module, cls))
    for name, llm in (("ensemble", "tensorrt_llm"), ("ensemble_unary", "tensorrt_llm_unary")):
        (MODELS / name / "1").mkdir(parents=True, exist_ok=True)
        (MODELS / name / "config.pbtxt").write_text(ensemble_config(name, llm))
        # An ensemble needs an (empty) version directory; the file keeps it in git.
        (MODELS / name / "1" / ".gitkeep").write_text("")
    (MODELS / "multimodal" / "1").mkdir(parents=True, exist_ok=True)
    (MODELS / "multimodal" / "config.pbtxt").write_text(
        multimodal_config("multimodal", "multimodal_preprocessing", "tensorrt_llm_multimodal")
    )
    (MODELS / "multimodal" / "1" / ".gitkeep").write_text("")
    print(f"wrote {len(python_models) + 3} models under {MODELS}")


if __name__ == "__main__":
    main()
