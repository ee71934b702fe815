"""Images of a multimodal request (GENERATOR.md "Images"): the reply names what arrived, so a test can tell
an image came intact. The twin of packages/testing/src/engine/images.ts; pure, so it can be checked with
plain Python. Format: `2 images: #1 data 14 bytes 1a2b3c4d; #2 url 25 bytes 9f8e7d6c.` (per image: a
`data:` URI's decoded bytes or an http(s) URL's text, which is never fetched; its length; the first 8 hex
digits of its SHA-256).
"""

import base64
import binascii
import hashlib
import re
from urllib.parse import unquote_to_bytes

# NVIDIA's preprocessing model decodes a `data:` URI only with this prefix; any other URL it fetches with
# `requests.get`, which has no adapter for `data:`.
PREPROCESSING_DATA_URL = "data:image/jpeg;base64,"
DATA_URL = re.compile(r"^data:([^,;]+)((?:;[^,;]+)*?)(;base64)?,(.*)$", re.S)


class ImageLoadError(Exception):
    """An image the model's loader cannot read (the server answers INTERNAL with this text)."""


def _b64(payload: str) -> bytes:
    # Node's Buffer.from(s, 'base64') (the TypeScript fake) skips characters outside the alphabet and
    # missing padding; so does this.
    cleaned = re.sub(r"[^A-Za-z0-9+/]", "", payload.replace("-", "+").replace("_", "/"))
    try:
        return base64.b64decode(cleaned + "=" * (-len(cleaned) % 4))
    except (binascii.Error, ValueError):
        return base64.b64decode(cleaned[: len(cleaned) - len(cleaned) % 4])


def received(url: str, via_preprocessing: bool):
    """('data' | 'url', bytes) of one image URL."""
    match = DATA_URL.match(url)
    if match is None:
        return "url", url.encode("utf-8")
    if via_preprocessing and not url.startswith(PREPROCESSING_DATA_URL):
        raise ImageLoadError(f"No connection adapters were found for '{url}'")
    payload = match.group(4) or ""
    data = _b64(payload) if match.group(3) is not None else unquote_to_bytes(payload)
    return "data", data


def images_script(urls, via_preprocessing: bool):
    """The reply text naming the images (a list of str or bytes URLs), or None without images."""
    texts = [u.decode("utf-8", errors="replace") if isinstance(u, bytes) else str(u) for u in urls]
    if not texts:
        return None
    images = [received(u, via_preprocessing) for u in texts]
    each = [
        f"#{i + 1} {kind} {len(data)} bytes {hashlib.sha256(data).hexdigest()[:8]}"
        for i, (kind, data) in enumerate(images)
    ]
    return f"{len(images)} image{'' if len(images) == 1 else 's'}: {'; '.join(each)}."
