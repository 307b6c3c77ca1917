"""``encode_batch`` of the byte-level models: documents in chunks, one kernel call per chunk.

Encoding a document one by one costs Python work (checks, UTF-8 encoding, a kernel call,
``tolist``) that holds the GIL, so threads that do it per document wait for each other. Here a
chunk of consecutive documents is joined and encoded to UTF-8 once, the kernel splits and
merges every document of it without the GIL (``PairMerges.encode_texts``,
``MergeTable.encode_texts``) and returns flat ids with per-document offsets, which
``_merges.id_lists`` turns into lists. The documents the kernel cannot take (a special token in
the text, say) are found per chunk with one regex search (:func:`docs_matching`) and go
through the model's ``encode``, in order. Chunks are handed to the threads as they free up
(:func:`run_chunks`, by :func:`ubpe.threads.concat_in_order`), so one long document does not hold
up the rest.

>>> run_chunks(["ab", "c", "", "def"], np.array([2, 1, 0, 3]), 1, lambda docs, lengths: [d.upper() for d in docs])
['AB', 'C', '', 'DEF']
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import regex

from ubpe_native._merges import id_lists

from ..threads import concat_in_order

__all__ = ["CHUNK_CHARS", "chunk_ranges", "docs_matching", "encode_chunk", "run_chunks", "text_lengths"]

#: A chunk holds about this many characters (the last document may overshoot): large enough
#: that the per-call work is nothing beside the kernel's, small enough to keep threads balanced.
CHUNK_CHARS = 1 << 18
#: ... and at least this many, however many threads there are.
MIN_CHUNK_CHARS = 1 << 13
#: Each thread gets about this many chunks (more than one: a long document then unbalances less).
CHUNKS_PER_THREAD = 4


def text_lengths(texts: list[str]) -> np.ndarray:
    """``len`` of every text, as int64 (what the kernels take as ``char_lengths``).

    >>> text_lengths(["ab", "", "é"]).tolist()
    [2, 0, 1]
    """
    return np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))


def chunk_ranges(lengths: np.ndarray, workers: int) -> list[tuple[int, int]]:
    """``(first, last)`` ranges of consecutive documents of about :data:`CHUNK_CHARS`
    characters (fewer when the documents would give each of ``workers`` threads less than
    :data:`CHUNKS_PER_THREAD` chunks); at least one range.

    >>> chunk_ranges(np.array([5000, 5000, 5000, 9000, 10]), 2)
    [(0, 2), (2, 4), (4, 5)]
    """
    total = int(lengths.sum())
    target = max(MIN_CHUNK_CHARS, min(CHUNK_CHARS, total // max(1, workers * CHUNKS_PER_THREAD)))
    ends = np.cumsum(lengths)
    cuts = np.unique(np.searchsorted(ends, np.arange(target, total, target), side="left") + 1).tolist()
    edges = [0] + [c for c in cuts if 0 < c < len(lengths)] + [len(lengths)]
    return list(zip(edges, edges[1:]))


def run_chunks(docs: list, lengths: np.ndarray, workers: int,
               encode_chunk: Callable[[list, np.ndarray], list]) -> list:
    """``encode_chunk(docs, lengths)`` over chunks of consecutive documents (see
    :func:`chunk_ranges`) on ``workers`` threads, concatenated in order; an exception is
    that of the first chunk (in document order) that raised one."""
    ranges = chunk_ranges(lengths, workers) if len(docs) else []
    return concat_in_order(lambda r: encode_chunk(docs[r[0] : r[1]], lengths[r[0] : r[1]]), ranges, workers)


def docs_matching(pattern: regex.Pattern | None, text: str, lengths: np.ndarray) -> np.ndarray | None:
    """Which documents (``text`` is them back to back, ``lengths`` their lengths) overlap a
    match of ``pattern`` in ``text``, as a uint8 array (a ``skip`` for the kernels); None if
    none does. A match across a document boundary marks both documents: the caller encodes
    them one by one, which is right either way.

    >>> docs_matching(regex.compile("<s>"), "a<s>bc<s>", np.array([4, 2, 3])).tolist()
    [1, 0, 1]
    >>> docs_matching(regex.compile("<s>"), "a<s>b", np.array([2, 3])).tolist()  # across a boundary
    [1, 1]
    >>> docs_matching(regex.compile("<s>"), "abc", np.array([1, 2])) is None
    True
    """
    if pattern is None:
        return None
    spans = [m.span() for m in pattern.finditer(text) if m.end() > m.start()]
    if not spans:
        return None
    starts = np.concatenate([[0], np.cumsum(lengths)])
    bounds = np.asarray(spans, dtype=np.int64)
    first = np.searchsorted(starts, bounds[:, 0], side="right") - 1
    last = np.searchsorted(starts, bounds[:, 1] - 1, side="right") - 1
    marks = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.add.at(marks, first, 1)
    np.add.at(marks, last + 1, -1)
    return (np.cumsum(marks[:-1]) > 0).astype(np.uint8)


#: ``prepare(docs, lengths) -> (text, lengths, skip)``: what a kernel encodes for ``docs``.
Prepare = Callable[[list, np.ndarray], tuple[str, np.ndarray, Any]]
#: ``kernel(data, lengths, skip) -> (ids, offsets, redo)``: a kernel call; ``redo`` marks the
#: documents it left out (None: none).
Kernel = Callable[[bytes, np.ndarray, Any], tuple[np.ndarray, np.ndarray, Any]]


def encode_chunk(docs: list, lengths: np.ndarray, prepare: Prepare, kernel: Kernel,
                 encode_one: Callable[[Any], list[int]]) -> list[list[int]]:
    """The ids of consecutive documents in one kernel call: ``prepare`` them (join, normalize,
    find the documents to ``skip``), encode the text to UTF-8, call the ``kernel``, cut its flat
    ids, and ``encode_one`` the documents it left out. A document that is no str or holds a
    lone surrogate sends the whole chunk through ``encode_one``, which says what is wrong.

    >>> kernel = lambda data, lengths, skip: (np.frombuffer(data, np.uint8), np.cumsum([0, *lengths]), skip)
    >>> encode_chunk(["ab", "c"], np.array([2, 1]), lambda d, n: ("".join(d), n, None), kernel, list)
    [[97, 98], [99]]
    """
    try:
        text, lengths, skip = prepare(docs, lengths)
        data = text.encode("utf-8")
    except (TypeError, UnicodeEncodeError):
        return [encode_one(doc) for doc in docs]
    ids, offsets, redo = kernel(data, lengths, skip)
    out = id_lists(ids, offsets)
    for k in [] if redo is None else np.flatnonzero(redo).tolist():
        out[k] = encode_one(docs[k])
    return out
