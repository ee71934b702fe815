"""The event log of GENERATOR.md: one JSON object per line in the file named by TRTLLM_FAKE_EVENT_LOG.

Every model instance is its own stub process, so lines are written with a single O_APPEND write each,
which keeps them whole when several processes append at once.
"""

import json
import os
import time

ENV_VAR = "TRTLLM_FAKE_EVENT_LOG"


def log_event(model: str, request_id: str, event: str, tokens: int, guide: "str | None" = None) -> None:
    """`guide`: the request's guide type, recorded on `received` events that have one."""
    path = os.environ.get(ENV_VAR)
    if not path:
        return
    record = {"ts": int(time.time() * 1000), "model": model, "id": request_id, "event": event, "tokens": tokens}
    if guide is not None:
        record["guide"] = guide
    line = json.dumps(
        record,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line + "\n").encode("utf-8"))
    finally:
        os.close(fd)
