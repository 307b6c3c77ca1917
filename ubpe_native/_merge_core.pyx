# distutils: language = c++
"""The one BPE merge core: rule table, merge loop, word cache, per-thread scratch.

Every BPE family of ubpe merges a word the same way (``_merge_core.pxd``): the word is a
doubly linked chain of nodes (``_chain.pxd``), each holding an id; the rule table maps an
adjacent pair ``(left, right)`` to ``(rank, result)``; of all adjacent pairs with a rule the
one of lowest rank merges first, the leftmost on ties, until no pair has a rule. The candidate
merges sit in a 4-ary min-heap (``heap.h``) keyed by ``rank << 32 | left node``. What the
families add are hooks and the ends of the loop:

* `_ranked.MergeTable` (tiktoken's rule over a vocabulary's pieces): one rule per split of
  every piece into two tokens, rank = the token's priority; the *dropout* hook
  (BPE-dropout's coins);
* `_merges.PairMerges` (llama.cpp's BPE and SPM orders, HF byte-level BPE): the rules of a
  merges list; a unit cutter (bytes or UTF-8 characters) in front, intermediate ids and byte
  fallback behind; the word cache;
* `_spm.SpmBPE` (sentencepiece's BPE): the rules of the pieces; the *frozen* hook
  (user-defined symbols never merge) and the *unused* hook (the last pair proposed for an
  unused piece is recorded, and the piece is split back into it when written out); its own
  unit cutter (a trie of user-defined pieces); the word cache;
* `_classic` (ubpe 0.3.0's batched pair merging) takes all pairs of a step at once, which is
  another rule: it shares the rule table, the chain and the heap, not the loop.

One word-cache policy: a cache lives in a `MergeScratch`, and a scratch serves one call at a
time; a `ScratchPool` hands idle scratches out and takes them back under the GIL, so no lock
is taken and no cache is read while another thread writes it.

>>> import numpy as np
>>> i32 = lambda *v: np.array(v, np.int32)
>>> # rules: (0 1) -> 2 of rank 0, (2 2) -> 3 of rank 1; the word 0 1 0 1 0
>>> _py_merge_word(i32(0, 2), i32(1, 2), np.array([0, 1]), i32(2, 3), i32(0, 1, 0, 1, 0))[0]
[3, 0]

The tests reach the ``cdef`` core through the ``_py_*`` functions.
"""

from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libcpp.vector cimport vector

from ubpe_native._numpy import np

from ubpe_native._chain cimport check_chain_length
from ubpe_native._checks cimport as_array, build_once, check_ids
from ubpe_native._flat_map cimport FlatMap
from ubpe_native._typedefs cimport id_t


cdef class MergeScratch:
    """Working memory of one call of a merge kernel (chain, heap, word cache), reused from
    call to call; a `ScratchPool` gives it to one call at a time."""


cdef class ScratchPool:
    """Idle scratches of one kernel object: ``take`` one for a call (a new one if none is idle),
    ``give`` it back when the call ends. Both run with the GIL held, which makes them atomic,
    so threads never share a scratch and its word cache needs no lock.

    ``ScratchPool(kind=MergeScratch)``: ``kind`` is the class of the scratches it makes.
    """

    def __init__(self, kind=MergeScratch):
        build_once(&self.built, self)
        if not (isinstance(kind, type) and issubclass(kind, MergeScratch)):
            raise TypeError(f"kind must be MergeScratch or a subclass, not {kind!r}")
        self.idle = []
        self.kind = kind
        self.generation = 0

    cdef MergeScratch take(self):
        cdef MergeScratch scratch
        if self.idle:
            scratch = self.idle.pop()
            if scratch.generation != self.generation:  # cleared while a call was using it
                scratch.cache.clear()
                scratch.generation = self.generation
        else:
            scratch = self.kind()
            scratch.generation = self.generation
        return scratch

    cdef int give(self, MergeScratch scratch) except -1:
        self.idle.append(scratch)
        return 0

    def clear(self):
        """Forget every cached word: the idle scratches' now, those in use when next taken."""
        cdef MergeScratch scratch
        self.generation += 1
        for scratch in self.idle:
            scratch.cache.clear()
            scratch.generation = self.generation
        return None

    def cached_words(self):
        """How many words the idle scratches cache (a scratch in use is not read: another
        thread may be writing it)."""
        cdef MergeScratch scratch
        cdef size_t total = 0
        for scratch in self.idle:
            if scratch.generation == self.generation:
                total += scratch.cache.size()
        return total

    def __len__(self):
        return len(self.idle)


# refuse_unused_cycles: a piece not yet reached, on the path being walked, or done
cdef int check_rules(const id_t[::1] left, const id_t[::1] right, const id_t[::1] result,
                     const int64_t[::1] rank, id_t parts_limit, id_t result_limit) except -1:
    cdef Py_ssize_t n_rules = left.shape[0], k
    if right.shape[0] != n_rules or result.shape[0] != n_rules or rank.shape[0] != n_rules:
        raise ValueError("left, right, result and rank must have one length")
    check_ids(left, parts_limit, "left")
    check_ids(right, parts_limit, "right")
    check_ids(result, result_limit, "result")
    for k in range(n_rules):
        if not 0 <= rank[k] < MAX_RANK:
            raise ValueError(f"rank {rank[k]} of rule {k} is outside 0..{MAX_RANK - 1}")
    return 0


cdef enum:
    UNSEEN = 0
    ON_PATH = 1
    DONE = 2


cdef int refuse_unused_cycles(id_t n_ids, const uint8_t* unused, const id_t[::1] left,
                              const id_t[::1] right, const id_t[::1] result,
                              const vector[uint8_t]& kept) except -1:
    """ValueError if writing out an unused piece could loop forever (see the pxd): a
    depth-first walk from every unused piece along its kept rules' parts, which must never
    come back to a piece on the path."""
    cdef Py_ssize_t n_rules = left.shape[0], k, e
    cdef id_t piece, child
    cdef vector[int64_t] first  # piece -> its kept rules, order[first[p]:first[p + 1]]
    cdef vector[int64_t] order
    cdef vector[uint8_t] state
    cdef vector[id_t] path  # the depth-first walk: pieces, and the next edge of each
    cdef vector[int64_t] next_edge
    first.resize(n_ids + 1)
    for k in range(n_rules):
        if kept[k] and unused[result[k]]:
            first[result[k] + 1] += 1
    for piece in range(n_ids):
        first[piece + 1] += first[piece]
    order.resize(first[n_ids])
    next_edge.resize(n_ids)  # a fill cursor per piece first, then reset for the walk
    for k in range(n_rules):
        if kept[k] and unused[result[k]]:
            order[first[result[k]] + next_edge[result[k]]] = k
            next_edge[result[k]] += 1
    state.resize(n_ids)
    next_edge.clear()
    for piece in range(n_ids):
        if not unused[piece] or state[piece] != UNSEEN:
            continue
        state[piece] = ON_PATH
        path.push_back(piece)
        next_edge.push_back(2 * first[piece])  # edge 2r: rule r's left part, 2r + 1: its right
        while path.size():
            piece = path.back()
            e = next_edge.back()
            if e == 2 * first[piece + 1]:
                state[piece] = DONE
                path.pop_back()
                next_edge.pop_back()
                continue
            next_edge[next_edge.size() - 1] = e + 1
            k = order[e // 2]
            child = left[k] if e % 2 == 0 else right[k]
            if child >= n_ids or not unused[child] or state[child] == DONE:
                continue
            if state[child] == ON_PATH:
                raise ValueError(f"rule {k} ({left[k]} {right[k]} -> {result[k]}) makes the unused piece "
                                 f"{child} part of itself: splitting it again would never end")
            state[child] = ON_PATH
            path.push_back(child)
            next_edge.push_back(2 * first[child])
    return 0


# -- for tests ----------------------------------------------------------------------------------

def _py_check_chain_length(Py_ssize_t n):
    """`_chain.check_chain_length`: ValueError for a word of ``n >= 2**31`` units."""
    check_chain_length(n)
    return None


def _py_merge_word(const id_t[::1] left not None, const id_t[::1] right not None,
                   const int64_t[::1] rank not None, const id_t[::1] result not None,
                   const id_t[::1] tokens not None, frozen=None, unused=None,
                   double dropout=0.0, uint64_t seed=0):
    """`merge_word` on one word: rule ``k`` merges ``left[k] right[k]`` into ``result[k]`` with
    ``rank[k]`` (the first rule of a pair is kept); ``tokens`` are the nodes (a negative id
    never merges). ``frozen``: a flag per node (those never merge); ``unused``: a flag per id
    up to the largest result. Returns ``(ids, proposed)``: the merged word, and for each unused
    piece the last pair proposed for it."""
    cdef Py_ssize_t n_rules = left.shape[0], n = tokens.shape[0], k
    cdef FlatMap rules
    cdef MergeWord word
    cdef MergeHooks hooks
    cdef id_t limit = 0
    cdef int32_t node
    cdef const uint8_t[::1] frozen_view
    cdef const uint8_t[::1] unused_view
    cdef uint64_t rng = seed
    check_rules(left, right, result, rank, MAX_RANK, MAX_RANK)
    for k in range(n_rules):
        limit = max(limit, result[k] + 1)
    if not 0.0 <= dropout <= 1.0:
        raise ValueError("dropout must be in [0, 1]")
    hooks.frozen = frozen is not None
    hooks.unused = NULL
    hooks.dropout = dropout
    hooks.rng = &rng
    if frozen is not None:
        frozen_view = as_array(frozen, np.uint8, "frozen")
        if frozen_view.shape[0] != n:
            raise ValueError("frozen needs one flag per node")
        word.frozen.assign(&frozen_view[0], &frozen_view[0] + n) if n else None
    if unused is not None:
        unused_view = as_array(unused, np.uint8, "unused")
        if unused_view.shape[0] < limit:
            raise ValueError(f"unused needs a flag per id up to {limit - 1}")
        hooks.unused = &unused_view[0] if unused_view.shape[0] else NULL
    for k in range(n_rules):
        rule_add(rules, left[k], right[k], rank[k], result[k])
    if n:
        word.token_at.assign(&tokens[0], &tokens[0] + n)
    merge_word(rules, word, n, hooks)
    ids = []
    node = 0 if n else -1
    while node >= 0:
        ids.append(word.token_at[node])
        node = word.next_node[node]
    cdef dict raw = word.proposed
    return ids, {piece: (key >> 32, key & 0xFFFFFFFF) for piece, key in raw.items()}
