"""Fit and encode on a Dask cluster (``pip install "ubpe[dask]"``).

``tok.fit(bag)`` with a :class:`dask.bag.Bag` of documents (or a Dask series, a DataFrame
column) runs on the collection's scheduler - a ``distributed.Client`` if one is active.
Every partition is split and counted into its distinct parts (``ubpe.fit.PartCounts``), the
counts are merged in a tree, in partition order, and the merge loop runs on the distinct
parts where ``fit`` was called. The vocabulary is the one of the in-memory fit of the same
documents in the same order, bit for bit.

>>> import dask.bag as db
>>> from ubpe import UBPE
>>> docs = ["abab", "abba", "baab", "bbab"]
>>> tok = UBPE(alphabet="ab", n_tokens=6)
>>> tok.fit(db.from_sequence(docs, npartitions=2), quiet=True)
>>> same = UBPE(alphabet="ab", n_tokens=6)
>>> same.fit(docs, quiet=True)
>>> tok.to_json() == same.to_json()
True
>>> encode(tok, db.from_sequence(docs, npartitions=2)).compute() == [tok.encode(d) for d in docs]
True

Memory: for text split into parts, the client holds the distinct parts of the whole corpus
and the (part, document) pairs, as a streaming fit does - a small fraction of the corpus.
For unsplit sequences (one part per document: DNA, signals, integers) the distinct parts are
the corpus itself: with a ``distributed.Client`` active they stay on the workers and the fit
runs round by round as a map-reduce (:mod:`ubpe.distributed.rounds`); the client holds only the
pair statistics. :data:`FIT_ON_WORKERS` chooses.
"""

from __future__ import annotations

import contextlib
from .. import _fntools as functools  # (functools' tools without its import: ubpe._fntools)
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import EmptyCorpusError, InvalidParameterError, SymbolTypeError, UBPEError
from ..fit import EMPTY_CORPUS, PartCounts, Split, count_stream
from .rounds import WorkerParts, tree

#: Partition counts merged per task of the tree reduction.
SPLIT_EVERY = 8
#: :func:`partitioned` cuts a corpus into this many partitions per worker.
PARTITIONS_PER_WORKER = 4
#: Seconds :func:`cluster` waits for a scheduler to answer.
CONNECT_TIMEOUT = 10
#: When a fit runs round by round on the workers (:mod:`ubpe.distributed.rounds`) rather than on
#: the distinct parts gathered by the client: ``"auto"`` - when no document is split into
#: several parts (unsplit sequences) and a ``distributed.Client`` is active; ``"always"`` -
#: whenever a Client is active; ``"never"``. The vocabulary is the same either way; byte-level
#: fits (which reuse pieces) always gather.
FIT_ON_WORKERS = "auto"


def as_bag(collection: Any) -> Any:
    """``collection`` as a :class:`dask.bag.Bag` of documents (a Dask series: its values).

    >>> import dask.bag as db
    >>> as_bag(db.from_sequence(["ab"])).compute()
    ['ab']
    """
    try:
        import dask.bag as db
    except ImportError as exc:  # pragma: no cover - the extra is missing
        raise ImportError('ubpe.distributed.dask needs Dask: pip install "ubpe[dask]"') from exc
    if isinstance(collection, db.Bag):
        return collection
    if hasattr(collection, "__dask_graph__") and getattr(collection, "ndim", None) == 1:
        return collection.to_bag()  # a Dask series
    raise SymbolTypeError(
        f"expected a dask.bag.Bag or a Dask series of documents, not {type(collection).__name__}"
    )


# -- clusters ----------------------------------------------------------------------------------


def _distributed() -> Any:
    try:
        import distributed
    except ImportError as exc:  # pragma: no cover - the extra is missing
        raise ImportError('ubpe.distributed.dask needs Dask: pip install "ubpe[dask]"') from exc
    return distributed


@contextlib.contextmanager
def cluster(scheduler: str | None = None, *, workers: int | None = None) -> Iterator[Any]:
    """A ``distributed.Client`` of the scheduler at ``scheduler`` (``tcp://host:8786``), or
    of a new local cluster of ``workers`` processes (one thread each); while it is open,
    Dask collections compute on it. The client - and a local cluster - close on exit.

    >>> with cluster(workers=1) as client:
    ...     len(client.scheduler_info()["workers"])
    1
    """
    distributed = _distributed()
    if (scheduler is None) == (workers is None):
        raise InvalidParameterError("give either a scheduler address or a number of workers")
    if workers is not None:
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise InvalidParameterError(f"`workers` must be a positive int, got {workers!r}")
        with distributed.LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as local, distributed.Client(local) as client:
            yield client
        return
    try:
        client = distributed.Client(scheduler, timeout=CONNECT_TIMEOUT)
    except (OSError, ValueError, TypeError) as exc:
        raise InvalidParameterError(f"cannot reach the Dask scheduler at {scheduler!r}: {exc}") from None
    with client:
        yield client


def partitioned(docs: Sequence[Any], client: Any) -> Any:
    """``docs`` as a bag of :data:`PARTITIONS_PER_WORKER` partitions per worker of
    ``client`` (at most one per document), in order.

    >>> with cluster(workers=1) as client:
    ...     partitioned(["ab", "ba", "aa"], client).npartitions
    3
    """
    import dask.bag as db

    n_workers = max(1, len(client.scheduler_info()["workers"]))
    return db.from_sequence(docs, npartitions=max(1, min(len(docs), PARTITIONS_PER_WORKER * n_workers)))


# -- fit ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Failure:
    """A partition that could not be split: its first bad document, and that document's
    index among the documents of the partitions merged so far."""

    index: int
    doc: Any
    error: UBPEError

    def raise_(self, split: Split) -> None:
        # splitting the document alone, under its index in the corpus, raises the error the
        # in-memory fit raises for it
        split([self.doc], first_doc=self.index)
        raise self.error


def _count_partition(partition: Iterable[Any], split: Split) -> PartCounts | _Failure:
    docs = partition if isinstance(partition, list) else list(partition)
    try:
        return count_stream(docs, split)
    except UBPEError as error:
        for index, doc in enumerate(docs):
            try:
                split([doc], first_doc=index)
            except UBPEError as alone:
                return _Failure(index, doc, alone)
        return _Failure(0, None, error)


def _combine(results: list[PartCounts | _Failure]) -> PartCounts | _Failure:
    """Counts of consecutive partitions as one; the first failure wins, shifted by the
    documents before it."""
    results = list(results)  # Dask may hand over an iterator
    offset = 0
    for result in results:
        if isinstance(result, _Failure):
            return _Failure(result.index + offset, result.doc, result.error)
        offset += result.n_docs
    return PartCounts.merge(results)


def _active_client() -> Any:
    try:
        from distributed import default_client
    except ImportError:  # pragma: no cover - the extra is missing
        return None
    try:
        return default_client()
    except ValueError:
        return None


def _summary(result: PartCounts | _Failure) -> tuple[int, int] | _Failure:
    """A partition's documents and parts (counted with their multiplicities), or its failure."""
    return result if isinstance(result, _Failure) else (result.n_docs, int(result.weights.sum()))


def count_parts(
    collection: Any, split: Split, *, empty_message: str = EMPTY_CORPUS
) -> PartCounts | WorkerParts:
    """The distinct parts of a Dask collection of documents, counted on its cluster.

    The same counts, in the same order, as a streaming count of the documents; or, for a fit
    on the workers (:data:`FIT_ON_WORKERS`), the partitions' counts left on the cluster.

    >>> import dask.bag as db
    >>> from ubpe.alphabet import Alphabet
    >>> from ubpe.splitting import SplitPipeline
    >>> split = SplitPipeline(Alphabet.from_spec("ab "), break_tokens=" ").split_batch
    >>> counts = count_parts(db.from_sequence(["ab ba", "ab", "ba ab"], npartitions=3), split)
    >>> counts.n_docs, counts.weights.tolist(), counts.docs.tolist()
    (3, [3, 2], [0, 1, 2, 0, 2])
    """
    if FIT_ON_WORKERS not in ("auto", "always", "never"):
        raise InvalidParameterError(f"FIT_ON_WORKERS must be auto, always or never, not {FIT_ON_WORKERS!r}")
    bag = as_bag(collection)
    split([], first_doc=0)  # a bad configuration fails here, not once per partition
    client = _active_client() if FIT_ON_WORKERS != "never" else None
    if client is None:
        result = bag.reduction(
            functools.partial(_count_partition, split=split),
            _combine,
            split_every=SPLIT_EVERY,
            name="ubpe-count-parts",
        ).compute()
    else:
        import dask

        count = dask.delayed(_count_partition, pure=True)
        counts = client.compute([count(partition, split) for partition in bag.to_delayed()])
        summaries = client.gather(client.map(_summary, counts))
        offset, parts = 0, 0
        for summary in summaries:
            if isinstance(summary, _Failure):
                _Failure(summary.index + offset, summary.doc, summary.error).raise_(split)
            offset, parts = offset + summary[0], parts + summary[1]
        if offset and (FIT_ON_WORKERS == "always" or parts <= offset):
            kept = [c for c, summary in zip(counts, summaries) if summary[0]]
            return WorkerParts(client, kept, offset)
        result = tree(client, _combine, counts)
    if isinstance(result, _Failure):
        result.raise_(split)
    if result.n_docs == 0:
        raise EmptyCorpusError(empty_message)
    return result


# -- encode ------------------------------------------------------------------------------------


class _Model:
    """A tokenizer on its way to the workers: it travels as its model file's JSON and is
    rebuilt once per worker process (kernels and encoder caches do not pickle)."""

    def __init__(self, tok: Any):
        self.cls = type(tok)
        self.text = tok.to_json()

    def get(self) -> Any:
        return _rebuilt(self.cls, self.text)


@functools.lru_cache(maxsize=4)
def _rebuilt(cls: type, text: str) -> Any:
    return cls.from_json(text)


def _encode_partition(docs: Iterable[Any], model: _Model, options: dict[str, Any], partition: int) -> list[Any]:
    from ..models.ubpe import UBPEBase

    docs = list(docs)
    tok = model.get()
    with _in_partition(partition):
        if isinstance(tok, UBPEBase):  # one thread per task: Dask already runs tasks in parallel
            return tok.encode_batch(docs, threads=1, **options)
        return [tok.encode(doc, **options) for doc in docs]


@contextlib.contextmanager
def _in_partition(partition: int) -> Iterator[None]:
    """An error names the partition: its document numbers count from the partition's start."""
    try:
        yield
    except UBPEError as error:
        error.args = (f"partition {partition} (documents numbered from its start): {error}", *error.args[1:])
        raise


def encode(tok: Any, collection: Any, **options: Any) -> Any:
    """A collection whose items are ``tok.encode(doc, **options)`` of the documents.

    A bag gives a bag, a Dask series a series (of lists), partition for partition.

    >>> import dask.bag as db
    >>> from ubpe import ByteLevelBPE
    >>> tok = ByteLevelBPE().fit(["hello hello world"], n_tokens=260, quiet=True)
    >>> encode(tok, db.from_sequence(["hello", "world"])).compute() == [tok.encode("hello"), tok.encode("world")]
    True
    """
    if hasattr(collection, "__dask_graph__") and getattr(collection, "ndim", None) == 1:
        import pandas as pd

        model = _Model(tok)

        def encode_series(series: pd.Series, partition_info: dict | None = None) -> pd.Series:
            number = partition_info["number"] if partition_info else 0
            return pd.Series(_encode_partition(series.tolist(), model, options, number), index=series.index,
                             dtype=object)

        return collection.map_partitions(encode_series, meta=(collection.name, object))
    import dask
    import dask.bag as db

    model = _Model(tok)
    encode_one = dask.delayed(_encode_partition, pure=True)
    return db.from_delayed([encode_one(part, model, options, number)
                            for number, part in enumerate(as_bag(collection).to_delayed())])


def best_ids(tok: Any, doc: Any, options: dict[str, Any]) -> list[int]:
    """The token ids of ``doc``'s best encoding (``encode(doc)[0][0]`` for ``UBPE`` and
    ``UBPEClassic``, ``encode(doc)`` for byte-level tokenizers)."""
    from ..models.ubpe import UBPEBase

    if isinstance(tok, UBPEBase):
        return tok.encode(doc, **options)[0][0]
    return tok.encode(doc, **options)


def _write_partition(docs: Iterable[Any], model: _Model, path: str, column: str, options: dict,
                     partition: int) -> str:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ..models.ubpe import UBPEBase

    tok = model.get()
    with _in_partition(partition):
        if isinstance(tok, UBPEBase) and "rerank" not in options:  # the batch's arrays, no list per document
            values, offsets = tok.encode_batch_to_numpy(list(docs), threads=1, **options).best()
        else:
            encoded = [np.asarray(best_ids(tok, doc, options), dtype=np.int32) for doc in docs]
            offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
            np.cumsum([len(e) for e in encoded], out=offsets[1:])
            values = np.concatenate(encoded) if encoded else np.zeros(0, dtype=np.int32)
    if offsets[-1] > np.iinfo(np.int32).max:  # a list<int32> column's offsets are 32-bit
        raise InvalidParameterError(f"a partition of {offsets[-1]} tokens is too large for one Parquet file: "
                                    "repartition the collection into smaller partitions")
    ids = pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), pa.array(values))
    temporary = f"{path}.{os.getpid()}.tmp"
    pq.write_table(pa.table({column: ids}), temporary)
    os.replace(temporary, path)  # a retried or crashed task never leaves half a file
    return path


def encode_to_parquet(
    tok: Any, collection: Any, directory: str | os.PathLike, *, column: str = "ids", **options: Any
) -> list[str]:
    """Write the best encoding of every document as token ids, one Parquet file per
    partition (``part.00000.parquet``...) in ``directory``; returns the files in order.

    The column ``column`` is a ragged ``list<int32>``, one row per document, in order:
    ``pyarrow.parquet.read_table(directory)`` reads them all. On a cluster ``directory``
    must be on a file system every worker shares.

    >>> import dask.bag as db, tempfile, pyarrow.parquet as pq
    >>> from ubpe import UBPE
    >>> tok = UBPE(alphabet="ab", n_tokens=4)
    >>> tok.fit(["abab", "abba"], quiet=True)
    >>> files = encode_to_parquet(tok, db.from_sequence(["abab", "ba", "abba"], npartitions=2),
    ...                           tempfile.mkdtemp())
    >>> pq.read_table(files).column("ids").to_pylist() == [tok.encode(d)[0][0] for d in ["abab", "ba", "abba"]]
    True
    """
    import dask

    directory = os.fspath(directory)
    os.makedirs(directory, exist_ok=True)
    partitions = as_bag(collection).to_delayed()
    write = dask.delayed(_write_partition, pure=True)
    model = _Model(tok)
    tasks = [
        write(partition, model, os.path.join(directory, f"part.{i:05d}.parquet"), column, options, i)
        for i, partition in enumerate(partitions)
    ]
    return list(dask.compute(*tasks))
