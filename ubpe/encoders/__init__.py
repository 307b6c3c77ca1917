"""Encoders: one protocol, a registry by name, any fitted vocabulary.

An encoder turns a document's parts (runs of base ids, see :mod:`ubpe.splitting`) into
``[(tokens, score)]``, best first. Every encoder is lossless: its tokens decode to the parts.
The score reported is always the tf-idf score of ubpe (sum over distinct tokens of
``(1 + ln count) * weight``, per part), computed in one place
(:func:`ubpe_native._score.score_tokens`), so encodings from different encoders compare: equal
tokens get bit-identical scores.

Layout of the package (nothing here imports back from the package; each encoder module
declares its registry entries in ``ENCODERS``, and :data:`ENCODER_MODULES` lists the modules):

* ``_base`` - the :class:`Encoder` protocol, :class:`EncoderInfo`, :func:`check_top_n`,
  :func:`flatten_parts` (the one checked flattening every encoder runs) and
  :class:`TfidfScorer`;
* ``tfidf`` - ubpe's universal encoder (tf-idf top-n, ``"tfidf"``);
* ``classic`` - ubpe's classic encoder (greedy batched pair merges, ``"classic"``);
* ``ranked`` - rank-ordered merges and BPE-dropout (``"ranked"``, ``"dropout"``);
* ``paths`` - lattice paths: ``"fewest"``, ``"additive"``, ``"longest_prefix"``,
  ``"longest_suffix"``, ``"longest_token"``;
* ``sample`` - segmentations drawn ``∝ exp(score / temperature)`` (``"sample"``), on the
  lattice of ``ambiguity`` (counts, entropy, probabilities of segmentations); ``rerank``
  (re-ordering top-n lists) and ``exact_tfidf`` (the exact tf-idf top-n) are not encoders;
* ``encoding`` - :data:`Encoding` and :class:`EncodedBatch`, a batch's encodings as four flat
  arrays (``encode_batch_to_numpy``).

>>> from ubpe.vocabulary import Vocabulary
>>> vocab = Vocabulary.from_merges(2, [0], [1], documents=[1], n_docs=2)   # token 2 = [0 1]
>>> make_encoder("tfidf", vocab).encode([np.array([0, 1, 0], np.int32)], top_n=2)
[([2, 0], 0.4054651081081644), ([0, 1, 0], 0.0)]
>>> {"tfidf", "classic", "ranked"} <= set(available_encoders())
True
"""

from __future__ import annotations

import importlib

from ubpe_native._numpy import np  # noqa: F401  (the examples below use it)

from .._lazy import lazy_attributes
from ..errors import InvalidParameterError
from ._base import MAX_TOP_N, Encoder, EncoderInfo, Encoding, TfidfScorer, check_top_n, flatten_parts

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import Any
    from ..vocabulary import Vocabulary
    from .encoding import EncodedBatch
    from .classic import ClassicEncoder
    from .paths import (
        AdditiveEncoder,
        FewestTokensEncoder,
        LongestPrefixEncoder,
        LongestSuffixEncoder,
        LongestTokenEncoder,
    )
    from .ranked import DropoutEncoder, RankedEncoder
    from .sample import SampleEncoder
    from .tfidf import TfidfEncoder

# the encoders' modules (and their kernels) are imported when an encoder is first asked for
_LAZY = {
    "ClassicEncoder": ".classic",
    "AdditiveEncoder": ".paths",
    "FewestTokensEncoder": ".paths",
    "LongestPrefixEncoder": ".paths",
    "LongestSuffixEncoder": ".paths",
    "LongestTokenEncoder": ".paths",
    "DropoutEncoder": ".ranked",
    "EncodedBatch": ".encoding",
    "RankedEncoder": ".ranked",
    "SampleEncoder": ".sample",
    "TfidfEncoder": ".tfidf",
}
_lazy_getattr, __dir__ = lazy_attributes(__name__, _LAZY, globals())


__all__ = [
    "MAX_TOP_N", "AdditiveEncoder", "ClassicEncoder", "DropoutEncoder", "EncodedBatch", "Encoder", "EncoderInfo",
    "Encoding", "FewestTokensEncoder", "LongestPrefixEncoder", "LongestSuffixEncoder",
    "LongestTokenEncoder", "RankedEncoder", "SampleEncoder", "TfidfEncoder", "TfidfScorer",
    "available_encoders", "check_top_n", "encoder_info", "flatten_parts", "make_encoder", "register",
]

#: The encoder modules, in registry order; each declares its entries in ``ENCODERS``. Adding an
#: encoder is one module (a class and its ``EncoderInfo``) plus its name here.
ENCODER_MODULES = ("tfidf", "classic", "ranked", "paths", "sample")

#: built-in encoder name -> its module: asking for one built-in before the registry is filled
#: imports its module alone (a ``UBPE``'s first encode needs ``tfidf``, not the path encoders'
#: modules and numpy; a test checks this against every module's ``ENCODERS``)
BUILTIN_MODULE = {
    "tfidf": "tfidf", "classic": "classic", "ranked": "ranked", "dropout": "ranked",
    "fewest": "paths", "additive": "paths", "longest_prefix": "paths", "longest_suffix": "paths",
    "longest_token": "paths", "sample": "sample",
}


def _builtin_encoders() -> tuple[EncoderInfo, ...]:
    """The built-in encoders' registry entries (importing their modules)."""
    return tuple(info for module in ENCODER_MODULES
                 for info in importlib.import_module(f"{__name__}.{module}").ENCODERS)


_REGISTRY: dict[str, EncoderInfo] = {}  # the built-ins, then those registered; filled on first use


def _registry() -> dict[str, EncoderInfo]:
    if not _REGISTRY:
        _REGISTRY.update((info.name, info) for info in _builtin_encoders())
    return _REGISTRY


def __getattr__(name: str) -> Any:
    if name == "ENCODERS":  # the built-in registry entries
        return _builtin_encoders()
    return _lazy_getattr(name)


def register(info: EncoderInfo) -> None:
    """Add an encoder of your own to the registry (a later registration under a name
    replaces it).

    >>> from ubpe.encoders import RankedEncoder
    >>> register(EncoderInfo("mine", RankedEncoder, False, "ranked, renamed", "a doctest"))
    >>> "mine" in available_encoders()
    True
    >>> _ = _registry().pop("mine")
    """
    _registry()[info.name] = info


def available_encoders() -> list[str]:
    """Names of the registered encoders.

    >>> "tfidf" in available_encoders() and "fewest" in available_encoders()
    True
    """
    return list(_registry())


def encoder_info(name: str) -> EncoderInfo:
    """The registry entry of ``name``.

    >>> encoder_info("fewest").supports_nbest
    True
    """
    module = BUILTIN_MODULE.get(name) if not _REGISTRY else None
    if module is not None:  # nothing registered yet: the built-in entry stands
        return next(info for info in importlib.import_module(f"{__name__}.{module}").ENCODERS if info.name == name)
    try:
        return _registry()[name]
    except KeyError:
        raise InvalidParameterError(
            f"unknown encoder {name!r}; available: {', '.join(available_encoders())}"
        ) from None


def make_encoder(name: str, vocabulary: Vocabulary, **options: Any) -> Encoder:
    """An encoder by name on ``vocabulary``; ``options`` go to the encoder.

    >>> from ubpe.vocabulary import Vocabulary
    >>> vocab = Vocabulary.from_merges(2, [0], [1], documents=[1], n_docs=2)
    >>> make_encoder("fewest", vocab).encode([np.array([0, 1, 1], np.int32)])
    [([2, 1], 0.4054651081081644)]
    """
    info = encoder_info(name)
    try:
        return info.factory(vocabulary, **options)
    except TypeError as exc:
        raise InvalidParameterError(f"encoder {name!r}: {exc}") from None
