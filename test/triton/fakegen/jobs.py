"""Running generator requests: one thread each, so a model instance serves many at once and an in-band
`stop` request (same request id) can reach a request that is still generating."""

import threading
import time

import triton_python_backend_utils as pb_utils

from . import triton_io as io
from .events import log_event
from .generator import GenerationError
from .hooks import guide_of

POLL_S = 0.005
# Calls into pb_utils from the job threads, one at a time per stub process. Triton 2.51's Python stub
# corrupted its own heap when several threads sent responses and polled is_cancelled() at once: the
# stub died (a segfault in libpython's allocator, or glibc's "double free or corruption") within
# about 600 requests at 16 concurrent streams, and a frozen-replica run in CI lost it (see
# test/conformance/README.md). With the calls taken in turn, 9,069 requests ran with no crash.
# The execute() thread stays outside: holding the lock there stalled the stub past its 1 s health
# check.
PB_LOCK = threading.Lock()


class Job:
    """Stop and cancellation signals of one running request."""

    def __init__(self, request, shutdown: threading.Event):
        self.request = request
        self.request_id = request.request_id()
        self.stop_event = threading.Event()
        self.shutdown = shutdown

    def wait(self, delay_s: float):
        """Sleeps `delay_s`; returns "stopped" / "cancelled" as soon as either is seen, else None."""
        deadline = time.monotonic() + delay_s
        while True:
            if self.stop_event.is_set():
                return "stopped"
            # A Python model learns of cancellation only by polling (triton-cpu.md).
            with PB_LOCK:
                cancelled = self.request.is_cancelled()
            if self.shutdown.is_set() or cancelled:
                return "cancelled"
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            self.stop_event.wait(min(remaining, POLL_S))


class Registry:
    """Running jobs by request id, for the `stop` input. An empty id matches nothing."""

    def __init__(self):
        self._lock = threading.Lock()
        self._by_id: dict = {}

    def add(self, job: Job) -> None:
        if job.request_id:
            with self._lock:
                self._by_id.setdefault(job.request_id, set()).add(job)

    def remove(self, job: Job) -> None:
        with self._lock:
            jobs = self._by_id.get(job.request_id)
            if jobs is not None:
                jobs.discard(job)
                if not jobs:
                    del self._by_id[job.request_id]

    def stop(self, request_id: str) -> int:
        if not request_id:
            return 0
        with self._lock:
            jobs = list(self._by_id.get(request_id, ()))
        for job in jobs:
            job.stop_event.set()
        return len(jobs)


class Workers:
    """Tracks the threads of running jobs so finalize() can end them."""

    def __init__(self):
        self.shutdown = threading.Event()
        self._threads: set = set()
        self._lock = threading.Lock()

    def start(self, target, *args) -> None:
        def run():
            try:
                target(*args)
            finally:
                with self._lock:
                    self._threads.discard(threading.current_thread())

        thread = threading.Thread(target=run, daemon=True)
        with self._lock:
            self._threads.add(thread)
        thread.start()

    def stop_all(self, timeout_s: float = 5.0) -> None:
        self.shutdown.set()
        with self._lock:
            threads = list(self._threads)
        deadline = time.monotonic() + timeout_s
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))


def start_job(model_name: str, registry: Registry, workers: Workers, request, sender, parse, run) -> None:
    """Logs `request` as received, parses it with `parse(request)` and runs `run(job, parsed, sender)`
    on a thread of its own. A request `parse` refuses (INVALID_ARG) is logged as an error and answered
    with it."""
    job = Job(request, workers.shutdown)
    log_event(model_name, job.request_id, "received", 0, guide_of(request))
    try:
        parsed = parse(request)
    except (io.InvalidArgument, GenerationError) as e:
        log_event(model_name, job.request_id, "error", 0)
        sender.send(io.error(str(e)), flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
        return
    registry.add(job)
    workers.start(run, job, parsed, sender)
