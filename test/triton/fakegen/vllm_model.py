"""The stand-in for Triton's vLLM backend (triton-inference-server/vllm_backend `src/model.py`,
`src/utils/request.py`, 8de0c14): text in, vLLM's sampling options in one `sampling_parameters` JSON,
text out. The twin of packages/testing/src/engine/vllm-model.ts, on GENERATOR.md's generator.

As the backend does: streaming sends each response's new text (no prompt), otherwise one response with
the whole text (the prompt in front unless `exclude_input_in_output`); finish reasons are vLLM's
("stop", "length", "abort", the string "None" until known); `num_input_tokens` is a 0-d UINT32,
`num_output_tokens` the tokens since the last response; `logprobs` is `json.dumps` of one map per token
(the sampled token first, then the top k); a cancelled stream ends with CANCELLED "Request was
cancelled". Errors are INTERNAL, as the backend's `TritonError(...)` default.
"""

import json
import traceback

import numpy as np
import triton_python_backend_utils as pb_utils

from . import triton_io as io
from .events import log_event
from .generator import GenerationError, GenParams, Sequence, log_prob
from .guided import _js_numbers, _js_object, schema_instance
from .hooks import script_of, script_parameter
from .jobs import Job, Workers
from .vocab import END_ID, VOCAB_SIZE, decode, encode, token_bytes

FINAL = pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL
DEFAULT_MAX_TOKENS = 16  # vllm.SamplingParams.max_tokens default
# `TritonSamplingParams.from_dict` logs why it could not build the parameters and returns None; the
# request then fails at its first use of them, and the client sees only this.
BAD_SAMPLING = "Error generating stream: 'NoneType' object has no attribute 'lora_name'"
STREAM_WITH_PROMPT = "Error generating stream: When streaming, `exclude_input_in_output` = False is not allowed."

# `SamplingParams` fields (vLLM v1) plus the backend's `lora_name`, with the conversion each gets.
KEYS = {
    "n": "int", "presence_penalty": "float", "frequency_penalty": "float", "repetition_penalty": "float",
    "temperature": "float", "top_p": "float", "top_k": "int", "min_p": "float", "seed": "int",
    "stop": "strings", "stop_token_ids": "any", "bad_words": "strings", "ignore_eos": "bool",
    "max_tokens": "int", "min_tokens": "int", "logprobs": "int", "prompt_logprobs": "int",
    "detokenize": "bool", "skip_special_tokens": "bool", "spaces_between_special_tokens": "bool",
    "include_stop_str_in_output": "bool", "structured_outputs": "any", "logit_bias": "any",
    "allowed_token_ids": "any", "extra_args": "any", "lora_name": "any",
}


class Refused(Exception):
    """A request the backend answers with an INTERNAL error before generating."""


def _convert(kind, value):
    if value is None or kind == "any":
        return value
    if kind == "bool":
        return bool(value)
    if kind == "strings":
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(s, str) for s in items):
            raise Refused(BAD_SAMPLING)
        return items
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise Refused(BAD_SAMPLING)
    try:
        number = float(value)
    except ValueError:
        raise Refused(BAD_SAMPLING) from None
    if number != number or number in (float("inf"), float("-inf")):
        raise Refused(BAD_SAMPLING)
    if kind == "int":
        if number != int(number):
            raise Refused(BAD_SAMPLING)
        return int(number)
    return number


def _structured(value):
    """`StructuredOutputsParams(**json.loads(value))`: (kind for the event log, text it makes or None)."""
    if value is None:
        return None
    try:
        params = json.loads(value, object_pairs_hook=_js_object) if isinstance(value, str) else None
    except ValueError:
        raise Refused(BAD_SAMPLING) from None
    if not isinstance(params, dict):
        raise Refused(BAD_SAMPLING)
    if params.get("json_object") is True:
        return ("json_object", "{}")
    if params.get("json") is not None:
        schema = params["json"]
        if isinstance(schema, str):
            try:
                schema = json.loads(schema, object_pairs_hook=_js_object)
            except ValueError:
                raise Refused(BAD_SAMPLING) from None
        text = json.dumps(_js_numbers(schema_instance(schema)), ensure_ascii=False, separators=(",", ":"))
        return ("json", text)
    for kind in ("regex", "grammar", "choice", "structural_tag"):
        if params.get(kind) is not None:
            # Other structured outputs leave the corpus as it is (GENERATOR.md "Guided decoding").
            choice = params[kind]
            text = _js_string(choice[0]) if kind == "choice" and isinstance(choice, list) and choice else None
            return (kind, text)
    raise Refused(BAD_SAMPLING)


def _js_string(value) -> str:
    """JavaScript's String(value) for a JSON value, as the TypeScript twin writes a choice."""
    if isinstance(value, str):
        return value
    if value is True or value is False:
        return "true" if value else "false"
    if value is None:
        return "null"
    return json.dumps(_js_numbers(value), ensure_ascii=False, separators=(",", ":"))


def _sampling(text: str) -> dict:
    """Reads the JSON as `TritonSamplingParams.from_dict` does, with `SamplingParams`' own checks."""
    try:
        raw = json.loads(text)
    except ValueError:
        raise Refused(BAD_SAMPLING) from None
    if not isinstance(raw, dict):
        raise Refused(BAD_SAMPLING)
    values = {}
    for key, value in raw.items():
        if key not in KEYS:
            raise Refused(BAD_SAMPLING)
        values[key] = _convert(KEYS[key], value)
    max_tokens = values.get("max_tokens")
    max_tokens = DEFAULT_MAX_TOKENS if max_tokens is None else max_tokens
    n = values.get("n")
    n = 1 if n is None else n
    temperature = values.get("temperature")
    logprobs = values.get("logprobs")
    if max_tokens < 1 or n < 1 or (temperature is not None and temperature < 0):
        raise Refused(BAD_SAMPLING)
    if logprobs is not None and logprobs < 0:
        raise Refused(BAD_SAMPLING)
    return {
        "max_tokens": max_tokens,
        "min_tokens": values.get("min_tokens") or 0,
        "n": n,
        "seed": values.get("seed"),
        "stop": values.get("stop") or [],
        "logprobs": logprobs,
        "structured": _structured(values.get("structured_outputs")),
        "lora_name": values.get("lora_name"),
    }


def _flag(request, name):
    value = io.tensor(request, name)
    return None if value is None else bool(np.asarray(value).reshape(-1)[0])


class VllmRequest:
    def __init__(self, request):
        io.required(request, "text_input")
        texts = io.strings(request, "text_input")
        self.prompt = texts[0].decode("utf-8", errors="replace") if texts else ""
        self.stream = bool(_flag(request, "stream"))
        exclude = _flag(request, "exclude_input_in_output")
        self.prepend_input = (not self.stream) if exclude is None else not exclude
        script_param = script_parameter(request)
        self.script = script_of(self.prompt, io.Row(request, 0), script_param)
        given = io.strings(request, "sampling_parameters")
        if given:
            text = given[0].decode("utf-8", errors="replace")
        else:
            # Without the input the backend reads the request parameters as the JSON (the fake's test
            # hook among them is not a vLLM parameter).
            raw = request.parameters()
            params = json.loads(raw) if raw else {}
            params.pop("fake_script", None)
            text = json.dumps(params)
        self.sampling = _sampling(text)
        if self.sampling["lora_name"] is not None:
            raise Refused("LoRA feature is not enabled.")
        if self.prepend_input and self.stream:
            raise Refused(STREAM_WITH_PROMPT)
        self.wants = {
            name: bool(_flag(request, f"return_{name}"))
            for name in ("finish_reason", "cumulative_logprob", "logprobs", "num_input_tokens", "num_output_tokens")
        }
        structured = self.sampling["structured"]
        self.guide = None if structured is None else structured[0]
        if self.script is None and structured is not None:
            self.script = structured[1]
        self.input_ids = encode(self.prompt)
        seed = self.sampling["seed"]
        self.params = GenParams(
            input_ids=self.input_ids,
            max_tokens=self.sampling["max_tokens"],
            end_id=END_ID,
            min_tokens=self.sampling["min_tokens"],
            seed=0 if seed is None else int(seed),
            stop_words=[w for w in (encode(s) for s in self.sampling["stop"]) if w],
            script=self.script,
        )


def _incomplete_tail(data: bytes) -> int:
    """How many bytes at the end start a UTF-8 character not complete yet (held back, not U+FFFD)."""
    for back in range(1, min(3, len(data)) + 1):
        b = data[-back]
        if b & 0xC0 == 0x80:
            continue
        need = 4 if 0xF0 <= b <= 0xF4 else 3 if b >= 0xE0 else 2 if b >= 0xC2 else 1
        return back if need > back else 0
    return 0


def _logprob_map(token: int, lp: float, k: int) -> dict:
    """vLLM v1's map for one token: the sampled one first (rank 1 + token mod 3), then ranks 1..k, the
    token of rank j being (token + j) mod the vocabulary, its log prob falling with its rank."""
    rank = 1 + token % 3
    out = {str(token): {"logprob": lp, "rank": rank, "decoded_token": decode([token])}}
    for j in range(1, k + 1):
        if j == rank:
            continue
        tid = (token + j) % VOCAB_SIZE
        out[str(tid)] = {"logprob": lp + (rank - j) / 16, "rank": j, "decoded_token": decode([tid])}
    return out


class Seq:
    """Sequence k with one step of lookahead, so the token that ends it is known to be its last."""

    def __init__(self, params: GenParams, k: int):
        self.gen = Sequence(params, k)
        self.tokens: list = []
        self.reason = None  # "stop" | "length" | "cancelled", once it ended
        self.pending = self._next()
        if self.pending is None:
            self.reason = self.gen.finish
        self.sent_chars = 0
        self.sent_tokens = 0

    def _next(self):
        return None if self.gen.done else self.gen.step()

    def advance(self):
        """Delivers the pending token; returns (token, last)."""
        tok = self.pending
        self.tokens.append(tok)
        self.pending = self._next()
        last = self.pending is None
        if last:
            self.reason = self.gen.finish
        return tok, last


class TritonPythonModel:
    def initialize(self, args):
        self.config = io.model_config_of(args)
        self.model_name = args["model_name"]
        self.ttft_s = float(io.parameter(self.config, "ttft_ms", "5")) / 1000
        self.itl_s = float(io.parameter(self.config, "itl_ms", "5")) / 1000
        self.workers = Workers()

    def finalize(self):
        self.workers.stop_all()

    def execute(self, requests):
        for request in requests:
            sender = request.get_response_sender()
            job = Job(request, self.workers.shutdown)
            try:
                parsed = VllmRequest(request)
            except (Refused, io.InvalidArgument, GenerationError) as e:
                log_event(self.model_name, job.request_id, "received", 0)
                log_event(self.model_name, job.request_id, "error", 0)
                code = pb_utils.TritonError.INVALID_ARG if isinstance(e, io.InvalidArgument) else None
                sender.send(_error(str(e), code), flags=FINAL)
                continue
            self.workers.start(self._run, job, parsed, sender)
        return None

    def _run(self, job: Job, req: VllmRequest, sender):
        log_event(self.model_name, job.request_id, "received", 0, req.guide)
        seqs = [Seq(req.params, k) for k in range(req.sampling["n"])]
        delivered = 0
        try:
            first = True
            outcome = "completed"
            while True:
                if all(s.pending is None for s in seqs):
                    break
                if job.wait(0) == "cancelled":
                    outcome = "cancelled"
                    break
                if job.wait(self.ttft_s if first else self.itl_s) == "cancelled":
                    outcome = "cancelled"
                    break
                first = False
                live = [s for s in seqs if s.pending is not None]
                for i, s in enumerate(live):
                    _, last = s.advance()
                    delivered += 1
                    if req.stream:
                        done = i == len(live) - 1 and all(x.pending is None for x in live)
                        sender.send(self._response(req, [s], done, False), flags=FINAL if done else 0)
            if outcome == "cancelled":
                for s in seqs:
                    if s.pending is not None:
                        s.reason = "cancelled"
            log_event(self.model_name, job.request_id, outcome, delivered)
            if outcome == "cancelled":
                if req.stream:
                    sender.send(_error("Request was cancelled", pb_utils.TritonError.CANCELLED), flags=FINAL)
                else:
                    # The backend stops reading and answers with the engine's last output.
                    sender.send(self._response(req, [seqs[-1]], True, True), flags=FINAL)
            elif req.stream:
                # Streamed responses went out; a request that generated nothing ends flags-only.
                if delivered == 0:
                    sender.send(flags=FINAL)
            else:
                # The engine's last output: with n > 1, the sequence that ended last.
                sender.send(self._response(req, [seqs[-1]], True, True), flags=FINAL)
        except Exception as e:  # noqa: BLE001 - every failure must reach the client as an error response
            log_event(self.model_name, job.request_id, "error", delivered)
            traceback.print_exc()
            sender.send(_error(f"Error generating stream: {e}"), flags=FINAL)

    def _text(self, req: VllmRequest, s: Seq, finished: bool) -> str:
        """The text of `s` as vLLM shows it: no unfinished character, no matched stop string, and while
        running, no tail that may begin one."""
        data = b"".join(token_bytes(t) for t in s.tokens)
        text = data[: len(data) - _incomplete_tail(data)].decode("utf-8", errors="replace")
        stops = req.sampling["stop"]
        if finished:
            matched = next((x for x in stops if text.endswith(x)), None)
            if s.reason == "stop" and matched is not None:
                return text[: -len(matched)] if matched else ""
            return text
        held = 0
        for stop in stops:
            for n in range(min(len(stop), len(text)), held, -1):
                if text.endswith(stop[:n]):
                    held = n
                    break
        return text[: len(text) - held]

    def _response(self, req: VllmRequest, ks: list, finished: bool, whole: bool):
        texts, reasons, counts, sums, lists = [], [], [], [], []
        k_top = req.sampling["logprobs"]
        for s in ks:
            text = self._text(req, s, finished)
            texts.append(((req.prompt if whole and req.prepend_input else "") + text[0 if whole else s.sent_chars :]).encode("utf-8"))
            reason = ("abort" if s.reason == "cancelled" else (s.reason or "stop")) if finished else "None"
            reasons.append(reason.encode("utf-8"))
            start = 0 if whole else s.sent_tokens
            counts.append(len(s.tokens) - start)
            sums.append(float("nan") if k_top is None else sum(log_prob(t) for t in s.tokens))
            if k_top is None:
                lists.append(b"null")
            else:
                maps = [_logprob_map(t, log_prob(t), k_top) for t in s.tokens[start:]]
                lists.append(json.dumps(maps).encode("utf-8"))
            s.sent_chars = len(text)
            s.sent_tokens = len(s.tokens)
        tensors = [pb_utils.Tensor("text_output", np.asarray(texts, dtype=np.object_))]
        if req.wants["finish_reason"]:
            tensors.append(pb_utils.Tensor("finish_reason", np.asarray(reasons, dtype=np.object_)))
        if req.wants["cumulative_logprob"]:
            tensors.append(pb_utils.Tensor("cumulative_logprob", np.asarray(sums, dtype=np.float32)))
        if req.wants["logprobs"]:
            tensors.append(pb_utils.Tensor("logprobs", np.asarray(lists, dtype=np.object_)))
        if req.wants["num_input_tokens"]:
            # `np.asarray(len(prompt_token_ids), dtype=np.uint32)`: a 0-d array, as the backend sends it.
            tensors.append(pb_utils.Tensor("num_input_tokens", np.asarray(len(req.input_ids), dtype=np.uint32)))
        if req.wants["num_output_tokens"]:
            tensors.append(pb_utils.Tensor("num_output_tokens", np.asarray(counts, dtype=np.uint32)))
        return pb_utils.InferenceResponse(output_tensors=tensors)


def _error(message: str, code=None):
    # The backend's errors are `TritonError(message)`: INTERNAL unless it names a code.
    if code is None:
        code = pb_utils.TritonError.INTERNAL
    text = pb_utils.Tensor("text_output", np.asarray([b"N/A"], dtype=np.object_))
    return pb_utils.InferenceResponse(output_tensors=[text], error=pb_utils.TritonError(message, code))
