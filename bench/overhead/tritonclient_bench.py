"""Child process of the overhead benchmark: the official Python tritonclient (gRPC streaming API).

Reads a JSON job from argv[1] and prints one JSON result line, like client.ts does for the Node
variants (mode "cold": one request, the line at its first token, for cold-start.ts). All requests go over one `start_stream` call, the way tritonclient streams: a closed loop
keeps `concurrency` requests in flight, sending the next one from the callback when one ends.
"""

import gc
import json
import os
import sys
import threading
import time

import numpy as np
import tritonclient.grpc as grpcclient


def make_inputs(prompt, max_tokens):
    text = grpcclient.InferInput("text_input", [1, 1], "BYTES")
    text.set_data_from_numpy(np.array([[prompt.encode("utf-8")]], dtype=np.object_))
    tokens = grpcclient.InferInput("max_tokens", [1, 1], "INT32")
    tokens.set_data_from_numpy(np.array([[max_tokens]], dtype=np.int32))
    stream = grpcclient.InferInput("stream", [1, 1], "BOOL")
    stream.set_data_from_numpy(np.array([[True]], dtype=bool))
    return [text, tokens, stream]


class Loop:
    """Sends `total` requests keeping `concurrency` in flight; counts tokens per request."""

    def __init__(self, client, prompts, total, concurrency, max_tokens, first_id, on_first=None):
        self.client = client
        self.prompts = prompts
        self.total = total
        self.concurrency = concurrency
        self.max_tokens = max_tokens
        self.first_id = first_id
        self.on_first = on_first
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.sent = 0
        self.completed = 0
        self.tokens = 0
        self.text = {}
        self.error = None

    def send_next(self):
        n = self.sent
        self.sent += 1
        rid = str(self.first_id + n)
        self.text[rid] = ""
        self.client.async_stream_infer(
            model_name="ensemble",
            inputs=make_inputs(self.prompts[n % len(self.prompts)], self.max_tokens),
            request_id=rid,
            enable_empty_final_response=True,
        )

    def callback(self, result, error):
        with self.lock:
            if error is not None:
                self.error = str(error)
                self.done.set()
                return
            response = result.get_response()
            rid = response.id
            out = result.as_numpy("text_output")
            if out is not None and out.size > 0:
                if self.text.get(rid) == "" and self.on_first is not None:
                    self.on_first()
                self.tokens += 1
                self.text[rid] = self.text.get(rid, "") + out.reshape(-1)[0].decode("utf-8", "replace")
            final = response.parameters.get("triton_final_response")
            if final is not None and final.bool_param:
                self.text.pop(rid, None)
                self.completed += 1
                if self.sent < self.total:
                    self.send_next()
                elif self.completed == self.total:
                    self.done.set()

    def run(self):
        with self.lock:
            for _ in range(min(self.concurrency, self.total)):
                self.send_next()
        self.done.wait()
        if self.error is not None:
            raise RuntimeError(self.error)


class Dispatch:
    """tritonclient takes one callback per stream; successive loops share the stream through this."""

    def __init__(self):
        self.target = None

    def __call__(self, result, error):
        self.target.callback(result, error)


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def main():
    job = json.loads(sys.argv[1])
    host = job["grpcUrl"].split("://", 1)[-1]
    client = grpcclient.InferenceServerClient(url=host)
    dispatch = Dispatch()
    client.start_stream(callback=dispatch)
    prompts = job["prompts"]
    if job["mode"] == "cold":
        # Process start to first token (see cold-start.ts): one request, a line at its first token,
        # then out at once, as the Node cold-start children do.
        def first_token():
            print(json.dumps({"cpuMs": time.process_time() * 1000}))
            sys.stdout.flush()
            os._exit(0)

        dispatch.target = Loop(client, prompts, 1, 1, job["maxTokens"], 0, first_token)
        dispatch.target.run()
        raise RuntimeError("the stream ended without a token")
    if job["mode"] == "throughput":
        if job["warmup"] > 0:
            dispatch.target = Loop(client, prompts, job["warmup"], job["concurrency"], job["maxTokens"], 0)
            dispatch.target.run()
        loop = Loop(client, prompts, job["requests"], job["concurrency"], job["maxTokens"], 1_000_000)
        dispatch.target = loop
        cpu0 = time.process_time()
        t0 = time.perf_counter()
        loop.run()
        wall_ms = (time.perf_counter() - t0) * 1000
        cpu_us = (time.process_time() - cpu0) * 1e6
        expected = job["requests"] * job["maxTokens"]
        if loop.tokens != expected:
            raise RuntimeError(f"{loop.tokens} tokens, expected {expected}")
        print(json.dumps({"tokens": loop.tokens, "requests": job["requests"], "wallMs": wall_ms, "cpuUs": cpu_us}))
        sys.stdout.flush()
        client.stop_stream()
        client.close()
        return
    # memory: warm up with one-token requests, then hold `streams` requests open after their first token
    dispatch.target = Loop(client, prompts, 20, 1, 1, 0)
    dispatch.target.run()
    time.sleep(0.2)
    gc.collect()
    before = rss_bytes()
    firsts = [0]
    established = threading.Event()

    def on_first():
        firsts[0] += 1
        if firsts[0] == job["streams"]:
            established.set()

    loop = Loop(client, prompts, job["streams"], job["streams"], 2, 1_000_000, on_first)
    dispatch.target = loop
    with loop.lock:
        for _ in range(job["streams"]):
            loop.send_next()
    established.wait()
    time.sleep(0.5)
    gc.collect()
    after = rss_bytes()
    print(json.dumps({"streams": job["streams"], "rssBytes": after - before, "heapBytes": None}))
    sys.stdout.flush()
    # stop_stream() would wait for every open request (server #5833); leave at once instead.
    os._exit(0)


if __name__ == "__main__":
    main()
