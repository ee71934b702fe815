"""The deterministic generator of GENERATOR.md: walks the encoded corpus from a position fixed by the input.

Pure and synchronous: a `Sequence` yields one token per `step()`; timing, streaming and stop/cancel
handling belong to the models that drive it.
"""

from dataclasses import dataclass, field

from .vocab import END_ID, decode, encode

CORPUS = (
    " Machine learning is a field of study in artificial intelligence. 机器学习让计算机从数据中学习。"
    " Models learn patterns from data 🤖 and make predictions."
)
CORPUS_IDS = tuple(encode(CORPUS))
CORPUS_LEN = len(CORPUS_IDS)
# GENERATOR.md: a reply starts at a sentence: 0 and every position after a token that ends one.
SENTENCE_STARTS = tuple(
    i for i in range(CORPUS_LEN) if i == 0 or decode(CORPUS_IDS[:i]).endswith((".", "\u3002"))
)


class GenerationError(ValueError):
    """The request cannot be generated (bad arguments); the models answer it with INVALID_ARG."""


def log_prob(token_id: int) -> float:
    return -(1 + token_id % 7) / 8


@dataclass
class GenParams:
    input_ids: list
    max_tokens: int
    end_id: int = END_ID
    min_tokens: int = 0
    seed: int = 0
    stop_words: list = field(default_factory=list)
    bad_words: list = field(default_factory=list)
    # GENERATOR.md "Scripted output": encode(script) instead of the corpus; end_id, min_tokens, stop and
    # bad words and seed do not apply.
    script: "str | None" = None


def _ends_with(tokens: list, word) -> bool:
    n = len(word)
    return 0 < n <= len(tokens) and tokens[-n:] == list(word)


class Sequence:
    """One generated sequence k (beam index, or return-sequence index)."""

    def __init__(self, params: GenParams, k: int = 0):
        self.params = params
        self.k = k
        self.script = None if params.script is None else encode(params.script)
        sentence = (sum(int(t) for t in params.input_ids) + int(params.seed) + k) % len(SENTENCE_STARTS)
        self.pos = 0 if self.script is not None else SENTENCE_STARTS[sentence]
        self.tokens: list = []
        self.finish = None  # "stop" | "length" | "stopped" | "cancelled"
        self.stop_word = None  # index into params.stop_words of the word that ended it

    @property
    def done(self) -> bool:
        return self.finish is not None

    def step(self):
        """Produces the next token, or None when the sequence ends without one (end_id, max_tokens 0)."""
        p = self.params
        if len(self.tokens) >= p.max_tokens:
            self.finish = "length"
            return None
        if self.script is not None:
            return self._scripted()
        for _ in range(CORPUS_LEN + 1):
            tok = CORPUS_IDS[self.pos % CORPUS_LEN]
            self.pos = (self.pos + 1) % CORPUS_LEN
            candidate = self.tokens + [tok]
            if not any(_ends_with(candidate, w) for w in p.bad_words):
                break
        else:
            raise GenerationError("bad_words_list bans every token the generator can produce")
        if len(self.tokens) >= p.min_tokens and tok == p.end_id:
            self.finish = "stop"
            return None
        self.tokens.append(tok)
        if len(self.tokens) >= p.min_tokens:
            for i, word in enumerate(p.stop_words):
                if _ends_with(self.tokens, word):
                    self.finish = "stop"
                    self.stop_word = i
                    return tok
        if len(self.tokens) >= p.max_tokens:
            self.finish = "length"
        return tok

    def ends_without_token(self) -> bool:
        """Whether the next step would end the sequence without a token (it finds end_id): the token
        given last is then its last, and its response can carry the final flag."""
        p = self.params
        if self.done or self.script is not None or len(self.tokens) >= p.max_tokens:
            return False
        pos = self.pos
        for _ in range(CORPUS_LEN + 1):
            tok = CORPUS_IDS[pos % CORPUS_LEN]
            pos = (pos + 1) % CORPUS_LEN
            if not any(_ends_with(self.tokens + [tok], w) for w in p.bad_words):
                break
        else:
            return False  # the next step refuses the request instead
        return len(self.tokens) >= p.min_tokens and tok == p.end_id

    def _scripted(self):
        if self.pos >= len(self.script):
            self.finish = "stop"
            return None
        tok = self.script[self.pos]
        self.pos += 1
        self.tokens.append(tok)
        # A script that fits exactly ends with "stop": only a cut one is "length".
        if self.pos >= len(self.script):
            self.finish = "stop"
        elif len(self.tokens) >= self.params.max_tokens:
            self.finish = "length"
        return tok


def generate_all(params: GenParams, k: int = 0) -> Sequence:
    """Runs a sequence to its end without timing (for checks and tests)."""
    seq = Sequence(params, k)
    while not seq.done:
        seq.step()
    return seq
