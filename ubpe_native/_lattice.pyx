# distutils: language = c++
"""The universal encoder: top-n paths through the lattice of a part's prefix matches.

A path through a part of length ``n`` is a sequence of tokens whose pieces, back to back, spell
the part. Its score (ubpe 0.3.0) is a tf-idf sum over the *distinct* tokens in it::

    score = sum over distinct tokens t of (1 + ln(count of t)) * weight(t)   (base ids weigh 0)

Higher wins; on equal score the shorter path wins. Like the reference, positions are solved
from the end backwards: position ``p`` keeps the best ``top_n`` *tails* (paths from ``p`` to the
end), built from every prefix match ``(length L, token t)`` at ``p`` and every tail kept at
``p + L``.

A tail is stored once, as a node ``(token, next tail, score, length)``: extending a tail never
copies it. Two things make the score of ``t + tail`` cheap:

* adding a token seen ``c`` times in the tail changes only its own term, by
  ``(1 + ln(c + 1)) w - (1 + ln c) w`` (``w`` when ``c = 0``);
* ``c`` comes from a persistent map ``token -> count in this tail`` kept per tail: a binary
  trie over token ids where a new tail copies one root-to-leaf path of its tail's trie
  (``O(log T)`` time and memory, ``T`` merged tokens). Only tails within ``max_length``
  positions of the current one can still be extended, so trie nodes unreachable from them
  are compacted away now and then: memory stays linear in the part.

Ties. The reference keeps each position's tails in a ``heapq`` heap (its ``TopElements``)
ordered by ``(score, -length)``, pushes candidates match by match (shortest match first) and,
for each match, in the *heap order* of the next position's tails, and finally sorts the tails
of position 0 with a stable descending sort. We replay the same heap operations on the same
candidates in the same order, so equal candidates end up where the reference puts them.
Scores: the reference's ``sum`` (Python >= 3.12: Neumaier's compensated summation) runs over
its ``Counter``, whose keys are in the order the tokens were first added while the path grew
from the end. A new distinct token is one more term at the end of that sum, so each tail
keeps the summation state ``(high, low)`` and the score is bit-identical. A repeated token
changes a term in the middle of the sum: for parts up to ``exact_max_length`` symbols we redo
the sum in the reference's order (walking the tail, with ``_score``'s per-part sum), so
scores - and ties - stay bit-identical; longer parts rank by the delta instead (about 1e-16
relative off), and the scores reported for them are redone by ``_score`` at the end. So every
reported score is exactly ``ubpe_native._score``'s score of the reported tokens.

The heap here is not ``_heap.pxd``'s: it must replay CPython's ``heapq`` operation for operation
(``_siftdown``/``_siftup`` with their exact comparisons, including ``_siftup``'s descent to a
leaf), because equal candidates are ordered by where ``heapq`` leaves them; a generic heap would
keep the same set but not the same order of ties, and outputs would stop matching ubpe 0.3.0.

:class:`Lattice` runs the kernel over many parts with a cache of the parts it has encoded
(see its docstring). The module is over 500 lines because the cache's entries *are* the
workspace's outputs (a hit points at an earlier part's candidates, nothing is copied), so
``Lattice``, its ``_PartCache`` and ``_Workspace`` share their fields; a ``_lattice.pxd``
declaring ``_Workspace`` would let the cache and ``Lattice`` move to a module of their own.

>>> import numpy as np
>>> from ubpe_native._radix import RadixTree
>>> tree = RadixTree(2, np.array([0, 2]), np.array([0, 1], np.int32))  # token 2 = [0 1]
>>> weights = np.array([0.0, 0.0, 0.5])
>>> tokens, token_offsets, candidate_offsets, scores = encode_parts(
...     tree, weights, np.array([0, 1, 0], np.int32), np.array([0, 3]), top_n=2)
>>> [tokens[a:b].tolist() for a, b in zip(token_offsets[:-1], token_offsets[1:])], scores.tolist()
([[2, 0], [0, 1, 0]], [0.5, 0.0])
"""

from cpython.pyport cimport PY_SSIZE_T_MAX
from libc.math cimport log
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libcpp.vector cimport vector

from ubpe_native._numpy import np

from ubpe_native._checks cimport as_array, check_ids, check_offsets, check_per_token, check_top_n
from ubpe_native._combine cimport id_table, nbest_arrays, nbest_lists, top1_arrays, top1_lists
from ubpe_native._flat_map cimport FlatMap
from ubpe_native._radix cimport RadixTree
from ubpe_native._score cimport add_part_terms, part_score
from ubpe_native._sums cimport add_term, sum_value
from ubpe_native._textsplit cimport TextSplitter
from ubpe_native._typedefs cimport id_t

# parts up to this many symbols get scores bit-identical to the reference (see above)
DEFAULT_EXACT_MAX_LENGTH = 256
# compact the count tries when they exceed twice their live size, and at least this many nodes
TRIE_MIN_COMPACTION = 1 << 16
# "no trie": every count is zero (the empty tail at the end of a part)
cdef int32_t EMPTY_TRIE = -1
# token of the empty tail that ends every path
cdef id_t END = -1


cdef struct Candidate:
    double score        # what the reference compares: high + low
    double high         # the compensated sum's state
    double low
    int64_t tail        # node of the tail this candidate extends
    int32_t length      # tokens in the candidate
    int32_t count       # occurrences of token in the candidate, 0 for a weightless token
    id_t token


cdef inline bint ranks_below(const Candidate& a, const Candidate& b) noexcept nogil:
    """The reference's ``EncodingCandidate.__lt__``: lower score, or equal score and longer."""
    if a.score == b.score:
        return a.length > b.length
    return a.score < b.score


cdef inline bint ranks_above(const Candidate& a, const Candidate& b) noexcept nogil:
    """``EncodingCandidate.__gt__``: higher score, or equal score and shorter."""
    if a.score == b.score:
        return a.length < b.length
    return a.score > b.score


cdef inline bint _reported_below(const vector[double]& scores, const vector[int64_t]& offsets,
                                 int64_t a, int64_t b) noexcept nogil:
    """``ranks_below`` for written candidates ``a`` and ``b``: lower score, or equal and longer."""
    if scores[a] == scores[b]:
        return offsets[a + 1] - offsets[a] > offsets[b + 1] - offsets[b]
    return scores[a] < scores[b]


# Not _heap.pxd's heap: these two replay CPython's heapq step for step (see the module
# docstring), because the reference's order of equal candidates is where heapq leaves them.
cdef void sift_towards_root(Candidate* heap, Py_ssize_t start, Py_ssize_t position) noexcept nogil:
    """``heapq._siftdown``: move ``heap[position]`` up while it ranks below its parent."""
    cdef Candidate item = heap[position]
    cdef Py_ssize_t parent
    while position > start:
        parent = (position - 1) >> 1
        if not ranks_below(item, heap[parent]):
            break
        heap[position] = heap[parent]
        position = parent
    heap[position] = item


cdef void sift_to_leaf(Candidate* heap, Py_ssize_t size, Py_ssize_t position) noexcept nogil:
    """``heapq._siftup``: move the smaller child up until a leaf, then sift back up."""
    cdef Py_ssize_t start = position, child = 2 * position + 1
    cdef Candidate item = heap[position]
    while child < size:
        if child + 1 < size and not ranks_below(heap[child], heap[child + 1]):
            child += 1
        heap[position] = heap[child]
        position = child
        child = 2 * position + 1
    heap[position] = item
    sift_towards_root(heap, start, position)


cdef inline void push_top(Candidate* heap, Py_ssize_t* size, Py_ssize_t top_n,
                          const Candidate& item) noexcept nogil:
    """``TopElements.push``: a min-heap of the ``top_n`` best candidates seen."""
    if size[0] < top_n:
        heap[size[0]] = item
        size[0] += 1
        sift_towards_root(heap, 0, size[0] - 1)
    elif ranks_above(item, heap[0]):
        heap[0] = item
        sift_to_leaf(heap, size[0], 0)


cdef class _Workspace:
    """Buffers of one call, reused from part to part (one per call: calls may run in
    parallel threads once the GIL is released)."""

    # tail nodes: position p keeps its tails at nodes p * top_n .. p * top_n + kept[p] - 1
    cdef vector[id_t] node_token
    cdef vector[int64_t] node_next
    cdef vector[double] node_score
    cdef vector[double] node_high
    cdef vector[double] node_low
    cdef vector[int32_t] node_length
    cdef vector[int32_t] node_counts    # root of the node's count trie
    cdef vector[int32_t] kept
    # count tries: node k has children trie[2k], trie[2k + 1]; at the last level they are counts
    cdef vector[int32_t] trie
    cdef vector[int32_t] compacted
    cdef vector[int32_t] renumber
    cdef int trie_depth
    cdef Py_ssize_t compaction_threshold
    cdef Py_ssize_t min_compaction
    # the exact sums' scratch space
    cdef vector[int32_t] occurrences
    cdef vector[id_t] walk
    cdef vector[id_t] key_order
    # outputs
    cdef vector[id_t] out_tokens
    cdef vector[int64_t] out_token_offsets
    cdef vector[int64_t] out_candidate_offsets
    cdef vector[double] out_scores
    # the entry (a run of candidates in the outputs) of each part of the call
    cdef vector[int64_t] part_entry
    # a call's scratch space: prefix matches, the heap of one position, position 0's order
    cdef vector[int32_t] match_lengths
    cdef vector[id_t] match_tokens
    cdef vector[Candidate] heap
    cdef vector[int64_t] order

    # -- persistent counts ----------------------------------------------------------------

    cdef int32_t _new_trie_node(self, int32_t copy_of, bint last_level) except -1 nogil:
        cdef int32_t node = <int32_t>(self.trie.size() // 2)
        if copy_of >= 0:
            self.trie.push_back(self.trie[2 * copy_of])
            self.trie.push_back(self.trie[2 * copy_of + 1])
        else:
            self.trie.push_back(0 if last_level else EMPTY_TRIE)
            self.trie.push_back(0 if last_level else EMPTY_TRIE)
        return node

    cdef int32_t count_of(self, int32_t root, int32_t key) noexcept nogil:
        cdef int32_t node = root
        cdef int level
        for level in range(self.trie_depth - 1, 0, -1):
            if node < 0:
                return 0
            node = self.trie[2 * node + ((key >> level) & 1)]
        if node < 0:
            return 0
        return self.trie[2 * node + (key & 1)]

    cdef int32_t with_count(self, int32_t root, int32_t key, int32_t count) except -1 nogil:
        """A new root: ``root``'s counts with ``key`` set to ``count`` (path copying)."""
        cdef int32_t path[32]
        cdef int32_t node = root, copy, child
        cdef int depth = self.trie_depth, level
        for level in range(depth):
            path[level] = node
            if node >= 0 and level < depth - 1:
                node = self.trie[2 * node + ((key >> (depth - 1 - level)) & 1)]
        child = count
        for level in range(depth - 1, -1, -1):
            copy = self._new_trie_node(path[level], level == depth - 1)
            self.trie[2 * copy + ((key >> (depth - 1 - level)) & 1)] = child
            child = copy
        return child

    cdef int32_t _compact_from(self, int32_t node, int level) noexcept nogil:
        # ``compact`` reserved room for every node: the push_backs below never allocate
        if node < 0:
            return EMPTY_TRIE
        if self.renumber[node] >= 0:
            return self.renumber[node]
        cdef int32_t left = self.trie[2 * node], right = self.trie[2 * node + 1]
        if level < self.trie_depth - 1:
            left = self._compact_from(left, level + 1)
            right = self._compact_from(right, level + 1)
        cdef int32_t copy = <int32_t>(self.compacted.size() // 2)
        self.compacted.push_back(left)
        self.compacted.push_back(right)
        self.renumber[node] = copy
        return copy

    cdef int compact(self, Py_ssize_t first, Py_ssize_t last, Py_ssize_t top_n) except -1 nogil:
        """Keep only the trie nodes that tails at positions ``first..last`` reach."""
        cdef Py_ssize_t position, node
        self.renumber.clear()  # then resize: assign(n, v) is not ``except +`` (it would abort)
        self.renumber.resize(self.trie.size() // 2, -1)
        self.compacted.clear()
        self.compacted.reserve(self.trie.size())
        for position in range(first, last + 1):
            for node in range(position * top_n, position * top_n + self.kept[position]):
                self.node_counts[node] = self._compact_from(self.node_counts[node], 0)
        self.trie.swap(self.compacted)
        self.compaction_threshold = max(self.min_compaction, <Py_ssize_t>self.trie.size() // 2)
        return 0

    # -- scores ---------------------------------------------------------------------------

    cdef void exact_score(self, int64_t tail, id_t token, const double* weights,
                          Candidate* candidate) noexcept nogil:
        # ``walk`` holds at most a path plus one token: ``encode_parts`` reserved that room
        """The reference's sum for ``[token] + tail``: its Counter lists tokens in the order
        they were first added while the path grew from the end, i.e. by last occurrence,
        right to left; the sum runs over them in that order."""
        candidate.high = 0.0
        candidate.low = 0.0
        self.walk.clear()
        self.walk.push_back(token)
        while self.node_token[tail] != END:
            if weights[self.node_token[tail]] != 0.0:
                self.walk.push_back(self.node_token[tail])
            tail = self.node_next[tail]
        add_part_terms(self.walk.data(), self.walk.size(), weights, self.occurrences.data(),
                       self.key_order, &candidate.high, &candidate.low)
        candidate.score = sum_value(candidate.high, candidate.low)

    cdef int reserve(self, Py_ssize_t longest, Py_ssize_t top_n) except -1:
        """Room for a part of ``longest`` symbols (raises MemoryError here, with the GIL)."""
        cdef Py_ssize_t n_nodes = (longest + 1) * top_n
        self.node_token.reserve(n_nodes)
        self.node_next.reserve(n_nodes)
        self.node_score.reserve(n_nodes)
        self.node_high.reserve(n_nodes)
        self.node_low.reserve(n_nodes)
        self.node_length.reserve(n_nodes)
        self.node_counts.reserve(n_nodes)
        self.kept.reserve(longest + 1)
        self.walk.reserve(longest + 2)
        self.key_order.reserve(longest + 2)  # add_part_terms (in exact_score) must not allocate
        return 0

    # -- one part -------------------------------------------------------------------------

    cdef int encode_part(self, RadixTree tree, const double* weights, id_t n_base,
                         const id_t* part, Py_ssize_t n, Py_ssize_t top_n, bint exact,
                         int32_t* match_lengths, id_t* match_tokens,
                         Candidate* heap, int64_t* order) except -1 nogil:
        # Every growing vector raises MemoryError through here (``except -1``), never leaves
        # half-built state; the largest ones (n_nodes) are sized with the GIL by encode_parts.
        cdef Py_ssize_t p, m, i, j, n_matches, size, next_position, first, window = tree.max_length
        cdef int64_t tail, node
        cdef int32_t c
        cdef double w, score
        cdef Candidate candidate
        cdef Py_ssize_t n_nodes = (n + 1) * top_n
        self.node_token.resize(n_nodes)
        self.node_next.resize(n_nodes)
        self.node_score.resize(n_nodes)
        self.node_high.resize(n_nodes)
        self.node_low.resize(n_nodes)
        self.node_length.resize(n_nodes)
        self.node_counts.resize(n_nodes)
        self.kept.resize(n + 1)
        self.trie.clear()
        self.compaction_threshold = self.min_compaction

        # the empty tail at the end
        node = n * top_n
        self.node_token[node] = END
        self.node_next[node] = -1
        self.node_score[node] = 0.0
        self.node_high[node] = 0.0
        self.node_low[node] = 0.0
        self.node_length[node] = 0
        self.node_counts[node] = EMPTY_TRIE
        self.kept[n] = 1

        for p in range(n - 1, -1, -1):
            n_matches = tree._prefix_matches(part + p, n - p, match_lengths, match_tokens)
            size = 0
            for m in range(n_matches):
                candidate.token = match_tokens[m]
                w = weights[candidate.token]
                next_position = p + match_lengths[m]
                for i in range(self.kept[next_position]):
                    tail = next_position * top_n + i
                    candidate.tail = tail
                    candidate.length = self.node_length[tail] + 1
                    candidate.high = self.node_high[tail]
                    candidate.low = self.node_low[tail]
                    candidate.score = self.node_score[tail]
                    candidate.count = 0
                    # a weightless token adds a 0.0 term whatever its count: nothing changes
                    if w != 0.0:
                        c = self.count_of(self.node_counts[tail], candidate.token - n_base)
                        candidate.count = c + 1
                        if c == 0:
                            add_term(&candidate.high, &candidate.low, w)
                            candidate.score = sum_value(candidate.high, candidate.low)
                        elif exact:
                            self.exact_score(tail, candidate.token, weights, &candidate)
                        else:
                            candidate.score += ((1.0 + log(<double>(c + 1))) * w
                                                - (1.0 + log(<double>c)) * w)
                            candidate.high = candidate.score
                            candidate.low = 0.0
                    push_top(heap, &size, top_n, candidate)
            # the heap, in heap order, becomes the tails of p (later positions visit them so)
            for i in range(size):
                node = p * top_n + i
                self.node_token[node] = heap[i].token
                self.node_next[node] = heap[i].tail
                self.node_score[node] = heap[i].score
                self.node_high[node] = heap[i].high
                self.node_low[node] = heap[i].low
                self.node_length[node] = heap[i].length
                if heap[i].count > 0:
                    self.node_counts[node] = self.with_count(
                        self.node_counts[heap[i].tail], heap[i].token - n_base, heap[i].count)
                else:
                    self.node_counts[node] = self.node_counts[heap[i].tail]
            self.kept[p] = <int32_t>size
            if <Py_ssize_t>self.trie.size() // 2 > 2 * self.compaction_threshold:
                self.compact(p, min(n, p + window - 1), top_n)

        # position 0's tails, best first: a stable insertion sort (the reference's
        # ``sorted(..., reverse=True)`` keeps heap order among equal candidates). The heap
        # still holds position 0's tails, in the order of their nodes 0..size-1.
        size = self.kept[0]
        for i in range(size):
            order[i] = i
            j = i
            while j > 0 and ranks_below(heap[order[j - 1]], heap[order[j]]):
                order[j - 1], order[j] = order[j], order[j - 1]
                j -= 1
        # Scores are reported as _score computes them: the same bits as node_score when the
        # part was scored exactly; a longer part's scores (deltas, ~1e-16 off) are redone.
        for i in range(size):
            node = order[i] if n > 0 else n * top_n
            first = self.out_tokens.size()
            score = self.node_score[node]
            while self.node_token[node] != END:
                self.out_tokens.push_back(self.node_token[node])
                node = self.node_next[node]
            if not exact:
                score = part_score(self.out_tokens.data() + first, self.out_tokens.size() - first,
                                   weights, self.occurrences.data(), self.key_order)
            self.out_scores.push_back(score)
            self.out_token_offsets.push_back(self.out_tokens.size())
        if not exact:
            self._sort_by_reported_scores(size, order)
        self.out_candidate_offsets.push_back(self.out_scores.size())
        return 0

    cdef int _sort_by_reported_scores(self, Py_ssize_t size, int64_t* order) except -1 nogil:
        """Put the part's ``size`` candidates (the last written) best first by the scores
        they report, stably. The lattice ranked them by incremental scores, which may be an
        ulp off the exact sums: two candidates one rounding step apart came out swapped once
        (tests/test_lattice.py pins that example)."""
        cdef Py_ssize_t base = <Py_ssize_t>self.out_scores.size() - size, i, j, k
        cdef int64_t start = self.out_token_offsets[base]
        cdef vector[id_t] tokens
        cdef vector[double] scores
        cdef vector[int64_t] offsets
        cdef bint moved = False
        for i in range(size):
            order[i] = base + i
            j = i
            while j > 0 and _reported_below(self.out_scores, self.out_token_offsets, order[j - 1], order[j]):
                order[j - 1], order[j] = order[j], order[j - 1]
                j -= 1
                moved = True
        if not moved:
            return 0
        tokens.assign(self.out_tokens.begin() + start, self.out_tokens.end())
        scores.assign(self.out_scores.begin() + base, self.out_scores.end())
        offsets.assign(self.out_token_offsets.begin() + base, self.out_token_offsets.end())
        self.out_tokens.resize(start)
        self.out_scores.resize(base)
        self.out_token_offsets.resize(base + 1)
        for i in range(size):
            k = order[i] - base
            self.out_tokens.insert(self.out_tokens.end(), tokens.begin() + (offsets[k] - start),
                                   tokens.begin() + (offsets[k + 1] - start))
            self.out_scores.push_back(scores[k])
            self.out_token_offsets.push_back(self.out_tokens.size())
        return 0


def encode_parts(RadixTree tree not None, weights, tokens, offsets, Py_ssize_t top_n=1,
                 Py_ssize_t exact_max_length=DEFAULT_EXACT_MAX_LENGTH, *,
                 Py_ssize_t _min_compaction=TRIE_MIN_COMPACTION):
    """Encode every part ``tokens[offsets[k]:offsets[k + 1]]``; up to ``top_n`` paths each.

    ``weights[t]`` is token ``t``'s weight for every token the tree can return (0 for base
    ids). Returns ``(tokens, token_offsets, candidate_offsets, scores)``: part ``k``'s
    candidates, best first, are ``candidate_offsets[k]..candidate_offsets[k + 1] - 1``;
    candidate ``j`` is ``tokens[token_offsets[j]:token_offsets[j + 1]]`` with ``scores[j]``.
    ``_min_compaction`` (for tests) lowers the trie size below which no compaction happens.
    This is :meth:`Lattice.encode_parts` of a new, uncached :class:`Lattice`.
    """
    return Lattice(tree, weights, exact_max_length, cache=False,
                   _min_compaction=_min_compaction).encode_parts(tokens, offsets, top_n)


# Parts up to this many symbols are cached (longer ones rarely repeat).
cdef Py_ssize_t CACHE_MAX_PART = 64
# A cache starts over (after a call) once it holds this many parts' or tokens' candidates:
# about 10-20 MB per cache (a Lattice has one per thread that encoded at once).
CACHE_MAX_ENTRIES = 1 << 16
CACHE_MAX_TOKENS = 1 << 21
# A lattice grown past this many nodes is freed after its call.
cdef Py_ssize_t WORKSPACE_KEEP = 1 << 20
# Multiplier of the polynomial hash of a part (odd: a bijection mod 2**64).
cdef uint64_t HASH_BASE = 0x9E3779B97F4A7C15ULL


cdef struct EntryKey:
    int64_t offset  # the part's symbols: keys[offset:offset + length]
    int32_t length  # -1: the entry is not indexed
    int32_t top_n


cdef class _PartCache:
    """The parts one :class:`Lattice` has encoded and the workspace its calls reuse.

    Every part a call encodes becomes an *entry*: its candidates, appended to the workspace's
    outputs (entry ``e``'s candidates are ``out_candidate_offsets[e]:out_candidate_offsets[e + 1]``).
    Entries of parts up to ``CACHE_MAX_PART`` symbols are indexed by ``(top_n, symbols)``:
    when such a part comes again, the call points at the entry instead of encoding it. The
    outputs of a call are its parts' entries (``work.part_entry``). Used by one call (one
    thread) at a time; emptied after a call that left it over its limits."""

    cdef FlatMap index  # hash of (top_n, symbols) -> entry + 1
    cdef vector[EntryKey] entries
    cdef vector[id_t] keys
    cdef _Workspace work
    # encode_texts' split (scratch, reused from call to call)
    cdef vector[id_t] symbols
    cdef vector[int64_t] part_offsets
    cdef vector[uint8_t] separator
    cdef vector[int64_t] doc_part_offsets
    cdef vector[uint8_t] utf8
    cdef vector[int64_t] bounds

    cdef int clear(self) except -1:
        """Forget every entry and free the memory they held."""
        cdef vector[EntryKey] no_entries
        cdef vector[id_t] no_keys, no_tokens
        cdef vector[int64_t] no_token_offsets, no_candidate_offsets
        cdef vector[double] no_scores
        self.index = FlatMap()
        self.entries.swap(no_entries)
        self.keys.swap(no_keys)
        self.work.out_tokens.swap(no_tokens)
        self.work.out_token_offsets.swap(no_token_offsets)
        self.work.out_candidate_offsets.swap(no_candidate_offsets)
        self.work.out_scores.swap(no_scores)
        self.work.out_token_offsets.push_back(0)
        self.work.out_candidate_offsets.push_back(0)
        return 0

    cdef int free_split(self) except -1:
        """Free the split's scratch space (after a large call)."""
        cdef vector[id_t] no_symbols
        cdef vector[int64_t] no_offsets, no_docs, no_bounds
        cdef vector[uint8_t] no_separator, no_utf8
        self.symbols.swap(no_symbols)
        self.part_offsets.swap(no_offsets)
        self.doc_part_offsets.swap(no_docs)
        self.bounds.swap(no_bounds)
        self.separator.swap(no_separator)
        self.utf8.swap(no_utf8)
        return 0

    cdef bint full(self, Py_ssize_t max_entries, Py_ssize_t max_tokens) noexcept:
        return (<Py_ssize_t>self.entries.size() > max_entries
                or <Py_ssize_t>self.work.out_tokens.size() > max_tokens)

    cdef int64_t find(self, uint64_t key, const id_t* part, Py_ssize_t n, Py_ssize_t top_n) noexcept nogil:
        """The entry of the part, -1 if none, -2 if another part has its hash."""
        cdef int64_t entry = self.index.get(key, 0) - 1
        cdef Py_ssize_t i
        cdef const id_t* stored
        if entry < 0:
            return -1
        cdef EntryKey* found = &self.entries[entry]
        if found.top_n != top_n or found.length != n:
            return -2
        stored = self.keys.data() + found.offset
        for i in range(n):
            if stored[i] != part[i]:
                return -2
        return entry

    cdef int added(self, uint64_t key, const id_t* part, Py_ssize_t n, Py_ssize_t top_n,
                   bint indexed) except -1 nogil:
        """Record the entry the workspace has just written (the part ``part[:n]``)."""
        cdef int64_t entry = self.entries.size()
        cdef EntryKey record
        record.offset = self.keys.size()
        record.length = <int32_t>n if indexed else -1
        record.top_n = <int32_t>top_n
        self.entries.push_back(record)
        if indexed:
            self.keys.insert(self.keys.end(), part, part + n)
            self.index.slot(key)[0] = entry + 1
        return 0


cdef inline uint64_t part_key(const id_t* part, Py_ssize_t n, Py_ssize_t top_n) noexcept nogil:
    cdef uint64_t h = <uint64_t>top_n
    cdef Py_ssize_t i
    for i in range(n):
        h = h * HASH_BASE + <uint64_t>(<uint32_t>part[i]) + 1
    return h - 1 if h == 0xFFFFFFFFFFFFFFFFULL else h  # FlatMap reserves the all-ones key


cdef class Lattice:
    """The lattice kernel on one vocabulary (a radix tree of its pieces and their weights,
    checked once), with a cache of the parts it has encoded: a part that comes again (a
    frequent word) costs a hash lookup instead of a lattice. Results are the same with and
    without the cache, and whatever the threads: each running call takes a cache of its own
    (a Lattice keeps as many as calls ran at once), which starts over after a call that left
    it full (``CACHE_MAX_ENTRIES`` parts or ``CACHE_MAX_TOKENS`` tokens, or the limits
    ``_cache_entries`` / ``_cache_tokens`` given for tests; parts up to ``CACHE_MAX_PART``
    symbols are cached). ``cache=False``: no cache.

    >>> import numpy as np
    >>> from ubpe_native._radix import RadixTree
    >>> tree = RadixTree(2, np.array([0, 2]), np.array([0, 1], np.int32))  # token 2 = [0 1]
    >>> lattice = Lattice(tree, np.array([0.0, 0.0, 0.5]))
    >>> lattice.encode_documents(np.array([0, 1, 0, 1], np.int32), np.array([0, 2, 4]), np.array([0, 2, 2]))
    [[([2, 2], 1.0)], [([], 0.0)]]
    >>> lattice.encode_documents(np.array([0, 1, 0], np.int32), np.array([0, 3]), np.array([0, 1]), top_n=2)
    [[([2, 0], 0.5), ([0, 1, 0], 0.0)]]
    """

    cdef readonly RadixTree tree
    cdef const double[::1] weights
    cdef readonly Py_ssize_t exact_max_length
    cdef readonly bint cached
    cdef int trie_depth
    cdef Py_ssize_t min_compaction
    cdef Py_ssize_t max_entries
    cdef Py_ssize_t max_tokens
    cdef list free_caches

    def __init__(self, RadixTree tree not None, weights, Py_ssize_t exact_max_length=DEFAULT_EXACT_MAX_LENGTH, *,
                 bint cache=True, Py_ssize_t _min_compaction=TRIE_MIN_COMPACTION,
                 Py_ssize_t _cache_entries=CACHE_MAX_ENTRIES, Py_ssize_t _cache_tokens=CACHE_MAX_TOKENS):
        cdef const double[::1] weight_view = as_array(weights, np.float64, "weights")
        cdef Py_ssize_t k
        check_per_token(tree.max_token, weight_view.shape[0], "weights")
        for k in range(min(<Py_ssize_t>tree.n_base, weight_view.shape[0])):  # a C loop: no array per call
            if weight_view[k] != 0:
                raise ValueError("base ids must weigh 0")
        self.tree = tree
        self.weights = weight_view
        self.exact_max_length = exact_max_length
        self.cached = cache
        self.min_compaction = max(1, _min_compaction)
        self.max_entries = _cache_entries
        self.max_tokens = _cache_tokens
        # the trie keys are merged tokens' ids minus n_base; its depth is their bit length
        self.trie_depth = int(max(2, weight_view.shape[0] - tree.n_base) - 1).bit_length()
        self.free_caches = []

    def clear_cache(self):
        """Forget the parts encoded so far (results do not change)."""
        self.free_caches = []

    def encode_parts(self, tokens, offsets, Py_ssize_t top_n=1):
        """Encode every part ``tokens[offsets[k]:offsets[k + 1]]``: see :func:`encode_parts`."""
        cdef const id_t[::1] token_view = as_array(tokens, np.int32, "tokens")
        cdef const int64_t[::1] offset_view = as_array(offsets, np.int64, "offsets")
        check_top_n(top_n)
        check_offsets(offset_view, token_view.shape[0], "offsets")
        check_ids(token_view, self.tree.n_base, "parts")
        cdef _PartCache cache = self._acquire()
        cdef _Workspace work = cache.work
        cdef Py_ssize_t n_parts, k, n_tokens = 0, n_candidates = 0
        cdef int64_t entry, c, first, last, t = 0, j = 0
        try:
            self._run(cache, &token_view[0] if token_view.shape[0] else NULL, &offset_view[0],
                      offset_view.shape[0] - 1, top_n)
            n_parts = work.part_entry.size()
            for k in range(n_parts):
                entry = work.part_entry[k]
                first = work.out_candidate_offsets[entry]
                last = work.out_candidate_offsets[entry + 1]
                n_candidates += last - first
                n_tokens += work.out_token_offsets[last] - work.out_token_offsets[first]
            out_tokens = np.empty(n_tokens, dtype=np.int32)
            out_token_offsets = np.empty(n_candidates + 1, dtype=np.int64)
            out_candidate_offsets = np.empty(n_parts + 1, dtype=np.int64)
            out_scores = np.empty(n_candidates, dtype=np.float64)
            _gather(work, out_tokens, out_token_offsets, out_candidate_offsets, out_scores)
        finally:
            self._release(cache)
        return out_tokens, out_token_offsets, out_candidate_offsets, out_scores

    def encode_documents(self, tokens, part_offsets, doc_part_offsets, Py_ssize_t top_n=1, bint arrays=False):
        """Every document's ``top_n`` encodings ``[(tokens, score)]``, best first, as lists:
        document ``d`` holds parts ``doc_part_offsets[d]:doc_part_offsets[d + 1]``, part ``k``
        is ``tokens[part_offsets[k]:part_offsets[k + 1]]``. Top-1: the parts' best encodings
        back to back, scores added left to right; top-n: the reference's walk over the parts'
        candidates (``_combine``); one part: its own candidates. ``arrays=True``: the same
        encodings as the arrays ``(ids, token_offsets, scores, doc_offsets)`` of
        ``ubpe.encoders.EncodedBatch``, no list built."""
        cdef const id_t[::1] token_view = as_array(tokens, np.int32, "tokens")
        cdef const int64_t[::1] offset_view = as_array(part_offsets, np.int64, "part_offsets")
        cdef const int64_t[::1] doc_view = as_array(doc_part_offsets, np.int64, "doc_part_offsets")
        check_top_n(top_n)
        check_offsets(offset_view, token_view.shape[0], "part_offsets")
        check_ids(token_view, self.tree.n_base, "parts")
        check_offsets(doc_view, offset_view.shape[0] - 1, "doc_part_offsets")
        cdef _PartCache cache = self._acquire()
        try:
            self._run(cache, &token_view[0] if token_view.shape[0] else NULL, &offset_view[0],
                      offset_view.shape[0] - 1, top_n)
            return self._lists(cache, &doc_view[0], doc_view.shape[0] - 1, top_n, arrays)
        finally:
            self._release(cache)

    def encode_texts(self, TextSplitter splitter not None, docs, Py_ssize_t top_n=1, Py_ssize_t max_cells=-1,
                     bint arrays=False):
        """:meth:`encode_documents` of str documents split by ``splitter`` (no arrays in
        between: what ``UBPE.encode`` and ``encode_batch`` run for text). None - the caller's
        general path then raises its error - if a document is no str, has a symbol outside
        the splitter's alphabet or a lone surrogate, or if ``top_n > 1`` and the longest
        part's lattice would take more than ``max_cells`` cells (``(length + 1) * top_n``;
        -1: no limit). ``docs`` is a list or tuple. ``arrays``: see :meth:`encode_documents`."""
        check_top_n(top_n)
        if splitter.max_id >= self.tree.n_base:
            raise ValueError(f"the splitter gives ids up to {splitter.max_id}, the lattice has {self.tree.n_base} base ids")
        cdef tuple held = docs if type(docs) is tuple else tuple(docs)
        cdef _PartCache cache = self._acquire()
        try:
            if not splitter.split_into(held, cache.symbols, cache.part_offsets, cache.separator,
                                       cache.doc_part_offsets, cache.utf8, cache.bounds):
                return None
            if top_n > 1 and max_cells >= 0 and (_longest(cache.part_offsets) + 1) * top_n > max_cells:
                return None
            self._run(cache, cache.symbols.data(), cache.part_offsets.data(), cache.part_offsets.size() - 1, top_n)
            return self._lists(cache, cache.doc_part_offsets.data(), cache.doc_part_offsets.size() - 1, top_n,
                               arrays)
        finally:
            self._release(cache)

    cdef object _lists(self, _PartCache cache, const int64_t* doc_part_offsets, Py_ssize_t n_docs, Py_ssize_t top_n,
                       bint arrays):
        """The documents' encodings as lists (``arrays``: as arrays), from the entries of the
        parts just encoded."""
        cdef _Workspace work = cache.work
        if arrays and top_n == 1:
            return top1_arrays(work.out_tokens.data(), work.out_token_offsets.data(), work.out_scores.data(),
                               work.out_candidate_offsets.data(), work.part_entry.data(), doc_part_offsets, n_docs)
        if arrays:
            return nbest_arrays(work.out_tokens.data(), work.out_token_offsets.data(), work.out_scores.data(),
                                work.out_candidate_offsets.data(), work.part_entry.data(), doc_part_offsets, n_docs,
                                <int>top_n)
        cdef list ids = id_table(self.weights.shape[0])
        if top_n == 1:
            return top1_lists(ids, work.out_tokens.data(), work.out_token_offsets.data(), work.out_scores.data(),
                              work.out_candidate_offsets.data(), work.part_entry.data(), doc_part_offsets, n_docs)
        return nbest_lists(ids, work.out_tokens.data(), work.out_token_offsets.data(), work.out_scores.data(),
                           work.out_candidate_offsets.data(), work.part_entry.data(), doc_part_offsets, n_docs,
                           <int>top_n)

    cdef _PartCache _acquire(self):
        cdef _PartCache cache
        if self.free_caches:
            return self.free_caches.pop()
        cache = _PartCache()
        cache.work = self._new_workspace()
        cache.clear()
        return cache

    cdef _Workspace _new_workspace(self):
        cdef _Workspace work = _Workspace()
        work.min_compaction = self.min_compaction
        work.trie_depth = self.trie_depth
        work.occurrences.resize(self.weights.shape[0], 0)
        return work

    cdef int _release(self, _PartCache cache) except -1:
        """Give the cache back: emptied if over its limits, its lattice freed if grown large."""
        cdef vector[id_t] no_tokens
        cdef vector[int64_t] no_nodes
        cdef vector[double] no_scores
        cdef vector[int32_t] no_lengths
        if <Py_ssize_t>cache.work.node_token.capacity() > WORKSPACE_KEEP:
            cache.work.node_token.swap(no_tokens)
            cache.work.node_next.swap(no_nodes)
            no_nodes.clear()
            cache.work.node_score.swap(no_scores)
            cache.work.node_high.swap(no_scores)
            cache.work.node_low.swap(no_scores)
            no_scores.clear()
            cache.work.node_length.swap(no_lengths)
            cache.work.node_counts.swap(no_lengths)
            cache.work.trie.swap(no_lengths)
            cache.work.compacted.swap(no_lengths)
            cache.work.renumber.swap(no_lengths)
        if <Py_ssize_t>cache.utf8.capacity() > 4 * WORKSPACE_KEEP:
            cache.free_split()
        if not self.cached:
            return 0
        if cache.full(self.max_entries, self.max_tokens):
            cache.clear()
        self.free_caches.append(cache)
        return 0

    cdef int _run(self, _PartCache cache, const id_t* token_data, const int64_t* offsets, Py_ssize_t n_parts,
                  Py_ssize_t top_n) except -1:
        """Encode every part ``token_data[offsets[k]:offsets[k + 1]]`` (checked by the caller:
        base ids, ascending offsets, top_n >= 1) into the cache (an entry per part in
        ``work.part_entry``)."""
        cdef Py_ssize_t k, longest, length
        cdef RadixTree tree = self.tree
        longest = 0
        for k in range(n_parts):
            longest = max(longest, offsets[k + 1] - offsets[k])
        # the largest allocations, made here with the GIL: MemoryError before any work
        if longest + 1 > PY_SSIZE_T_MAX // top_n // 8:
            raise MemoryError(f"a part of {longest} symbols with top_n={top_n} needs more memory than can be addressed")
        cdef _Workspace work = cache.work
        try:
            work.reserve(longest, top_n)
        except MemoryError:
            raise MemoryError(f"a part of {longest} symbols with top_n={top_n} needs about "
                              f"{(longest + 1) * top_n * 44 / 2**30:.1f} GiB for its lattice") from None
        work.part_entry.clear()
        work.part_entry.reserve(n_parts)
        # scratch space kept in the workspace from call to call (resize: MemoryError, with the GIL)
        work.match_lengths.resize(max(1, tree.max_length))
        work.match_tokens.resize(max(1, tree.max_length))
        work.heap.resize(top_n)
        work.order.resize(top_n)
        # empty inputs have no element 0 to point at: nothing is read through these then
        cdef const double* weight_data = &self.weights[0] if self.weights.shape[0] else NULL
        cdef const id_t* part
        cdef bint use_cache = self.cached
        cdef Py_ssize_t exact_max_length = self.exact_max_length
        cdef uint64_t key = 0
        cdef int64_t entry
        try:
            with nogil:
                for k in range(n_parts):
                    part = token_data + offsets[k]
                    length = offsets[k + 1] - offsets[k]
                    entry = -2
                    if use_cache and length <= CACHE_MAX_PART:
                        key = part_key(part, length, top_n)
                        entry = cache.find(key, part, length, top_n)
                        if entry >= 0:
                            work.part_entry.push_back(entry)
                            continue
                    work.part_entry.push_back(cache.entries.size())
                    work.encode_part(tree, weight_data, tree.n_base, part, length, top_n,
                                     length <= exact_max_length, work.match_lengths.data(),
                                     work.match_tokens.data(), work.heap.data(), work.order.data())
                    cache.added(key, part, length, top_n, entry == -1)
        except BaseException:
            cache.clear()  # never reuse a half-built cache
            raise
        return 0


cdef Py_ssize_t _longest(const vector[int64_t]& offsets) noexcept:
    cdef Py_ssize_t k, longest = 0
    for k in range(1, <Py_ssize_t>offsets.size()):
        longest = max(longest, offsets[k] - offsets[k - 1])
    return longest


cdef int _gather(_Workspace work, out_tokens, out_token_offsets, out_candidate_offsets, out_scores) except -1:
    """The parts' entries back to back, into the (right-sized) arrays of ``encode_parts``."""
    cdef id_t[::1] tokens = out_tokens
    cdef int64_t[::1] token_offsets = out_token_offsets
    cdef int64_t[::1] candidate_offsets = out_candidate_offsets
    cdef double[::1] scores = out_scores
    cdef Py_ssize_t k, t = 0, j = 0
    cdef int64_t entry, c, i
    token_offsets[0] = 0
    candidate_offsets[0] = 0
    for k in range(<Py_ssize_t>work.part_entry.size()):
        entry = work.part_entry[k]
        for c in range(work.out_candidate_offsets[entry], work.out_candidate_offsets[entry + 1]):
            for i in range(work.out_token_offsets[c], work.out_token_offsets[c + 1]):
                tokens[t] = work.out_tokens[i]
                t += 1
            scores[j] = work.out_scores[c]
            j += 1
            token_offsets[j] = t
        candidate_offsets[k + 1] = j
    return 0
