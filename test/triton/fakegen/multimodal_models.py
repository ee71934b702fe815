"""`multimodal_preprocessing`: the first step of the `multimodal` ensemble (NVIDIA's multimodal/ensemble).

It tokenizes as `preprocessing` does and takes the image inputs upstream's preprocessing takes (IMAGE_URL,
IMAGE_BYTES, IMAGE_SIZES, VIDEO_BYTES, and the pixel tensor upstream gives the encoder). It loads no
picture: it names the IMAGE_URL images (images.py) in IMAGES_SCRIPT, which the ensemble maps to the
generator's `fake_images_script` input, so the reply says what arrived while the prompt stays as sent.
"""

import numpy as np
import triton_python_backend_utils as pb_utils

from . import triton_io as io
from .images import ImageLoadError, images_script
from .tokenizer_models import Preprocessing


class MultimodalPreprocessing(Preprocessing):
    def execute(self, requests):
        responses = []
        for request in requests:
            try:
                text = self._one(request)
                responses.append(
                    pb_utils.InferenceResponse(
                        output_tensors=[*text.output_tensors(), pb_utils.Tensor("IMAGES_SCRIPT", _scripts(request))]
                    )
                )
            except io.InvalidArgument as e:
                responses.append(io.error(str(e)))
            except ImageLoadError as e:
                responses.append(io.error(str(e), pb_utils.TritonError.INTERNAL))
        return responses


def _scripts(request) -> np.ndarray:
    """IMAGES_SCRIPT `[batch, 1]`: per batch item the text naming its images ('' without images)."""
    batch = int(io.required(request, "QUERY").shape[0])
    urls = io.tensor(request, "IMAGE_URL")
    rows = [[] for _ in range(batch)] if urls is None else urls.reshape(batch, -1).tolist()
    out = np.empty((batch, 1), dtype=np.object_)
    for b, row in enumerate(rows):
        out[b, 0] = (images_script(row, via_preprocessing=True) or "").encode("utf-8")
    return out
