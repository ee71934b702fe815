"""`tensorrt_llm_bls`: text in, text out, by calling preprocessing -> tensorrt_llm -> postprocessing.

Like the official BLS it does not pass cancellation on: a cancelled outer request stops getting
responses, but the inner `tensorrt_llm` request (which carries the outer request id) runs to its end.
Parameter `accumulate_tokens`: true sends all text so far in every streamed response.
"""

import json
import traceback

import numpy as np
import triton_python_backend_utils as pb_utils

from . import triton_io as io
from .images import images_script
from .jobs import Workers
from .script import parse_fake_script

FINAL = pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL

# BLS input -> preprocessing input
PRE_INPUTS = {
    "text_input": "QUERY",
    "max_tokens": "REQUEST_OUTPUT_LEN",
    "bad_words": "BAD_WORDS_DICT",
    "stop_words": "STOP_WORDS_DICT",
    "end_id": "END_ID",
    "pad_id": "PAD_ID",
}
# preprocessing output -> tensorrt_llm input
PRE_OUTPUTS = {
    "INPUT_ID": "input_ids",
    "REQUEST_INPUT_LEN": "input_lengths",
    "REQUEST_OUTPUT_LEN": "request_output_len",
    "BAD_WORDS_IDS": "bad_words_list",
    "STOP_WORDS_IDS": "stop_words_list",
    "OUT_END_ID": "end_id",
    "OUT_PAD_ID": "pad_id",
}
# BLS input -> tensorrt_llm input, passed as given
LLM_INPUTS = {
    "stream": "streaming",
    "beam_width": "beam_width",
    "num_return_sequences": "num_return_sequences",
    "min_tokens": "min_tokens",
    "seed": "seed",
    "exclude_input_in_output": "exclude_input_in_output",
    "return_log_probs": "return_log_probs",
    "return_context_logits": "return_context_logits",
    "return_generation_logits": "return_generation_logits",
    "return_perf_metrics": "return_perf_metrics",
    "return_num_input_tokens": "return_num_input_tokens",
    "return_num_output_tokens": "return_num_output_tokens",
    "temperature": "temperature",
    "top_k": "runtime_top_k",
    "top_p": "runtime_top_p",
    "length_penalty": "len_penalty",
    "repetition_penalty": "repetition_penalty",
    "presence_penalty": "presence_penalty",
    "frequency_penalty": "frequency_penalty",
    "guided_decoding_guide_type": "guided_decoding_guide_type",
    "guided_decoding_guide": "guided_decoding_guide",
}
# tensorrt_llm outputs that become the BLS's own outputs unchanged
PASSTHROUGH = (
    "cum_log_probs", "output_log_probs", "context_logits", "generation_logits", "batch_index", "sequence_index",
    "kv_cache_alloc_new_blocks", "kv_cache_reused_blocks", "kv_cache_alloc_total_blocks", "arrival_time_ns",
    "first_scheduled_time_ns", "first_token_time_ns", "last_token_time_ns", "acceptance_rate",
    "total_accepted_draft_tokens", "total_draft_tokens", "num_input_tokens", "num_output_tokens",
)


def _forwarded_parameters(request) -> dict:
    """The request parameters a BLS request can carry (the backend takes bool, int and str values)."""
    params = json.loads(request.parameters() or "{}")
    return {k: v for k, v in params.items() if isinstance(v, (bool, int, str))}


def _with_images_script(request, params: dict) -> dict:
    """`params`, with the text naming the `image_url_input` image as `fake_script` when neither the
    parameter nor the prompt's marker scripts the reply (the order of hooks.script_of). The image goes
    through preprocessing, whose `data:` rule applies (images.py)."""
    if "fake_script" in params:
        return params
    prompt = b"".join(io.strings(request, "text_input")[:1]).decode("utf-8", errors="replace")
    if parse_fake_script(prompt) is not None:
        return params
    script = images_script(io.strings(request, "image_url_input"), via_preprocessing=True)
    return params if script is None else {**params, "fake_script": script}


class InnerError(Exception):
    def __init__(self, error):
        super().__init__(error.message())
        self.error = error


def _check(response):
    if response.has_error():
        raise InnerError(response.error())
    return response


class TritonPythonModel:
    def initialize(self, args):
        self.config = io.model_config_of(args)
        self.model_name = args["model_name"]
        self.accumulate = io.bool_parameter(self.config, "accumulate_tokens", False)
        # As NVIDIA's BLS reads it: "tensorrt_llm" only without the parameter; a value is taken as it
        # is, even a template placeholder left unfilled (its requests then fail on that name).
        entry = self.config.get("parameters", {}).get("tensorrt_llm_model_name")
        self.llm_model = "tensorrt_llm" if entry is None else entry.get("string_value", "")
        self.workers = Workers()

    def finalize(self):
        self.workers.stop_all()

    def execute(self, requests):
        for request in requests:
            self.workers.start(self._run, request, request.get_response_sender())
        return None

    def _run(self, request, sender):
        cancelled = False
        try:
            inner_request = self._inner_request(request, request.request_id())
            # Accumulating only makes sense for one token per response (streaming).
            accumulated = {} if self.accumulate and bool(io.scalar(request, "stream", False)) else None
            for response in inner_request.exec(decoupled=True):
                _check(response)
                if not response.output_tensors():
                    continue  # the inner request's empty final response
                # The outer request's cancellation is not passed on; it only stops the sending.
                cancelled = cancelled or request.is_cancelled()
                if not cancelled:
                    sender.send(self._text_response(response, accumulated))
            if cancelled:
                sender.send(io.cancelled_response(), flags=FINAL)
            else:
                sender.send(flags=FINAL)
        except InnerError as e:
            sender.send(pb_utils.InferenceResponse(error=e.error), flags=FINAL)
        except io.InvalidArgument as e:
            sender.send(io.error(str(e)), flags=FINAL)
        except Exception as e:  # noqa: BLE001 - every failure must reach the client as an error response
            traceback.print_exc()
            sender.send(io.error(str(e), pb_utils.TritonError.INTERNAL), flags=FINAL)

    def _inner_request(self, request, request_id):
        """The `tensorrt_llm` request for a BLS request, under `request_id`, after preprocessing."""
        size = io.batch_size(request, self.model_name)
        if size > 1:
            raise io.batch_refusal(size)
        pre = self._preprocess(request)
        llm_inputs = [pb_utils.Tensor(PRE_OUTPUTS[name], pre[name]) for name in PRE_OUTPUTS]
        for name, inner in LLM_INPUTS.items():
            value = io.tensor(request, name)
            if value is not None:
                # Inputs the BLS config reshapes to [] arrive as [batch]; tensorrt_llm wants [batch, 1].
                llm_inputs.append(pb_utils.Tensor(inner, value.reshape(-1, 1)))
        return pb_utils.InferenceRequest(
            model_name=self.llm_model,
            inputs=llm_inputs,
            requested_output_names=["output_ids", "sequence_length", *PASSTHROUGH],
            request_id=request_id,
            # As the ensemble does (Triton core forwards them): `fake_script` reaches the generator.
            parameters=_with_images_script(request, _forwarded_parameters(request)),
        )

    def _preprocess(self, request) -> dict:
        inputs = []
        for name, inner in PRE_INPUTS.items():
            value = io.tensor(request, name)
            if value is not None:
                inputs.append(pb_utils.Tensor(inner, value))
        response = _check(
            pb_utils.InferenceRequest(
                model_name="preprocessing", inputs=inputs, requested_output_names=list(PRE_OUTPUTS)
            ).exec()
        )
        return {name: pb_utils.get_output_tensor_by_name(response, name).as_numpy() for name in PRE_OUTPUTS}

    def _text_response(self, response, accumulated):
        tokens = pb_utils.get_output_tensor_by_name(response, "output_ids").as_numpy()
        lengths = pb_utils.get_output_tensor_by_name(response, "sequence_length").as_numpy()
        if accumulated is not None:
            index_tensor = pb_utils.get_output_tensor_by_name(response, "sequence_index")
            k = int(index_tensor.as_numpy().reshape(-1)[0]) if index_tensor is not None else 0
            ids = accumulated.setdefault(k, [])
            ids.extend(tokens[0, 0, : int(lengths.reshape(-1)[0])].tolist())
            tokens = np.asarray([[ids]], dtype=np.int32).reshape(1, 1, len(ids))
            lengths = np.asarray([[len(ids)]], dtype=np.int32)
        text = self._postprocess(tokens, lengths)
        tensors = [pb_utils.Tensor("text_output", text)]
        for name in PASSTHROUGH:
            t = pb_utils.get_output_tensor_by_name(response, name)
            if t is not None:
                tensors.append(pb_utils.Tensor(name, t.as_numpy()))
        return pb_utils.InferenceResponse(output_tensors=tensors)

    def _postprocess(self, tokens, lengths):
        response = _check(
            pb_utils.InferenceRequest(
                model_name="postprocessing",
                inputs=[
                    pb_utils.Tensor("TOKENS_BATCH", tokens.astype(np.int32)),
                    pb_utils.Tensor("SEQUENCE_LENGTH", lengths.astype(np.int32)),
                ],
                requested_output_names=["OUTPUT"],
            ).exec()
        )
        return pb_utils.get_output_tensor_by_name(response, "OUTPUT").as_numpy()
