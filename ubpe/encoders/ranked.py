"""Rank-ordered merging: standard BPE inference on any fitted vocabulary.

Two adjacent tokens merge when the concatenation of their pieces is a token; the pair forming
the token of lowest priority merges first, the leftmost on ties, until no pair merges. This is
the rule of tiktoken, llama.cpp and sentencepiece. The priority is the token's creation rank
(``priority="rank"``, training order) or its id (``priority="id"``, vocabulary order, which is
what ubpe 0.3.0's classic encoder uses after rearranging by idf).

>>> from ubpe.vocabulary import Vocabulary
>>> vocabulary = Vocabulary.from_merges(2, [0, 2], [1, 0], documents=[1, 1], n_docs=1)
>>> RankedEncoder(vocabulary).encode_word([0, 1, 0, 0, 1]).tolist()   # (0 1) -> 2, (2 0) -> 3
[3, 2]

:class:`DropoutEncoder` is BPE-dropout (Provilkov et al., 2020): at every merge step each
candidate merge is skipped with probability ``dropout``, so one word gets many segmentations.
Both are encoders of the registry (``encode`` reports ubpe's tf-idf score, see
:class:`~ubpe.encoders.TfidfScorer`); :func:`merges_encoder` and :func:`dropout_encoder`
build them from the registry's options.
"""

from __future__ import annotations

from collections.abc import Sequence
from .._fntools import cached_property

from ubpe_native._numpy import ID_DTYPE, np

from ubpe_native._combine import top1_documents
from ubpe_native._ranked import MergeTable, TextEncoder
from ubpe_native._score import part_scores

from ..errors import InvalidParameterError, RegexBudgetError, UnknownSymbolError, UnknownTokenError
from ._base import Encoder, EncoderInfo, Encoding, TfidfScorer, check_top_n, flatten_parts
from .encoding import EncodedBatch

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import Any
    from ..vocabulary import Vocabulary

PRIORITIES = ("rank", "id")
UNKNOWN_RANK = -1
# Seeds handed to the kernel are drawn as unsigned 64-bit integers.
SEED_BITS = 64


def _priorities(vocabulary: Vocabulary, priority: str) -> tuple[np.ndarray, str]:
    """Per merged token, the number that orders merges; and the priority actually used.

    Ranks are unknown (-1) in a vocabulary loaded from ubpe 0.3.0 JSON: then ``"rank"`` falls
    back to id order, which is the only order such a vocabulary still records.
    """
    if priority not in PRIORITIES:
        raise InvalidParameterError(f"`priority` must be one of {PRIORITIES}, got {priority!r}")
    ranks = np.asarray(vocabulary.ranks, dtype=np.int64)
    if priority == "rank" and len(ranks):
        unknown = ranks == UNKNOWN_RANK
        if unknown.all():
            priority = "id"
        elif unknown.any():
            raise InvalidParameterError(
                "some tokens have a creation rank and some do not; use priority='id'"
            )
        elif ranks.min() < 0:
            raise InvalidParameterError("creation ranks must not be negative")
        else:
            return ranks, priority
    return np.arange(vocabulary.n_merged, dtype=np.int64), "id" if priority == "id" else priority


class RankedEncoder(Encoder):
    """Standard BPE inference over a vocabulary's pieces (O(n log n) per word, GIL released).

    ``priority="rank"`` merges in training order (the vocabulary's ``ranks``, falling back to
    id order when they are unknown); ``priority="id"`` merges in id order. Where several tokens
    share a piece, the one of lowest priority is emitted.
    """

    name = "ranked"
    supports_nbest = False
    deterministic = True
    splits_batches = True

    def __init__(self, vocabulary: Vocabulary, *, priority: str = "rank", table: MergeTable | None = None):
        """``table``: the vocabulary's merge table at this priority, if the caller built it
        already (a byte-level file's load: `ubpe.models.bytelevel.ByteLevelBPE._from_tables`)."""
        priorities, self.priority = _priorities(vocabulary, priority)
        self.vocabulary = vocabulary
        self._pieces = PieceTable(vocabulary)
        self._table = table if table is not None else MergeTable(
            vocabulary.n_base,
            np.ascontiguousarray(vocabulary.piece_offsets, dtype=np.int64),
            np.ascontiguousarray(vocabulary.piece_symbols, dtype=ID_DTYPE),
            np.ascontiguousarray(priorities, dtype=np.int64),
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.vocabulary!r}, priority={self.priority!r})"

    # The kernel's dropout settings; the deterministic encoder never drops a merge.
    def _dropout_and_seed(self) -> tuple[float, int]:
        return 0.0, 0

    def encode_word(self, ids: Sequence[int] | np.ndarray) -> np.ndarray:
        """Tokens of one word given as base ids (pairs may form anywhere inside it)."""
        return self.encode_flat(*flatten_parts([ids], self.vocabulary.n_base))

    def encode_parts(self, parts: Sequence[Sequence[int] | np.ndarray]) -> list[int]:
        """Tokens of a document already split into parts; pairs never cross parts."""
        symbols, bounds = flatten_parts(parts, self.vocabulary.n_base)
        return self.encode_flat(symbols, bounds).tolist()

    @cached_property
    def _scorer(self) -> TfidfScorer:
        return TfidfScorer(self.vocabulary)

    def encode(self, parts: Sequence[np.ndarray], top_n: int = 1) -> list[Encoding]:
        """The encoder protocol: ``[(tokens, tf-idf score)]`` of a document's parts.

        >>> from ubpe.vocabulary import Vocabulary
        >>> vocabulary = Vocabulary.from_merges(2, [0], [1], documents=[1], n_docs=2)
        >>> RankedEncoder(vocabulary).encode([np.array([0, 1, 1])])
        [([2, 1], 0.4054651081081644)]
        """
        check_top_n(self, top_n)
        symbols, bounds = flatten_parts(parts, self.vocabulary.n_base)
        tokens = self.encode_flat(symbols, bounds)
        return [(tokens.tolist(), self._scorer.score(tokens, bounds))]

    def encode_split(self, batch: Any, top_n: int = 1) -> list[list[Encoding]]:
        """:meth:`encode` of every document of a split batch (:class:`ubpe.splitting.SplitBatch`):
        one kernel call for all its parts, then the parts' scores and the lists in C."""
        return self._split(batch, top_n, False)

    def encode_split_arrays(self, batch: Any, top_n: int = 1) -> EncodedBatch:
        """:meth:`encode_split` as an :class:`~ubpe.encoders.encoding.EncodedBatch` (no list built)."""
        return EncodedBatch.from_arrays(self._split(batch, top_n, True))

    def _split(self, batch: Any, top_n: int, arrays: bool) -> Any:
        check_top_n(self, top_n)
        tokens = self.encode_flat(batch.tokens, batch.part_offsets)
        # each part's tokens: those ending (in symbols) at or before the part's end
        ends = np.cumsum(self._scorer._lengths.take(tokens))
        token_offsets = np.searchsorted(ends, batch.part_offsets, side="right")
        scores = part_scores(self._scorer._weights, tokens, token_offsets)
        return top1_documents(tokens, token_offsets, scores, batch.doc_part_offsets, arrays=arrays)

    def _encode_each(self, batch: Any) -> list[list[Encoding]]:
        """:meth:`encode` of every document of a split batch, one kernel call per document."""
        out = []
        starts, parts = batch.part_offsets, batch.doc_part_offsets.tolist()
        for first, last in zip(parts[:-1], parts[1:]):
            bounds = starts[first : last + 1] - starts[first]
            tokens = self.encode_flat(batch.tokens[starts[first] : starts[last]], bounds)
            out.append([(tokens.tolist(), self._scorer.score(tokens, bounds))])
        return out

    def encode_flat(
        self, symbols: np.ndarray, bounds: np.ndarray, *, whole_piece_shortcut: bool = False
    ) -> np.ndarray:
        """Tokens of the words ``symbols[bounds[w]:bounds[w + 1]]`` in one kernel call.

        ``symbols`` is an int32 array of base ids, ``bounds`` int64 offsets. With
        ``whole_piece_shortcut`` a word that is a token's piece becomes that token directly
        (tiktoken's rule; it can differ from merging when merges cannot reach the token).
        """
        dropout, seed = self._dropout_and_seed()
        try:
            return self._table.encode(
                np.ascontiguousarray(symbols, dtype=ID_DTYPE),
                np.ascontiguousarray(bounds, dtype=np.int64),
                whole_piece_shortcut,
                dropout,
                seed,
            )
        except ValueError as exc:
            raise UnknownSymbolError(str(exc)) from None

    def encode_text(self, data: bytes, classes: np.ndarray, pattern: int) -> np.ndarray:
        """Tokens of UTF-8 ``data`` split by a preset pattern of the kernel's scanner (see
        :mod:`ubpe.models.bytelevel`), whole-piece shortcut first. Needs base ids = byte values and
        well-formed UTF-8 (InvalidParameterError otherwise)."""
        try:
            return self._table.encode_text(data, classes, pattern)
        except RegexBudgetError:  # a split pattern's match refused: already ours, and says so
            raise
        except ValueError as exc:
            raise InvalidParameterError(str(exc)) from None

    def text_encoder(self, classes: np.ndarray, pattern: int, ids: np.ndarray | None = None) -> TextEncoder:
        """The kernel's one call from a str to its list of ids (:meth:`encode_text`, then
        ``ids[token]`` for each token unless ``ids`` is None), for a preset ``pattern``:
        ``encoder(text)``, None for a text with lone surrogates."""
        return TextEncoder(self._table, classes, pattern, ids)

    def encode_text_batch(self, data: bytes, lengths: np.ndarray, classes: np.ndarray, pattern: int,
                          skip: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`encode_text` of many documents (UTF-8 ``data``, their ``lengths`` in
        characters) in one kernel call without the GIL: ``(tokens, offsets)``, document
        ``d``'s tokens being ``tokens[offsets[d]:offsets[d + 1]]``; those marked in ``skip``
        are left out (no tokens)."""
        try:
            return self._table.encode_texts(data, lengths, classes, pattern, skip)
        except RegexBudgetError:  # a split pattern's match refused: already ours, and says so
            raise
        except ValueError as exc:
            raise InvalidParameterError(str(exc)) from None

    def decode(self, tokens: Sequence[int] | np.ndarray) -> np.ndarray:
        """Base ids of ``tokens``, concatenated (the inverse of encoding)."""
        return self._pieces.decode(tokens)


class DropoutEncoder(RankedEncoder):
    """BPE-dropout (Provilkov et al., 2020) on top of rank-ordered merging.

    At every merge step each current candidate merge is dropped with probability
    ``dropout``; the best surviving candidate merges, the dropped ones become candidates again
    after that merge, and a word is done when one step drops every candidate. This is the
    paper's definition as its reference implementation (YouTokenToMe) runs it; HF tokenizers
    behaves the same except that it also flips coins on stale heap entries, which changes the
    random stream but not the distribution. ``dropout=0`` is exactly :class:`RankedEncoder`;
    ``dropout=1`` never merges.

    Results are reproducible: each call draws its kernel seed from a generator seeded with
    ``seed``, so two encoders built with the same seed return the same outputs for the same
    sequence of calls.
    """

    name = "dropout"
    deterministic = False

    def __init__(
        self,
        vocabulary: Vocabulary,
        dropout: float,
        *,
        seed: int | None = None,
        priority: str = "rank",
    ):
        if isinstance(dropout, bool) or not isinstance(dropout, (int, float)):
            raise InvalidParameterError(f"`dropout` must be a number, not {type(dropout).__name__}")
        if not 0.0 <= dropout <= 1.0:
            raise InvalidParameterError(f"`dropout` must be in [0, 1], got {dropout}")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
            raise InvalidParameterError(f"`seed` must be None or an int >= 0, got {seed!r}")
        super().__init__(vocabulary, priority=priority)
        self.dropout = float(dropout)
        self.seed = seed
        self._rng = np.random.default_rng(seed)

    def __repr__(self) -> str:
        return (
            f"DropoutEncoder({self.vocabulary!r}, dropout={self.dropout}, seed={self.seed!r}, "
            f"priority={self.priority!r})"
        )

    def _dropout_and_seed(self) -> tuple[float, int]:
        return self.dropout, int(self._rng.integers(0, 2**SEED_BITS, dtype=np.uint64))

    def encode_split(self, batch: Any, top_n: int = 1) -> list[list[Encoding]]:
        """:meth:`encode` of every document of a split batch, one kernel call (one seed) per
        document: the random stream is the same as for ``encode`` document by document."""
        check_top_n(self, top_n)
        return self._encode_each(batch)

    def encode_split_arrays(self, batch: Any, top_n: int = 1) -> EncodedBatch:
        """:meth:`encode_split` (document by document, for the random stream) as arrays."""
        return EncodedBatch.from_lists(self.encode_split(batch, top_n))


def merges_encoder(vocabulary: Vocabulary, *, priority: str = "rank", dropout: float = 0.0,
                   seed: int | None = None) -> RankedEncoder:
    """The registry's ``ranked``: merges in ``priority`` order, BPE-dropout if ``dropout > 0``.

    >>> from ubpe.vocabulary import Vocabulary
    >>> vocabulary = Vocabulary.from_merges(2, [0], [1], documents=[1], n_docs=2)
    >>> type(merges_encoder(vocabulary)).__name__, type(merges_encoder(vocabulary, dropout=0.5)).__name__
    ('RankedEncoder', 'DropoutEncoder')
    """
    if dropout:
        return DropoutEncoder(vocabulary, dropout, seed=seed, priority=priority)
    return RankedEncoder(vocabulary, priority=priority)


def dropout_encoder(vocabulary: Vocabulary, *, p: float = 0.1, seed: int | None = 0,
                    priority: str = "rank") -> DropoutEncoder:
    """The registry's ``dropout``: BPE-dropout with probability ``p``, seeded (0 by default).

    >>> from ubpe.vocabulary import Vocabulary
    >>> vocabulary = Vocabulary.from_merges(2, [0], [1], documents=[1], n_docs=2)
    >>> dropout_encoder(vocabulary, p=1.0).encode([np.array([0, 1])])   # p = 1 never merges
    [([0, 1], 0.0)]
    """
    return DropoutEncoder(vocabulary, p, seed=seed, priority=priority)


class PieceTable:
    """Every token's piece, base ids included, for decoding without a Python loop.

    >>> from ubpe.vocabulary import Vocabulary
    >>> table = PieceTable(Vocabulary.from_merges(2, [0, 2], [1, 0], documents=[1, 1], n_docs=1))
    >>> table.decode([3, 1, 2]).tolist()
    [0, 1, 0, 1, 0, 1]
    """

    def __init__(self, vocabulary: Vocabulary):
        n_base = vocabulary.n_base
        self.n_tokens = len(vocabulary)
        # base id b is the one-symbol piece at position b; merged pieces follow
        self.symbols = np.concatenate(
            [np.arange(n_base, dtype=ID_DTYPE), np.asarray(vocabulary.piece_symbols, ID_DTYPE)]
        )
        self.offsets = np.concatenate(
            [np.arange(n_base, dtype=np.int64), n_base + np.asarray(vocabulary.piece_offsets, np.int64)]
        )

    def decode(self, tokens: Sequence[int] | np.ndarray) -> np.ndarray:
        tokens = np.asarray(tokens, dtype=np.int64).reshape(-1)
        if len(tokens) and (tokens.min() < 0 or tokens.max() >= self.n_tokens):
            bad = tokens[(tokens < 0) | (tokens >= self.n_tokens)][0]
            raise UnknownTokenError(f"token {bad} is not in the vocabulary")
        starts = self.offsets[tokens]
        lengths = self.offsets[tokens + 1] - starts
        out_offsets = np.zeros(len(tokens) + 1, dtype=np.int64)
        np.cumsum(lengths, out=out_offsets[1:])
        # one range per token, gathered at once
        positions = np.repeat(starts - out_offsets[:-1], lengths) + np.arange(out_offsets[-1])
        return self.symbols[positions]


#: this module's entries of the encoder registry (:func:`ubpe.encoders.available_encoders`)
ENCODERS = (
    EncoderInfo(
        "ranked", merges_encoder, False,
        "standard BPE inference: the adjacent pair forming the earliest-created token merges first",
        "Sennrich et al. 2016; as tiktoken, llama.cpp and sentencepiece run it",
    ),
    EncoderInfo(
        "dropout", dropout_encoder, False,
        "ranked merging with each candidate merge skipped with probability p (sampling)",
        "BPE-dropout, Provilkov et al. 2020",
    ),
)
