"""Encoders: one protocol, a registry by name, any fitted vocabulary.

An encoder turns a document's parts (runs of base ids, see :mod:`ubpe.splitting`) into
``[(tokens, score)]``, best first. Every encoder is lossless: its tokens decode to the parts.
The score reported is always the tf-idf score of ubpe (sum over distinct tokens of
``(1 + ln count) * weight``, per part), so encodings from different encoders compare.

>>> from ubpe.vocabulary import Vocabulary
>>> vocab = Vocabulary.from_merges(2, [0], [1], documents=[1], n_docs=2)   # token 2 = [0 1]
>>> make_encoder("tfidf", vocab).encode([np.array([0, 1, 0], np.int32)], top_n=2)
[([2, 0], 0.4054651081081644), ([0, 1, 0], 0.0)]
>>> sorted(available_encoders())[:2]
['classic', 'tfidf']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from .encoding import ClassicEncoder, UniversalEncoder
from .errors import InvalidParameterError
from .vocabulary import Vocabulary

Encoding = tuple[list[int], float]


class Encoder(Protocol):
    """What every encoder offers; ``supports_nbest`` says whether ``top_n > 1`` works."""

    name: str
    supports_nbest: bool

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
    return list(_REGISTRY)


def encoder_info(name: str) -> EncoderInfo:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise InvalidParameterError(
            f"unknown encoder {name!r}; available: {', '.join(available_encoders())}"
        ) from None


def make_encoder(name: str, vocabulary: Vocabulary, **options: Any) -> Encoder:
    """An encoder by name on ``vocabulary``; ``options`` go to the encoder."""
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
    if top_n > 1 and not encoder.supports_nbest:
        raise InvalidParameterError(f"encoder {encoder.name!r} gives one encoding: top_n must be 1")
    return int(top_n)


class TfidfEncoder:
    """ubpe's universal encoder: the top-n segmentations of each part by tf-idf score.

    ``exact=True`` combines the parts of a document by an exact k-best over the sum of part
    scores instead of the reference's heuristic walk (they agree for ``top_n == 1``).
    """

    name = "tfidf"
    supports_nbest = True

    def __init__(self, vocabulary: Vocabulary, *, exact: bool = False):
        self._encoder = UniversalEncoder(vocabulary)
        self.exact = exact

    def encode(self, parts: Sequence[np.ndarray], top_n: int = 1) -> list[Encoding]:
        return self._encoder.encode_parts(parts, check_top_n(self, top_n), exact=self.exact)


class GreedyPairsEncoder:
    """ubpe's classic encoder: batched pair substitution in vocabulary (id) order."""

    name = "classic"
    supports_nbest = False

    def __init__(self, vocabulary: Vocabulary):
        self._encoder = ClassicEncoder(vocabulary)

    def encode(self, parts: Sequence[np.ndarray], top_n: int = 1) -> list[Encoding]:
        check_top_n(self, top_n)
        return self._encoder.encode_parts(parts)


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
