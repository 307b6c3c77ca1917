"""Fit round by round on a Dask cluster: the corpus never leaves the workers.

Used by ``tok.fit(bag)`` for corpora whose documents are not split into parts (DNA, signals,
integer sequences: the distinct parts are the corpus itself), when a ``distributed.Client``
is active (see :data:`ubpe.distributed.dask.FIT_ON_WORKERS`). Each partition is split and counted on its
worker and stays there, as a pair merger (``ubpe_native._fit.PairMerger``) over the
partition's distinct parts. The client holds only the pair statistics summed over the
partitions (occurrences of every pair that occurs), and each round is a map-reduce:

1. the client takes the pairs with at least the occurrences of the ``n_candidates``-th best;
   if some tie in occurrences, every partition counts the documents holding them (a
   document lies in one partition: the counts add up) - the candidates are then ordered as
   the in-memory merger orders them: more occurrences, fewer documents, larger pair;
2. the client takes the batch from the candidates with the in-memory rule (no shared token,
   beats its border pairs), from the summed occurrences;
3. every partition applies the batch's merges in order and reports the documents of each
   merged pair and how the occurrences of the pairs it touched changed; the reports are
   summed on the cluster, and the client updates its statistics.

The vocabulary is the in-memory one bit for bit (pairs, pieces, document counts, so idf
weights and ranks): each partition merges exactly as the in-memory merger would merge its
documents, and the statistics of the whole are the sums of the partitions'.

A partition's merger lives in its worker's memory between rounds; each task is nevertheless a
pure function of the partition and the merges so far: a worker that does not hold the
merger at the expected round (it was restarted, or the task moved) rebuilds it from the
partition's counts - which Dask recomputes if the worker holding them died - and replays the
merges. A killed worker costs time, never identity.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from ubpe_native._fit import PairMerger

from ..fit import PartCounts
from ..vocabulary import Vocabulary

#: Partition reports summed per task of the tree reduction.
SPLIT_EVERY = 8


def _key(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Pairs as one int64 each (ids are non-negative int32)."""
    return (left.astype(np.int64) << 32) | right.astype(np.int64)


def _unkey(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return (keys >> 32).astype(np.int32), (keys & 0xFFFFFFFF).astype(np.int32)


# -- on the workers ----------------------------------------------------------------------------


@dataclass
class _State:
    merger: PairMerger
    applied: int  # merges of the history applied so far


#: (fit, partition) -> the partition's merger, in this worker process
_STATES: dict[tuple[str, int], _State] = {}
_LOCKS: dict[tuple[str, int], threading.Lock] = {}
_LOCKS_LOCK = threading.Lock()


def _lock(key: tuple[str, int]) -> threading.Lock:
    with _LOCKS_LOCK:
        return _LOCKS.setdefault(key, threading.Lock())


def _state_at(counts: PartCounts, key: tuple[str, int], n_base: int, history: np.ndarray, applied: int) -> _State:
    """The partition's merger with the first ``applied`` merges of ``history`` applied."""
    state = _STATES.get(key)
    if state is None or state.applied > applied:
        merger = PairMerger(
            counts.tokens, counts.offsets, counts.docs, counts.n_docs, n_base, False,
            counts.weights, counts.doc_offsets,
        )
        state = _STATES[key] = _State(merger, 0)
    if state.applied < applied:
        left, right = _unkey(history[state.applied:applied])
        state.merger.apply_merges(left, right)
        state.applied = applied
    return state


def _initial_counts(counts: PartCounts, key: tuple[str, int], n_base: int) -> tuple[np.ndarray, np.ndarray]:
    """The partition's pairs (keys) and their occurrences."""
    with _lock(key):
        left, right, occurrences = _state_at(counts, key, n_base, np.zeros(0, np.int64), 0).merger.pair_counts()
    return _key(left, right), occurrences


def _documents(counts: PartCounts, key: tuple[str, int], n_base: int, history: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """How many of the partition's documents hold each pair, after all of ``history``."""
    with _lock(key):
        state = _state_at(counts, key, n_base, history, len(history))
        return state.merger.documents_of(*_unkey(pairs))


def _apply(counts: PartCounts, key: tuple[str, int], n_base: int, history: np.ndarray, applied: int) -> tuple:
    """Apply ``history[applied:]`` after ``history[:applied]``: the documents of each merged
    pair and the changed occurrences, as ``(documents, keys, changes)``."""
    with _lock(key):
        state = _state_at(counts, key, n_base, history, applied)
        documents, _, left, right, changes = state.merger.apply_merges(*_unkey(history[applied:]))
        state.applied = len(history)
    return documents, _key(left, right), changes


def _unpair(key: int) -> tuple[int, int]:
    return key >> 32, key & 0xFFFFFFFF


def _ties(group: list[tuple[int, int]]) -> list[int]:
    """The pairs of a group with equal occurrences, if it holds several."""
    return [key for _, key in group] if len(group) > 1 else []


def _sum_documents(reports: list[np.ndarray]) -> np.ndarray:
    return np.sum(list(reports), axis=0)


def _sum_changes(reports: list[tuple]) -> tuple:
    """Reports of several partitions as one: documents add up, changes add up by pair."""
    reports = list(reports)
    documents = np.sum([r[0] for r in reports], axis=0)
    keys = np.concatenate([r[1] for r in reports])
    changes = np.concatenate([r[2] for r in reports])
    unique, inverse = np.unique(keys, return_inverse=True)
    summed = np.zeros(len(unique), dtype=np.int64)
    np.add.at(summed, inverse, changes)
    keep = summed != 0
    return documents, unique[keep], summed[keep]


def _forget(fit: str) -> None:
    """Drop a finished fit's mergers from this worker."""
    for key in [k for k in _STATES if k[0] == fit]:
        _STATES.pop(key, None)
        with _LOCKS_LOCK:
            _LOCKS.pop(key, None)


# -- on the client -----------------------------------------------------------------------------


def tree(client: Any, combine: Callable, futures: list[Any]) -> Any:
    """The results of ``futures`` combined: in a tree of tasks of :data:`SPLIT_EVERY` on the
    cluster, the last (at most :data:`SPLIT_EVERY`) here - one hop less per round."""
    while len(futures) > SPLIT_EVERY:
        futures = [
            client.submit(combine, futures[i:i + SPLIT_EVERY], pure=False)
            for i in range(0, len(futures), SPLIT_EVERY)
        ]
    return combine(client.gather(futures))


class _Statistics:
    """Summed occurrences of every pair that occurs, with a lazily invalidated max-heap (as
    in the merger: an entry whose count differs from the current one is stale)."""

    def __init__(self, keys: np.ndarray, occurrences: np.ndarray):
        self.occurrences: dict[int, int] = dict(zip(keys.tolist(), occurrences.tolist()))
        self.heap = [(-o, k) for k, o in self.occurrences.items()]
        heapq.heapify(self.heap)

    def get(self, left: int, right: int) -> int:
        return self.occurrences.get((left << 32) | right, 0)

    def push(self, key: int) -> None:
        heapq.heappush(self.heap, (-self.occurrences[key], key))

    def update(self, keys: np.ndarray, changes: np.ndarray) -> None:
        for key, change in zip(keys.tolist(), changes.tolist()):
            occurrences = self.occurrences.get(key, 0) + change
            if occurrences:
                self.occurrences[key] = occurrences
                self.push(key)
            else:
                del self.occurrences[key]

    def popped(self, n_candidates: int) -> list[tuple[int, int]]:
        """``(occurrences, key)`` of every pair with at least the occurrences of the
        ``n_candidates``-th best, best first (ties in any order); they leave the heap."""
        popped: list[tuple[int, int]] = []
        seen: set[int] = set()
        while self.heap:
            negative, key = self.heap[0]
            if self.occurrences.get(key, 0) != -negative or key in seen:
                heapq.heappop(self.heap)
                continue
            if len(popped) >= n_candidates and -negative < popped[-1][0]:
                break
            heapq.heappop(self.heap)
            seen.add(key)
            popped.append((-negative, key))
        return popped


class WorkerParts:
    """A corpus counted partition by partition and kept on a Dask cluster: what
    :func:`ubpe.fit.fit_vocabulary` fits round by round (see the module docstring).

    ``counts`` are the futures of the partitions' :class:`~ubpe.fit.PartCounts` (empty
    partitions left out), ``n_docs`` the documents of all of them.
    """

    def __init__(self, client: Any, counts: list[Any], n_docs: int):
        self.client = client
        self.counts = counts
        self.n_docs = n_docs
        self.fit_id = uuid.uuid4().hex

    def gather(self) -> PartCounts:
        """The partitions' counts merged on the cluster and brought here (as a fit of the
        distinct parts needs them)."""
        return tree(self.client, PartCounts.merge, self.counts)

    def _map(self, function: Callable, *args: Any) -> list[Any]:
        """``function(counts, key, *args)`` for every partition, on the worker holding its
        counts - and so its merger (anywhere else it works too, rebuilding the merger)."""
        holders = self.client.who_has(self.counts)
        futures = []
        for k, counts in enumerate(self.counts):
            where = list(holders.get(counts.key, ()))  # none while lost counts are recomputed
            pinned = {"workers": where, "allow_other_workers": True} if where else {}
            futures.append(self.client.submit(function, counts, (self.fit_id, k), *args, pure=False, **pinned))
        return futures

    def fit(self, *, n_base: int, n_tokens: int, n_candidates: int, quiet: bool, description: str) -> Vocabulary:
        try:
            return self._fit(n_base, n_tokens, n_candidates, quiet, description)
        finally:
            self.client.run(_forget, self.fit_id)

    def _fit(self, n_base: int, n_tokens: int, n_candidates: int, quiet: bool, description: str) -> Vocabulary:
        initial = self.client.gather(self._map(_initial_counts, n_base))
        statistics = _Statistics(*_sum_changes([(np.zeros(0), k, o) for k, o in initial])[1:])
        history = np.zeros(0, dtype=np.int64)
        documents: list[int] = []
        largest = n_base - 1
        with tqdm(
            total=max(0, n_tokens - largest), desc=description, unit="token", disable=quiet, leave=False
        ) as progress:
            while largest < n_tokens:
                taken = self._batch(statistics, history, n_base, n_candidates)
                if not taken:
                    break
                applied = len(history)
                history = np.concatenate([history, np.array(taken, dtype=np.int64)])
                # the history (8 bytes a merge) travels with every task: a worker that lost
                # its merger replays it
                merged, keys, changes = tree(self.client, _sum_changes, self._map(_apply, n_base, history, applied))
                documents.extend(merged.tolist())
                statistics.update(keys, changes)
                progress.update(len(taken))
                largest += len(taken)
        left, right = _unkey(history)
        return Vocabulary.from_merges(
            n_base, left, right, documents=np.asarray(documents, dtype=np.int64), n_docs=self.n_docs
        )

    def _batch(self, statistics: _Statistics, history: np.ndarray, n_base: int, n_candidates: int) -> list[int]:
        """The round's merges (keys), chosen as ``PairMerger._round`` chooses them."""
        popped = statistics.popped(n_candidates)
        if not popped:
            return []
        tied = [k for _, group in itertools.groupby(popped, key=lambda p: p[0]) for k in _ties(list(group))]
        documents: dict[int, int] = {}
        if tied:
            pairs = np.array(tied, dtype=np.int64)
            summed = tree(self.client, _sum_documents, self._map(_documents, n_base, history, pairs))
            documents = dict(zip(tied, summed.tolist()))
        popped.sort(key=lambda p: (-p[0], documents.get(p[1], 0), -p[1]))  # -key: larger pair first
        for _, key in popped[n_candidates:]:
            statistics.push(key)  # below the n_candidates best: back to the heap
        candidates = [key for _, key in popped[:n_candidates]]
        taken = [candidates[0]]
        symbols = set(_unpair(candidates[0]))
        for key in candidates[1:]:
            l2, r2 = _unpair(key)
            good = l2 not in symbols and r2 not in symbols
            count = statistics.occurrences[key]
            for other in taken if good else ():
                l1, r1 = _unpair(other)
                if not (statistics.get(r2, l1) < count and statistics.get(r1, l2) < count):
                    good = False
                    break
            if good:
                taken.append(key)
                symbols.update((l2, r2))
            else:
                statistics.push(key)  # stays a candidate for later rounds
        return taken
