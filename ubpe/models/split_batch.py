"""Many documents through a UBPE tokenizer's split pipeline and one encoder, on threads.

``encode_batch`` cuts the documents into ranges of about :data:`BATCH_CHUNK_SYMBOLS` symbols
(:func:`batch_chunks`); each thread takes a range, splits it with the pipeline and encodes
its parts (as lists, or with ``arrays`` into an
:class:`~ubpe.encoders.encoding.EncodedBatch` filled without the GIL). Where the pipeline's
splitting is the native splitter's (no known words; a regex only if the scanner knows it)
and the encoder declares ``encodes_texts``, a range of str documents goes to the kernel in one
call that splits and encodes (:class:`TextPath`). A sampling encoder runs on one thread, so
that its random stream does not depend on how many there are.

>>> batch_chunks(["ab", "c", "def"], symbols=3)
[(0, 2), (2, 3)]
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..errors import InvalidParameterError, SymbolTypeError
from ..splitting import SplitMode, SplitPipeline
from ..threads import check_n_threads, concat_in_order, default_threads, document_ranges, run_in_order

TYPE_CHECKING = False  # (typing's, without importing typing: see ubpe.files)
if TYPE_CHECKING:
    from typing import Any

    from ..encoders import Encoder

__all__ = ["BATCH_CHUNK_SYMBOLS", "TextPath", "batch_chunks", "check_documents", "encode_batch", "text_path"]

#: symbols per task handed to a thread (amortises the pool's and the splitter's per-call
#: overhead, yet leaves tasks enough to balance the threads)
BATCH_CHUNK_SYMBOLS = 32_768


def batch_chunks(docs: Sequence[Any], symbols: int | None = None) -> list[tuple[int, int]]:
    """``(first, last)`` document ranges of about ``symbols`` (default
    :data:`BATCH_CHUNK_SYMBOLS`) symbols each; at least one range."""
    return [(first, last) for first, last, _ in document_ranges(docs, symbols or BATCH_CHUNK_SYMBOLS)]


class TextPath:
    """str documents split by the native splitter and encoded by an encoder's
    ``encode_texts``, in one kernel call: ``path(split_mode, docs, top_n)`` gives their
    encodings (``arrays``: by ``encode_texts_arrays``, as an
    :class:`~ubpe.encoders.encoding.EncodedBatch`), or None where the general path must run (it
    raises the errors)."""

    __slots__ = ("pipeline", "splitter", "encode_texts", "encode_texts_arrays")

    def __init__(self, pipeline: SplitPipeline, splitter: Any, encode_texts: Any, encode_texts_arrays: Any = None):
        self.pipeline, self.splitter, self.encode_texts = pipeline, splitter, encode_texts
        self.encode_texts_arrays = encode_texts_arrays

    def __call__(self, split_mode: SplitMode, docs: Sequence[str], top_n: Any, arrays: bool = False) -> Any:
        splitter = self.splitter
        if split_mode is not SplitMode.FULL:  # (another mode may leave out break or stop symbols)
            splitter = self.pipeline.text_splitter(split_mode)
            if splitter is None:
                return None
        if arrays:
            return None if self.encode_texts_arrays is None else self.encode_texts_arrays(splitter, docs, top_n)
        return self.encode_texts(splitter, docs, top_n)


def text_path(pipeline: SplitPipeline, chosen: Encoder) -> TextPath | bool:
    """The :class:`TextPath` of ``chosen`` over ``pipeline``, or False if there is none (the
    pipeline has no native splitter, or the encoder does not declare ``encodes_texts``)."""
    from ..encoders._base import Encoder

    splitter = pipeline.text_splitter()
    if splitter is not None and isinstance(chosen, Encoder) and chosen.encodes_texts:
        return TextPath(pipeline, splitter, chosen.encode_texts, chosen.encode_texts_arrays)
    return False


def check_documents(docs: Any, n_threads: int | None, arrays: bool) -> list[Any]:
    """``docs`` as a list, after the checks ``encode_batch`` (``arrays``:
    ``encode_batch_to_numpy``) makes before it builds its encoder."""
    call = "encode_batch_to_numpy" if arrays else "encode_batch"
    if isinstance(docs, (str, bytes)):
        raise InvalidParameterError(f"{call} takes a sequence of documents, not one document: "
                                    f"use encode(doc) or {call}([doc])")
    if not isinstance(docs, Iterable):
        raise SymbolTypeError(f"{call} takes a sequence of documents, got {type(docs).__name__}")
    check_n_threads(n_threads, "threads")
    return list(docs)


def encode_batch(pipeline: SplitPipeline, chosen: Encoder, path: TextPath | bool, docs: list[Any], *,
                 split_mode: SplitMode, top_n: int, n_threads: int | None, arrays: bool) -> Any:
    """Every document of ``docs`` (checked by :func:`check_documents`) split by ``pipeline``
    and encoded by ``chosen`` (through ``path`` where it can): a list of encoding lists per
    document, or with ``arrays`` one :class:`~ubpe.encoders.encoding.EncodedBatch`. The same
    whatever ``n_threads``."""
    from ..encoders._base import encode_document_arrays, encode_documents

    def run(chunk: tuple[int, int]) -> Any:
        first, last = chunk
        if path:
            encodings = path(split_mode, docs[first:last], top_n, arrays)
            if encodings is not None:
                return encodings
        batch = pipeline.split_batch(docs[first:last], mode=split_mode, first_doc=first)
        if arrays:
            return encode_document_arrays(chosen, batch, top_n)
        return encode_documents(chosen, batch, top_n)

    workers = n_threads or default_threads()
    if not chosen.deterministic:  # a sampling encoder's stream must not depend on threads
        workers = 1
    if arrays:
        from ..encoders.encoding import EncodedBatch

        return EncodedBatch.concatenate(run_in_order(run, batch_chunks(docs), workers))
    return concat_in_order(run, batch_chunks(docs), workers)
