"""`tensorrt_llm_bls_official`: a BLS model shaped like NVIDIA's official `tensorrt_llm_bls`
(tensorrtllm_backend a315d2d), written here from its documented behaviour, so that what users of
the official model see is exercised on a real server:

- the inner `tensorrt_llm` request gets a fresh uuid as its request id, so an in-band stop sent
  with the client's id cannot reach it (and the event log shows the inner request under that uuid);
- every response of the inner request (`exec(decoupled=True)`) is decoded, none skipped: it relies
  on the final flag riding on the last response that carries tensors, and an empty inner response
  fails the request ("Expected output_ids tensor to have 3 dims.", as the official one does);
- with `accumulate_tokens` the streamed text is the whole text so far;
- a failure is answered with an error response (INTERNAL, the error's text), then the request ends
  with a flags-only final response, as after a success;
- cancellation is not passed on: the inner request runs to its end.
"""

import traceback
import uuid

import numpy as np
import triton_python_backend_utils as pb_utils

from . import triton_io as io
from .bls_model import PASSTHROUGH
from .bls_model import TritonPythonModel as OurBls

FINAL = pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL


class TritonPythonModel(OurBls):
    def _run(self, request, sender):
        try:
            inner_request = self._inner_request(request, str(uuid.uuid4()))
            streaming = bool(io.scalar(request, "stream", False))
            accumulated = None
            cancelled = False
            for response in inner_request.exec(decoupled=True):
                if response.has_error():
                    raise pb_utils.TritonModelException(response.error().message())
                tokens = self._output_ids(response)
                lengths = pb_utils.get_output_tensor_by_name(response, "sequence_length").as_numpy()
                if self.accumulate and streaming:
                    accumulated = tokens if accumulated is None else np.concatenate((accumulated, tokens), axis=2)
                    tokens = accumulated
                    lengths = np.asarray([[accumulated.shape[2]]], dtype=np.int32)
                cancelled = cancelled or request.is_cancelled()
                if not cancelled:
                    sender.send(self._decoded(response, tokens, lengths))
        except Exception as e:  # noqa: BLE001 - the official model answers every failure this way
            traceback.print_exc()
            sender.send(io.error(str(e), pb_utils.TritonError.INTERNAL))
        sender.send(flags=FINAL)

    @staticmethod
    def _output_ids(response):
        t = pb_utils.get_output_tensor_by_name(response, "output_ids")
        tokens = None if t is None else t.as_numpy()
        if tokens is None or tokens.ndim != 3:
            raise ValueError("Expected output_ids tensor to have 3 dims.")
        return tokens

    def _decoded(self, response, tokens, lengths):
        tensors = [pb_utils.Tensor("text_output", self._postprocess(tokens, lengths))]
        for name in PASSTHROUGH:
            t = pb_utils.get_output_tensor_by_name(response, name)
            if t is not None:
                tensors.append(pb_utils.Tensor(name, t.as_numpy()))
        return pb_utils.InferenceResponse(output_tensors=tensors)
