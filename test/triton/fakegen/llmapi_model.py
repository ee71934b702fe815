"""The LLM-API flavor (`all_models/llmapi/tensorrt_llm`): text in, text out, with finish and stop reasons.

Runs the generator on the fake vocabulary. As in the official model, `text_output` is the whole text so
far (LLM-API `output.text`), and an unset reason is sent as the string "None" (`str(None)`).
"""

import traceback

import numpy as np
import triton_python_backend_utils as pb_utils

from . import triton_io as io
from .events import log_event
from .generator import GenerationError, GenParams, Sequence, log_prob
from .hooks import parse_fake_script, script_parameter
from .images import images_script
from .jobs import Job, Registry, Workers, start_job
from .vocab import END_ID, decode, encode

FINAL = pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL
DEFAULT_MAX_TOKENS = 32  # tensorrt_llm.SamplingParams.max_tokens default


class LlmApiRequest:
    def __init__(self, model, request):
        io.required(request, "text_input")
        size = io.batch_size(request, model.model_name)
        if size > 1:
            raise io.batch_refusal(size)
        texts = io.strings(request, "text_input")
        if len(texts) != 1:
            raise io.InvalidArgument(f"text_input must hold exactly one prompt, got {len(texts)}")
        self.input_ids = encode(texts[0])
        self.streaming = bool(io.scalar(request, "streaming", False))
        if self.streaming and not model.decoupled:
            raise io.InvalidArgument("Streaming is only supported in decoupled mode.")
        max_tokens = io.scalar(request, "sampling_param_max_tokens", DEFAULT_MAX_TOKENS)
        if max_tokens < 0:
            raise io.InvalidArgument(f"sampling_param_max_tokens must be >= 0, got {max_tokens}")
        self.stop_strings = [s for s in io.strings(request, "sampling_param_stop") if s]
        self.params = GenParams(
            input_ids=self.input_ids,
            max_tokens=int(max_tokens),
            end_id=END_ID,
            seed=int(io.scalar(request, "sampling_param_seed", 0)),
            stop_words=[encode(s) for s in self.stop_strings],
            script=_script(request, texts[0]),
        )
        self.exclude_input = bool(io.scalar(request, "sampling_param_exclude_input_from_output", False))
        self.return_finish_reason = bool(io.scalar(request, "return_finish_reason", False))
        self.return_stop_reason = bool(io.scalar(request, "return_stop_reason", False))
        self.return_cumulative_logprob = bool(io.scalar(request, "return_cumulative_logprob", False))


class TritonPythonModel:
    def initialize(self, args):
        self.config = io.model_config_of(args)
        self.model_name = args["model_name"]
        self.decoupled = pb_utils.using_decoupled_model_transaction_policy(self.config)
        self.ttft_s = float(io.parameter(self.config, "ttft_ms", "5")) / 1000
        self.itl_s = float(io.parameter(self.config, "itl_ms", "5")) / 1000
        self.registry = Registry()
        self.workers = Workers()

    def finalize(self):
        self.workers.stop_all()

    def execute(self, requests):
        for request in requests:
            sender = request.get_response_sender()
            try:
                is_stop = bool(io.scalar(request, "stop", False))
            except io.InvalidArgument as e:
                sender.send(io.error(str(e)), flags=FINAL)
                continue
            if is_stop:
                self.registry.stop(request.request_id())
                sender.send(flags=FINAL)
                continue
            start_job(
                self.model_name, self.registry, self.workers, request, sender,
                lambda r: LlmApiRequest(self, r), self._run,
            )
        return None

    def _run(self, job: Job, req: LlmApiRequest, sender):
        seq = Sequence(req.params, 0)
        try:
            first = True
            while not seq.done:
                interrupted = job.wait(self.ttft_s if first else self.itl_s)
                if interrupted:
                    seq.finish = interrupted
                    break
                first = False
                if seq.step() is not None and req.streaming:
                    sender.send(self._response(req, seq, final=False))
            event = {"cancelled": "cancelled", "stopped": "stopped"}.get(seq.finish, "completed")
            log_event(self.model_name, job.request_id, event, len(seq.tokens))
            if event == "cancelled":
                sender.send(io.cancelled_response(), flags=FINAL)
            else:
                sender.send(self._response(req, seq, final=True), flags=FINAL)
        except Exception as e:  # noqa: BLE001 - every failure must reach the client as an error response
            log_event(self.model_name, job.request_id, "error", len(seq.tokens))
            traceback.print_exc()
            code = pb_utils.TritonError.INVALID_ARG if isinstance(e, GenerationError) else pb_utils.TritonError.INTERNAL
            sender.send(io.error(str(e), code), flags=FINAL)
        finally:
            self.registry.remove(job)

    def _response(self, req: LlmApiRequest, seq: Sequence, final: bool):
        ids = seq.tokens if req.streaming or req.exclude_input else req.input_ids + seq.tokens
        tensors = [pb_utils.Tensor("text_output", np.asarray([[decode(ids).encode("utf-8")]], dtype=np.object_))]
        if req.return_finish_reason:
            reason = seq.finish if final else None
            tensors.append(pb_utils.Tensor("finish_reason", _string(str(reason))))
        if req.return_stop_reason:
            matched = req.stop_strings[seq.stop_word] if final and seq.stop_word is not None else b"None"
            tensors.append(pb_utils.Tensor("stop_reason", _string(matched)))
        if req.return_cumulative_logprob:
            cum = sum(log_prob(t) for t in seq.tokens)
            tensors.append(pb_utils.Tensor("cumulative_logprob", np.asarray([[cum]], dtype=np.float32)))
        return pb_utils.InferenceResponse(output_tensors=tensors)


def _script(request, prompt: bytes):
    """The `fake_script` parameter, else the prompt's marker, else the text naming the `image_url` images
    (the LLM-API model has no guided decoding)."""
    scripted = script_parameter(request)
    if scripted is not None:
        return scripted
    scripted = parse_fake_script(prompt.decode("utf-8", errors="replace"))
    if scripted is not None:
        return scripted
    # The LLM API loads `data:` URIs of any image type itself (no preprocessing model in between).
    return images_script(io.strings(request, "image_url"), via_preprocessing=False)


def _string(value) -> np.ndarray:
    data = value if isinstance(value, bytes) else value.encode("utf-8")
    return np.asarray([[data]], dtype=np.object_)
