"""Fitting: the corpus, split into parts, goes through the Cython pair merger.

One fit yields one :class:`~ubpe.vocabulary.Vocabulary` in creation order; the classic and
universal tokenizers differ only in how they rearrange and trim it afterwards.

A fit sees the corpus only through its distinct parts, their multiplicities and the documents
holding them. A list of documents is split at once (:class:`~ubpe.splitting.SplitBatch`);
any other iterable is streamed: split chunk by chunk and counted into :class:`PartCounts`, so
memory grows with the distinct parts, not with the corpus. Both give the same vocabulary:

>>> from ubpe.alphabet import Alphabet
>>> from ubpe.splitting import SplitPipeline
>>> split = SplitPipeline(Alphabet.from_spec("ab "), break_tokens=" ").split_batch
>>> docs = ["ab ab ba", "ab ba", "aab"]
>>> batch = corpus_parts(docs, split)
>>> counts = corpus_parts(iter(docs), split, chunk_docs=2)
>>> counts.n_docs, counts.n_parts, counts.weights.tolist()
(3, 3, [3, 2, 1])
>>> fit = lambda parts: fit_vocabulary(parts, n_base=3, n_tokens=6, quiet=True).merges.tolist()
>>> fit(batch) == fit(counts)
True
"""

from __future__ import annotations

from . import _fntools as functools  # (functools' tools without its import: ubpe._fntools)
from collections.abc import Callable, Iterable, Iterator, Sequence
from array import array
from dataclasses import dataclass
from itertools import accumulate, chain, islice
from typing import Any

from ubpe_native._fit import PairMerger
from ubpe_native._numpy import np, numpy_types
from ubpe_native._parts import PartCounter

from ._hooks import scale_out_counter
from ._lazy import BufferField, drop_views
from .errors import EmptyCorpusError, InvalidParameterError, SymbolTypeError
from .splitting import SplitBatch, SplitMode, SplitPipeline
from .threads import document_ranges
from .vocabulary import Vocabulary

#: A corpus splitter: ``split(docs, first_doc=...)`` cuts a chunk of documents into parts;
#: errors name documents by their index in the whole corpus (``first_doc`` + index in chunk).
Split = Callable[..., SplitBatch]
#: Streaming: a chunk ends after this many documents or symbols, whichever comes first.
CHUNK_DOCS = 4096
CHUNK_SYMBOLS = 1 << 21
#: A list of documents is split and counted in chunks of about this many symbols: small
#: enough that a chunk's split arrays (~20 bytes per symbol) stay a few MB, large enough that
#: the per-chunk overhead stays below 1% of the split.
LIST_CHUNK_SYMBOLS = 1 << 16
#: Threads count a list only if each gets at least this many symbols.
THREAD_SYMBOLS = 1 << 20
#: A merge round counts the documents of its pairs on threads only if it scans at least this
#: many positions (below, waking the workers costs more than it saves).
THREAD_POSITIONS = 1 << 12
EMPTY_CORPUS = "`corpus` is empty: fitting needs at least one document"


@dataclass(frozen=True)
class PartCounts:
    """The distinct parts of a corpus in order of first occurrence: part ``k`` is
    ``tokens[offsets[k]:offsets[k+1]]``, occurs ``weights[k]`` times, in the documents
    ``docs[doc_offsets[k]:doc_offsets[k+1]]`` (ascending) of ``n_docs``. The arrays are
    kept as ``array.array`` (a fit needs no numpy) and read as numpy arrays.

    Counts of consecutive chunks of a corpus merge into the counts of the whole:

    >>> import numpy as np
    >>> one = PartCounts.of_batch(SplitBatch(np.array([0, 1, 0, 1], np.int32),
    ...     np.array([0, 2, 4]), np.zeros(2, bool), np.array([0, 2])))
    >>> merged = PartCounts.merge([one, one])
    >>> merged.n_docs, merged.weights.tolist(), merged.docs.tolist()
    (2, [4], [0, 1])
    """

    tokens: np.ndarray = BufferField("i")
    offsets: np.ndarray = BufferField("q")
    weights: np.ndarray = BufferField("q")
    doc_offsets: np.ndarray = BufferField("q")
    docs: np.ndarray = BufferField("i")
    n_docs: int

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (and copied) as its buffers, without the numpy views made of them."""
        return drop_views(self.__dict__)

    @property
    def n_parts(self) -> int:
        return len(self._weights)

    def buffers(self) -> tuple[array, array, array, array, array]:
        """``(tokens, offsets, weights, doc_offsets, docs)`` as they are kept (``array.array``)."""
        return self._tokens, self._offsets, self._weights, self._doc_offsets, self._docs

    @property
    def nbytes(self) -> int:
        """Bytes held by the arrays."""
        return sum(a.itemsize * len(a) for a in self.buffers())

    @classmethod
    def of_counter(cls, counter: PartCounter, *, release: bool = False) -> PartCounts:
        """The counts of ``counter`` (with ``release``, freed from it as they are copied)."""
        n_docs = int(counter.n_docs)
        return cls(*counter.export(release=release), n_docs=n_docs)

    @classmethod
    def of_batch(cls, batch: SplitBatch) -> PartCounts:
        counter = PartCounter()
        add_batch(counter, batch)
        return cls.of_counter(counter)

    @classmethod
    def merge(cls, counts: Iterable[PartCounts]) -> PartCounts:
        """The counts of consecutive chunks, in document order, as one."""
        counter = PartCounter()
        for c in counts:
            c.add_to(counter)
        return cls.of_counter(counter)

    def add_to(self, counter: PartCounter) -> None:
        """Add these counts to ``counter`` (as the documents after those it counted)."""
        tokens, offsets, weights, doc_offsets, docs = self.buffers()
        counter.add(tokens, offsets, docs, self.n_docs, weights, doc_offsets)

    @classmethod
    def merge_counters(cls, counters: list[PartCounter]) -> PartCounts:
        """The counts of consecutive chunks' counters, in document order, as one: the first
        absorbs the later ones (:meth:`PartCounter.absorb`, each freed as it goes);
        ``counters`` is emptied."""
        counter = counters.pop(0)
        while counters:
            counter.absorb(counters.pop(0))
        return cls.of_counter(counter, release=True)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PartCounts):
            return NotImplemented
        return self.n_docs == other.n_docs and self.buffers() == other.buffers()

    __hash__ = None  # type: ignore[assignment]


def add_batch(counter: PartCounter, batch: SplitBatch) -> None:
    """Count the parts that fitting sees in ``batch`` (its documents follow those counted)."""
    tokens, offsets, doc_of_part = batch.fit_parts()
    counter.add(tokens, offsets, doc_of_part, batch.n_docs)


def check_corpus(corpus: Any) -> None:
    """Reject what is no collection of documents (a str, one 1-D array, a number...)."""
    if isinstance(corpus, (str, bytes)):
        raise SymbolTypeError("`corpus` must be a list of documents, not a single str/bytes")
    if isinstance(corpus, numpy_types("ndarray")) and corpus.ndim == 1 and corpus.dtype != object:
        raise SymbolTypeError("`corpus` must be a list of documents, not one 1-D array")
    if not isinstance(corpus, Iterable):
        raise SymbolTypeError(f"`corpus` must be a list of documents, not {type(corpus).__name__}")


def corpus_parts(
    corpus: Any,
    split: Split,
    *,
    chunk_docs: int | None = None,
    chunk_symbols: int | None = None,
    empty_message: str = EMPTY_CORPUS,
    n_threads: int = 1,
    native: tuple[Any, int, array, int] | None = None,
) -> SplitBatch | PartCounts:
    """What :func:`fit_vocabulary` needs of ``corpus``, cut into parts by ``split``.

    A list, tuple or array of documents is split and counted in chunks of about
    :data:`LIST_CHUNK_SYMBOLS` symbols, on ``n_threads`` threads (:func:`count_documents`),
    so that no array over the whole corpus is ever built; a Dask collection is counted on
    its cluster (:mod:`ubpe.distributed.dask`, through :func:`ubpe._hooks.scale_out_counter`); any other iterable - a generator over files - is split
    in chunks of ``chunk_docs`` documents or ``chunk_symbols`` symbols (default
    :data:`CHUNK_DOCS`, :data:`CHUNK_SYMBOLS`) and counted, so only one chunk is ever held.
    """
    scale_out = scale_out_counter(corpus)
    if scale_out is not None:
        return scale_out(corpus, split, empty_message=empty_message)
    check_corpus(corpus)
    if isinstance(corpus, (Sequence, *numpy_types("ndarray"))):
        docs = as_corpus(corpus, empty_message=empty_message)
        return count_documents(docs, split, n_threads=n_threads, chunk_symbols=chunk_symbols, native=native)
    counts = count_stream(corpus, split, chunk_docs=chunk_docs, chunk_symbols=chunk_symbols, native=native)
    if counts.n_docs == 0:
        raise EmptyCorpusError(empty_message)
    return counts


def count_stream(
    docs: Iterable[Any],
    split: Split,
    *,
    chunk_docs: int | None = None,
    chunk_symbols: int | None = None,
    native: tuple[Any, int, array, int] | None = None,
) -> PartCounts:
    """The counts of ``docs``, split chunk by chunk (see :func:`corpus_parts`; ``native``:
    see :func:`count_documents`)."""
    counter = PartCounter()
    chunks = _chunks(iter(docs), chunk_docs or CHUNK_DOCS, chunk_symbols or CHUNK_SYMBOLS)
    for chunk in chunks:
        if native is None or not _add_native(counter, chunk, native):
            add_batch(counter, split(chunk, first_doc=int(counter.n_docs)))
    return PartCounts.of_counter(counter, release=True)


def count_documents(
    docs: Sequence[Any],
    split: Split,
    *,
    n_threads: int = 1,
    chunk_symbols: int | None = None,
    native: tuple[Any, int, array, int] | None = None,
) -> PartCounts:
    """The counts of the list ``docs``: split and counted chunk by chunk (about
    ``chunk_symbols`` symbols each, default :data:`LIST_CHUNK_SYMBOLS`), so memory holds one
    chunk's split per thread besides the distinct parts.

    With ``n_threads`` > 1 the documents are cut into that many consecutive runs of chunks
    (at most one per :data:`THREAD_SYMBOLS` symbols, unless ``chunk_symbols`` is given), each
    counted on its own thread (the scanner and the counter run without the GIL); a thread
    that finishes early takes over the back half of what another has left (see
    :class:`_Segments`), and the counts of the segments are merged in document order: the
    counts - and so the vocabulary - are the same whatever the number of threads and
    whoever counted what. An error names the first bad document.

    ``native`` (:meth:`~ubpe.splitting.SplitPipeline.native_fit_tables`) lets the kernel
    split and count chunks of str documents in one pass without the GIL, building no
    arrays (``split`` still handles the chunks it cannot take, and names errors).

    >>> from ubpe.alphabet import Alphabet
    >>> from ubpe.splitting import SplitPipeline
    >>> split = SplitPipeline(Alphabet.from_spec("ab "), break_tokens=" ").split_batch
    >>> docs = ["ab ab ba", "ab ba", "aab", "ba ba"]
    >>> one = count_documents(docs, split, chunk_symbols=4)
    >>> two = count_documents(docs, split, n_threads=2, chunk_symbols=4)
    >>> one.weights.tolist(), one == two
    ([3, 4, 1], True)
    """
    chunks = document_ranges(docs, chunk_symbols or LIST_CHUNK_SYMBOLS)
    # a thread gets at least THREAD_SYMBOLS symbols: on less, its counter's memory costs more
    # than its time saves
    symbols = sum(size for _, _, size in chunks)
    useful = max(1, symbols // THREAD_SYMBOLS) if chunk_symbols is None else len(chunks)
    runs = _runs(chunks, min(max(1, n_threads), len(chunks), useful))

    def count(counter: PartCounter, chunk_index: int) -> None:
        first, last, _ = chunks[chunk_index]
        chunk = docs[first:last]
        if native is None or not _add_native(counter, chunk, native):
            add_batch(counter, split(chunk, first_doc=first))

    if len(runs) == 1:
        counter = PartCounter()
        for k in range(len(chunks)):
            count(counter, k)
        return PartCounts.of_counter(counter, release=True)
    return _Segments(runs).count(count)


def _add_native(counter: PartCounter, chunk: Sequence[Any], native: tuple[Any, int, array, int]) -> bool:
    """Count ``chunk`` by the kernel's one-pass split (see :func:`count_documents`); False
    (nothing counted) where it does not apply: str documents for an alphabet of ints or the
    reverse, lone surrogates, a symbol that is no plain int, or a symbol outside the alphabet
    (which the caller's split then reports)."""
    classes, pattern, table, low = native
    if classes is None:  # an alphabet of ints; documents of plain ints (no bools, no numpy)
        if not all(type(doc) in (list, tuple) and set(map(type, doc)) <= {int} for doc in chunk):
            return False
        try:
            values = array("q", chain.from_iterable(chunk))
        except OverflowError:
            return False
        doc_offsets = array("q", accumulate(map(len, chunk), initial=0))
        return counter.add_values(values, doc_offsets, table, low) < 0
    if not all(type(doc) is str for doc in chunk):
        return False
    try:
        data = "".join(chunk).encode("utf-8")
    except UnicodeEncodeError:
        return False
    doc_chars = array("q", accumulate(map(len, chunk), initial=0))
    return counter.add_text(data, doc_chars, classes, pattern, table) < 0


def _runs(chunks: list[tuple[int, int, int]], n_runs: int) -> list[list[tuple[int, int, int]]]:
    """``chunks`` cut into ``n_runs`` consecutive runs of about equal symbols (none empty).

    >>> [len(run) for run in _runs([(0, 1, 5), (1, 2, 5), (2, 3, 5), (3, 4, 5)], 2)]
    [2, 2]
    """
    total = sum(size for _, _, size in chunks)
    runs: list[list[tuple[int, int, int]]] = [[]]
    seen = 0
    for k, chunk in enumerate(chunks):
        left = len(chunks) - k  # chunks left, this one included: every later run gets one
        if runs[-1] and len(runs) < n_runs and (seen >= total * len(runs) / n_runs or left <= n_runs - len(runs)):
            runs.append([])
        runs[-1].append(chunk)
        seen += chunk[2]
    return runs


class _Segments:
    """The chunks of a list counted on threads, each thread counting a *segment* of
    consecutive chunks, in order, into a counter of its own; the counters, absorbed in the
    segments' order, count the whole list.

    The segments start as the runs of :func:`_runs`, one per thread, of about equal symbols.
    The cost of a symbol varies with the text, though (5 MB of prose: 29.7 vs 34.0 ms for two
    runs of 2.5 M symbols), so a thread that runs out of chunks takes a run no thread has
    started, or else the back half of the chunks left in the segment with most to spare
    (:meth:`_spare`), as a new segment: the threads end within about a chunk of each other,
    for one more counter to absorb per take-over (at 5 MB, 0.1-0.3 ms each; 2-4 counters in
    all on two threads).

    The calling thread counts the first run: its counter, which absorbs the others, then
    lives in this thread's malloc arena, whose memory the merge rounds reuse once the counts
    are out. The others run on the process's pool of threads (:mod:`ubpe.threads`).

    >>> def count(counter, k):  # chunk k: one document, holding the part (k % 2, k % 2)
    ...     counter.add(array("i", [k % 2] * 2), array("q", [0, 2]), array("i", [0]), 1)
    >>> counts = _Segments([[(0, 1, 2), (1, 2, 2)], [(2, 3, 2)]]).count(count)
    >>> counts.weights.tolist(), counts.docs.tolist()
    ([2, 1], [0, 2, 1])
    """

    #: where an interrupt (KeyboardInterrupt...) is kept among the chunks' errors: first
    INTERRUPTED = -1

    def __init__(self, runs: list[list[tuple[int, int, int]]]) -> None:
        import threading

        self.lock = threading.Lock()
        bounds = list(accumulate((len(run) for run in runs), initial=0))
        # [first chunk, next chunk to count, end] of every segment, and its counter
        self.segments = [[first, first, end] for first, end in zip(bounds, bounds[1:])]
        self.counters: list[PartCounter | None] = [None] * len(self.segments)
        self.unstarted = list(range(len(self.segments) - 1, 0, -1))  # the first is the caller's
        self.errors: dict[int, BaseException] = {}  # chunk -> its error

    def count(self, count: Callable[[PartCounter, int], None]) -> PartCounts:
        """Run ``count(counter, chunk)`` for every chunk, the caller one of the threads, and
        merge the counters; the error raised is that of the first failing chunk."""
        from .threads import pool_helpers

        with pool_helpers(lambda: self._work(self._claim(), count), len(self.segments) - 1):
            self._work(0, count)  # the pool's runs end once nothing is left to take
        if self.errors:
            raise self.errors[min(self.errors)]
        order = sorted(range(len(self.segments)), key=lambda s: self.segments[s][0])
        return PartCounts.merge_counters([self.counters[s] for s in order])

    def _work(self, segment: int | None, count: Callable[[PartCounter, int], None]) -> None:
        while segment is not None:
            counter = self.counters[segment] = PartCounter()
            while (chunk := self._next_chunk(segment)) is not None:
                try:
                    count(counter, chunk)
                except BaseException as error:  # noqa: BLE001 - re-raised by count(), in order
                    with self.lock:
                        # an interrupt (no Exception) stops every thread and goes first
                        self.errors[chunk if isinstance(error, Exception) else self.INTERRUPTED] = error
                        self.segments[segment][2] = chunk  # none of its later chunks to take
                    break  # (earlier chunks may fail first: help count them)
            segment = self._claim()

    def _next_chunk(self, segment: int) -> int | None:
        with self.lock:
            _, chunk, end = self.segments[segment]
            if chunk < end and self.errors and chunk > min(self.errors):
                # after a failed chunk only earlier ones matter (the first error is raised):
                # the segment is closed, so that no thread takes over what is left of it
                end = self.segments[segment][2] = chunk
            if chunk >= end:
                return None
            self.segments[segment][1] = chunk + 1
            return chunk

    def _claim(self) -> int | None:
        """A segment for a thread out of chunks: a run no thread has started, else the back
        half of the chunks left in the segment with most to spare (None: none has any)."""
        with self.lock:
            if self.unstarted:
                return self.unstarted.pop()
            victim = max(self.segments, key=self._spare)
            taken = self._spare(victim)
            if taken < 1:
                return None
            middle = victim[2] - taken
            self.segments.append([middle, middle, victim[2]])
            self.counters.append(None)
            victim[2] = middle
            return len(self.segments) - 1

    @staticmethod
    def _spare(segment: list[int]) -> int:
        """How many chunks of ``segment`` another thread may take: the larger half of those
        left (a lone one too) once its thread counts one of its chunks, the smaller before, so
        that every thread counts at least the first chunk of each segment it takes.

        >>> _Segments._spare([0, 3, 6]), _Segments._spare([3, 3, 6]), _Segments._spare([3, 3, 4])
        (2, 1, 0)
        """
        first, chunk, end = segment
        return (end - chunk + 1) // 2 if chunk > first else (end - chunk) // 2


def _chunks(docs: Iterator[Any], max_docs: int, max_symbols: int) -> Iterator[list[Any]]:
    while True:
        chunk, size = [], 0
        for doc in islice(docs, max_docs):
            chunk.append(doc)
            size += len(doc) if hasattr(doc, "__len__") else 1
            if size >= max_symbols:
                break
        if not chunk:
            return
        yield chunk


# pairs merged per round at most: the kernel counts them in 32 bits
MAX_CANDIDATES = 2**31 - 1


def check_n_candidates(n_candidates: object) -> int:
    if isinstance(n_candidates, bool) or not isinstance(n_candidates, int):
        raise InvalidParameterError(
            f"`n_candidates` must be an int, not {type(n_candidates).__name__}"
        )
    if n_candidates < 1:
        raise InvalidParameterError(f"`n_candidates` must be at least 1, got {n_candidates}")
    if n_candidates > MAX_CANDIDATES:
        raise InvalidParameterError(f"`n_candidates` must be at most {MAX_CANDIDATES} (a 32-bit count), got {n_candidates}")
    return n_candidates


def fit_vocabulary(
    parts: Any,
    *,
    n_base: int,
    n_tokens: int,
    n_candidates: int = 50,
    quiet: bool = False,
    description: str = "fit",
    unique_pieces: bool = False,
    n_threads: int = 1,
) -> Vocabulary:
    """Merge pairs until the largest id reaches ``n_tokens`` (or no pair is left).

    As in ubpe 0.3.0 the loop runs while the largest id is below ``n_tokens``, and a round
    may create several tokens, so the result can hold a few more than ``n_tokens`` ids;
    rearrangement trims it. With ``unique_pieces`` a merge that rebuilds an existing token's
    piece reuses that token (byte-level vocabularies). ``n_threads`` > 1 lets rounds that
    scan many positions (:data:`THREAD_POSITIONS`) count documents on that many threads, in
    a corpus of at least :data:`THREAD_SYMBOLS` symbols per thread: the vocabulary is the
    same on any number.
    """
    check_n_candidates(n_candidates)
    if isinstance(n_threads, bool) or not isinstance(n_threads, int) or n_threads < 1:
        raise InvalidParameterError(f"`n_threads` must be an int >= 1, got {n_threads!r}")
    if not isinstance(parts, (SplitBatch, PartCounts)):  # counted and kept on a Dask cluster
        if not unique_pieces:
            return parts.fit(
                n_base=n_base, n_tokens=n_tokens, n_candidates=n_candidates, quiet=quiet, description=description
            )
        parts = parts.gather()
    if isinstance(parts, PartCounts):
        tokens, offsets, weights, doc_offsets, docs = parts.buffers()
        symbols = len(tokens)
        merger = PairMerger(tokens, offsets, docs, parts.n_docs, n_base, unique_pieces, weights, doc_offsets)
        del tokens, offsets, weights, doc_offsets, docs
    else:
        tokens, offsets, doc_of_part = parts.fit_parts()
        symbols = len(tokens)
        merger = PairMerger(tokens, offsets, doc_of_part, parts.n_docs, n_base, unique_pieces)
        del tokens, offsets, doc_of_part
    # the same rule as counting: threads only where each gets THREAD_SYMBOLS symbols (at 1 MB
    # the workers cost more than they saved: bench_fit's merge rounds 14.2 -> 16.5 ms)
    if n_threads > 1 and symbols >= max(THREAD_POSITIONS, n_threads * THREAD_SYMBOLS):
        merger.use_threads(n_threads, THREAD_POSITIONS)
    n_docs = parts.n_docs
    del parts  # the merger holds what it needs: free the split before the merge loop
    largest = n_base - 1
    with _progress(max(0, n_tokens - largest), description, quiet) as progress:
        while largest < n_tokens:
            if merger.step(n_candidates) == 0:
                break
            progress.update(merger.next_token - 1 - largest)
            largest = merger.next_token - 1
    left, right, documents, _ = merger.merges()
    return Vocabulary.from_merges(n_base, left, right, documents=documents, n_docs=n_docs)


class _NoProgress:
    def __enter__(self) -> _NoProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def update(self, n: int) -> None:
        return None


def _progress(total: int, description: str, quiet: bool) -> Any:
    """A progress bar on stderr (tqdm, imported only when one shows), or nothing when ``quiet``."""
    if quiet:
        return _NoProgress()
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=description, unit="token", leave=False)


def as_corpus(corpus: Any, *, empty_message: str = EMPTY_CORPUS) -> list[Any]:
    """``corpus`` as a list of documents; a single document or an empty corpus is an error.

    >>> as_corpus(("ab", "ba"))
    ['ab', 'ba']
    """
    check_corpus(corpus)
    docs = list(corpus)
    if not docs:
        raise EmptyCorpusError(empty_message)
    return docs


def fit_corpus(
    pipeline: SplitPipeline,
    corpus: Any,
    *,
    n_tokens: int,
    n_candidates: int = 50,
    quiet: bool = False,
    split_mode: SplitMode = SplitMode.FULL,
    description: str = "fit",
    n_threads: int = 1,
) -> Vocabulary:
    """``corpus`` split by ``pipeline`` and fitted: the vocabulary in creation order, as
    ubpe 0.3.0 fits it before rearranging. ``corpus`` is a list of documents, any other
    iterable (streamed) or a Dask collection (see :func:`corpus_parts`); a list is split
    and counted on ``n_threads`` threads (the same vocabulary for any number).

    >>> from ubpe.alphabet import Alphabet
    >>> from ubpe.splitting import make_pipeline
    >>> fit_corpus(make_pipeline(Alphabet.from_spec("ab")), ["abab", "abba"], n_tokens=4, quiet=True).pieces()
    {2: (0, 1), 3: (0, 1, 0, 1), 4: (0, 1, 1)}
    """
    check_n_candidates(n_candidates)
    split = functools.partial(pipeline.split_batch, mode=split_mode)
    n_base = len(pipeline.alphabet) + len(pipeline.known_words or {})
    return fit_vocabulary(
        corpus_parts(corpus, split, n_threads=n_threads, native=pipeline.native_fit_tables(split_mode)), n_base=n_base, n_tokens=n_tokens, n_candidates=n_candidates, quiet=quiet, description=description,
        n_threads=n_threads,
    )
