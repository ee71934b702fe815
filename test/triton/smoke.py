#!/usr/bin/env python3
"""Self-check of the real Triton serving test/triton/models (start it with `pnpm triton:up`).

Stdlib only. Expected values come from a reference written here straight from GENERATOR.md, not from
the models' own code. Exercises every model over HTTP (/infer, /generate, /generate_stream), the
in-band stop, cancellation by closing a stream, batches (the refusal by decoupled models over gRPC), the event
log, and the server's error answers.

    python3 test/triton/smoke.py [--url http://127.0.0.1:18000] [--grpc-port 18001] [--events build/triton-events.jsonl]
"""

import argparse
import base64
import hashlib
import http.client
import json
import os
import socket
import struct
import sys
import time
import traceback
import urllib.parse
import uuid

# ---- reference of GENERATOR.md -------------------------------------------------------------------
WORDS = [
    " Machine", " learning", " is", " a", " field", " of", " study", " in", " artificial", " intelligence",
    ".", " Models", " learn", " patterns", " from", " data", " and", " make", " predictions", " the", " to",
    " computers", " ability", " that", " gives", "What", " ML", "?", "Hello", " world", ",",
]
CORPUS = (
    " Machine learning is a field of study in artificial intelligence. 机器学习让计算机从数据中学习。"
    " Models learn patterns from data 🤖 and make predictions."
)


def encode(text: str) -> list:
    data, ids, i = text.encode(), [], 0
    while i < len(data):
        best = max(
            (w for w in range(len(WORDS)) if data[i:].startswith(WORDS[w].encode())),
            key=lambda w: len(WORDS[w].encode()),
            default=None,
        )
        if best is None:
            ids.append(3 + data[i])
            i += 1
        else:
            ids.append(259 + best)
            i += len(WORDS[best].encode())
    return ids


def decode(ids) -> str:
    out = b""
    for t in ids:
        if 3 <= t < 259:
            out += bytes([t - 3])
        elif 259 <= t < 259 + len(WORDS):
            out += WORDS[t - 259].encode()
    return out.decode("utf-8", errors="replace")


C = encode(CORPUS)
# GENERATOR.md: a reply starts at a sentence: 0 and every position after a token that ends one.
STARTS = [i for i in range(len(C)) if i == 0 or decode(C[:i]).endswith((".", "\u3002"))]


def reference(input_ids, max_tokens, k=0, seed=0, end_id=2, min_tokens=0, stop=(), bad=()):
    """(tokens, reason) of sequence k."""
    p = STARTS[(sum(input_ids) + seed + k) % len(STARTS)]
    out = []
    while len(out) < max_tokens:
        tok = C[p % len(C)]
        p += 1
        if any(w and (out + [tok])[-len(w):] == list(w) for w in bad):
            continue
        if len(out) >= min_tokens and tok == end_id:
            return out, "stop"
        out.append(tok)
        if len(out) >= min_tokens and any(w and out[-len(w):] == list(w) for w in stop):
            return out, "stop"
    return out, "length"


def log_prob(tok):
    return -(1 + tok % 7) / 8


# ---- HTTP helpers -----------------------------------------------------------------------------------
class Server:
    def __init__(self, url: str, events_path: str, grpc_port: int):
        u = urllib.parse.urlparse(url)
        self.host, self.port = u.hostname, u.port or 80
        self.events_path = events_path
        self.grpc_port = grpc_port

    def _conn(self):
        return http.client.HTTPConnection(self.host, self.port, timeout=30)

    def request(self, method, path, body=None):
        conn = self._conn()
        data = None if body is None else (body if isinstance(body, (bytes, str)) else json.dumps(body))
        conn.request(method, path, body=data, headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        raw = resp.read().decode("utf-8", errors="replace")
        conn.close()
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = raw
        return resp.status, resp.getheader("Content-Type", ""), parsed

    def post(self, path, body):
        return self.request("POST", path, body)

    def stream(self, model, body, max_events=None):
        """(status, content type, events); with max_events, closes the connection after that many."""
        conn = self._conn()
        conn.request("POST", f"/v2/models/{model}/generate_stream", body=json.dumps(body),
                     headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        ctype = resp.getheader("Content-Type", "")
        events = []
        if not ctype.startswith("text/event-stream"):
            raw = resp.read().decode()
            conn.close()
            return resp.status, ctype, [json.loads(raw)] if raw else []
        while max_events is None or len(events) < max_events:
            line = resp.readline()
            if not line:
                break
            line = line.decode("utf-8").strip()
            if line.startswith("data:"):
                events.append(json.loads(line[5:]))
        conn.close()  # early close = client cancellation
        return resp.status, ctype, events

    def events(self, request_id):
        if not os.path.exists(self.events_path):
            return []
        with open(self.events_path, encoding="utf-8") as f:
            return [e for e in (json.loads(line) for line in f if line.strip()) if e["id"] == request_id]

    def wait_event(self, request_id, kinds, timeout_s=30.0):
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for e in self.events(request_id):
                if e["event"] in kinds:
                    return e
            time.sleep(0.05)
        raise AssertionError(f"no {kinds} event for {request_id!r} within {timeout_s}s: {self.events(request_id)}")


def rid(tag):
    return f"smoke-{tag}-{uuid.uuid4().hex[:8]}"


def eq(actual, expected, what):
    if actual != expected:
        raise AssertionError(f"{what}: expected {expected!r}, got {actual!r}")


def infer_input(name, datatype, shape, data):
    return {"name": name, "datatype": datatype, "shape": shape, "data": data}


def raw_inputs(ids, max_tokens, **extra):
    inputs = [
        infer_input("input_ids", "INT32", [1, len(ids)], ids),
        infer_input("input_lengths", "INT32", [1, 1], [len(ids)]),
        infer_input("request_output_len", "INT32", [1, 1], [max_tokens]),
    ]
    for name, (dtype, shape, data) in extra.items():
        inputs.append(infer_input(name, dtype, shape, data))
    return inputs


def outputs_of(body):
    return {o["name"]: o for o in body["outputs"]}


def word_list(words):
    ids, ends = [], []
    for w in words:
        ids += encode(w)
        ends.append(len(ids))
    n = max(1, len(ids))
    return [1, 2, n], ids + [0] * (n - len(ids)) + ends + [-1] * (n - len(ends))



# ---- a minimal gRPC client --------------------------------------------------------------------------
# Only gRPC can send a decoupled model a batch (HTTP /infer refuses decoupled models, /generate* send
# batch 1), so this speaks just enough HTTP/2 without TLS (literal HPACK headers) and protobuf for one
# ModelStreamInfer call.
def _varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _pb_bytes(field, payload):
    payload = payload.encode() if isinstance(payload, str) else payload
    return _varint(field << 3 | 2) + _varint(len(payload)) + payload


def _pb_fields(buf):
    """(field number, value) of a protobuf message; length-delimited values as bytes."""
    i = 0
    while i < len(buf):
        key, i = _read_varint(buf, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _read_varint(buf, i)
        elif wire == 2:
            size, i = _read_varint(buf, i)
            value, i = buf[i : i + size], i + size
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            value, i = buf[i : i + size], i + size
        else:
            raise ValueError(f"protobuf wire type {wire}")
        yield field, value


def _read_varint(buf, i):
    value = shift = 0
    while True:
        byte = buf[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, i


RAW_FORMATS = {"INT32": "<i", "UINT64": "<Q", "BOOL": "<?", "FP32": "<f"}


def _raw_contents(datatype, data):
    if datatype == "BYTES":
        return b"".join(struct.pack("<I", len(v.encode())) + v.encode() for v in data)
    return b"".join(struct.pack(RAW_FORMATS[datatype], v) for v in data)


def model_infer_request(model, inputs, request_id=""):
    """A ModelInferRequest from infer_input() dicts, tensor data sent as raw_input_contents."""
    msg = _pb_bytes(1, model) + (_pb_bytes(3, request_id) if request_id else b"")
    for t in inputs:
        tensor = _pb_bytes(1, t["name"]) + _pb_bytes(2, t["datatype"])
        tensor += b"".join(_varint(3 << 3) + _varint(d) for d in t["shape"])
        msg += _pb_bytes(5, tensor)
    for t in inputs:
        msg += _pb_bytes(7, _raw_contents(t["datatype"], t["data"]))
    return msg


def _hpack_literal(name, value):
    def string(text):
        data = text.encode()
        assert len(data) < 127, "one-byte HPACK length prefix"
        return bytes([len(data)]) + data

    return b"\x00" + string(name) + string(value)  # literal without indexing, new name, no Huffman


def _h2_frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def _recv_exact(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("gRPC connection closed")
        data += chunk
    return data


def grpc_first_stream_error(host, port, request, timeout_s=30.0):
    """Sends one request on ModelStreamInfer; the error_message of the first response ('' for none)."""
    DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY = 0, 1, 3, 4, 6, 7
    END_STREAM, END_HEADERS, ACK = 0x1, 0x4, 0x1
    headers = b"".join(_hpack_literal(k, v) for k, v in (
        (":method", "POST"), (":scheme", "http"), (":path", "/inference.GRPCInferenceService/ModelStreamInfer"),
        (":authority", f"{host}:{port}"), ("content-type", "application/grpc"), ("te", "trailers")))
    message = b"\x00" + struct.pack(">I", len(request)) + request
    with socket.create_connection((host, port), timeout=timeout_s) as sock:
        sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + _h2_frame(SETTINGS, 0, 0)
                     + _h2_frame(HEADERS, END_HEADERS, 1, headers) + _h2_frame(DATA, END_STREAM, 1, message))
        body = b""
        while True:
            head = _recv_exact(sock, 9)
            size, kind, flags = int.from_bytes(head[:3], "big"), head[3], head[4]
            stream = int.from_bytes(head[5:9], "big") & 0x7FFFFFFF
            payload = _recv_exact(sock, size)
            if kind == SETTINGS and not flags & ACK:
                sock.sendall(_h2_frame(SETTINGS, ACK, 0))
            elif kind == PING and not flags & ACK:
                sock.sendall(_h2_frame(PING, ACK, 0, payload))
            elif kind == DATA and stream == 1:
                body += payload
                if len(body) >= 5 and len(body) >= 5 + int.from_bytes(body[1:5], "big"):
                    response = body[5 : 5 + int.from_bytes(body[1:5], "big")]
                    # ModelStreamInferResponse.error_message
                    errors = [v for f, v in _pb_fields(response) if f == 1]
                    return errors[0].decode("utf-8", errors="replace") if errors else ""
            if kind in (RST_STREAM, GOAWAY) or (stream == 1 and kind in (DATA, HEADERS) and flags & END_STREAM):
                raise AssertionError("the gRPC stream ended without a response")


# ---- checks -----------------------------------------------------------------------------------------
CHECKS = []


def check(fn):
    CHECKS.append(fn)
    return fn


PROMPT = [259, 260]  # " Machine learning"


@check
def server_is_triton_2_51(s):
    status, _, body = s.request("GET", "/v2")
    eq((status, body["version"]), (200, "2.51.0"), "server metadata")
    eq(s.request("GET", "/v2/health/ready")[0], 200, "ready")


@check
def every_model_has_the_newest_tensors(s):
    decoupled = {"preprocessing": False, "postprocessing": False, "tensorrt_llm": True,
                 "tensorrt_llm_unary": False, "ensemble": True, "ensemble_unary": False,
                 "tensorrt_llm_bls": True, "tensorrt_llm_bls_per_token": True, "llmapi": True,
                 "multimodal": True, "multimodal_preprocessing": False, "tensorrt_llm_multimodal": True}
    for model, want in decoupled.items():
        status, _, cfg = s.request("GET", f"/v2/models/{model}/config")
        eq(status, 200, f"{model} config")
        eq(cfg["max_batch_size"], 64, f"{model} max_batch_size")
        eq(cfg.get("model_transaction_policy", {}).get("decoupled", False), want, f"{model} decoupled")
    for model in ("tensorrt_llm", "ensemble", "tensorrt_llm_bls"):
        _, _, cfg = s.request("GET", f"/v2/models/{model}/config")
        inputs = {i["name"]: i for i in cfg["input"]}
        outputs = {o["name"] for o in cfg["output"]}
        eq(inputs["min_tokens"]["data_type"], "TYPE_INT32", f"{model} min_tokens")
        eq(inputs["seed"]["data_type"], "TYPE_UINT64", f"{model} seed")
        eq(inputs["return_num_input_tokens"]["data_type"], "TYPE_BOOL", f"{model} return_num_input_tokens")
        eq({"num_input_tokens", "num_output_tokens"} <= outputs, True, f"{model} token count outputs")
        eq("min_length" in inputs or "random_seed" in inputs, False, f"{model} has no pre-2026 names")


@check
def raw_model_streams_one_response_per_token(s):
    want, _ = reference(PROMPT, 8)
    r = rid("raw-stream")
    status, _, events = s.stream("tensorrt_llm", {"id": r, "input_ids": PROMPT, "input_lengths": 2,
                                                  "request_output_len": 8, "streaming": True})
    eq(status, 200, "status")
    eq([e["output_ids"] for e in events], want, "streamed ids")
    eq({(e["sequence_length"], e["sequence_index"], e["batch_index"], e["id"]) for e in events}, {(1, 0, 0, r)},
       "per-token fields")
    eq([(e["event"], e["tokens"]) for e in s.events(r)], [("received", 0), ("completed", 8)], "event log")


@check
def raw_model_non_streaming_echoes_the_prompt_unless_excluded(s):
    want, _ = reference(PROMPT, 6)
    _, _, body = s.post("/v2/models/tensorrt_llm/generate",
                        {"input_ids": PROMPT, "input_lengths": 2, "request_output_len": 6})
    eq((body["output_ids"], body["sequence_length"]), (PROMPT + want, 8), "with prompt")
    _, _, body = s.post("/v2/models/tensorrt_llm/generate", {"input_ids": PROMPT, "input_lengths": 2,
                                                            "request_output_len": 6, "exclude_input_in_output": True})
    eq((body["output_ids"], body["sequence_length"]), (want, 6), "prompt excluded")


# A large UINT64 seed that moves the start to another sentence ((2**53 - 1) mod 3 = 1). Not above 2**53: the
# fake reads HTTP JSON with JSON.parse, which rounds such numbers, so the two servers would part there.
SEED = 2**53 - 1


@check
def unary_model_answers_infer_with_word_lists_and_limits(s):
    stop_shape, stop_data = word_list([" data", " field of"])
    bad_shape, bad_data = word_list([" of", " in"])
    stop = [encode(" data"), encode(" field of")]
    bad = [encode(" of"), encode(" in")]
    cases = [
        ({}, {}),
        ({"seed": ("UINT64", [1, 1], [SEED])}, {"seed": SEED}),
        ({"stop_words_list": ("INT32", stop_shape, stop_data)}, {"stop": stop}),
        ({"bad_words_list": ("INT32", bad_shape, bad_data)}, {"bad": bad}),
        ({"end_id": ("INT32", [1, 1], [C[2]])}, {"end_id": C[2]}),
        ({"end_id": ("INT32", [1, 1], [C[2]]), "min_tokens": ("INT32", [1, 1], [5])}, {"end_id": C[2], "min_tokens": 5}),
    ]
    seen = set()
    for extra, ref_args in cases:
        ids = [0]  # sum 0: the corpus from its start, so the cases above bite early
        want, _ = reference(ids, 100, **ref_args)
        eq(tuple(want) in seen, False, f"reference: case {list(extra)} differs from the others")
        seen.add(tuple(want))
        status, _, body = s.post("/v2/models/tensorrt_llm_unary/infer",
                                 {"inputs": raw_inputs(ids, 100, exclude_input_in_output=("BOOL", [1, 1], [True]), **extra)})
        eq(status, 200, f"status {list(extra)}")
        out = outputs_of(body)
        eq(out["output_ids"]["data"], want, f"ids with {list(extra)}")
        eq(out["sequence_length"]["data"], [len(want)], f"length with {list(extra)}")


@check
def beams_come_in_one_response_and_refuse_streaming(s):
    status, _, body = s.post("/v2/models/tensorrt_llm_unary/infer",
                             {"inputs": raw_inputs(PROMPT, 5, beam_width=("INT32", [1, 1], [3]),
                                                   exclude_input_in_output=("BOOL", [1, 1], [True]))})
    eq(status, 200, "status")
    out = outputs_of(body)
    eq(out["output_ids"]["shape"], [1, 3, 5], "beam shape")
    eq(out["output_ids"]["data"], sum((reference(PROMPT, 5, k=k)[0] for k in range(3)), []), "beam ids")
    status, ctype, events = s.stream("tensorrt_llm", {"input_ids": PROMPT, "input_lengths": 2, "request_output_len": 3,
                                                      "streaming": True, "beam_width": 2})
    eq(status, 400, "beam + streaming status")
    eq("not supported with streaming" in events[0]["error"], True, f"beam + streaming error {events}")


@check
def return_sequences_interleave_when_streaming(s):
    status, _, events = s.stream("tensorrt_llm", {"input_ids": PROMPT, "input_lengths": 2, "request_output_len": 4,
                                                  "streaming": True, "num_return_sequences": 2})
    eq(status, 200, "status")
    eq([e["sequence_index"] for e in events], [0, 1] * 4, "interleaving")
    for k in (0, 1):
        eq([e["output_ids"] for e in events if e["sequence_index"] == k], reference(PROMPT, 4, k=k)[0], f"seq {k}")


@check
def log_probs_and_token_counts_are_returned_when_asked(s):
    want, _ = reference(PROMPT, 5)
    _, _, body = s.post("/v2/models/tensorrt_llm/generate", {
        "input_ids": PROMPT, "input_lengths": 2, "request_output_len": 5, "return_log_probs": True,
        "return_num_input_tokens": True, "return_num_output_tokens": True})
    eq(body["output_log_probs"], [log_prob(t) for t in want], "output_log_probs")
    eq(abs(body["cum_log_probs"] - sum(log_prob(t) for t in want)) < 1e-5, True, "cum_log_probs")
    eq((body["num_input_tokens"], body["num_output_tokens"]), (2, 5), "token counts")


@check
def unary_model_refuses_streaming(s):
    status, _, body = s.post("/v2/models/tensorrt_llm_unary/generate", {
        "input_ids": PROMPT, "input_lengths": 2, "request_output_len": 3, "streaming": True})
    eq((status, body), (400, {"error": "Streaming is only supported if model is deployed using decoupled mode."}),
       "answer")


@check
def ensemble_generate_echoes_prompt_and_streams_tokens_alone(s):
    prompt = "Hello world"
    ids = encode(prompt)
    want, _ = reference(ids, 40)
    r = rid("ens")
    status, _, body = s.post("/v2/models/ensemble/generate", {"id": r, "text_input": prompt, "max_tokens": 40})
    eq((status, body["text_output"]), (200, decode(ids + want)), "generate text")
    eq([(e["model"], e["event"], e["tokens"]) for e in s.events(r)],
       [("tensorrt_llm", "received", 0), ("tensorrt_llm", "completed", 40)], "inner request logged under outer id")
    status, _, events = s.stream("ensemble", {"text_input": prompt, "max_tokens": 40, "stream": True})
    eq([e["text_output"] for e in events], [decode([t]) for t in want], "per-token text")


@check
def ensemble_streaming_breaks_multibyte_characters(s):
    # A one-character prompt whose id sum starts the generation at the sentence holding the first Chinese
    # character, and enough tokens to reach two whole characters of it.
    first = next(i for i, t in enumerate(C) if decode([t]) == "\ufffd")
    sentence = max(j for j, p in enumerate(STARTS) if p <= first)
    n = first - STARTS[sentence] + 6
    prompt = next(chr(c) for c in range(32, 127) if sum(encode(chr(c))) % len(STARTS) == sentence)
    want, _ = reference(encode(prompt), n)
    eq(("\ufffd" in decode(want), sum(decode([t]) == "\ufffd" for t in want)), (False, 6),
       "reference: the last six byte tokens are two whole characters")
    _, _, events = s.stream("ensemble", {"text_input": prompt, "max_tokens": n, "stream": True})
    pieces = [e["text_output"] for e in events]
    eq(pieces, [decode([t]) for t in want], "pieces")
    eq(pieces.count("\ufffd"), 6, "every piece of a split character is U+FFFD")
    _, _, body = s.post("/v2/models/ensemble/generate", {"text_input": prompt, "max_tokens": n,
                                                         "exclude_input_in_output": True})
    eq(body["text_output"], decode(want), "non-streaming text is whole")


@check
def ensemble_stop_words_match_in_context(s):
    want, reason = reference(encode("Hello"), 200, stop=[encode(" data")])
    eq(reason, "stop", "reference stops")
    _, _, body = s.post("/v2/models/ensemble/generate", {"text_input": "Hello", "max_tokens": 200,
                                                         "stop_words": [" data"], "exclude_input_in_output": True})
    eq((body["text_output"], body["text_output"].endswith(" data")), (decode(want), True), "stopped text")
    _, _, body = s.post("/v2/models/ensemble/generate", {"text_input": "Hello", "max_tokens": 200,
                                                         "stop_words": ["data"], "exclude_input_in_output": True})
    eq(body["text_output"], decode(reference(encode("Hello"), 200, stop=[encode("data")])[0]), "'data' out of context")


@check
def ensemble_unary_answers_infer(s):
    want, _ = reference(encode("What"), 5)
    status, _, body = s.post("/v2/models/ensemble_unary/infer", {"inputs": [
        infer_input("text_input", "BYTES", [1, 1], ["What"]), infer_input("max_tokens", "INT32", [1, 1], [5])]})
    eq(status, 200, "status")
    eq(outputs_of(body)["text_output"]["data"], ["What" + decode(want)], "text")


@check
def bls_accumulates_or_streams_per_token(s):
    want, _ = reference(encode("Hello"), 30)
    _, _, events = s.stream("tensorrt_llm_bls", {"text_input": "Hello", "max_tokens": 30, "stream": True})
    eq([e["text_output"] for e in events], [decode(want[: i + 1]) for i in range(30)], "cumulative text")
    _, _, events = s.stream("tensorrt_llm_bls_per_token", {"text_input": "Hello", "max_tokens": 30, "stream": True})
    eq([e["text_output"] for e in events], [decode([t]) for t in want], "per-token text")
    _, _, events = s.stream("tensorrt_llm_bls", {"text_input": "Hello", "max_tokens": 3, "stream": True,
                                                 "num_return_sequences": 2, "return_log_probs": True})
    for k in (0, 1):
        ids = reference(encode("Hello"), 3, k=k)[0]
        eq([e["text_output"] for e in events if e["sequence_index"] == k], [decode(ids[: i + 1]) for i in range(3)],
           f"cumulative text of sequence {k}")
        eq([e["output_log_probs"] for e in events if e["sequence_index"] == k], [log_prob(t) for t in ids],
           f"log probs of sequence {k}")
    r = rid("bls")
    _, _, body = s.post("/v2/models/tensorrt_llm_bls/generate", {"id": r, "text_input": "Hello", "max_tokens": 30})
    eq(body["text_output"], "Hello" + decode(want), "generate text")
    eq([(e["model"], e["event"]) for e in s.events(r)], [("tensorrt_llm", "received"), ("tensorrt_llm", "completed")],
       "inner request logged under outer id")


@check
def llmapi_returns_text_and_reasons(s):
    ids = encode("Hello")
    want, _ = reference(ids, 6)
    _, _, events = s.stream("llmapi", {"text_input": "Hello", "sampling_param_max_tokens": 6, "streaming": True,
                                       "return_finish_reason": True, "return_stop_reason": True,
                                       "return_cumulative_logprob": True})
    eq([e["text_output"] for e in events], [decode(want[: i + 1]) for i in range(6)] + [decode(want)], "cumulative")
    eq([e["finish_reason"] for e in events], ["None"] * 6 + ["length"], "finish reasons")
    eq(abs(events[-1]["cumulative_logprob"] - sum(log_prob(t) for t in want)) < 1e-5, True, "cumulative_logprob")
    stop_want, reason = reference(ids, 200, stop=[encode(" data")])
    _, _, body = s.post("/v2/models/llmapi/generate", {
        "text_input": "Hello", "sampling_param_max_tokens": 200, "sampling_param_stop": [" data"],
        "sampling_param_exclude_input_from_output": True, "return_finish_reason": True, "return_stop_reason": True})
    eq((body["text_output"], body["finish_reason"], body["stop_reason"]), (decode(stop_want), reason, " data"),
       "stop string")


def _described(images):
    """GENERATOR.md "Images": what a multimodal model answers for (kind, bytes) images."""
    each = [f"#{i + 1} {kind} {len(data)} bytes {hashlib.sha256(data).hexdigest()[:8]}"
            for i, (kind, data) in enumerate(images)]
    return f"{len(images)} image{'' if len(images) == 1 else 's'}: {'; '.join(each)}."


@check
def multimodal_models_name_the_images_they_receive(s):
    jpeg = bytes([0xFF, 0xD8, 0xFF, 0xE0, 0, 16, 0x4A, 0x46, 0x49, 0x46])
    jpeg_url = "data:image/jpeg;base64," + base64.b64encode(jpeg).decode()
    url = "https://example.com/cat.png"
    want = _described([("data", jpeg), ("url", url.encode())])
    r = rid("mm")
    _, _, body = s.post("/v2/models/multimodal/generate", {"id": r, "text_input": "Hi", "max_tokens": 200,
                                                           "image_url_input": [jpeg_url, url]})
    eq(body.get("text_output"), "Hi" + want, "multimodal ensemble: the prompt, then the images named")
    eq([(e["model"], e["event"]) for e in s.events(r)],
       [("tensorrt_llm_multimodal", "received"), ("tensorrt_llm_multimodal", "completed")], "generator events")
    _, _, events = s.stream("multimodal", {"text_input": "Hi", "max_tokens": 200, "stream": True,
                                           "image_url_input": [jpeg_url]})
    eq("".join(e["text_output"] for e in events), _described([("data", jpeg)]), "multimodal streamed")
    status, _, body = s.post("/v2/models/multimodal/generate", {"text_input": "Hi", "max_tokens": 200,
                                                                "image_url_input": ["data:image/png;base64,AAAA"]})
    eq((status, "No connection adapters" in json.dumps(body)), (400, True),
       "a data: URI that is not JPEG fails in preprocessing")
    _, _, body = s.post("/v2/models/llmapi/generate", {"text_input": "Hi", "sampling_param_max_tokens": 200,
                                                       "sampling_param_exclude_input_from_output": True,
                                                       "image_url": [url, "data:image/png;base64,AAAA"]})
    eq(body.get("text_output"), _described([("url", url.encode()), ("data", bytes(3))]), "llmapi image_url")
    _, _, events = s.stream("tensorrt_llm_bls", {"text_input": "Hi", "max_tokens": 200, "stream": True,
                                                 "image_url_input": [jpeg_url]})
    eq([e.get("text_output") for e in events][-1:], [_described([("data", jpeg)])], "BLS image_url_input (accumulated)")


def _stop_running(s, model, body, stop_body):
    """Starts a long stream, stops it in-band (same id), returns (stopped stream's events, event log)."""
    import threading

    result = {}
    thread = threading.Thread(target=lambda: result.update(zip(("status", "ctype", "events"), s.stream(model, body))))
    thread.start()
    s.wait_event(body["id"], {"received"})
    time.sleep(0.2)
    status, _, stop_events = s.stream(model, stop_body)
    eq((status, stop_events), (200, []), "the stop request's own answer is an empty stream")
    thread.join(30)
    return result["events"], s.wait_event(body["id"], {"stopped", "completed", "cancelled", "error"})


@check
def stop_request_ends_a_running_raw_request(s):
    r = rid("stop")
    events, logged = _stop_running(
        s, "tensorrt_llm", {"id": r, "input_ids": PROMPT, "input_lengths": 2, "request_output_len": 3000,
                            "streaming": True},
        {"id": r, "input_ids": [0], "input_lengths": 0, "request_output_len": 0, "stop": True})
    eq(logged["event"], "stopped", "event")
    eq((0 < len(events) < 3000, logged["tokens"]), (True, len(events)), "tokens before the stop")


@check
def stop_request_ends_a_running_llmapi_request(s):
    r = rid("stop-llmapi")
    events, logged = _stop_running(
        s, "llmapi", {"id": r, "text_input": "Hello", "sampling_param_max_tokens": 3000, "streaming": True,
                      "return_finish_reason": True},
        {"id": r, "text_input": "", "stop": True})
    eq((logged["event"], events[-1]["finish_reason"]), ("stopped", "stopped"), "reason")


@check
def closing_the_stream_cancels_raw_and_llmapi_but_not_ensemble_or_bls(s):
    long = 400
    cases = {
        "tensorrt_llm": ({"input_ids": PROMPT, "input_lengths": 2, "request_output_len": long, "streaming": True},
                         "cancelled"),
        "llmapi": ({"text_input": "Hello", "sampling_param_max_tokens": long, "streaming": True}, "cancelled"),
        "ensemble": ({"text_input": "Hello", "max_tokens": long, "stream": True}, "completed"),
        "tensorrt_llm_bls": ({"text_input": "Hello", "max_tokens": long, "stream": True}, "completed"),
    }
    ids = {}
    for model, (body, _) in cases.items():
        ids[model] = rid(f"cancel-{model}")
        s.stream(model, {"id": ids[model], **body}, max_events=5)
    for model, (_, expected) in cases.items():
        logged = s.wait_event(ids[model], {"cancelled", "completed", "stopped", "error"})
        eq(logged["event"], expected, f"{model} after the client closed")
        if expected == "completed":
            eq(logged["tokens"], long, f"{model} inner request ran to its end")
        else:
            eq(logged["tokens"] < long, True, f"{model} stopped early ({logged['tokens']} tokens)")


@check
def errors_have_the_real_servers_status_and_text(s):
    body_ok = {"input_ids": [1], "input_lengths": 1, "request_output_len": 2}
    status, _, body = s.post("/v2/models/nope/generate", {"text_input": "x"})
    eq((status, body), (404, {"error": "Request for unknown model: 'nope' is not found"}), "unknown model")
    status, _, body = s.post("/v2/models/ensemble/generate", {"text_input": "x"})
    eq((status, "missing required input(s) ['max_tokens']" in body["error"]), (400, True), f"missing input {body}")
    status, _, body = s.post("/v2/models/tensorrt_llm_unary/infer", {"inputs": [
        infer_input("input_ids", "INT32", [1, 1], [1]), infer_input("input_lengths", "INT32", [1, 1], [1]),
        infer_input("request_output_len", "UINT32", [1, 1], [2])]})
    eq((status, "data-type is 'UINT32', but model 'tensorrt_llm_unary' expects 'INT32'" in body["error"]),
       (400, True), f"wrong dtype {body}")
    status, _, body = s.post("/v2/models/tensorrt_llm/generate", {**body_ok, "request_output_len": "abc"})
    eq(status, 500, f"wrong JSON type {body}")
    status, _, body = s.post("/v2/models/tensorrt_llm/infer", {"inputs": raw_inputs([1], 2)})
    eq((status, body), (501, {"error": "HTTP end point doesn't support models with decoupled transaction policy"}),
       "decoupled /infer")
    status, _, body = s.post("/v2/models/tensorrt_llm/generate", {**body_ok, "streaming": True})
    eq((status, body["error"].startswith("generate expects model to produce exactly 1 response")), (200, True),
       f"several responses on /generate {body}")


# ---- batches (GENERATOR.md "Batches") ---------------------------------------------------------------
def rows(out):
    """A JSON output tensor as its batch rows, each a nested list of the remaining dims."""
    def nest(flat, shape):
        if len(shape) <= 1:
            return list(flat)
        step = len(flat) // shape[0] if shape[0] else 0
        return [nest(flat[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])]

    return nest(out["data"], out["shape"])


def padded(single, width, pad):
    """A single request's [beams, w] rows padded to the batch's width."""
    return [row + [pad] * (width - len(row)) for row in single]


def compare_batch_row(batch_out, b, single_out, end_id, what):
    """Batch row b must equal the single request's answer, up to the batch's padding and batch_index."""
    eq(set(batch_out), set(single_out), f"{what}: output names")
    for name, out in batch_out.items():
        got, want = rows(out)[b], rows(single_out[name])[0]
        if name == "batch_index":
            eq((got, want), ([b], [0]), f"{what}: batch_index")
        elif name == "output_ids":
            eq(got, padded(want, out["shape"][2], end_id), f"{what}: output_ids padded with end_id {end_id}")
        elif name == "output_log_probs":
            eq(got, padded(want, out["shape"][2], 0), f"{what}: output_log_probs padded with 0")
        else:
            eq(got, want, f"{what}: {name}")


def batch_inputs(items, names):
    """One batch of raw inputs from per-item dicts name -> (dtype, row shape, row data); rows are padded
    to the longest with 0 (offsets of word lists with -1)."""
    inputs = []
    for name in names:
        dtype = items[0][name][0]
        if name in ("stop_words_list", "bad_words_list"):
            width = max(item[name][1][2] for item in items)
            data = []
            for item in items:
                w = item[name][1][2]
                row = item[name][2]
                data += row[:w] + [0] * (width - w) + row[w:] + [-1] * (width - w)
            inputs.append(infer_input(name, dtype, [len(items), 2, width], data))
            continue
        width = max(len(item[name][2]) for item in items)
        data = sum((item[name][2] + [0] * (width - len(item[name][2])) for item in items), [])
        inputs.append(infer_input(name, dtype, [len(items), width], data))
    return inputs


def single_inputs(item):
    return [infer_input(name, dtype, shape, data) for name, (dtype, shape, data) in item.items()]


def raw_item(ids, max_tokens, **extra):
    item = {
        "input_ids": ("INT32", [1, len(ids)], ids),
        "input_lengths": ("INT32", [1, 1], [len(ids)]),
        "request_output_len": ("INT32", [1, 1], [max_tokens]),
    }
    item.update(extra)
    return item


@check
def unary_batch_items_equal_single_requests(s):
    stop_shape, stop_data = word_list([" data", " is"])
    bad_shape, bad_data = word_list([" of"])
    none_shape, none_data = word_list([])
    end_ids = [2, C[8], 2]

    def extra(i):
        # A batch tensor has a row for every item, so every item names every optional input.
        def flag(value):
            return ("BOOL", [1, 1], [value])

        return {
            "end_id": ("INT32", [1, 1], [end_ids[i]]),
            "stop_words_list": ("INT32", *((stop_shape, stop_data) if i == 0 else (none_shape, none_data))),
            "bad_words_list": ("INT32", *((bad_shape, bad_data) if i == 1 else (none_shape, none_data))),
            "exclude_input_in_output": flag(i == 1),
            "return_log_probs": flag(i != 0),
            "return_num_input_tokens": flag(True),
            "return_num_output_tokens": flag(True),
        }

    prompts = [encode("Hello world"), PROMPT, [5, 6, 7, 8]]
    lengths = [8, 30, 9]
    refs = [
        reference(prompts[0], lengths[0], stop=[encode(" data"), encode(" is")]),
        reference(prompts[1], lengths[1], end_id=end_ids[1], bad=[encode(" of")]),
        reference(prompts[2], lengths[2]),
    ]
    eq(len({len(r[0]) for r in refs}), 3, "reference: the items have different output lengths")
    # Each item's own inputs must bite: its stop word ends item 0 and its end_id item 1 before their limits,
    # and item 1's bad word changes its output.
    eq([r[1] for r in refs], ["stop", "stop", "length"], "reference: reasons")
    eq(refs[1][0] != reference(prompts[1], lengths[1], end_id=end_ids[1])[0], True, "reference: item 1's bad word bites")
    items = [raw_item(prompts[i], lengths[i], **extra(i)) for i in range(3)]
    r = rid("batch")
    status, _, body = s.post("/v2/models/tensorrt_llm_unary/infer",
                             {"id": r, "inputs": batch_inputs(items, list(items[0]))})
    eq(status, 200, f"batch status {body}")
    batch_out = outputs_of(body)
    eq(batch_out["output_ids"]["shape"][:2], [3, 1], "output_ids [N, beams, maxlen]")
    ids_rows, length_rows = rows(batch_out["output_ids"]), rows(batch_out["sequence_length"])
    for b in range(3):
        prefix = [] if b == 1 else prompts[b]
        eq(ids_rows[b][0][: length_rows[b][0]], prefix + refs[b][0], f"item {b} ids follow GENERATOR.md")
        _, _, single = s.post("/v2/models/tensorrt_llm_unary/infer", {"inputs": single_inputs(items[b])})
        compare_batch_row(batch_out, b, outputs_of(single), end_ids[b], f"item {b}")
    eq([(e["event"], e["tokens"]) for e in s.events(r)],
       [("received", 0), ("completed", sum(len(ref[0]) for ref in refs))], "one request in the event log")

    beams = [raw_item(p, n, beam_width=("INT32", [1, 1], [2])) for p, n in ((PROMPT, 3), ([9, 10, 11], 7))]
    _, _, body = s.post("/v2/models/tensorrt_llm_unary/infer", {"inputs": batch_inputs(beams, list(beams[0]))})
    batch_out = outputs_of(body)
    eq(batch_out["output_ids"]["shape"][:2], [2, 2], "beams of every item")
    for b in range(2):
        _, _, single = s.post("/v2/models/tensorrt_llm_unary/infer", {"inputs": single_inputs(beams[b])})
        compare_batch_row(batch_out, b, outputs_of(single), 2, f"beam item {b}")


@check
def ensemble_unary_batch_items_equal_single_requests(s):
    prompts, lengths = ["What", "Hello world", "Machine learning"], [5, 12, 3]
    stops = [[" is", ""], ["", ""], [" data", " of"]]

    def item(b):
        return [infer_input("text_input", "BYTES", [1, 1], [prompts[b]]),
                infer_input("max_tokens", "INT32", [1, 1], [lengths[b]]),
                infer_input("stop_words", "BYTES", [1, 2], stops[b])]
    batch = [infer_input(t["name"], t["datatype"], [3, *t["shape"][1:]],
                         sum((item(b)[i]["data"] for b in range(3)), []))
             for i, t in enumerate(item(0))]
    r = rid("ens-batch")
    status, _, body = s.post("/v2/models/ensemble_unary/infer", {"id": r, "inputs": batch})
    eq(status, 200, f"batch status {body}")
    batch_out = outputs_of(body)
    eq(batch_out["text_output"]["shape"], [3, 1], "text_output [N, beams]")
    total = 0
    for b in range(3):
        want, _ = reference(encode(prompts[b]), lengths[b], stop=[encode(w) for w in stops[b] if w])
        total += len(want)
        eq(rows(batch_out["text_output"])[b], [prompts[b] + decode(want)], f"item {b} text follows GENERATOR.md")
        _, _, single = s.post("/v2/models/ensemble_unary/infer", {"inputs": item(b)})
        compare_batch_row(batch_out, b, outputs_of(single), 2, f"item {b}")
    eq([(e["model"], e["event"], e["tokens"]) for e in s.events(r)],
       [("tensorrt_llm_unary", "received", 0), ("tensorrt_llm_unary", "completed", total)],
       "inner request logged once under the outer id")


@check
def decoupled_models_refuse_batches_over_grpc(s):
    n = 3
    text = [infer_input("text_input", "BYTES", [n, 1], ["Hello", "What", "ML"]),
            infer_input("max_tokens", "INT32", [n, 1], [2, 3, 4])]
    cases = {
        "tensorrt_llm": [infer_input("input_ids", "INT32", [n, 2], PROMPT * n),
                         infer_input("input_lengths", "INT32", [n, 1], [2] * n),
                         infer_input("request_output_len", "INT32", [n, 1], [2] * n)],
        "ensemble": text,
        "tensorrt_llm_bls": text,
        "llmapi": text[:1],
    }
    refusal = f"batch size {n} > 1 is only supported by non-decoupled models"
    for model, inputs in cases.items():
        r = rid(f"batch-{model}")
        error = grpc_first_stream_error(s.host, s.grpc_port, model_infer_request(model, inputs, r))
        want = f"in ensemble 'ensemble', {refusal}" if model == "ensemble" else refusal
        eq(error, want, f"{model} refusal")
        logged = [(e["model"], e["event"], e["tokens"]) for e in s.events(r)]
        if model in ("tensorrt_llm", "ensemble", "llmapi"):
            inner = "llmapi" if model == "llmapi" else "tensorrt_llm"
            eq(logged, [(inner, "received", 0), (inner, "error", 0)], f"{model} event log")
    # The same request with batch 1 goes through, so the refusal is about N alone.
    one = [infer_input(t["name"], t["datatype"], [1, *t["shape"][1:]], t["data"][: len(t["data"]) // n])
           for t in cases["tensorrt_llm"]]
    eq(grpc_first_stream_error(s.host, s.grpc_port, model_infer_request("tensorrt_llm", one)), "",
       "batch 1 answered")


@check
def stop_request_ends_every_item_of_a_unary_batch(s):
    import threading

    r = rid("batch-stop")
    items = [raw_item(PROMPT, 3000, exclude_input_in_output=("BOOL", [1, 1], [True])),
             raw_item([7, 8, 9], 3000, exclude_input_in_output=("BOOL", [1, 1], [True]))]
    result = {}
    body = {"id": r, "inputs": batch_inputs(items, list(items[0]))}
    thread = threading.Thread(target=lambda: result.update(
        zip(("status", "ctype", "body"), s.post("/v2/models/tensorrt_llm_unary/infer", body))))
    thread.start()
    s.wait_event(r, {"received"})
    time.sleep(0.2)
    status, _, answer = s.post("/v2/models/tensorrt_llm_unary/infer", {"id": r, "inputs": [
        infer_input("input_lengths", "INT32", [1, 1], [0]), infer_input("request_output_len", "INT32", [1, 1], [0]),
        infer_input("stop", "BOOL", [1, 1], [True])]})
    eq((status, answer.get("outputs", [])), (200, []), "the stop request's own answer has no outputs")
    thread.join(30)
    eq(result["status"], 200, f"batch status {result['body']}")
    lengths = outputs_of(result["body"])["sequence_length"]["data"]
    eq((len(set(lengths)), 0 < lengths[0] < 3000), (1, True), f"items stopped together in lockstep {lengths}")
    logged = s.wait_event(r, {"stopped", "completed", "cancelled", "error"})
    eq((logged["event"], logged["tokens"]), ("stopped", sum(lengths)), "one stopped event, tokens summed")


@check
def core_refuses_inputs_of_different_batch_sizes(s):
    status, _, body = s.post("/v2/models/tensorrt_llm_unary/infer", {"inputs": [
        infer_input("input_ids", "INT32", [2, 2], PROMPT * 2), infer_input("input_lengths", "INT32", [3, 1], [2] * 3),
        infer_input("request_output_len", "INT32", [2, 1], [2] * 2)]})
    eq(status, 400, f"status {body}")
    eq("batch size does not match other inputs for 'tensorrt_llm_unary'" in body["error"], True, f"error {body}")


def fake_script(text: str) -> str:
    return "[[fake-script:" + base64.urlsafe_b64encode(text.encode()).decode().rstrip("=") + "]]"


@check
def scripted_output_from_the_prompt_marker_or_the_parameter(s):
    ids = encode(f"old {fake_script('first')} new {fake_script('ok 🤖')}")
    _, _, body = s.post("/v2/models/tensorrt_llm/generate", {"input_ids": ids, "input_lengths": len(ids),
                                                            "request_output_len": 50, "exclude_input_in_output": True})
    eq(body["output_ids"], encode("ok 🤖"), "raw model: the last marker of the decoded ids")
    _, _, body = s.post("/v2/models/ensemble/generate", {"text_input": fake_script("a long script"), "max_tokens": 3,
                                                        "exclude_input_in_output": True})
    eq(body["text_output"], decode(encode("a long script")[:3]), "ensemble: cut at max_tokens")
    for model in ("ensemble", "tensorrt_llm_bls"):
        status, _, events = s.stream(model, {"text_input": fake_script("marker"), "max_tokens": 20, "stream": True,
                                             "exclude_input_in_output": True, "parameters": {"fake_script": "param"}})
        texts = [e["text_output"] for e in events if "text_output" in e]
        # The BLS accumulates (each event holds all text so far); the ensemble sends one token per event.
        got = texts[-1] if model == "tensorrt_llm_bls" else "".join(texts)
        eq((status, got), (200, "param"), f"{model}: the parameter wins")


@check
def guided_decoding_answers_the_schema_instance_and_logs_the_guide(s):
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 2.5},
                                               "tags": {"type": "array", "items": {"enum": ["x", "y"]}},
                                               "ok": {"anyOf": [{"type": "boolean"}, {"type": "string"}]}}}
    r = rid("guided")
    _, _, body = s.post("/v2/models/ensemble/generate", {"id": r, "text_input": "Q", "max_tokens": 100,
                                                        "exclude_input_in_output": True,
                                                        "guided_decoding_guide_type": "json_schema",
                                                        "guided_decoding_guide": json.dumps(schema)})
    eq(body["text_output"], '{"n":3,"tags":["x"],"ok":true}', "instance text")
    eq(s.wait_event(r, {"received"}).get("guide"), "json_schema", "received event records the guide type")


# ---- vLLM backend stand-in (fakegen/vllm_model.py) ------------------------------------------------------
def vllm_text(ids, stop=()):
    """What the vLLM stand-in shows of `ids`: a matched stop string cut off the end."""
    text = decode(ids)
    for word in stop:
        if word and text.endswith(word):
            return text[: -len(word)]
    return text


@check
def vllm_has_the_backends_auto_completed_config(s):
    status, _, cfg = s.request("GET", "/v2/models/vllm/config")
    eq(status, 200, "vllm config")
    eq((cfg["max_batch_size"], cfg["model_transaction_policy"]["decoupled"]), (0, True), "no batching, decoupled")
    eq([(i["name"], i["data_type"], i["dims"]) for i in cfg["input"]][:4], [
        ("text_input", "TYPE_STRING", [1]), ("image", "TYPE_STRING", [-1]), ("stream", "TYPE_BOOL", [1]),
        ("sampling_parameters", "TYPE_STRING", [1])], "first inputs")
    eq({o["name"]: o["data_type"] for o in cfg["output"]}, {
        "text_output": "TYPE_STRING", "finish_reason": "TYPE_STRING", "cumulative_logprob": "TYPE_FP32",
        "logprobs": "TYPE_STRING", "num_input_tokens": "TYPE_UINT32", "num_output_tokens": "TYPE_UINT32"}, "outputs")
    status, _, body = s.post("/v2/models/vllm/infer", {"inputs": [infer_input("text_input", "BYTES", [1], ["Hi"])]})
    eq(status >= 400 and "decoupled" in json.dumps(body), True, "unary infer refused")


@check
def vllm_streams_deltas_with_vllm_reasons_and_counts(s):
    ids = encode("Hello")
    want, _ = reference(ids, 6)
    r = rid("vllm-stream")
    _, _, events = s.stream("vllm", {
        "id": r, "text_input": "Hello", "stream": True, "sampling_parameters": json.dumps({"max_tokens": 6}),
        "return_finish_reason": True, "return_num_input_tokens": True, "return_num_output_tokens": True})
    eq("".join(e["text_output"] for e in events), decode(want), "deltas add up to the text")
    eq([e["finish_reason"] for e in events][-1], "length", "last reason")
    eq(set(e["finish_reason"] for e in events[:-1]), {"None"}, "reasons until the end")
    eq(sum(e["num_output_tokens"] for e in events), 6, "output tokens over the deltas")
    eq(events[0]["num_input_tokens"], len(ids), "input tokens")
    eq(s.wait_event(r, {"completed", "cancelled", "error"})["tokens"], 6, "event log")


@check
def vllm_answers_whole_text_with_the_prompt_unless_excluded(s):
    ids = encode("Hello")
    want, _ = reference(ids, 200, stop=[encode(" data")])
    params = json.dumps({"max_tokens": 200, "stop": [" data"], "logprobs": 2})
    _, _, body = s.post("/v2/models/vllm/generate", {
        "text_input": "Hello", "sampling_parameters": params, "return_finish_reason": True,
        "return_cumulative_logprob": True, "return_logprobs": True})
    eq((body["text_output"], body["finish_reason"]), ("Hello" + vllm_text(want, [" data"]), "stop"), "whole text")
    eq(abs(body["cumulative_logprob"] - sum(log_prob(t) for t in want)) < 1e-4, True, "cumulative_logprob")
    maps = json.loads(body["logprobs"])
    eq([int(next(iter(m))) for m in maps], want, "one log-prob map per token, the sampled token first")
    eq(all(len(m) in (2, 3) for m in maps), True, "top 2 besides the sampled token")
    _, _, body = s.post("/v2/models/vllm/generate", {
        "text_input": "Hello", "exclude_input_in_output": True, "sampling_parameters": json.dumps({"max_tokens": 4})})
    eq(body["text_output"], decode(reference(ids, 4)[0]), "prompt excluded")


@check
def vllm_refuses_as_the_backend_does(s):
    status, _, events = s.stream("vllm", {"text_input": "Hi", "stream": True, "exclude_input_in_output": False})
    eq(status >= 400 and "`exclude_input_in_output` = False is not allowed" in json.dumps(events), True,
       "stream with the prompt")
    status, _, events = s.stream("vllm", {"text_input": "Hi", "stream": True,
                                          "sampling_parameters": json.dumps({"max_tokenz": 3})})
    eq(status >= 400 and "'NoneType' object has no attribute 'lora_name'" in json.dumps(events), True,
       "unknown sampling parameter")
    status, _, events = s.stream("vllm", {"text_input": "Hi", "stream": True,
                                          "sampling_parameters": json.dumps({"lora_name": "x"})})
    eq(status >= 400 and "LoRA feature is not enabled." in json.dumps(events), True, "LoRA")


@check
def vllm_closing_the_stream_cancels_the_request(s):
    r = rid("vllm-cancel")
    s.stream("vllm", {"id": r, "text_input": "Hello", "stream": True,
                      "sampling_parameters": json.dumps({"max_tokens": 400})}, max_events=5)
    logged = s.wait_event(r, {"cancelled", "completed", "error"})
    eq((logged["event"], logged["tokens"] < 400), ("cancelled", True), "cancelled early")


def main() -> int:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=f"http://127.0.0.1:{os.environ.get('TRITON_HTTP_PORT', '18000')}")
    parser.add_argument("--events", default=os.environ.get("TRTLLM_FAKE_EVENT_LOG",
                                                           os.path.join(root, "build", "triton-events.jsonl")))
    parser.add_argument("--grpc-port", type=int, default=int(os.environ.get("TRITON_GRPC_PORT", "18001")))
    parser.add_argument("-k", default="", help="run only checks whose name contains this")
    args = parser.parse_args()
    server = Server(args.url, args.events, args.grpc_port)
    passed = failed = 0
    for fn in CHECKS:
        if args.k not in fn.__name__:
            continue
        started = time.monotonic()
        try:
            fn(server)
            passed += 1
            print(f"ok   {fn.__name__} ({time.monotonic() - started:.1f}s)")
        except Exception as e:  # noqa: BLE001 - report every failing check, then go on
            failed += 1
            print(f"FAIL {fn.__name__}: {e}")
            if not isinstance(e, AssertionError):
                traceback.print_exc()
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
