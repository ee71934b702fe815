"""`preprocessing` and `postprocessing`: the tokenizer steps of the ensemble, on the fake vocabulary.

Same tensor names as the official inflight_batcher_llm models; the multimodal and embedding-bias
inputs are accepted and ignored.
"""

import numpy as np
import triton_python_backend_utils as pb_utils

from . import triton_io as io
from .vocab import END_ID, PAD_ID, decode, encode
from .word_lists import to_word_list


def _per_item(value, batch: int, default):
    """A `[batch, 1]` input as one Python value per batch item."""
    if value is None:
        return [default] * batch
    flat = value.reshape(batch, -1)
    return [flat[b, 0].item() for b in range(batch)]


def _word_lists(value, batch: int) -> np.ndarray:
    if value is None:
        return np.zeros((batch, 2, 0), dtype=np.int32)
    rows = value.reshape(batch, -1)
    return to_word_list([[w for w in rows[b]] for b in range(batch)])


class Preprocessing:
    def initialize(self, args):
        self.config = io.model_config_of(args)

    def execute(self, requests):
        responses = []
        for request in requests:
            try:
                responses.append(self._one(request))
            except io.InvalidArgument as e:
                responses.append(io.error(str(e)))
        return responses

    def _one(self, request):
        query = io.required(request, "QUERY")
        batch = int(query.shape[0])
        texts = [t if isinstance(t, bytes) else str(t).encode("utf-8") for t in query.reshape(batch, -1)[:, 0]]
        ids = [encode(t) for t in texts]
        end_ids = _per_item(io.tensor(request, "END_ID"), batch, END_ID)
        pad_ids = _per_item(io.tensor(request, "PAD_ID"), batch, PAD_ID)
        width = max(len(i) for i in ids)
        input_ids = np.zeros((batch, width), dtype=np.int32)
        for b, row in enumerate(ids):
            input_ids[b, :] = pad_ids[b]
            input_ids[b, : len(row)] = row
        tensors = {
            "INPUT_ID": input_ids,
            "REQUEST_INPUT_LEN": io.int32([len(i) for i in ids], (batch, 1)),
            "REQUEST_OUTPUT_LEN": io.required(request, "REQUEST_OUTPUT_LEN").astype(np.int32).reshape(batch, 1),
            "BAD_WORDS_IDS": _word_lists(io.tensor(request, "BAD_WORDS_DICT"), batch),
            "STOP_WORDS_IDS": _word_lists(io.tensor(request, "STOP_WORDS_DICT"), batch),
            "OUT_END_ID": io.int32(end_ids, (batch, 1)),
            "OUT_PAD_ID": io.int32(pad_ids, (batch, 1)),
        }
        return pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor(k, v) for k, v in tensors.items()])


def decode_batch(tokens: np.ndarray, lengths: np.ndarray, skip_special_tokens: bool) -> np.ndarray:
    """TOKENS_BATCH `[batch, beams, len]` and SEQUENCE_LENGTH `[batch, beams]` to text `[batch, beams]`."""
    batch, beams = tokens.shape[0], tokens.shape[1]
    lengths = lengths.reshape(batch, beams)
    out = np.empty((batch, beams), dtype=np.object_)
    for b in range(batch):
        for k in range(beams):
            ids = tokens[b, k, : int(lengths[b, k])].tolist()
            out[b, k] = decode(ids, skip_special_tokens).encode("utf-8")
    return out


class Postprocessing:
    def initialize(self, args):
        self.config = io.model_config_of(args)
        self.skip_special_tokens = io.bool_parameter(self.config, "skip_special_tokens", True)

    def execute(self, requests):
        responses = []
        for request in requests:
            try:
                tokens = io.required(request, "TOKENS_BATCH")
                lengths = io.required(request, "SEQUENCE_LENGTH")
            except io.InvalidArgument as e:
                responses.append(io.error(str(e)))
                continue
            text = decode_batch(tokens, lengths, self.skip_special_tokens)
            responses.append(pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor("OUTPUT", text)]))
        return responses
