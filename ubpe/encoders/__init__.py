"""Encoders: one protocol, a registry by name, any fitted vocabulary.

An encoder turns a document's parts (runs of base ids, see :mod:`ubpe.splitting`) into
``[(tokens, score)]``, best first. Every encoder is lossless: its tokens decode to the parts.
The score reported is always the tf-idf score of ubpe (sum over distinct tokens of
``(1 + ln count) * weight``, per part), so encodings from different encoders compare.

>>> from ubpe.vocabulary import Vocabulary
>>> vocab = Vocabulary.from_merges(2, [0], [1], documents=[1], n_docs=2)   # token 2 = [0 1]
>>> make_encoder("tfidf", vocab).encode([np.array([0, 1, 0], np.int32)], top_n=2)
[([2, 0], 0.4054651081081644), ([0, 1, 0], 0.0)]
>>> {"tfidf", "classic", "ranked"} <= set(available_encoders())
True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from .tfidf import ClassicEncoder, UniversalEncoder
from ..errors import InvalidParameterError
from .ranked import DropoutEncoder, RankedEncoder
from ..vocabulary import ID_DTYPE, Vocabulary

Encoding = tuple[list[int], float]
# top-n search keeps top_n candidates per lattice position: past this it is a mistake, not a
# request (memory grows as length x top_n)
MAX_TOP_N = 4096


class Encoder(Protocol):
    """What every encoder offers; ``supports_nbest`` says whether ``top_n > 1`` works."""

    name: str
    supports_nbest: bool
    deterministic: bool

    def encode(self, parts: Sequence[np.ndarray], top_n: int = 1) -> list[Encoding]: ...


@dataclass(frozen=True)
class EncoderInfo:
    """A registered encoder: how to build it and what it is."""

    name: str
    factory: Callable[..., Encoder]
    supports_nbest: bool
    optimises: str
    source: str


_REGISTRY: dict[str, EncoderInfo] = {}


def register(info: EncoderInfo) -> None:
    """Add an encoder to the registry (a later registration under a name replaces it)."""
    _REGISTRY[info.name] = info


def available_encoders() -> list[str]:
    """Names of the registered encoders.

    >>> "tfidf" in available_encoders() and "fewest" in available_encoders()
    True
    """
    return list(_REGISTRY)


def encoder_info(name: str) -> EncoderInfo:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise InvalidParameterError(
            f"unknown encoder {name!r}; available: {', '.join(available_encoders())}"
        ) from None


def make_encoder(name: str, vocabulary: Vocabulary, **options: Any) -> Encoder:
    """An encoder by name on ``vocabulary``; ``options`` go to the encoder.

    >>> vocab = Vocabulary.from_merges(2, [0], [1], documents=[1], n_docs=2)
    >>> make_encoder("fewest", vocab).encode([np.array([0, 1, 1], np.int32)])
    [([2, 1], 0.4054651081081644)]
    """
    info = encoder_info(name)
    try:
        return info.factory(vocabulary, **options)
    except TypeError as exc:
        raise InvalidParameterError(f"encoder {name!r}: {exc}") from None


def check_top_n(encoder: Encoder, top_n: Any) -> int:
    if isinstance(top_n, bool) or not isinstance(top_n, (int, np.integer)):
        raise InvalidParameterError(f"`top_n` must be an int, not {type(top_n).__name__}")
    if top_n < 1:
        raise InvalidParameterError(f"`top_n` must be at least 1, got {top_n}")
    if top_n > MAX_TOP_N:
        raise InvalidParameterError(f"`top_n` must be at most {MAX_TOP_N}, got {top_n}")
    if top_n > 1 and not encoder.supports_nbest:
        raise InvalidParameterError(f"encoder {encoder.name!r} gives one encoding: top_n must be 1")
    return int(top_n)


def flatten_parts(parts: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Parts back to back: ``(symbols, bounds)`` with part ``k`` at ``bounds[k]:bounds[k+1]``."""
    bounds = np.zeros(len(parts) + 1, dtype=np.int64)
    np.cumsum([len(p) for p in parts], out=bounds[1:])
    symbols = np.concatenate(parts).astype(ID_DTYPE, copy=False) if len(parts) else np.zeros(0, ID_DTYPE)
    return symbols, bounds


class TfidfScorer:
    """ubpe's score of an encoding, for encoders that do not compute it themselves.

    Per part: the sum over distinct tokens of ``(1 + ln count) * weight`` (base ids weigh 0);
    a document's score is the sum over its parts, as in the reference.

    >>> vocab = Vocabulary.from_merges(2, [0], [1], documents=[1], n_docs=2)
    >>> round(TfidfScorer(vocab).score(np.array([2, 2, 0]), np.array([0, 5])), 6)  # one part
    0.686512
    """

    def __init__(self, vocabulary: Vocabulary):
        self._weights = np.concatenate([np.zeros(vocabulary.n_base), vocabulary.weights])
        lengths = np.ones(len(vocabulary), dtype=np.int64)
        lengths[vocabulary.n_base :] = np.diff(vocabulary.piece_offsets)
        self._lengths = lengths

    def score(self, tokens: np.ndarray, bounds: np.ndarray) -> float:
        """Score of ``tokens`` encoding parts with symbol offsets ``bounds``."""
        if len(tokens) == 0:
            return 0.0
        starts = np.cumsum(self._lengths[tokens]) - self._lengths[tokens]
        part = np.searchsorted(bounds, starts, side="right") - 1
        keys = part.astype(np.int64) * len(self._weights) + tokens
        unique, counts = np.unique(keys, return_counts=True)
        weights = self._weights[unique % len(self._weights)]
        return float(np.sum((1.0 + np.log(counts)) * weights))


class TfidfEncoder:
    """ubpe's universal encoder: the top-n segmentations of each part by tf-idf score.

    ``exact=True`` combines the parts of a document by an exact k-best over the sum of part
    scores instead of the reference's heuristic walk (they agree for ``top_n == 1``).
    """

    name = "tfidf"
    supports_nbest = True
    deterministic = True

    def __init__(self, vocabulary: Vocabulary, *, exact: bool = False):
        self._encoder = UniversalEncoder(vocabulary)
        self.exact = exact

    def encode(self, parts: Sequence[np.ndarray], top_n: int = 1) -> list[Encoding]:
        return self._encoder.encode_parts(parts, check_top_n(self, top_n), exact=self.exact)


class GreedyPairsEncoder:
    """ubpe's classic encoder: batched pair substitution in vocabulary (id) order."""

    name = "classic"
    supports_nbest = False
    deterministic = True

    def __init__(self, vocabulary: Vocabulary):
        self._encoder = ClassicEncoder(vocabulary)

    def encode(self, parts: Sequence[np.ndarray], top_n: int = 1) -> list[Encoding]:
        check_top_n(self, top_n)
        return self._encoder.encode_parts(parts)


class MergesEncoder:
    """Rank-ordered merging (tiktoken, llama.cpp, sentencepiece BPE), optionally BPE-dropout.

    ``priority="rank"`` merges in training order, ``"id"`` in vocabulary id order (which is
    idf order after rearrangement). With ``dropout > 0`` each candidate merge is skipped with
    that probability at every step (reproducible with ``seed`` for one sequence of calls).
    """

    supports_nbest = False

    def __init__(self, vocabulary: Vocabulary, *, priority: str = "rank", dropout: float = 0.0,
                 seed: int | None = None, name: str = "ranked"):
        self.name = name
        if dropout:
            self._encoder: RankedEncoder = DropoutEncoder(vocabulary, dropout, seed=seed, priority=priority)
        else:
            self._encoder = RankedEncoder(vocabulary, priority=priority)
        self.deterministic = self._encoder.deterministic
        self._scorer = TfidfScorer(vocabulary)

    def encode(self, parts: Sequence[np.ndarray], top_n: int = 1) -> list[Encoding]:
        check_top_n(self, top_n)
        symbols, bounds = flatten_parts(parts)
        tokens = self._encoder.encode_flat(symbols, bounds)
        return [(tokens.tolist(), self._scorer.score(tokens, bounds))]


def _dropout(vocabulary: Vocabulary, *, p: float = 0.1, seed: int | None = 0, priority: str = "rank"):
    return MergesEncoder(vocabulary, priority=priority, dropout=p, seed=seed, name="dropout")


register(EncoderInfo(
    "tfidf", TfidfEncoder, True,
    "the highest tf-idf score of the token sequence, per part (beam of top_n tails)",
    "UBPE (Kuznetsov, UBPE tokenizers, 2024): the universal encoder",
))
register(EncoderInfo(
    "classic", GreedyPairsEncoder, False,
    "greedy batched pair substitution in idf (vocabulary id) order",
    "UBPE classic encoder (ubpe 0.3.0 UBPEClassic)",
))
register(EncoderInfo(
    "ranked", MergesEncoder, False,
    "standard BPE inference: the adjacent pair forming the earliest-created token merges first",
    "Sennrich et al. 2016; as tiktoken, llama.cpp and sentencepiece run it",
))
register(EncoderInfo(
    "dropout", _dropout, False,
    "ranked merging with each candidate merge skipped with probability p (sampling)",
    "BPE-dropout, Provilkov et al. 2020",
))

# The lattice encoders (fewest tokens, longest match, FLOTA, additive scores) register
# themselves; imported last because they build on the names above.
from .paths import register_path_encoders  # noqa: E402

register_path_encoders()

from .sample import SampleEncoder  # noqa: E402

register(EncoderInfo(
    "sample", SampleEncoder, True,
    "draws segmentations with probability ∝ exp(sum of token weights / temperature); seeded",
    "subword regularization, Kudo 2018 (sentencepiece nbest_size / alpha), on any vocabulary",
))
