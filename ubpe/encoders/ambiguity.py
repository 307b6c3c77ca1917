"""How ambiguous a document is: the lattice of all its segmentations, counted and weighed.

A *segmentation* of a document is a path through its lattice (see :mod:`ubpe.encoders.paths`):
one token per run of base ids, tokens never crossing the parts the tokenizer splits the
document into. Where several tokens spell the same piece the one of highest weight stands
for it (as ``additive`` does), so segmentations are distinct sets of cut points.

Given an additive score - a weight per token, by default the vocabulary's idf weights (base
ids weigh 0) - and a temperature ``T``, a segmentation ``y`` has probability

    p(y) = exp(score(y) / T) / Z,        score(y) = the sum of its tokens' weights.

Everything below is one pass over the lattice (linear in its edges), never an enumeration:
the exact number of segmentations (a Python ``int``: the product over parts), the entropy of
``p`` (forward algorithm in log space), the mass of the best segmentation and of the ``k``
best, and the marginal probability of any given encoding.

>>> from ubpe.vocabulary import Vocabulary
>>> vocab = Vocabulary.from_merges(2, [0], [1], documents=[1], n_docs=2)   # token 2 = [0 1]
>>> lattice = DocumentLattice(vocab, [np.array([0, 1, 0, 1], np.int32)], weights=np.zeros(3))
>>> summary = lattice.ambiguity()
>>> summary.n_segmentations, round(summary.entropy, 6) == round(math.log(4), 6)
(4, True)
>>> round(lattice.probability([2, 2]), 6), round(lattice.top_mass(2), 6)   # uniform: 1/4 each
(0.25, 0.5)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from .. import _fntools as functools  # (functools' tools without its import: ubpe._fntools)
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from ubpe_native._sampling import SegmentLattice

from ..errors import InvalidParameterError, SymbolTypeError, UnknownTokenError
from ..vocabulary import Vocabulary
from ._base import flatten_parts
from .paths import AdditiveEncoder
from .ranked import PieceTable

Weights = Sequence[float] | np.ndarray | Callable[[int], float] | None
# sampling draws one uniform per symbol and path; this many at once bounds the memory
UNIFORMS_PER_CHUNK = 1 << 22


def check_temperature(temperature: Any) -> float:
    """``temperature`` as a float, or a clear error: a finite number above 0."""
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float, np.floating, np.integer)):
        raise InvalidParameterError(f"`temperature` must be a number, not {type(temperature).__name__}")
    if not (math.isfinite(temperature) and temperature > 0):
        raise InvalidParameterError(f"`temperature` must be finite and above 0, got {temperature}")
    return float(temperature)


def idf_scores(vocabulary: Vocabulary) -> np.ndarray:
    """One weight per id: 0 for base ids, the idf weight for merged tokens (the default score).

    >>> idf_scores(Vocabulary.from_merges(2, [0], [1], documents=[1], n_docs=2)).round(4).tolist()
    [0.0, 0.0, 0.4055]
    """
    return np.concatenate([np.zeros(vocabulary.n_base), np.asarray(vocabulary.weights, np.float64)])


def weighted_paths(vocabulary: Vocabulary, weights: Weights = None) -> AdditiveEncoder:
    """The ``additive`` encoder for ``weights`` (an array with one score per id, a callable
    ``token -> score``, or ``None`` for :func:`idf_scores`): its checks, its lookup, its k-best."""
    if weights is None:
        return AdditiveEncoder(vocabulary, weights=idf_scores(vocabulary))
    if callable(weights):
        return AdditiveEncoder(vocabulary, score=weights)
    return AdditiveEncoder(vocabulary, weights=weights)


@dataclass(frozen=True)
class Ambiguity:
    """How ambiguous a document is under ``p(y) ∝ exp(score(y) / temperature)``.

    ``n_segmentations`` is the exact count (a Python ``int``, computed on first access: with
    64-bit integers per part where they suffice, else big integers, whose additions make a
    single unsplit part of ``n`` symbols cost ``O(n^2 / 64)`` - seconds for a million
    symbols); ``log_n`` its natural log (linear, in floating point); ``entropy`` the entropy
    of ``p`` in nats (at most ``log_n``, equal to it for equal scores); ``best_probability``
    the mass of the highest-scoring segmentation; ``expected_tokens`` the mean length of a
    draw from ``p``; ``encoding_probability`` the probability of the encoding that was asked
    about (``None`` if none was).
    """

    n_symbols: int
    log_n: float
    entropy: float
    log_partition: float
    best_probability: float
    expected_tokens: float
    temperature: float
    encoding_probability: float | None = None
    lattice: DocumentLattice | None = field(default=None, repr=False, compare=False)

    @functools.cached_property
    def n_segmentations(self) -> int:
        """The exact number of segmentations."""
        if self.lattice is None:
            raise InvalidParameterError("this summary was made without its lattice")
        return self.lattice.n_segmentations()

    def as_dict(self) -> dict[str, Any]:
        """The numbers, ``n_segmentations`` included (exact), for JSON or a table."""
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "lattice"}
        return {"n_segmentations": self.n_segmentations, **data}


class DocumentLattice:
    """The lattice of one document (its ``parts``) with scores ``weights / temperature`` on
    its edges; ``additive`` may be given instead of ``weights`` (an encoder built for them).

    >>> vocab = Vocabulary.from_merges(2, [0], [1], documents=[1], n_docs=2)
    >>> lattice = DocumentLattice(vocab, [np.array([0, 1], np.int32), np.array([0, 1], np.int32)])
    >>> lattice.n_segmentations()             # two parts with two segmentations each
    4
    """

    def __init__(self, vocabulary: Vocabulary, parts: Sequence[np.ndarray], weights: Weights = None,
                 temperature: float = 1.0, *, additive: AdditiveEncoder | None = None):
        self.temperature = check_temperature(temperature)
        self.additive = additive if additive is not None else weighted_paths(vocabulary, weights)
        self.vocabulary = vocabulary
        self.symbols, self.bounds = flatten_parts(parts, vocabulary.n_base)
        self.lattice = SegmentLattice(self.additive._tree, self.symbols, self.bounds)
        self.first, self.lengths, self.tokens = self.lattice.edges()
        with np.errstate(over="ignore"):  # overflow is reported below
            self.scores = self.additive.weights[self.tokens] / self.temperature
        if not np.isfinite(self.scores).all():
            raise InvalidParameterError(f"weights / temperature overflow at temperature {temperature}")
        self.log_partition, self.entropy, self.expected_tokens = self.lattice.backward(self.scores)
        if not math.isfinite(self.log_partition):
            raise InvalidParameterError("the scores are too large: exp(score / temperature) overflows")

    @property
    def n_symbols(self) -> int:
        return int(self.lattice.n_symbols)

    def n_segmentations(self) -> int:
        """The exact number of paths: the product over parts (64-bit counts where they fit,
        Python integers where they do not)."""
        counts, overflowed = self.lattice.count_parts()
        total = 1
        for part, (count, over) in enumerate(zip(counts.tolist(), overflowed.tolist())):
            total *= self._count_exactly(part) if over else count
        return total

    def _count_exactly(self, part: int) -> int:
        """Paths through one part with Python integers, keeping only the window of tails a
        token can reach (memory: the longest piece, not the part)."""
        start, end = int(self.bounds[part]), int(self.bounds[part + 1])
        first, lengths = self.first.tolist(), self.lengths.tolist()
        window = int(self.lengths.max()) + 1
        tails = [0] * window
        tails[end % window] = 1
        for p in range(end - 1, start - 1, -1):
            tails[p % window] = sum(tails[(p + lengths[e]) % window] for e in range(first[p], first[p + 1]))
        return tails[start % window]

    def log_n(self) -> float:
        """The natural log of the number of segmentations, in floating point (no big ints)."""
        return float(self.lattice.backward(np.zeros(self.lattice.n_edges))[0])

    def path_score(self, tokens: Sequence[int] | np.ndarray) -> float:
        """The scaled score (``sum of weights / temperature``) of the segmentation ``tokens``
        spell; a clear error if they are not a segmentation of this document."""
        tokens = np.asarray(tokens, dtype=np.int64).reshape(-1)
        if tokens.dtype.kind not in "iu":
            raise SymbolTypeError("an encoding is a sequence of token ids")
        table = PieceTable(self.vocabulary)
        decoded = table.decode(tokens)   # raises UnknownTokenError for ids outside the vocabulary
        if len(decoded) != len(self.symbols) or not np.array_equal(decoded, self.symbols):
            raise UnknownTokenError("the tokens do not spell this document")
        lengths = table.offsets[tokens + 1] - table.offsets[tokens]
        positions = np.cumsum(lengths) - lengths
        edges = self.lattice.locate(positions, lengths)
        if (edges < 0).any():
            raise UnknownTokenError("a token crosses the boundary of a part: not a segmentation")
        return float(self.scores[edges].sum())

    def probability(self, tokens: Sequence[int] | np.ndarray) -> float:
        """The probability of the segmentation ``tokens`` spell (its cut points: a token
        sharing its piece with another counts as the same segmentation)."""
        return math.exp(self.path_score(tokens) - self.log_partition)

    def best(self, k: int = 1) -> list[tuple[np.ndarray, float]]:
        """The ``k`` highest-scoring segmentations, ``[(tokens, scaled score)]``, best first."""
        return [(tokens, score / self.temperature)
                for tokens, score in self.additive._paths(self.symbols, self.bounds, k)]

    def top_mass(self, k: int = 1) -> float:
        """The probability mass of the ``k`` highest-scoring segmentations."""
        scores = np.array([score for _, score in self.best(k)])
        return float(np.exp(scores - self.log_partition).sum())

    def sample(self, n: int, rng: np.random.Generator) -> list[np.ndarray]:
        """``n`` independent draws from ``p`` (token arrays), exact: one pass over the lattice
        per chunk of draws, then one walk per draw."""
        columns = max(1, self.n_symbols)
        per_chunk = max(1, UNIFORMS_PER_CHUNK // columns)
        draws: list[np.ndarray] = []
        while len(draws) < n:
            rows = min(per_chunk, n - len(draws))
            edges, offsets = self.lattice.sample(self.scores, rng.random((rows, columns)))
            tokens = self.tokens[edges]
            draws.extend(tokens[a:b] for a, b in zip(offsets[:-1], offsets[1:]))
        return draws

    def ambiguity(self, encoding: Sequence[int] | None = None) -> Ambiguity:
        """The summary of this lattice (see :class:`Ambiguity`)."""
        return Ambiguity(
            n_symbols=self.n_symbols,
            log_n=self.log_n(),
            entropy=float(self.entropy),
            log_partition=float(self.log_partition),
            best_probability=self.top_mass(1),
            expected_tokens=float(self.expected_tokens),
            temperature=self.temperature,
            encoding_probability=None if encoding is None else self.probability(encoding),
            lattice=self,
        )


def ambiguity(tok: Any, doc: Any, weights: Weights = None, temperature: float = 1.0, *,
              encoding: Sequence[int] | None = None) -> Ambiguity:
    """How ambiguous ``doc`` is for the fitted tokenizer ``tok`` (split as ``tok.encode``
    splits it); ``encoding`` (token ids), if given, gets its probability reported.

    >>> from ubpe import UBPE
    >>> tok = UBPE(alphabet="ab", n_tokens=5)
    >>> tok.fit(["abab", "abba", "baab"], quiet=True)
    >>> a = ambiguity(tok, "abab", encoding=[0, 4, 1])
    >>> a.n_segmentations, a.entropy <= a.log_n, 0 < a.encoding_probability < 1
    (2, True, True)
    """
    parts = tok.split_pipeline.split(doc).parts(0)
    return DocumentLattice(tok.vocabulary, parts, weights, temperature).ambiguity(encoding)
