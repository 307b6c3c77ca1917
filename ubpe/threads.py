"""Threads for the batch calls: how many (``UBPE_NUM_THREADS``), and one scheduler for all.

Every ``encode_batch`` cuts its documents into chunks whose kernels run without the GIL, and
:func:`run_in_order` spreads the chunks over threads. How it does so decides how well a batch
scales, because building the result lists holds the GIL. Chunks are handed out in order from
one counter: a thread that finishes takes the next one, so one long chunk does not hold up the
rest. The calling thread works too, beside ``workers - 1`` threads of a pool that lives for
the process. Two alternatives were measured and rejected. A pool made per call pays thread
starts on every call. A caller that only waits wakes for every finished chunk and takes the
GIL from the workers, a third runnable thread on two cores. On the encode benchmark's 1 MB
(324 documents, 29 chunks, tf-idf top-1, 2 cores), the two took 8.8-9.1 ms per call and this
scheduler 7.4 ms, against 13.6 ms on one thread.

Results land in their chunk's slot, so the output is the same as on one thread whatever the
timing. :func:`concat_in_order` is the form every ``encode_batch`` uses: a chunk is a range of
documents, and the thread that encoded it writes its encodings straight into their places in
the one result list (a flattening pass after the threads, serial, cost 0.5 ms of a 10 ms
two-thread batch). A failing chunk stops the hand-out of later chunks. The error raised is
that of the first failing chunk in order: every earlier chunk was already handed out, and
each is waited for.

>>> run_in_order(str.upper, ["a", "b", "c"], workers=2)
['A', 'B', 'C']
>>> run_in_order(lambda x: 1 // x, [1, 0, 2], workers=2)
Traceback (most recent call last):
...
ZeroDivisionError: integer division or modulo by zero
"""

from __future__ import annotations

import itertools
import os
from _thread import allocate_lock  # threading.Lock without importing threading (~0.4 ms)
import warnings
from collections.abc import Callable, Sequence

from .errors import InvalidParameterError

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:  # concurrent.futures is imported when a batch first runs on threads
    from concurrent.futures import Future, ThreadPoolExecutor
    from typing import Any, TypeVar

    T = TypeVar("T")
    R = TypeVar("R")

__all__ = ["THREADS_VARIABLE", "check_n_threads", "concat_in_order", "default_threads", "pool_helpers",
           "run_in_order", "threads_argument"]

#: The environment variable that sets the default number of threads (like tiktoken's and
#: rayon's RAYON_NUM_THREADS): ``encode_batch``'s ``n_threads=None`` means this many.
THREADS_VARIABLE = "UBPE_NUM_THREADS"


def default_threads() -> int:
    """Threads ``encode_batch`` uses when ``n_threads`` is None: ``UBPE_NUM_THREADS`` if set,
    else one per core this process may run on.

    >>> import os
    >>> os.environ["UBPE_NUM_THREADS"] = "3"
    >>> default_threads()
    3
    >>> del os.environ["UBPE_NUM_THREADS"]
    """
    value = os.environ.get(THREADS_VARIABLE, "").strip()
    if value:
        try:
            threads = int(value)
        except ValueError:
            threads = 0
        if threads < 1:
            raise InvalidParameterError(f"{THREADS_VARIABLE} must be an int >= 1, got {value!r}")
        return threads
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def check_n_threads(n_threads: Any, name: str = "n_threads") -> None:
    """``n_threads`` is None (as many as useful) or an int >= 1 (numpy's ints too); ``name``:
    the argument's name in the message.

    >>> check_n_threads(0)
    Traceback (most recent call last):
    ...
    ubpe.errors.InvalidParameterError: n_threads must be None or an int >= 1, got 0
    """
    if n_threads is None or (type(n_threads) is int and n_threads >= 1):  # (the usual call: no import)
        return
    import numbers  # (here: a load imports no more than it uses)

    if isinstance(n_threads, bool) or not isinstance(n_threads, numbers.Integral) or n_threads < 1:
        raise InvalidParameterError(f"{name} must be None or an int >= 1, got {n_threads!r}")


#: the old names of ``threads=`` that warned already (each warns once per process)
_WARNED: set[str] = set()


def threads_argument(threads: Any, **old: Any) -> Any:
    """``threads``, the one name of the thread count on every family, or the value given
    under an old name (``n_threads``, ``num_threads``), which warns a DeprecationWarning the
    first time each is used; both given, and not equal: :class:`InvalidParameterError`.

    >>> threads_argument(2, n_threads=None)
    2
    >>> threads_argument(2, n_threads=3)
    Traceback (most recent call last):
    ...
    ubpe.errors.InvalidParameterError: threads=2 and n_threads=3 disagree: pass threads= only
    """
    for name, value in old.items():
        if value is None:
            continue
        if threads is not None and threads != value:
            raise InvalidParameterError(f"threads={threads!r} and {name}={value!r} disagree: pass threads= only")
        if name not in _WARNED:
            _WARNED.add(name)
            warnings.warn(f"`{name}=` is deprecated: pass threads= (the same on every tokenizer)",
                          DeprecationWarning, stacklevel=3)
        threads = value
    return threads


class _Pool:
    """The process's worker threads, made on first use, grown on demand, and forgotten in a
    forked child (whose copy has no threads behind it)."""

    def __init__(self) -> None:
        self.lock = allocate_lock()
        self.executor: ThreadPoolExecutor | None = None
        self.size = 0

    def start(self, task: Callable[[], None], copies: int) -> list[Future]:
        """``copies`` runs of ``task`` submitted to the pool (grown to at least that many
        threads); fewer, maybe none, once the interpreter is shutting down."""
        from concurrent.futures import ThreadPoolExecutor

        with self.lock:
            if self.executor is None or self.size < copies:
                old = self.executor
                self.executor = ThreadPoolExecutor(max_workers=copies, thread_name_prefix="ubpe")
                self.size = copies
                if old is not None:
                    old.shutdown(wait=False)  # its threads end once their tasks are done
            started = []
            for _ in range(copies):
                try:
                    started.append(self.executor.submit(task))
                except RuntimeError:  # no new threads at interpreter exit: the caller does it all
                    break
            return started

    def forget(self) -> None:
        self.lock = allocate_lock()
        self.executor, self.size = None, 0


_POOL = _Pool()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_POOL.forget)


class pool_helpers:  # noqa: N801 (a context manager; not contextlib's: its import is ~0.5 ms of a cold load)
    """``copies`` runs of ``task`` on the process's pool while the block runs (the caller
    works in the block). On leaving it, a run that has not started is cancelled, never waited
    for (so calls may nest), and a started one is waited for: ``task`` should end once the
    work it shares with the block is done, and keep its errors for the caller to raise.

    >>> done = []
    >>> with pool_helpers(lambda: done.append("pool"), 1):
    ...     done.append("caller")
    >>> sorted(done) in (["caller"], ["caller", "pool"])
    True
    """

    def __init__(self, task: Callable[[], None], copies: int):
        self._task, self._copies = task, copies

    def __enter__(self) -> None:
        self._helpers = _POOL.start(self._task, self._copies)

    def __exit__(self, *exc_info: object) -> None:
        for helper in self._helpers:
            if not helper.cancel():
                helper.result()  # started: it ends with the work it holds


def document_ranges(docs: Sequence[Any], max_symbols: int) -> list[tuple[int, int, int]]:
    """``(first, last, symbols)`` of consecutive runs of documents of about ``max_symbols``
    symbols (a run ends with the document that reaches them); at least one.

    >>> document_ranges(["ab", "c", "def"], 3)
    [(0, 2, 3), (2, 3, 3)]
    """
    chunks, first, size = [], 0, 0
    for d, doc in enumerate(docs):
        size += len(doc) if hasattr(doc, "__len__") else 1
        if size >= max_symbols:
            chunks.append((first, d + 1, size))
            first, size = d + 1, 0
    if first < len(docs) or not chunks:
        chunks.append((first, len(docs), size))
    return chunks


def run_in_order(function: Callable[[T], R], items: Sequence[T], workers: int) -> list[R]:
    """``[function(item) for item in items]`` on ``workers`` threads, the caller one of them
    (see the module's docstring); ``function`` should release the GIL for its heavy part.

    Calls may nest and may come from many threads at once: a pool task that has not started
    when the caller has run out of items is cancelled, never waited for.

    >>> run_in_order(len, ["ab", "", "xyz"], workers=4)
    [2, 0, 3]
    """
    n = len(items)
    workers = min(workers, n)
    if workers <= 1:
        return [function(item) for item in items]
    out: list[Any] = [None] * n
    errors: dict[int, BaseException] = {}
    next_index = itertools.count().__next__  # atomic: a C call under the GIL

    def work() -> None:
        while not errors:
            k = next_index()
            if k >= n:
                return
            try:
                out[k] = function(items[k])
            except BaseException as error:  # noqa: BLE001 - re-raised below, in order
                errors[k] = error
                return

    with pool_helpers(work, workers - 1):
        work()
    if errors:
        raise errors[min(errors)]
    return out


def concat_in_order(function: Callable[[tuple[int, int]], Sequence[R]], ranges: Sequence[tuple[int, int]],
                    workers: int) -> list[R]:
    """The concatenation of ``function((first, last))`` over ``ranges`` - consecutive ranges
    of items from 0 - on ``workers`` threads (:func:`run_in_order`). ``function`` returns the
    ``last - first`` results of its range, which the thread that computed them copies into
    their places.

    >>> concat_in_order(lambda r: [k * k for k in range(*r)], [(0, 2), (2, 3), (3, 5)], workers=2)
    [0, 1, 4, 9, 16]
    """
    n = ranges[-1][1] if ranges else 0
    out: list[Any] = [None] * n

    def place(bounds: tuple[int, int]) -> None:
        first, last = bounds
        results = function(bounds)
        if len(results) != last - first:  # (a slice assignment would resize the list)
            raise RuntimeError(f"a chunk of {last - first} items gave {len(results)} results")
        out[first:last] = results

    run_in_order(place, ranges, workers)
    return out
