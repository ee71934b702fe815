"""The "fake-bytes-v1" vocabulary: 3 specials, 256 byte tokens, 31 whole words (GENERATOR.md)."""

PAD_ID = 0
BOS_ID = 1
END_ID = 2
SPECIAL_NAMES = {PAD_ID: "<pad>", BOS_ID: "<s>", END_ID: "</s>"}
BYTE_BASE = 3
WORD_BASE = 259
WORDS = (
    " Machine", " learning", " is", " a", " field", " of", " study", " in", " artificial",
    " intelligence", ".", " Models", " learn", " patterns", " from", " data", " and", " make",
    " predictions", " the", " to", " computers", " ability", " that", " gives", "What", " ML", "?",
    "Hello", " world", ",",
)
VOCAB_SIZE = WORD_BASE + len(WORDS)

_WORD_BYTES = tuple(word.encode("utf-8") for word in WORDS)
# Longest first so the first match at a position is the longest one.
_BY_LENGTH = sorted(range(len(WORDS)), key=lambda i: -len(_WORD_BYTES[i]))


def token_bytes(token_id: int) -> bytes:
    """Bytes of one id; specials and ids outside the vocabulary have none."""
    if BYTE_BASE <= token_id < WORD_BASE:
        return bytes((token_id - BYTE_BASE,))
    if WORD_BASE <= token_id < VOCAB_SIZE:
        return _WORD_BYTES[token_id - WORD_BASE]
    return b""


def encode(text) -> list[int]:
    """Greedy longest word match over the UTF-8 bytes, else one byte token; never adds specials."""
    data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    ids: list[int] = []
    pos = 0
    while pos < len(data):
        for i in _BY_LENGTH:
            word = _WORD_BYTES[i]
            if data.startswith(word, pos):
                ids.append(WORD_BASE + i)
                pos += len(word)
                break
        else:
            ids.append(BYTE_BASE + data[pos])
            pos += 1
    return ids


def decode(ids, skip_special_tokens: bool = True) -> str:
    """Concatenated bytes decoded as UTF-8; each invalid or incomplete sequence becomes U+FFFD."""
    parts = []
    for token_id in ids:
        token_id = int(token_id)
        if token_id in SPECIAL_NAMES and not skip_special_tokens:
            parts.append(SPECIAL_NAMES[token_id].encode("utf-8"))
        else:
            parts.append(token_bytes(token_id))
    return b"".join(parts).decode("utf-8", errors="replace")
