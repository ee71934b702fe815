"""The `[batch, 2, N]` word-list layout of `stop_words_list` / `bad_words_list` (trtllm-models.md)."""

import numpy as np

from .vocab import encode


def to_word_list(batch_words) -> np.ndarray:
    """batch_words: per batch item, a list of words (str or bytes). Empty words are skipped."""
    flat, offsets = [], []
    for words in batch_words:
        ids, ends = [], []
        for word in words:
            word_ids = encode(word)
            if not word_ids:
                continue
            ids.extend(word_ids)
            ends.append(len(ids))
        flat.append(ids)
        offsets.append(ends)
    if all(len(words) == 0 for words in batch_words):
        return np.zeros((len(batch_words), 2, 0), dtype=np.int32)
    width = max(1, max(len(ids) for ids in flat))
    out = np.zeros((len(batch_words), 2, width), dtype=np.int32)
    out[:, 1, :] = -1
    for b, (ids, ends) in enumerate(zip(flat, offsets)):
        out[b, 0, : len(ids)] = ids
        out[b, 1, : len(ends)] = ends
    return out


def from_word_list(item) -> list:
    """One batch item `[2, N]` back to a list of id sequences; offsets stop at the first negative."""
    item = np.asarray(item)
    if item.size == 0:
        return []
    if item.ndim != 2 or item.shape[0] != 2:
        raise ValueError(f"a word list item must have shape [2, N], got {list(item.shape)}")
    ids, ends = item[0].tolist(), item[1].tolist()
    words, start = [], 0
    for end in ends:
        if end < 0:
            break
        if end > len(ids) or end < start:
            raise ValueError(f"word list offset {end} is out of range")
        if end > start:
            words.append(ids[start:end])
        start = end
    return words
