"""The test hooks a generator request carries (GENERATOR.md "Scripted output", "Guided decoding"): a script
from the `fake_script` request parameter or the prompt's marker, else the JSON text a guide asks for. The
twin of packages/testing/src/engine/test-hooks.ts.
"""

import json

from . import triton_io as io
from .guided import guided_text
from .script import parse_fake_script


def script_parameter(request):
    """The `fake_script` request parameter (None when absent); refused when it is not a string."""
    raw = request.parameters()
    params = json.loads(raw) if raw else {}
    if "fake_script" not in params:
        return None
    value = params["fake_script"]
    if not isinstance(value, str):
        raise io.InvalidArgument("request parameter 'fake_script' must be a string")
    return value


def guide_of(request):
    """The guide type of a request: that of its first batch item that has a non-empty one."""
    for value in io.strings(request, "guided_decoding_guide_type"):
        if value:
            return value.decode("utf-8", errors="replace")
    return None


def script_of(prompt: str, row, script_param):
    """What batch item `row` (an io.Row, or anything with `tensor(name)`) generates instead of the
    corpus: the parameter, else the prompt's marker, else the text naming its images, else the guided
    text; None for the corpus."""
    if script_param is not None:
        return script_param
    scripted = parse_fake_script(prompt)
    if scripted is not None:
        return scripted
    # The multimodal ensemble's preprocessing step names the request's images here (images.py), since an
    # ensemble step cannot add request parameters and the prompt must stay as sent.
    images = _row_string(row, "fake_images_script")
    if images:
        return images
    guide_type = _row_string(row, "guided_decoding_guide_type")
    if not guide_type:
        return None
    return guided_text(guide_type, _row_string(row, "guided_decoding_guide"))


def _row_string(row, name):
    value = row.tensor(name)
    if value is None:
        return None
    flat = value.reshape(-1)
    if flat.size == 0:
        return None
    item = flat[0]
    return (item if isinstance(item, bytes) else str(item).encode("utf-8")).decode("utf-8", errors="replace")
