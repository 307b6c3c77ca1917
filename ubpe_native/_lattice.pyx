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
* ``c`` comes from a persistent map ``token -> count in this tail`` kept per tail: a 16-way
  trie over token ids (4 bits a level: 4 levels for 16k merged tokens, each node one cache
  line) where a new tail copies one root-to-leaf path of its tail's trie (``O(log T)`` time
  and memory, ``T`` merged tokens). Only tails within ``max_length``
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

:class:`~ubpe_native._lattice_cache.Lattice` runs this kernel over many parts with a cache
of the parts it has encoded (``_lattice_cache.pyx``): the cache's entries *are* the
workspace's outputs (a hit points at an earlier part's candidates, nothing is copied), so
``_Workspace`` is declared in ``_lattice.pxd`` for it to read.

>>> import numpy as np
>>> from ubpe_native._lattice_cache import encode_parts
>>> from ubpe_native._radix import RadixTree
>>> tree = RadixTree(2, np.array([0, 2]), np.array([0, 1], np.int32))  # token 2 = [0 1]
>>> weights = np.array([0.0, 0.0, 0.5])
>>> tokens, token_offsets, candidate_offsets, scores = encode_parts(
...     tree, weights, np.array([0, 1, 0], np.int32), np.array([0, 3]), top_n=2)
>>> [tokens[a:b].tolist() for a, b in zip(token_offsets[:-1], token_offsets[1:])], scores.tolist()
([[2, 0], [0, 1, 0]], [0.5, 0.0])
"""

from libc.math cimport fabs, log
from libc.string cimport memcpy
from libc.stdint cimport int32_t, int64_t
from libcpp.vector cimport vector

from ubpe_native._radix cimport RadixTree
from ubpe_native._score cimport add_part_terms, part_score
from ubpe_native._sums cimport add_term, sum_value
from ubpe_native._typedefs cimport id_t

# parts up to this many symbols get scores bit-identical to the reference (see above)
DEFAULT_EXACT_MAX_LENGTH = 256
# compact the count tries when they exceed twice their live size, and at least this many nodes
TRIE_MIN_COMPACTION = 1 << 16
# "no trie": every count is zero (the empty tail at the end of a part)
cdef int32_t EMPTY_TRIE = -1
# the count tries branch on TRIE_BITS bits of a token id per level
cdef enum:
    TRIE_BITS = 4
    TRIE_FANOUT = 1 << TRIE_BITS
    TRIE_DIGIT = TRIE_FANOUT - 1
# token of the empty tail that ends every path
cdef id_t END = -1
# ln(c) for the counts c below this, computed once by the same libm ``log`` (so the same bits):
# a long part repeats its tokens, and each repeat needs ln(c + 1) - ln(c)
# A candidate ``t + tail`` scores at most ``score(tail) + max(w, 0)`` (a new token adds ``w``,
# a repeat ``w ln((c + 1) / c) < w``): when even that ranks below the worst tail kept, the
# candidate cannot enter and is not scored (the count lookup, the logs, an exact sum). The
# bound is loosened by this relative margin, far above the few ulps a score's sum is off.
cdef double BOUND_MARGIN = 1e-9
cdef enum:
    LOG_TABLE_SIZE = 4096
cdef double LOG_TABLE[LOG_TABLE_SIZE]
cdef Py_ssize_t _k
LOG_TABLE[0] = 0.0  # never read: counts here are >= 1
for _k in range(1, LOG_TABLE_SIZE):
    LOG_TABLE[_k] = log(<double>_k)


cdef inline double log_count(int32_t c) noexcept nogil:
    """``log(c)`` for a count ``c >= 1``, from the table when it holds it."""
    if c < LOG_TABLE_SIZE:
        return LOG_TABLE[c]
    return log(<double>c)


# Candidate: see _lattice.pxd


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

    # attributes: see _lattice.pxd (_lattice_cache's Lattice and _PartCache read them)

    # -- persistent counts ----------------------------------------------------------------

    cdef int32_t _new_trie_node(self, int32_t copy_of, bint last_level) except -1 nogil:
        cdef size_t base = self.trie.size()
        cdef int32_t node = <int32_t>(base // TRIE_FANOUT)
        cdef int j
        self.trie.resize(base + TRIE_FANOUT)  # (before taking pointers into the vector)
        cdef int32_t* slots = self.trie.data() + base
        if copy_of >= 0:
            memcpy(slots, self.trie.data() + <size_t>copy_of * TRIE_FANOUT, TRIE_FANOUT * sizeof(int32_t))
        else:
            for j in range(TRIE_FANOUT):
                slots[j] = 0 if last_level else EMPTY_TRIE
        return node

    cdef int32_t count_of(self, int32_t root, int32_t key) noexcept nogil:
        cdef int32_t node = root
        cdef int level
        cdef const int32_t* trie = self.trie.data()
        for level in range(self.trie_depth - 1, 0, -1):
            if node < 0:
                return 0
            node = trie[TRIE_FANOUT * node + ((key >> (TRIE_BITS * level)) & TRIE_DIGIT)]
        if node < 0:
            return 0
        return trie[TRIE_FANOUT * node + (key & TRIE_DIGIT)]

    cdef int32_t with_count(self, int32_t root, int32_t key, int32_t count) except -1 nogil:
        """A new root: ``root``'s counts with ``key`` set to ``count`` (path copying)."""
        cdef int32_t path[32]
        cdef int32_t node = root, copy, child
        cdef int depth = self.trie_depth, level
        for level in range(depth):
            path[level] = node
            if node >= 0 and level < depth - 1:
                node = self.trie[TRIE_FANOUT * node + ((key >> (TRIE_BITS * (depth - 1 - level))) & TRIE_DIGIT)]
        child = count
        for level in range(depth - 1, -1, -1):
            copy = self._new_trie_node(path[level], level == depth - 1)
            self.trie[TRIE_FANOUT * copy + ((key >> (TRIE_BITS * (depth - 1 - level))) & TRIE_DIGIT)] = child
            child = copy
        return child

    cdef int32_t _compact_from(self, int32_t node, int level) noexcept nogil:
        # ``compact`` reserved room for every node: the resize below never allocates
        if node < 0:
            return EMPTY_TRIE
        if self.renumber[node] >= 0:
            return self.renumber[node]
        cdef int32_t children[TRIE_FANOUT]
        cdef int j
        for j in range(TRIE_FANOUT):
            children[j] = self.trie[TRIE_FANOUT * node + j]
            if level < self.trie_depth - 1:
                children[j] = self._compact_from(children[j], level + 1)
        cdef size_t base = self.compacted.size()
        cdef int32_t copy = <int32_t>(base // TRIE_FANOUT)
        self.compacted.resize(base + TRIE_FANOUT)
        memcpy(self.compacted.data() + base, children, TRIE_FANOUT * sizeof(int32_t))
        self.renumber[node] = copy
        return copy

    cdef int compact(self, Py_ssize_t first, Py_ssize_t last, Py_ssize_t top_n) except -1 nogil:
        """Keep only the trie nodes that tails at positions ``first..last`` reach."""
        cdef Py_ssize_t position, node
        self.renumber.clear()  # then resize: assign(n, v) is not ``except +`` (it would abort)
        self.renumber.resize(self.trie.size() // TRIE_FANOUT, -1)
        self.compacted.clear()
        self.compacted.reserve(self.trie.size())
        for position in range(first, last + 1):
            for node in range(position * top_n, position * top_n + self.kept[position]):
                self.node_counts[node] = self._compact_from(self.node_counts[node], 0)
        self.trie.swap(self.compacted)
        self.compaction_threshold = max(self.min_compaction, <Py_ssize_t>self.trie.size() // TRIE_FANOUT)
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
        cdef double w, score, bound
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
                    if size == top_n:  # full: a candidate must rank above heap[0] to enter
                        bound = self.node_score[tail] + (w if w > 0.0 else 0.0)
                        if bound + BOUND_MARGIN * (fabs(bound) + fabs(w)) < heap[0].score:
                            continue
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
                            candidate.score += ((1.0 + log_count(c + 1)) * w
                                                - (1.0 + log_count(c)) * w)
                            candidate.high = candidate.score
                            candidate.low = 0.0
                    if top_n == 1:  # push_top with room for one, without its calls
                        if size == 0 or ranks_above(candidate, heap[0]):
                            heap[0] = candidate
                            size = 1
                    else:
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
            if <Py_ssize_t>self.trie.size() // TRIE_FANOUT > 2 * self.compaction_threshold:
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
