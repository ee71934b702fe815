"""Scripted output (GENERATOR.md "Scripted output"): the `[[fake-script:<base64url>]]` prompt marker. The twin of
packages/testing/src/script.ts; pure, so it can be checked with plain Python.
"""

import base64
import binascii
import re

MARKER = re.compile(r"\[\[fake-script:([A-Za-z0-9_-]*)={0,2}\]\]")


def parse_fake_script(prompt: str):
    """The text of the last well-formed marker of `prompt`, or None."""
    last = None
    for match in MARKER.finditer(prompt):
        payload = match.group(1)
        if len(payload) % 4 != 1:
            last = payload
    if last is None:
        return None
    try:
        data = base64.urlsafe_b64decode(last + "=" * (-len(last) % 4))
    except (binascii.Error, ValueError):
        return None
    return data.decode("utf-8", errors="replace")
