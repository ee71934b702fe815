"""Reading request tensors and model parameters inside the Python backend."""

import json

import numpy as np
import triton_python_backend_utils as pb_utils


class InvalidArgument(ValueError):
    """A request the model refuses; answered with TritonError.INVALID_ARG and this message."""


def tensor(request, name):
    t = pb_utils.get_input_tensor_by_name(request, name)
    return None if t is None else t.as_numpy()


def required(request, name):
    """A required input. Triton 2.51 checks only the number of inputs, so one can still be missing."""
    value = tensor(request, name)
    if value is None:
        raise InvalidArgument(f"missing required input '{name}'")
    return value


def scalar(request, name, default=None):
    """A `[batch, 1]` (or reshaped `[batch]`) input of a batch-1 request as a Python value."""
    value = tensor(request, name)
    if value is None:
        return default
    return scalar_of(name, value)


def any_flag(request, name) -> bool:
    """A BOOL input that is true for any batch item (absent: false)."""
    value = tensor(request, name)
    return value is not None and bool(np.any(value))


def required_scalar(request, name):
    return scalar_of(name, required(request, name))


def scalar_of(name, value):
    flat = np.asarray(value).reshape(-1)
    if flat.size != 1:
        raise InvalidArgument(f"input '{name}' must hold one value per request, got shape {list(value.shape)}")
    item = flat[0].item() if hasattr(flat[0], "item") else flat[0]
    return item


def batch_size(request, model_name: str) -> int:
    """The batch dimension N shared by every input (Triton checks it too; 1 for a request without inputs)."""
    size = None
    for t in request.inputs():
        shape = t.as_numpy().shape
        if not shape:
            continue
        if size is None:
            size = int(shape[0])
        elif shape[0] != size:
            raise InvalidArgument(f"input '{t.name()}' batch size does not match other inputs for '{model_name}'")
    return 1 if size is None else size


def batch_refusal(size: int) -> InvalidArgument:
    return InvalidArgument(f"batch size {size} > 1 is only supported by non-decoupled models")


class Row:
    """Batch item b of a request: row b of every input, read like a request of its own."""

    def __init__(self, request, b: int):
        self.request = request
        self.b = b

    def tensor(self, name):
        value = tensor(self.request, name)
        return None if value is None else np.asarray(value)[self.b]

    def required(self, name):
        value = self.tensor(name)
        if value is None:
            raise InvalidArgument(f"missing required input '{name}'")
        return value

    def scalar(self, name, default=None):
        value = self.tensor(name)
        return default if value is None else scalar_of(name, value)

    def required_scalar(self, name):
        return scalar_of(name, self.required(name))

    def flag(self, name, default: bool) -> bool:
        return bool(self.scalar(name, default))


def strings(request, name) -> list:
    """A BYTES input of a batch-1 request as a list of bytes objects (absent: empty list)."""
    value = tensor(request, name)
    if value is None:
        return []
    return [v if isinstance(v, bytes) else str(v).encode("utf-8") for v in value.reshape(-1)]


def parameter(model_config: dict, key: str, default: str) -> str:
    entry = model_config.get("parameters", {}).get(key)
    if not entry:
        return default
    value = entry.get("string_value", "")
    return default if value == "" or value.startswith("${") else value


def model_config_of(args) -> dict:
    return json.loads(args["model_config"])


def bool_parameter(model_config: dict, key: str, default: bool) -> bool:
    return parameter(model_config, key, "true" if default else "false").strip().lower() in ("1", "true", "yes")


def int32(values, shape) -> np.ndarray:
    return np.asarray(values, dtype=np.int32).reshape(shape)


def error(message: str, code=None):
    if code is None:
        code = pb_utils.TritonError.INVALID_ARG
    return pb_utils.InferenceResponse(error=pb_utils.TritonError(message, code))


def cancelled_response():
    # Same text as the official LLM-API model uses for a cancelled request.
    return error("Request cancelled by client", pb_utils.TritonError.CANCELLED)
