"""The stand-in for the C++ `tensorrt_llm` model: token ids in, token ids out, driven by the generator.

Served twice: `tensorrt_llm` (decoupled) and `tensorrt_llm_unary` (not decoupled, one response). Both use
the response sender and return None from execute(), so requests run concurrently on one instance. Only the
non-decoupled one takes a batch (N > 1): its items generate side by side and share one stacked response.
"""

import time
import traceback

import numpy as np
import triton_python_backend_utils as pb_utils

from . import triton_io as io
from .events import log_event
from .generator import GenerationError, GenParams, Sequence, log_prob
from .hooks import script_of, script_parameter
from .jobs import PB_LOCK, Job, Registry, Workers, start_job
from .vocab import END_ID, decode
from .word_lists import from_word_list

FINAL = pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL
STREAMING_NEEDS_DECOUPLED = "Streaming is only supported if model is deployed using decoupled mode."


class RawRequest:
    """One parsed batch item: row b of every input, generated as a request of its own."""

    def __init__(self, model, row: io.Row, script_param=None):
        ids = row.tensor("input_ids")
        if ids.ndim != 1:
            raise io.InvalidArgument(f"'input_ids' must have shape [batch, length], got rows of {list(ids.shape)}")
        ids = ids.astype(np.int64).tolist()
        # A row of a batch holds input_lengths real ids, then padding up to the longest row.
        length = row.required_scalar("input_lengths")
        if not 0 <= length <= len(ids):
            raise io.InvalidArgument(f"input_lengths {length} is outside 0..{len(ids)} (the input_ids given)")
        self.input_ids = ids[:length]
        max_tokens = row.required_scalar("request_output_len")
        if max_tokens < 0:
            raise io.InvalidArgument(f"request_output_len must be >= 0, got {max_tokens}")
        self.streaming = row.flag("streaming", False)
        if self.streaming and not model.decoupled:
            raise io.InvalidArgument(STREAMING_NEEDS_DECOUPLED)
        self.beam_width = row.scalar("beam_width", 1)
        if self.beam_width < 1:
            raise io.InvalidArgument(f"beam_width must be >= 1, got {self.beam_width}")
        if self.beam_width > 1 and self.streaming:
            raise io.InvalidArgument(f"beam_width {self.beam_width} > 1 is not supported with streaming")
        self.num_return_sequences = row.scalar("num_return_sequences", 1)
        if self.num_return_sequences < 1:
            raise io.InvalidArgument(f"num_return_sequences must be >= 1, got {self.num_return_sequences}")
        try:
            stop_words = self._words(row, "stop_words_list")
            bad_words = self._words(row, "bad_words_list")
        except ValueError as e:
            raise io.InvalidArgument(str(e)) from e
        self.params = GenParams(
            input_ids=self.input_ids,
            max_tokens=int(max_tokens),
            end_id=int(row.scalar("end_id", END_ID)),
            min_tokens=int(row.scalar("min_tokens", 0)),
            seed=int(row.scalar("seed", 0)),
            stop_words=stop_words,
            bad_words=bad_words,
            # The vocabulary is byte-level, so a marker the client tokenized decodes back intact.
            script=script_of(decode(self.input_ids), row, script_param),
        )
        self.exclude_input = row.flag("exclude_input_in_output", model.exclude_input_default)
        self.return_log_probs = row.flag("return_log_probs", False)
        self.return_perf_metrics = row.flag("return_perf_metrics", False)
        self.return_num_input_tokens = row.flag("return_num_input_tokens", False)
        self.return_num_output_tokens = row.flag("return_num_output_tokens", False)

    @staticmethod
    def _words(row, name):
        value = row.tensor(name)
        if value is None or value.size == 0:
            return []
        return from_word_list(value)

    @property
    def sequence_count(self) -> int:
        return self.beam_width if self.beam_width > 1 else self.num_return_sequences


def parse_batch(model, request) -> list:
    """The request's batch items; a decoupled model takes only one (its responses carry no batch)."""
    if io.tensor(request, "input_ids") is None:
        raise io.InvalidArgument("input 'input_ids' is required unless 'stop' is true")
    size = io.batch_size(request, model.model_name)
    if size > 1 and model.decoupled:
        raise io.batch_refusal(size)
    script_param = script_parameter(request)
    if size == 1:
        return [RawRequest(model, io.Row(request, 0), script_param)]
    items = []
    for b in range(size):
        try:
            items.append(RawRequest(model, io.Row(request, b), script_param))
        except (io.InvalidArgument, GenerationError) as e:
            raise io.InvalidArgument(f"batch item {b}: {e}") from e
    # The stacked response has one beams dimension for every item.
    counts = sorted({item.sequence_count for item in items})
    if len(counts) > 1:
        raise io.InvalidArgument(
            f"every batch item must ask for the same number of sequences (beam_width, num_return_sequences), "
            f"got {counts}"
        )
    return items


class ItemRun:
    """The sequences of one batch item while it generates, with its token times (perf metrics)."""

    def __init__(self, req: RawRequest):
        self.req = req
        self.seqs = [Sequence(req.params, k) for k in range(req.sequence_count)]
        self.first_ns = 0
        self.last_ns = 0

    def token_seen(self) -> None:
        self.last_ns = time.time_ns()
        self.first_ns = self.first_ns or self.last_ns


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
            if io.any_flag(request, "stop"):
                self._answer_stop(request, sender)
                continue
            start_job(
                self.model_name, self.registry, self.workers, request, sender,
                lambda r: parse_batch(self, r), self._run,
            )
        return None

    def _answer_stop(self, request, sender):
        self.registry.stop(request.request_id())
        if self.decoupled:
            sender.send(flags=FINAL)
        else:
            sender.send(pb_utils.InferenceResponse(output_tensors=[]), flags=FINAL)

    def _run(self, job: Job, items: list, sender):
        arrival = time.time_ns()
        runs = [ItemRun(item) for item in items]
        ended = False  # the final flag went out on the last token's response
        try:
            # All items in lockstep: one wait per step, then one token from every live sequence.
            first = True
            while not ended:
                active = [(run, s) for run in runs for s in run.seqs if not s.done]
                if not active:
                    break
                interrupted = job.wait(self.ttft_s if first else self.itl_s)
                if interrupted:
                    for _, s in active:
                        s.finish = interrupted
                    break
                first = False
                produced = []
                for run, s in active:
                    tok = s.step()
                    if tok is not None:
                        run.token_seen()
                        produced.append((run, s, tok))
                # As the C++ backend does, the final flag rides on the last response that carries
                # tensors: the official BLS post-processes every response, and an empty final breaks it.
                ended = bool(produced) and all(s.done or s.ends_without_token() for _, s in active)
                if ended:
                    for _, s in active:
                        if not s.done:
                            s.step()  # finds end_id
                    self._log_end(job, runs)
                with PB_LOCK:
                    for i, (run, s, tok) in enumerate(produced):
                        if run.req.streaming:
                            last = ended and i == len(produced) - 1
                            sender.send(self._token_response(run, s, tok, arrival), flags=FINAL if last else 0)
            if ended and runs[0].req.streaming:
                return
            with PB_LOCK:
                self._finish(job, runs, sender, arrival, logged=ended)
        except Exception as e:  # noqa: BLE001 - every failure must reach the client as an error response
            log_event(self.model_name, job.request_id, "error", _token_count(runs))
            traceback.print_exc()
            bad_request = isinstance(e, GenerationError)
            code = pb_utils.TritonError.INVALID_ARG if bad_request else pb_utils.TritonError.INTERNAL
            with PB_LOCK:
                sender.send(io.error(str(e), code), flags=FINAL)
        finally:
            self.registry.remove(job)

    def _log_end(self, job, runs) -> str:
        reasons = {s.finish for run in runs for s in run.seqs}
        event = "cancelled" if "cancelled" in reasons else "stopped" if "stopped" in reasons else "completed"
        # Logged before the final response goes out, so a client that saw the end finds the event.
        log_event(self.model_name, job.request_id, event, _token_count(runs))
        return event

    def _finish(self, job, runs, sender, arrival, logged=False):
        event = "completed" if logged else self._log_end(job, runs)
        if event == "cancelled":
            sender.send(io.cancelled_response(), flags=FINAL)
            return
        if not self.decoupled:
            rows = [(run, run.seqs) for run in runs]
            sender.send(self._full_response(rows, arrival), flags=FINAL)
            return
        # Decoupled: one batch item (parse_batch refuses more).
        run = runs[0]
        if run.req.streaming:
            # Ended by a stop (or with no token at all): no response carries tensors to flag.
            sender.send(flags=FINAL)
            return
        groups = [run.seqs] if run.req.beam_width > 1 else [[s] for s in run.seqs]
        for i, group in enumerate(groups):
            last = i == len(groups) - 1
            sender.send(self._full_response([(run, group)], arrival), flags=FINAL if last else 0)

    def _token_response(self, run, seq, tok, arrival):
        req = run.req
        lp = log_prob(tok) if req.return_log_probs else 0.0
        cum = sum(log_prob(t) for t in seq.tokens) if req.return_log_probs else 0.0
        tensors = {
            "output_ids": io.int32([tok], (1, 1, 1)),
            "sequence_length": io.int32([1], (1, 1)),
            "cum_log_probs": np.asarray([[cum]], dtype=np.float32),
            "output_log_probs": np.asarray([[[lp]]], dtype=np.float32),
            "sequence_index": io.int32([seq.k], (1, 1)),
        }
        return self._response([run], tensors, [len(seq.tokens)], arrival)

    def _full_response(self, rows, arrival):
        """rows: per batch item, (its run, the sequences this response holds); stacked along dim 0."""
        n, beams = len(rows), len(rows[0][1])
        prefixes = [[] if run.req.exclude_input else list(run.req.input_ids) for run, _ in rows]
        width = max(len(p) + len(s.tokens) for p, (_, seqs) in zip(prefixes, rows) for s in seqs)
        gen_width = max(len(s.tokens) for _, seqs in rows for s in seqs)
        out = np.empty((n, beams, width), dtype=np.int32)
        lengths = np.zeros((n, beams), dtype=np.int32)
        lps = np.zeros((n, beams, gen_width), dtype=np.float32)
        cums = np.zeros((n, beams), dtype=np.float32)
        for b, (prefix, (run, seqs)) in enumerate(zip(prefixes, rows)):
            out[b] = run.req.params.end_id
            for i, s in enumerate(seqs):
                row = prefix + s.tokens
                out[b, i, : len(row)] = row
                lengths[b, i] = len(row)
                if run.req.return_log_probs:
                    lps[b, i, : len(s.tokens)] = [log_prob(t) for t in s.tokens]
                    cums[b, i] = sum(log_prob(t) for t in s.tokens)
        tensors = {
            "output_ids": out,
            "sequence_length": lengths,
            "cum_log_probs": cums,
            "output_log_probs": lps,
            "sequence_index": io.int32([seqs[0].k if len(seqs) == 1 else 0 for _, seqs in rows], (n, 1)),
        }
        output_tokens = [max(len(s.tokens) for s in seqs) for _, seqs in rows]
        return self._response([run for run, _ in rows], tensors, output_tokens, arrival)

    def _response(self, runs, tensors, output_tokens, arrival):
        """Adds the per-item `[N, 1]` outputs; an optional one is sent when any item asks for it."""
        n = len(runs)
        tensors["context_logits"] = np.zeros((n, 1, 1), dtype=np.float32)
        tensors["generation_logits"] = np.zeros((n, 1, 1, 1), dtype=np.float32)
        tensors["batch_index"] = io.int32(list(range(n)), (n, 1))
        if any(run.req.return_perf_metrics for run in runs):
            for name in ("kv_cache_alloc_new_blocks", "kv_cache_reused_blocks", "kv_cache_alloc_total_blocks"):
                tensors[name] = io.int32([0] * n, (n, 1))
            for name, times in (
                ("arrival_time_ns", [arrival] * n),
                ("first_scheduled_time_ns", [arrival] * n),
                ("first_token_time_ns", [run.first_ns for run in runs]),
                ("last_token_time_ns", [run.last_ns for run in runs]),
            ):
                tensors[name] = np.asarray(times, dtype=np.int64).reshape(n, 1)
            tensors["acceptance_rate"] = np.zeros((n, 1), dtype=np.float32)
            tensors["total_accepted_draft_tokens"] = io.int32([0] * n, (n, 1))
            tensors["total_draft_tokens"] = io.int32([0] * n, (n, 1))
        if any(run.req.return_num_input_tokens for run in runs):
            tensors["num_input_tokens"] = io.int32([len(run.req.input_ids) for run in runs], (n, 1))
        if any(run.req.return_num_output_tokens for run in runs):
            tensors["num_output_tokens"] = io.int32(output_tokens, (n, 1))
        return pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor(k, v) for k, v in tensors.items()])


def _token_count(runs) -> int:
    """Tokens generated so far, over every sequence of every batch item (the event log's `tokens`)."""
    return sum(len(s.tokens) for run in runs for s in run.seqs)
