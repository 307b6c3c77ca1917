"""What every encoder shares: the protocol, the registry entry, argument checks, the score.

An encoder turns a document's parts (runs of base ids, see :mod:`ubpe.splitting`) into
``[(tokens, score)]``, best first. This module holds what the encoder modules build on, and
nothing that imports them (so the package ``__init__`` can import everything without a circle):

* :class:`Encoder`, the protocol, and :data:`Encoding`, one ``(tokens, score)`` pair;
* :class:`EncoderInfo`, a registry entry (the registry itself is in :mod:`ubpe.encoders`);
* :func:`check_top_n` and :func:`flatten_parts`, the checks every ``encode`` runs first;
* :class:`TfidfScorer`, ubpe's tf-idf score of any encoding. It calls the one native scorer,
  :func:`ubpe_native._score.score_tokens`, which the tf-idf kernels also use, so equal tokens
  get bit-identical scores whichever encoder produced them.

>>> flatten_parts([np.array([0, 1]), np.array([], np.int32), np.array([1])], n_base=2)
(array([0, 1, 1], dtype=int32), array([0, 2, 2, 3]))
"""

from __future__ import annotations

import os
from array import array

from .._fntools import namedtuple  # (collections.namedtuple without exec: ubpe._fntools)
from collections.abc import Callable, Sequence
from .._fntools import reduce
from operator import add

from ubpe_native._numpy import ID_DTYPE, np

from ubpe_native._score import score_tokens

from ..errors import InvalidParameterError, SymbolTypeError, UnknownSymbolError
from .encoding import EncodedBatch, Encoding

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import Any, ClassVar
    from ..vocabulary import Vocabulary

# top-n search keeps top_n candidates per lattice position: past this it is a mistake, not a
# request (memory grows as length x top_n)
MAX_TOP_N = 4096

# The n-best searches (tfidf over each part's lattice; fewest / additive over the whole
# document) keep top_n alternatives per position: memory ~ NBEST_BYTES_PER_CELL x positions x
# top_n, time ~ positions x top_n x log(top_n) x the longest token. Checked up front against
# a budget, NBEST_MEMORY_ENV (bytes) raises it.
NBEST_BYTES_PER_CELL = 52  # measured: tfidf ~50 bytes per cell (lattice and output), fewest ~27
NBEST_MEMORY_ENV = "UBPE_NBEST_MEMORY"
DEFAULT_NBEST_MEMORY = 1 << 30  # 1 GiB


class Encoder:
    """The base of every encoder: ``encode(parts, top_n)`` gives ``[(tokens, score)]``, best first.

    An encoder declares what it is (``name``; ``supports_nbest``: whether ``top_n > 1`` works;
    ``deterministic``: False for the sampling ones) and which fast paths it has, so that callers
    never probe for methods:

    * ``splits_batches``: ``encode_split`` / ``encode_split_arrays`` take a whole
      :class:`~ubpe.splitting.SplitBatch` in one kernel call (otherwise the base encodes it
      document by document);
    * ``encodes_texts``: ``encode_texts`` / ``encode_texts_arrays`` take str documents and the
      native splitter, and split and encode them in one kernel call.
    """

    name: str
    supports_nbest: bool
    deterministic: bool = True
    splits_batches: ClassVar[bool] = False
    encodes_texts: ClassVar[bool] = False

    def encode(self, parts: Sequence[np.ndarray], top_n: int = 1) -> list[Encoding]:
        raise NotImplementedError

    def encode_split(self, batch: Any, top_n: int = 1) -> list[list[Encoding]]:
        """Every document of a split batch, best first per document."""
        return [self.encode(batch.parts(d), top_n) for d in range(batch.n_docs)]

    def encode_split_arrays(self, batch: Any, top_n: int = 1) -> EncodedBatch:
        """:meth:`encode_split` as an :class:`~ubpe.encoders.encoding.EncodedBatch`."""
        return EncodedBatch.from_lists(self.encode_split(batch, top_n))


class EncoderInfo(namedtuple("EncoderInfo", "name factory supports_nbest optimises source")):
    """A registered encoder: how to build it and what it is.

    >>> info = EncoderInfo("mine", dict, False, "nothing", "a doctest")
    >>> info.name, info.supports_nbest
    ('mine', False)
    """

    __slots__ = ()  # (`collections`' named tuple: `typing.NamedTuple` compiles each annotation)

    name: str
    factory: Callable[..., Encoder]
    supports_nbest: bool
    optimises: str
    source: str


def check_top_n(encoder: Encoder, top_n: Any) -> int:
    """``top_n`` as an int, if ``encoder`` can return that many encodings.

    >>> class One:
    ...     name, supports_nbest = "one", False
    >>> check_top_n(One(), 1)
    1
    >>> check_top_n(One(), 2)
    Traceback (most recent call last):
    ...
    ubpe.errors.InvalidParameterError: encoder 'one' gives one encoding: top_n must be 1
    """
    if isinstance(top_n, bool) or not isinstance(top_n, (int, np.integer)):
        raise InvalidParameterError(f"`top_n` must be an int, not {type(top_n).__name__}")
    if top_n < 1:
        raise InvalidParameterError(f"`top_n` must be at least 1, got {top_n}")
    if top_n > MAX_TOP_N:
        raise InvalidParameterError(f"`top_n` must be at most {MAX_TOP_N}, got {top_n}")
    if top_n > 1 and not encoder.supports_nbest:
        raise InvalidParameterError(f"encoder {encoder.name!r} gives one encoding: top_n must be 1")
    return int(top_n)


def nbest_memory_budget() -> int:
    """Bytes an n-best search may take: ``$UBPE_NBEST_MEMORY``, default 1 GiB.

    >>> nbest_memory_budget() == DEFAULT_NBEST_MEMORY or NBEST_MEMORY_ENV in os.environ
    True
    """
    given = os.environ.get(NBEST_MEMORY_ENV)
    if given is None:
        return DEFAULT_NBEST_MEMORY
    if not given.strip().isdigit() or int(given) < 1:
        raise InvalidParameterError(f"{NBEST_MEMORY_ENV} must be a positive number of bytes, got {given!r}")
    return int(given)


def check_nbest_memory(positions: int, top_n: int) -> None:
    """Refuse, before allocating, an n-best search over ``positions`` symbols that would need
    more than :func:`nbest_memory_budget` (naming the budget and how to raise it).

    >>> check_nbest_memory(10_000, 8)
    >>> check_nbest_memory(10_000, 4096)
    Traceback (most recent call last):
    ...
    ubpe.errors.InvalidParameterError: top_n=4096 over 10000 symbols needs about 2031 MiB for the n-best search, more than the budget of 1024 MiB: lower top_n, split the document into smaller parts, or raise the budget (environment variable UBPE_NBEST_MEMORY, in bytes)
    """
    if top_n <= 1:
        return
    need = (positions + 1) * top_n * NBEST_BYTES_PER_CELL
    budget = nbest_memory_budget()
    if need > budget:
        raise InvalidParameterError(
            f"top_n={top_n} over {positions} symbols needs about {need / 2**20:.0f} MiB for the n-best search, "
            f"more than the budget of {budget / 2**20:.0f} MiB: lower top_n, split the document into smaller "
            f"parts, or raise the budget (environment variable {NBEST_MEMORY_ENV}, in bytes)"
        )


def flatten_parts(parts: Sequence[Any], n_base: int) -> tuple[np.ndarray, np.ndarray]:
    """Parts back to back: ``(symbols, bounds)``, part ``k`` at ``bounds[k]:bounds[k + 1]``.

    ``symbols`` is int32, ``bounds`` int64. Every symbol must be an integer base id
    (``0 <= id < n_base``); ids are checked before the cast, so that an id beyond 32 bits
    cannot wrap into a valid one. See the module docstring for an example.
    """
    lengths = np.fromiter(map(len, parts), dtype=np.int64, count=len(parts))
    bounds = np.zeros(len(parts) + 1, dtype=np.int64)
    np.cumsum(lengths, out=bounds[1:])
    if not bounds[-1]:
        return np.zeros(0, ID_DTYPE), bounds
    # empty parts are left out: an empty list would make the whole array float
    try:
        symbols = np.concatenate([p for p in parts if len(p)] if lengths.min() == 0 else parts)
    except ValueError:  # parts of different dimensions
        symbols = np.zeros((0, 0))
    if symbols.ndim != 1:
        raise SymbolTypeError("parts must be 1-D sequences of base ids")
    if symbols.dtype.kind not in "iu":
        raise SymbolTypeError(f"parts must hold integer base ids, not {symbols.dtype}")
    if symbols.min() < 0 or symbols.max() >= n_base:
        bad = symbols[(symbols < 0) | (symbols >= n_base)][0]
        raise UnknownSymbolError(f"{bad} is not a base id (0..{n_base - 1})")
    return symbols.astype(ID_DTYPE, copy=False), bounds


def encode_documents(encoder: Any, batch: Any, top_n: int = 1) -> list[list[Encoding]]:
    """Every document of a split batch (:class:`ubpe.splitting.SplitBatch`) by ``encoder``:
    its ``encode_split`` (one kernel call for the batch where it ``splits_batches``); an
    encoder of the user's own that is no :class:`Encoder` encodes document by document."""
    if isinstance(encoder, Encoder):
        return encoder.encode_split(batch, top_n)
    return [encoder.encode(batch.parts(d), top_n) for d in range(batch.n_docs)]


def encode_document_arrays(encoder: Any, batch: Any, top_n: int = 1) -> Any:
    """:func:`encode_documents` as an :class:`~ubpe.encoders.encoding.EncodedBatch` (the
    kernels fill the arrays where the encoder ``splits_batches``; other lists are copied)."""
    if isinstance(encoder, Encoder):
        return encoder.encode_split_arrays(batch, top_n)
    return EncodedBatch.from_lists(encode_documents(encoder, batch, top_n))


def all_weights(vocabulary: Vocabulary) -> array:
    """The weight of every id, 0 for base ids (alphabet symbols and known words): a float64
    ``array.array``, which the kernels read as it is (an encoder's build imports no numpy).

    >>> from ubpe.vocabulary import Vocabulary
    >>> all_weights(Vocabulary.from_merges(2, [0], [1], documents=[1], n_docs=2)).tolist()
    [0.0, 0.0, 0.4054651081081644]
    """
    return array("d", bytes(8 * vocabulary.n_base)) + vocabulary._weights


def concatenate_best(tokens: np.ndarray, token_offsets: np.ndarray, scores: np.ndarray) -> list[Encoding]:
    """Top-1 over several parts: one candidate per part, back to back, scores added left to
    right. A one-symbol part encodes to itself with score 0, exactly what the reference
    appends for it.

    >>> concatenate_best(np.array([2, 1, 2]), np.array([0, 1, 2, 3]), np.array([0.5, 0.0, 0.5]))
    [([2, 1, 2], 1.0)]
    """
    return [(tokens[token_offsets[0] : token_offsets[-1]].tolist(), add_left_to_right(scores.tolist()))]


def add_left_to_right(scores: Sequence[float]) -> float:
    """A document's score from its parts' scores, added left to right as the reference does
    for its best encoding (plainly, not compensated).

    >>> add_left_to_right([0.1, 0.2, 0.3])
    0.6000000000000001
    """
    return reduce(add, scores, 0.0)  # one float addition after the other, in C


class TfidfScorer:
    """ubpe's score of an encoding, for encoders that do not compute it themselves.

    Per part: the sum over distinct tokens of ``(1 + ln count) * weight`` (base ids weigh 0),
    compensated, in the reference's order; a document's score is the sum over its parts, left
    to right. This is :func:`ubpe_native._score.score_tokens` after finding the parts.

    >>> from ubpe.vocabulary import Vocabulary
    >>> vocab = Vocabulary.from_merges(2, [0], [1], documents=[1], n_docs=2)
    >>> round(TfidfScorer(vocab).score(np.array([2, 2, 0]), np.array([0, 5])), 6)  # one part
    0.686512
    """

    def __init__(self, vocabulary: Vocabulary):
        self._weights = all_weights(vocabulary)  # 0 for base ids
        lengths = np.ones(len(vocabulary), dtype=np.int64)  # in symbols
        lengths[vocabulary.n_base :] = np.diff(vocabulary.piece_offsets)
        self._lengths = lengths

    def score(self, tokens: np.ndarray, bounds: np.ndarray) -> float:
        """Score of ``tokens`` encoding parts with symbol offsets ``bounds`` (tokens never
        cross a part's bounds)."""
        tokens = np.asarray(tokens, dtype=np.int64)
        ends = np.cumsum(self._lengths[tokens])
        token_bounds = np.searchsorted(ends, np.asarray(bounds, dtype=np.int64), side="right")
        return score_tokens(self._weights, tokens.astype(ID_DTYPE), token_bounds)
