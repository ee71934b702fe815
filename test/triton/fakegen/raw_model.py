"""The stand-in for the C++ `tensorrt_llm` model: token ids in, token ids out, driven by the generator.

Served twice: `tensorrt_llm` (decoupled) and `tensorrt_llm_unary` (not decoupled, one response). Both use
the response sender and return None from execute(), so requests run concurrently on one instance.
"""

import time
import traceback

import numpy as np
import triton_python_backend_utils as pb_utils

from . import triton_io as io
from .events import log_event
from .generator import GenerationError, GenParams, Sequence, log_prob
from .jobs import Job, Registry, Workers
from .vocab import END_ID
from .word_lists import from_word_list

FINAL = pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL
STREAMING_NEEDS_DECOUPLED = "Streaming is only supported if model is deployed using decoupled mode."


class RawRequest:
    """A parsed generator request."""

    def __init__(self, model, request):
        ids = io.tensor(request, "input_ids")
        if ids is None:
            raise io.InvalidArgument("input 'input_ids' is required unless 'stop' is true")
        if ids.ndim != 2 or ids.shape[0] != 1:
            raise io.InvalidArgument(f"only batch size 1 is supported; 'input_ids' has shape {list(ids.shape)}")
        ids = ids[0].astype(np.int64).tolist()
        length = io.required_scalar(request, "input_lengths")
        if not 0 <= length <= len(ids):
            raise io.InvalidArgument(f"input_lengths {length} is outside 0..{len(ids)} (the input_ids given)")
        self.input_ids = ids[:length]
        max_tokens = io.required_scalar(request, "request_output_len")
        if max_tokens < 0:
            raise io.InvalidArgument(f"request_output_len must be >= 0, got {max_tokens}")
        self.streaming = bool(io.scalar(request, "streaming", False))
        if self.streaming and not model.decoupled:
            raise io.InvalidArgument(STREAMING_NEEDS_DECOUPLED)
        self.beam_width = io.scalar(request, "beam_width", 1)
        if self.beam_width < 1:
            raise io.InvalidArgument(f"beam_width must be >= 1, got {self.beam_width}")
        if self.beam_width > 1 and self.streaming:
            raise io.InvalidArgument(f"beam_width {self.beam_width} > 1 is not supported with streaming")
        self.num_return_sequences = io.scalar(request, "num_return_sequences", 1)
        if self.num_return_sequences < 1:
            raise io.InvalidArgument(f"num_return_sequences must be >= 1, got {self.num_return_sequences}")
        try:
            stop_words = self._words(request, "stop_words_list")
            bad_words = self._words(request, "bad_words_list")
        except ValueError as e:
            raise io.InvalidArgument(str(e)) from e
        self.params = GenParams(
            input_ids=self.input_ids,
            max_tokens=int(max_tokens),
            end_id=int(io.scalar(request, "end_id", END_ID)),
            min_tokens=int(io.scalar(request, "min_tokens", 0)),
            seed=int(io.scalar(request, "seed", 0)),
            stop_words=stop_words,
            bad_words=bad_words,
        )
        self.exclude_input = bool(io.scalar(request, "exclude_input_in_output", model.exclude_input_default))
        self.return_log_probs = bool(io.scalar(request, "return_log_probs", False))
        self.return_perf_metrics = bool(io.scalar(request, "return_perf_metrics", False))
        self.return_num_input_tokens = bool(io.scalar(request, "return_num_input_tokens", False))
        self.return_num_output_tokens = bool(io.scalar(request, "return_num_output_tokens", False))

    @staticmethod
    def _words(request, name):
        value = io.tensor(request, name)
        if value is None or value.size == 0:
            return []
        if value.ndim != 3 or value.shape[0] != 1:
            raise ValueError(f"'{name}' must have shape [1, 2, N], got {list(value.shape)}")
        return from_word_list(value[0])

    @property
    def sequence_count(self) -> int:
        return self.beam_width if self.beam_width > 1 else self.num_return_sequences


class TritonPythonModel:
    def initialize(self, args):
        self.config = io.model_config_of(args)
        self.model_name = args["model_name"]
        self.decoupled = pb_utils.using_decoupled_model_transaction_policy(self.config)
        self.ttft_s = float(io.parameter(self.config, "ttft_ms", "5")) / 1000
        self.itl_s = float(io.parameter(self.config, "itl_ms", "5")) / 1000
        self.exclude_input_default = io.bool_parameter(self.config, "exclude_input_in_output", False)
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
                self._answer_stop(request, sender)
                continue
            job = Job(request, self.workers.shutdown)
            log_event(self.model_name, job.request_id, "received", 0)
            try:
                parsed = RawRequest(self, request)
            except (io.InvalidArgument, GenerationError) as e:
                log_event(self.model_name, job.request_id, "error", 0)
                sender.send(io.error(str(e)), flags=FINAL)
                continue
            self.registry.add(job)
            self.workers.start(self._run, job, parsed, sender)
        return None

    def _answer_stop(self, request, sender):
        self.registry.stop(request.request_id())
        if self.decoupled:
            sender.send(flags=FINAL)
        else:
            sender.send(pb_utils.InferenceResponse(output_tensors=[]), flags=FINAL)

    def _run(self, job: Job, req: RawRequest, sender):
        timing = {"arrival": time.time_ns(), "first": 0, "last": 0}
        seqs = [Sequence(req.params, k) for k in range(req.sequence_count)]
        try:
            first = True
            while True:
                active = [s for s in seqs if not s.done]
                if not active:
                    break
                interrupted = job.wait(self.ttft_s if first else self.itl_s)
                if interrupted:
                    for s in active:
                        s.finish = interrupted
                    break
                first = False
                for s in active:
                    tok = s.step()
                    if tok is None:
                        continue
                    timing["last"] = time.time_ns()
                    timing["first"] = timing["first"] or timing["last"]
                    if req.streaming:
                        sender.send(self._token_response(req, s, tok, timing))
            self._finish(job, req, seqs, sender, timing)
        except Exception as e:  # noqa: BLE001 - every failure must reach the client as an error response
            log_event(self.model_name, job.request_id, "error", sum(len(s.tokens) for s in seqs))
            traceback.print_exc()
            bad_request = isinstance(e, GenerationError)
            code = pb_utils.TritonError.INVALID_ARG if bad_request else pb_utils.TritonError.INTERNAL
            sender.send(io.error(str(e), code), flags=FINAL)
        finally:
            self.registry.remove(job)

    def _finish(self, job, req, seqs, sender, timing):
        tokens = sum(len(s.tokens) for s in seqs)
        reasons = {s.finish for s in seqs}
        event = "cancelled" if "cancelled" in reasons else "stopped" if "stopped" in reasons else "completed"
        # Logged before the final response goes out, so a client that saw the end finds the event.
        log_event(self.model_name, job.request_id, event, tokens)
        if event == "cancelled":
            sender.send(io.cancelled_response(), flags=FINAL)
            return
        if req.streaming:
            sender.send(flags=FINAL)
            return
        if req.beam_width > 1 or not self.decoupled:
            groups = [seqs]
        else:
            groups = [[s] for s in seqs]
        if not self.decoupled:
            sender.send(self._full_response(req, groups[0], timing), flags=FINAL)
            return
        for group in groups:
            sender.send(self._full_response(req, group, timing))
        sender.send(flags=FINAL)

    def _token_response(self, req, seq, tok, timing):
        lp = log_prob(tok) if req.return_log_probs else 0.0
        cum = sum(log_prob(t) for t in seq.tokens) if req.return_log_probs else 0.0
        tensors = {
            "output_ids": io.int32([tok], (1, 1, 1)),
            "sequence_length": io.int32([1], (1, 1)),
            "cum_log_probs": np.asarray([[cum]], dtype=np.float32),
            "output_log_probs": np.asarray([[[lp]]], dtype=np.float32),
            "sequence_index": io.int32([seq.k], (1, 1)),
        }
        return self._response(req, tensors, len(seq.tokens), timing)

    def _full_response(self, req, seqs, timing):
        prefix = [] if req.exclude_input else list(req.input_ids)
        rows = [prefix + s.tokens for s in seqs]
        width = max(len(r) for r in rows)
        gen_width = max(len(s.tokens) for s in seqs)
        out = np.full((1, len(seqs), width), req.params.end_id, dtype=np.int32)
        lps = np.zeros((1, len(seqs), gen_width), dtype=np.float32)
        cums = np.zeros((1, len(seqs)), dtype=np.float32)
        for i, (row, s) in enumerate(zip(rows, seqs)):
            out[0, i, : len(row)] = row
            if req.return_log_probs:
                lps[0, i, : len(s.tokens)] = [log_prob(t) for t in s.tokens]
                cums[0, i] = sum(log_prob(t) for t in s.tokens)
        tensors = {
            "output_ids": out,
            "sequence_length": io.int32([len(r) for r in rows], (1, len(rows))),
            "cum_log_probs": cums,
            "output_log_probs": lps,
            "sequence_index": io.int32([seqs[0].k if len(seqs) == 1 else 0], (1, 1)),
        }
        return self._response(req, tensors, max(len(s.tokens) for s in seqs), timing)

    def _response(self, req, tensors, output_tokens, timing):
        tensors["context_logits"] = np.zeros((1, 1, 1), dtype=np.float32)
        tensors["generation_logits"] = np.zeros((1, 1, 1, 1), dtype=np.float32)
        tensors["batch_index"] = io.int32([0], (1, 1))
        if req.return_perf_metrics:
            for name in ("kv_cache_alloc_new_blocks", "kv_cache_reused_blocks", "kv_cache_alloc_total_blocks"):
                tensors[name] = io.int32([0], (1, 1))
            for name, key in (
                ("arrival_time_ns", "arrival"),
                ("first_scheduled_time_ns", "arrival"),
                ("first_token_time_ns", "first"),
                ("last_token_time_ns", "last"),
            ):
                tensors[name] = np.asarray([[timing[key]]], dtype=np.int64)
            tensors["acceptance_rate"] = np.zeros((1, 1), dtype=np.float32)
            tensors["total_accepted_draft_tokens"] = io.int32([0], (1, 1))
            tensors["total_draft_tokens"] = io.int32([0], (1, 1))
        if req.return_num_input_tokens:
            tensors["num_input_tokens"] = io.int32([len(req.input_ids)], (1, 1))
        if req.return_num_output_tokens:
            tensors["num_output_tokens"] = io.int32([output_tokens], (1, 1))
        return pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor(k, v) for k, v in tensors.items()])
