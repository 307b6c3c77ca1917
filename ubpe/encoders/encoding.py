"""What encoders return: an :data:`Encoding` ``(tokens, score)``, and a batch's encodings as four
flat arrays (:class:`EncodedBatch`, what ``encode_batch_to_numpy`` returns).

``encode_batch`` returns what ubpe 0.3.0 returns, ``[[(tokens, score), ...] per document]``:
a Python list per encoding, an int object per token. Building those objects holds the GIL, so
it is the part of a batch that threads cannot share. On the encode benchmark's 1 MB, tf-idf
top-5 spends about two fifths of its time there and in the garbage collector's passes over
the new lists, and scales 1.4x on two cores. :class:`EncodedBatch` keeps the same encodings
in arrays: the kernels fill them without the GIL. A document's lists are built only when
it is read, as HF tokenizers builds an ``Encoding``'s ids. Its ``best()`` arrays feed numpy,
PyTorch or Arrow without a list in between.

>>> batch = EncodedBatch.from_lists([[([2, 0], 0.4), ([0, 1, 0], 0.0)], [([], 0.0)]])
>>> len(batch), batch[0], batch.n_encodings.tolist()
(2, [([2, 0], 0.4), ([0, 1, 0], 0.0)], [2, 1])
>>> ids, offsets = batch.best()
>>> ids.tolist(), offsets.tolist()
([2, 0], [0, 2, 2])
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ubpe_native._numpy import np

from ..errors import InvalidParameterError

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import Any
__all__ = ["EncodedBatch", "Encoding"]

#: One encoding of a document: its tokens and their tf-idf score.
Encoding = tuple[list[int], float]

_DTYPES = {"ids": "int32", "token_offsets": "int64", "scores": "float64", "doc_offsets": "int64"}


class EncodedBatch:
    """The encodings of ``n`` documents, best first per document, in four arrays:

    * ``ids`` (int32): every encoding's tokens, back to back;
    * ``token_offsets`` (int64, one per encoding plus one): encoding ``e`` is
      ``ids[token_offsets[e]:token_offsets[e + 1]]``;
    * ``scores`` (float64, one per encoding): encoding ``e``'s score;
    * ``doc_offsets`` (int64, ``n + 1``): document ``d``'s encodings are
      ``doc_offsets[d]:doc_offsets[d + 1]`` (one each for top-1).

    ``batch.tolist()`` equals what ``encode_batch`` returns for the same call, and
    ``batch[d]`` its item ``d``. The constructor checks the arrays' types and bounds.

    >>> EncodedBatch(np.array([1], np.int32), np.array([0, 2]), np.array([0.0]), np.array([0, 1]))
    Traceback (most recent call last):
    ...
    ubpe.errors.InvalidParameterError: token_offsets must rise from 0 to len(ids) = 1
    """

    ids: np.ndarray
    token_offsets: np.ndarray
    scores: np.ndarray
    doc_offsets: np.ndarray

    # (a plain class, immutable as the frozen dataclass it was: `dataclasses` imports
    # `inspect`, 4 ms of every load that imports the encoders)
    def __init__(self, ids: np.ndarray, token_offsets: np.ndarray, scores: np.ndarray, doc_offsets: np.ndarray):
        for name, value in zip(_DTYPES, (ids, token_offsets, scores, doc_offsets)):
            object.__setattr__(self, name, value)
        # the caller keeps its arrays: the batch holds copies, so later edits cannot bypass the
        # checks (the kernels' and the batch's own constructors hand over fresh arrays: _owned)
        self._check()
        for name in _DTYPES:
            object.__setattr__(self, name, getattr(self, name).copy())

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"an EncodedBatch is immutable: cannot assign to {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"an EncodedBatch is immutable: cannot delete {name!r}")

    def __repr__(self) -> str:
        return f"EncodedBatch({', '.join(f'{name}={getattr(self, name)!r}' for name in _DTYPES)})"

    @classmethod
    def _owned(cls, ids: np.ndarray, token_offsets: np.ndarray, scores: np.ndarray,
               doc_offsets: np.ndarray) -> EncodedBatch:
        """A batch of arrays nobody else holds (fresh from a kernel or built here): checked,
        not copied."""
        batch = object.__new__(cls)
        for name, value in zip(_DTYPES, (ids, token_offsets, scores, doc_offsets)):
            object.__setattr__(batch, name, value)
        batch._check()
        return batch

    def _check(self) -> None:
        for name, dtype in _DTYPES.items():
            value = getattr(self, name)
            if not isinstance(value, np.ndarray) or value.dtype != dtype or value.ndim != 1:
                raise InvalidParameterError(f"{name} must be a 1-D {np.dtype(dtype).name} array")
        _check_offsets("token_offsets", self.token_offsets, len(self.ids))
        _check_offsets("doc_offsets", self.doc_offsets, len(self.scores))
        if len(self.token_offsets) != len(self.scores) + 1:
            raise InvalidParameterError("token_offsets must have one entry per score, plus one")

    @classmethod
    def from_arrays(cls, arrays: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]) -> EncodedBatch:
        """From a kernel's ``(ids, token_offsets, scores, doc_offsets)`` (fresh arrays)."""
        return cls._owned(*arrays)

    @classmethod
    def from_lists(cls, encodings: Sequence[Sequence[Encoding]]) -> EncodedBatch:
        """From ``encode_batch``'s lists (``[[(tokens, score), ...] per document]``).

        >>> EncodedBatch.from_lists([[([1, 2**40], 0.0)]])
        Traceback (most recent call last):
        ...
        ubpe.errors.InvalidParameterError: from_lists takes [[(tokens, score), ...] per document], tokens int32 ids and scores floats: Python integer 1099511627776 out of bounds for int32
        """
        try:
            flat = [(tokens, score) for document in encodings for tokens, score in document]
            lengths = np.fromiter((len(tokens) for tokens, _ in flat), dtype=np.int64, count=len(flat))
            ids = np.fromiter((t for tokens, _ in flat for t in tokens), dtype=np.int32, count=int(lengths.sum()))
            scores = np.fromiter((score for _, score in flat), dtype=np.float64, count=len(flat))
            doc_offsets = _offsets(np.fromiter(map(len, encodings), dtype=np.int64, count=len(encodings)))
        except (TypeError, ValueError, OverflowError) as exc:
            raise InvalidParameterError("from_lists takes [[(tokens, score), ...] per document], tokens int32 ids "
                                        f"and scores floats: {exc}") from None
        return cls._owned(ids, _offsets(lengths), scores, doc_offsets)

    @classmethod
    def concatenate(cls, batches: Sequence[EncodedBatch]) -> EncodedBatch:
        """The documents of ``batches``, one batch after the other.

        >>> one = EncodedBatch.from_lists([[([1, 2], 0.5)]])
        >>> EncodedBatch.concatenate([one, one]).tolist()
        [[([1, 2], 0.5)], [([1, 2], 0.5)]]
        """
        if len(batches) == 1:
            return batches[0]
        if not batches:
            return cls.from_lists([])
        token_starts = np.cumsum([0] + [len(b.ids) for b in batches[:-1]])
        encoding_starts = np.cumsum([0] + [len(b.scores) for b in batches[:-1]])
        return cls._owned(
            np.concatenate([b.ids for b in batches]),
            np.concatenate([[0]] + [b.token_offsets[1:] + start for b, start in zip(batches, token_starts)]),
            np.concatenate([b.scores for b in batches]),
            np.concatenate([[0]] + [b.doc_offsets[1:] + start for b, start in zip(batches, encoding_starts)]),
        )

    def __len__(self) -> int:
        """How many documents."""
        return len(self.doc_offsets) - 1

    @property
    def n_encodings(self) -> np.ndarray:
        """How many encodings each document has (int64)."""
        return np.diff(self.doc_offsets)

    def __getitem__(self, d: int | slice) -> Any:
        """Document ``d``'s encodings ``[(tokens, score), ...]``, best first (as lists); a
        slice of consecutive documents (step 1) is a batch of its own.

        >>> batch = EncodedBatch.from_lists([[([1], 0.5)], [([2, 3], 0.25)], [([], 0.0)]])
        >>> batch[1:].tolist()
        [[([2, 3], 0.25)], [([], 0.0)]]
        """
        if isinstance(d, slice):
            return self._documents(d)
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
            raise InvalidParameterError(f"an EncodedBatch is indexed by a document number or a slice, "
                                        f"not {type(d).__name__}")
        n = len(self)
        if not -n <= d < n:
            raise IndexError(f"document {d} of a batch of {n}")
        d = int(d) % n
        first, last = int(self.doc_offsets[d]), int(self.doc_offsets[d + 1])
        bounds = self.token_offsets[first : last + 1].tolist()
        ids = self.ids[bounds[0] : bounds[-1]].tolist()
        start = bounds[0]
        return [(ids[a - start : b - start], score) for a, b, score in
                zip(bounds, bounds[1:], self.scores[first:last].tolist())]

    def _documents(self, span: slice) -> EncodedBatch:
        first, last, step = span.indices(len(self))
        if step != 1:
            raise InvalidParameterError("an EncodedBatch slice takes consecutive documents (step 1)")
        last = max(first, last)
        e0, e1 = int(self.doc_offsets[first]), int(self.doc_offsets[last])
        t0, t1 = int(self.token_offsets[e0]), int(self.token_offsets[e1])
        return EncodedBatch._owned(self.ids[t0:t1], self.token_offsets[e0 : e1 + 1] - t0, self.scores[e0:e1],
                                   self.doc_offsets[first : last + 1] - e0)

    def __iter__(self) -> Iterator[list[Encoding]]:
        return iter(self.tolist())

    def tolist(self) -> list[list[Encoding]]:
        """Every document's encodings as ``encode_batch`` returns them."""
        ids, bounds, scores = self.ids.tolist(), self.token_offsets.tolist(), self.scores.tolist()
        encodings = [(ids[a:b], score) for a, b, score in zip(bounds, bounds[1:], scores)]
        docs = self.doc_offsets.tolist()
        return [encodings[a:b] for a, b in zip(docs, docs[1:])]

    def best(self) -> tuple[np.ndarray, np.ndarray]:
        """``(ids, offsets)``: each document's best encoding, document ``d`` being
        ``ids[offsets[d]:offsets[d + 1]]`` (a document with no encoding - only an empty batch
        has none - is empty). For top-1 these are views of the batch's own arrays."""
        if len(self.scores) == len(self) and (self.n_encodings == 1).all():  # top-1: the arrays as they are
            return self.ids, self.token_offsets
        first = self.doc_offsets[:-1]
        lengths = np.where(first < self.doc_offsets[1:],
                           self.token_offsets[np.minimum(first + 1, len(self.scores))] - self.token_offsets[first], 0)
        offsets = _offsets(lengths)
        starts = self.token_offsets[first]
        # each best encoding's tokens, gathered with one index array
        index = np.repeat(starts - offsets[:-1], lengths) + np.arange(offsets[-1])
        return self.ids[index], offsets

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, EncodedBatch):
            return NotImplemented
        return all(np.array_equal(getattr(self, name), getattr(other, name)) for name in _DTYPES)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"EncodedBatch({len(self)} documents, {len(self.scores)} encodings, {len(self.ids)} tokens)"

    def __reduce__(self) -> tuple[Any, ...]:
        return (EncodedBatch, (self.ids, self.token_offsets, self.scores, self.doc_offsets))


def _offsets(lengths: np.ndarray) -> np.ndarray:
    out = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=out[1:])
    return out


def _check_offsets(name: str, offsets: np.ndarray, end: int) -> None:
    """``offsets`` starts at 0, never falls and ends at ``end``."""
    if len(offsets) == 0 or offsets[0] != 0 or offsets[-1] != end or (np.diff(offsets) < 0).any():
        of = "ids" if name == "token_offsets" else "scores"
        raise InvalidParameterError(f"{name} must rise from 0 to len({of}) = {end}")
