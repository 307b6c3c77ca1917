"""``encode_batch`` of the byte-level models: documents in chunks, one kernel call per chunk.

Encoding a document one by one costs Python work (checks, UTF-8 encoding, a kernel call,
``tolist``) that holds the GIL, so threads that do it per document wait for each other. Here a
chunk of consecutive documents is joined and encoded to UTF-8 once, the kernel splits and
merges every document of it without the GIL (``PairMerges.encode_texts``,
``MergeTable.encode_texts``) and returns flat ids with per-document offsets (:data:`FlatIds`):
``encode_batch_to_numpy`` hands those on as they are, ``encode_batch`` cuts them into lists
(``_merges.id_lists``). The documents the kernel cannot take (a special token in the text,
say) are found per chunk with one regex search (:func:`docs_matching`), go through the
model's ``encode`` and are spliced in, in order (:func:`spliced`). Chunks are handed to the
threads as they free up (:func:`run_chunks`, by :func:`ubpe.threads.concat_in_order`), so
one long document does not hold up the rest.

>>> run_chunks(["ab", "c", "", "def"], np.array([2, 1, 0, 3]), 1, lambda docs, lengths: [d.upper() for d in docs])
['AB', 'C', '', 'DEF']
>>> ids, offsets = run_flat_chunks(["ab", "c"], np.array([2, 1]), 1, lambda docs, _: flat_ids([[len(d)] for d in docs]))
>>> ids.tolist(), offsets.tolist()
([2, 1], [0, 1, 2])
"""

from __future__ import annotations

from .. import _fntools as functools  # (functools' tools without its import: ubpe._fntools)
import itertools
from collections.abc import Callable, Sequence

from ubpe_native._numpy import np

from ..threads import concat_in_order, run_in_order

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import Any

    import regex

__all__ = ["CHUNK_CHARS", "FlatIds", "chunk_ranges", "concat_flat", "cut_long_docs", "cuttable_unless", "docs_matching", "encode_chunk", "flat_ids",
           "framed", "id_lists", "run_chunks", "run_flat_chunks", "spliced", "text_lengths"]

#: A batch's ids in two arrays: every document's ids back to back (int32), and the offsets
#: (int64, one per document plus one) where each starts: document ``d``'s ids are
#: ``ids[offsets[d]:offsets[d + 1]]`` (``id_lists`` makes them lists).
FlatIds = tuple["np.ndarray", "np.ndarray"]  # (names: numpy is imported when first used)


def id_lists(ids: Any, offsets: Any) -> list[list[int]]:
    """`ubpe_native._merges.id_lists`: :data:`FlatIds` as one list of ids per document (the
    kernel module imported when first called: a model whose encodes give lists without it, a
    ``.model`` file's, never loads it)."""
    from ubpe_native._merges import id_lists as lists

    return lists(ids, offsets)


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


def chunk_target(lengths: np.ndarray, workers: int) -> int:
    """How many characters a chunk of documents of ``lengths`` holds on ``workers`` threads."""
    return max(MIN_CHUNK_CHARS, min(CHUNK_CHARS, int(lengths.sum()) // max(1, workers * CHUNKS_PER_THREAD)))


def chunk_ranges(lengths: np.ndarray, workers: int) -> list[tuple[int, int]]:
    """``(first, last)`` ranges of consecutive documents of about :data:`CHUNK_CHARS`
    characters (fewer when the documents would give each of ``workers`` threads less than
    :data:`CHUNKS_PER_THREAD` chunks); at least one range.

    >>> chunk_ranges(np.array([5000, 5000, 5000, 9000, 10]), 2)
    [(0, 2), (2, 4), (4, 5)]
    """
    total = int(lengths.sum())
    target = chunk_target(lengths, workers)
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

    >>> import regex
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


if TYPE_CHECKING:  # (types of annotations only: no `typing` at run time)
    #: ``prepare(docs, lengths) -> (text, lengths, skip)``: what a kernel encodes for ``docs``.
    Prepare = Callable[[list, np.ndarray], tuple[str, np.ndarray, Any]]
    #: ``kernel(data, lengths, skip) -> (ids, offsets, redo)``: a kernel call; ``redo`` marks the
    #: documents it left out (None: none).
    Kernel = Callable[[bytes, np.ndarray, Any], tuple[np.ndarray, np.ndarray, Any]]


def encode_chunk(docs: list, lengths: np.ndarray, prepare: Prepare, kernel: Kernel,
                 encode_one: Callable[[Any], list[int]]) -> FlatIds:
    """The ids of consecutive documents in one kernel call: ``prepare`` them (join, normalize,
    find the documents to ``skip``), encode the text to UTF-8, call the ``kernel``, and splice
    in the ids of the documents it left out, by ``encode_one``. A document that is no str or
    holds a lone surrogate sends the whole chunk through ``encode_one``, which says what is
    wrong.

    >>> kernel = lambda data, lengths, skip: (np.frombuffer(data, np.uint8).astype(np.int32), np.cumsum([0, *lengths]), skip)
    >>> id_lists(*encode_chunk(["ab", "c"], np.array([2, 1]), lambda d, n: ("".join(d), n, None), kernel, list))
    [[97, 98], [99]]
    """
    try:
        text, lengths, skip = prepare(docs, lengths)
        data = text.encode("utf-8")
    except (TypeError, UnicodeEncodeError):
        return flat_ids([encode_one(doc) for doc in docs])
    ids, offsets, redo = kernel(data, lengths, skip)
    ids = ids.astype(np.int32, copy=False)
    if redo is None:
        return ids, offsets
    return spliced(ids, offsets, {k: encode_one(docs[k]) for k in np.flatnonzero(redo).tolist()})


def run_flat_chunks(docs: list, lengths: np.ndarray, workers: int,
                    encode_chunk: Callable[[list, np.ndarray], FlatIds],
                    cuttable: Callable[[str], bool] | None = None) -> FlatIds:
    """:func:`run_chunks` for chunk encoders that return :data:`FlatIds`: their arrays
    concatenated in order (no list per document). With ``cuttable``, a document longer than a
    chunk for which ``cuttable(doc)`` holds is cut into parts (:func:`cut_long_docs`) that
    the threads encode apart, and their ids joined again: the caller vouches that its
    pattern's pieces break where the cuts fall, so that the ids are the same."""
    n_docs = len(docs)
    owners = None
    if cuttable is not None and n_docs:
        docs, lengths, owners = cut_long_docs(docs, lengths, chunk_target(lengths, workers), cuttable)
    ranges = chunk_ranges(lengths, workers) if len(docs) else []
    parts = run_in_order(lambda r: encode_chunk(docs[r[0] : r[1]], lengths[r[0] : r[1]]), ranges, workers)
    for (first, last), (_, offsets) in zip(ranges, parts):
        if len(offsets) != last - first + 1:
            raise RuntimeError(f"a chunk of {last - first} documents gave {len(offsets) - 1}")
    ids, offsets = concat_flat(parts)
    if owners is None:
        return ids, offsets
    return ids, offsets[np.searchsorted(owners, np.arange(n_docs + 1), side="left")]


#: Where a long document is cut: between an ASCII letter and a space before another. The
#: preset patterns (gpt2, cl100k, llama3, o200k: :data:`CUTTABLE_PATTERNS`) always end a piece
#: there - a run of letters ends at the space, and the space starts the next word's piece -
#: and the piece before the cut is the same whether or not the text goes on (it ends in a
#: letter: no lookahead decided it), so the parts' pieces are the whole's.
_CUT = r"[A-Za-z](?= [A-Za-z])"


@functools.cache
def _cut_regex() -> Any:
    import regex  # (here: the models that never cut a document, a .model file's, import it not)

    return regex.compile(_CUT)


def __getattr__(name: str) -> frozenset:
    """``CUTTABLE_PATTERNS`` and ``CUTTABLE_PATTERN_IDS``: the patterns (and their ids in the
    kernel's scanner) whose documents :data:`_CUT` may cut, made when first imported (they
    import the patterns' module, and `regex`, which a sentencepiece model never needs)."""
    if name not in ("CUTTABLE_PATTERNS", "CUTTABLE_PATTERN_IDS"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from ..text.patterns import PATTERNS, native_pattern_id

    patterns = frozenset(PATTERNS.values())
    globals().update(CUTTABLE_PATTERNS=patterns,
                     CUTTABLE_PATTERN_IDS=frozenset(native_pattern_id(pattern) for pattern in patterns))
    return globals()[name]


def cuttable_unless(*specials: regex.Pattern | None) -> Callable[[str], bool]:
    """A ``cuttable`` for :func:`run_flat_chunks`: a document that UTF-8 can encode (else the
    caller's error names the index in the whole) and holds no match of any pattern of
    ``specials`` (which a cut could split; None: no pattern).

    >>> import regex
    >>> cuttable_unless(regex.compile("<s>"))("a <s> b"), cuttable_unless(None)("a\\udc80")
    (False, False)
    """
    def cuttable(doc: str) -> bool:
        if not doc.isascii():
            try:
                doc.encode("utf-8")
            except UnicodeEncodeError:
                return False
        return all(pattern.search(doc) is None for pattern in patterns)

    patterns = [pattern for pattern in specials if pattern is not None]
    return cuttable


def cut_long_docs(docs: list, lengths: np.ndarray, part_chars: int,
                  cuttable: Callable[[str], bool]) -> tuple[list, np.ndarray, np.ndarray | None]:
    """``(parts, their lengths, owners)``: ``docs`` with each one longer than ``part_chars``
    for which ``cuttable`` holds cut into parts of about ``part_chars`` characters (at
    :data:`_CUT`), ``owners[k]`` the document that part ``k`` comes from; owners None if no
    document was cut.

    >>> parts, sizes, owners = cut_long_docs(["ab cd ef", "x"], np.array([8, 1]), 3, lambda doc: True)
    >>> parts, sizes.tolist(), owners.tolist()
    (['ab cd', ' ef', 'x'], [5, 3, 1], [0, 0, 1])
    """
    long_docs = np.flatnonzero(lengths > part_chars).tolist()
    cuts = {}
    for k in long_docs:
        doc = docs[k]
        if not cuttable(doc):
            continue
        at, positions = 0, []
        for target in range(part_chars, len(doc), part_chars):
            found = _cut_regex().search(doc, max(target - 1, at))
            if found is None:
                break
            if found.end() > at:
                at = found.end()
                positions.append(at)
        if positions:
            cuts[k] = [0, *positions, len(doc)]
    if not cuts:
        return docs, lengths, None
    parts: list = []
    counts = np.ones(len(docs), dtype=np.int64)
    start = 0
    for k, bounds in cuts.items():
        parts.extend(docs[start:k])
        doc = docs[k]
        parts.extend(doc[a:b] for a, b in zip(bounds, bounds[1:]))
        counts[k] = len(bounds) - 1
        start = k + 1
    parts.extend(docs[start:])
    return parts, text_lengths(parts), np.repeat(np.arange(len(docs)), counts)


def flat_ids(lists: Sequence[Sequence[int]]) -> FlatIds:
    """Lists of ids as :data:`FlatIds` (what ``id_lists`` undoes).

    >>> ids, offsets = flat_ids([[7, 8], [], [9]])
    >>> ids.tolist(), offsets.tolist(), id_lists(ids, offsets)
    ([7, 8, 9], [0, 2, 2, 3], [[7, 8], [], [9]])
    """
    offsets = np.zeros(len(lists) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, lists), dtype=np.int64, count=len(lists)), out=offsets[1:])
    ids = np.fromiter(itertools.chain.from_iterable(lists), dtype=np.int32, count=int(offsets[-1]))
    return ids, offsets


def concat_flat(parts: Sequence[FlatIds]) -> FlatIds:
    """The documents of ``parts``, one after the other.

    >>> ids, offsets = concat_flat([flat_ids([[1], [2, 3]]), flat_ids([[]]), flat_ids([[4]])])
    >>> id_lists(ids, offsets)
    [[1], [2, 3], [], [4]]
    """
    if len(parts) == 1:
        return parts[0]
    if not parts:
        return np.zeros(0, dtype=np.int32), np.zeros(1, dtype=np.int64)
    starts = np.cumsum([0] + [len(ids) for ids, _ in parts[:-1]])
    return (np.concatenate([ids for ids, _ in parts]).astype(np.int32, copy=False),
            np.concatenate([[0]] + [offsets[1:] + start for (_, offsets), start in zip(parts, starts)]).astype(
                np.int64, copy=False))


def spliced(ids: np.ndarray, offsets: np.ndarray, replacements: dict[int, Sequence[int]]) -> FlatIds:
    """:data:`FlatIds` with document ``k``'s ids ``replacements[k]`` instead.

    >>> id_lists(*spliced(*flat_ids([[1], [2, 3], [4]]), {1: [], 2: [5, 6]}))
    [[1], [], [5, 6]]
    """
    if not replacements:
        return ids, offsets
    lengths = np.diff(offsets)
    pieces, start = [], 0
    for k in sorted(replacements):
        pieces.append(ids[offsets[start] : offsets[k]])
        pieces.append(np.asarray(replacements[k], dtype=np.int32).reshape(-1))
        lengths[k] = len(pieces[-1])
        start = k + 1
    pieces.append(ids[offsets[start] :])
    new_offsets = np.zeros(len(offsets), dtype=np.int64)
    np.cumsum(lengths, out=new_offsets[1:])
    return np.concatenate(pieces).astype(np.int32, copy=False), new_offsets


def framed(ids: np.ndarray, offsets: np.ndarray, prefix: Sequence[int], suffix: Sequence[int]) -> FlatIds:
    """:data:`FlatIds` with ``prefix`` before and ``suffix`` after every document's ids (BOS,
    EOS), without a list per document.

    >>> id_lists(*framed(*flat_ids([[5], []]), [1], [2]))
    [[1, 5, 2], [1, 2]]
    """
    if not prefix and not suffix:
        return ids, offsets
    n_docs = len(offsets) - 1
    new_offsets = offsets + np.arange(n_docs + 1, dtype=np.int64) * (len(prefix) + len(suffix))
    out = np.empty(int(new_offsets[-1]), dtype=np.int32)
    body = np.ones(len(out), dtype=bool)
    for j, token in enumerate(prefix):
        out[new_offsets[:-1] + j] = token
        body[new_offsets[:-1] + j] = False
    for j, token in enumerate(suffix):
        out[new_offsets[1:] - len(suffix) + j] = token
        body[new_offsets[1:] - len(suffix) + j] = False
    out[body] = ids
    return out, new_offsets
