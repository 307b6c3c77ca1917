# distutils: language = c++
"""Paths through the lattice of a document: cheapest paths (exact k-best) and longest matches.

The lattice of a part has a node at every position and an edge ``p -> p + L`` for every prefix
match ``(L, token)`` of the part at ``p`` (from the radix tree; every base id is a key, so a
path always exists). Tokens never cross the end of a part, so the parts of a document, laid
back to back, form one lattice: a path through the document is a path through each part.

**Cheapest paths** (``kbest_paths``). Each token has a cost; a path costs the sum of its
tokens' costs. Positions are solved from the end of the document backwards: position ``p``
keeps its ``k`` cheapest *tails* (paths from ``p`` to the end). Costs are additive, so every
one of them is a token ``t`` at ``p`` followed by one of the ``k`` cheapest tails at
``p + len(t)``: the ``k`` best of ``p`` are a k-way merge of the (sorted) tail lists of its
matches, taken from a heap with one entry per match - ``O(m + k log m)`` for ``m`` matches.
Fewest tokens is cost 1 per token (PathPiece, Schmidt et al. 2024).

Ties. Among paths of equal cost the one whose *first* token is longer comes first, then the
one whose second token is longer, and so on: the lexicographically longest-first order of
token lengths, read from the left. Equivalently, of two equally cheap segmentations the one
whose leftmost differing boundary lies further right wins. Two distinct paths from the same
position differ in the length of their first differing token (one piece per length at a
position), so this is a strict total order; and it composes - ``t + X`` against ``t + Y`` is
``X`` against ``Y`` - which is what makes the k-way merge exact. In the heap a candidate is
``(cost, -length of its first token, rank of its tail)``: tails from one match are already in
this order. Costs are compared as computed (``cost(t) + cost(tail)``, summed right to left);
unit costs are exact integers in a double. Memory: ``k`` tails per position, 24 bytes each.

**Longest matches** (top-1, greedy):

* ``longest_prefix`` - from the left, the longest token starting at the current position
  (WordPiece's rule). The longest *suffix* rule is this one on the reversed document with a
  tree of reversed pieces (the caller reverses).
* ``longest_token`` - FLOTA (Hofmann et al. 2022), without its cut-off so it stays lossless:
  take the longest token occurring anywhere in a span (the leftmost of equally long ones),
  then do the same in the spans left and right of it. A segment tree over positions holds
  each position's longest match within its span, so every choice is an ``O(log n)`` query.
  Only matches that reach past a new span end must shrink, and a match only shrinks, so the
  work stays linear in the document times the longest piece.

>>> import numpy as np
>>> from ubpe_native._radix import RadixTree
>>> # token 2 = [0 1], token 3 = [1 0], token 4 = [0 1 0]
>>> tree = RadixTree(2, np.array([0, 2, 4, 7]), np.array([0, 1, 1, 0, 0, 1, 0], np.int32))
>>> symbols, bounds = np.array([0, 1, 0, 1], np.int32), np.array([0, 4])
>>> tokens, offsets, costs = kbest_paths(tree, np.ones(5), symbols, bounds, top_n=3)
>>> [tokens[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])], costs.tolist()
([[4, 1], [2, 2], [2, 0, 1]], [2.0, 2.0, 3.0])
>>> longest_prefix(tree, symbols, bounds).tolist(), longest_token(tree, symbols, bounds).tolist()
([4, 1], [4, 1])
"""

from libc.stdint cimport int32_t, int64_t
from libcpp.vector cimport vector

from ubpe_native._numpy import np

from ubpe_native._checks cimport as_array, check_buffer, check_ids, check_offsets, check_per_token, check_top_n
from ubpe_native._heap cimport heap_sift_down, heap_sift_up
from ubpe_native._radix cimport RadixTree
from ubpe_native._typedefs cimport id_t

# token of the empty tail that ends every path
cdef id_t END = -1
# "no position" in the segment tree (an empty range)
cdef int32_t NO_POSITION = -1


cdef struct Tail:
    double cost      # of the whole tail
    id_t token       # its first token (END for the empty tail)
    int32_t length   # symbols of that token
    int32_t next     # rank of the rest of the tail among the tails kept at position + length


cdef inline bint precedes(const Tail& a, const Tail& b) noexcept nogil:
    """Cheaper first; on equal cost the longer first token; then the better-ranked rest."""
    if a.cost != b.cost:
        return a.cost < b.cost
    if a.length != b.length:
        return a.length > b.length
    return a.next < b.next


# the k-way merge's heap is binary: it rarely holds more than a few matches
cdef enum:
    HEAP_ARITY = 2


cdef class _Lattice:
    """The k-best tails of every position of one document (one per call: calls may run in
    parallel threads once the GIL is released). Position ``p`` keeps its tails, best first,
    at ``tails[p * k .. p * k + kept[p] - 1]``."""

    cdef vector[Tail] tails
    cdef vector[int32_t] kept
    cdef vector[Tail] heap
    cdef vector[int32_t] match_lengths
    cdef vector[id_t] match_tokens
    cdef Py_ssize_t k

    cdef inline Tail extend(self, const double* costs, id_t token, int32_t length,
                            Py_ssize_t next_position, int32_t rank) noexcept nogil:
        cdef Tail tail
        tail.cost = costs[token] + self.tails[next_position * self.k + rank].cost
        tail.token = token
        tail.length = length
        tail.next = rank
        return tail

    cdef void solve(self, RadixTree tree, const double* costs, const id_t* symbols,
                    const int64_t* bounds, Py_ssize_t n_parts) noexcept nogil:
        cdef Py_ssize_t n = bounds[n_parts], k = self.k, part, p, m, n_matches, size, kept
        cdef Tail best, candidate
        cdef Tail* heap = self.heap.data()
        cdef int32_t* lengths = self.match_lengths.data()
        cdef id_t* tokens = self.match_tokens.data()

        best.cost = 0.0
        best.token = END
        best.length = 0
        best.next = 0
        self.tails[n * k] = best
        self.kept[n] = 1
        for part in range(n_parts - 1, -1, -1):
            for p in range(bounds[part + 1] - 1, bounds[part] - 1, -1):
                n_matches = tree._prefix_matches(symbols + p, bounds[part + 1] - p, lengths, tokens)
                if k == 1:
                    # the common case needs no heap: the best of one tail per match
                    best = self.extend(costs, tokens[0], lengths[0], p + lengths[0], 0)
                    for m in range(1, n_matches):
                        candidate = self.extend(costs, tokens[m], lengths[m], p + lengths[m], 0)
                        if precedes(candidate, best):
                            best = candidate
                    self.tails[p] = best
                    self.kept[p] = 1
                    continue
                for m in range(n_matches):
                    heap[m] = self.extend(costs, tokens[m], lengths[m], p + lengths[m], 0)
                    heap_sift_up(heap, m, HEAP_ARITY, precedes)
                size = n_matches
                kept = 0
                while size > 0 and kept < k:
                    best = heap[0]
                    self.tails[p * k + kept] = best
                    kept += 1
                    # the next tail of the same match takes its place in the heap
                    if best.next + 1 < self.kept[p + best.length]:
                        heap[0] = self.extend(costs, best.token, best.length, p + best.length,
                                              best.next + 1)
                    else:
                        size -= 1
                        heap[0] = heap[size]
                    heap_sift_down(heap, size, 0, HEAP_ARITY, precedes)
                self.kept[p] = <int32_t>kept


def kbest_paths(RadixTree tree not None, costs, symbols, bounds, Py_ssize_t top_n=1):
    """The ``top_n`` cheapest paths through the document ``symbols`` split at ``bounds``.

    ``costs[t]`` is token ``t``'s cost for every token the tree can return (lower is better;
    finite). Part ``j`` is ``symbols[bounds[j]:bounds[j + 1]]``; tokens never cross parts.
    Returns ``(tokens, token_offsets, path_costs)``: path ``i`` (cheapest first, ties as in
    the module docstring) is ``tokens[token_offsets[i]:token_offsets[i + 1]]``.
    """
    cdef const double[::1] cost_view = as_array(costs, np.float64, "costs")
    cdef const id_t[::1] symbol_view = as_array(symbols, np.int32, "symbols")
    cdef const int64_t[::1] bound_view = as_array(bounds, np.int64, "bounds")
    check_top_n(top_n)
    check_per_token(tree.max_token, cost_view.shape[0], "costs")
    if not np.isfinite(np.asarray(cost_view)).all():
        raise ValueError("costs must be finite")
    check_offsets(bound_view, symbol_view.shape[0], "bounds")
    check_ids(symbol_view, tree.n_base, "parts")

    cdef Py_ssize_t n = symbol_view.shape[0], n_parts = bound_view.shape[0] - 1
    cdef _Lattice lattice = _Lattice()
    lattice.k = top_n
    # allocated here, with the GIL, so that running out of memory raises MemoryError; a
    # top_n that no memory holds is refused first ((n + 1) * top_n could wrap to a small size)
    check_buffer(n + 1, top_n, sizeof(Tail), "the k-best lattice")
    lattice.tails.resize((n + 1) * top_n)
    lattice.kept.resize(n + 1)
    lattice.heap.resize(max(1, tree.max_length))
    lattice.match_lengths.resize(max(1, tree.max_length))
    lattice.match_tokens.resize(max(1, tree.max_length))
    cdef const double* cost_data = &cost_view[0] if cost_view.shape[0] else NULL
    cdef const id_t* symbol_data = &symbol_view[0] if n else NULL
    with nogil:
        lattice.solve(tree, cost_data, symbol_data, &bound_view[0], n_parts)

    cdef Py_ssize_t n_paths = lattice.kept[0], i, total = 0, node, position
    cdef Tail tail
    # count the tokens of every path first, then write them without reallocating
    token_offsets = np.zeros(n_paths + 1, dtype=np.int64)
    path_costs = np.empty(n_paths, dtype=np.float64)
    cdef int64_t[::1] offset_view = token_offsets
    cdef double[::1] path_cost_view = path_costs
    for i in range(n_paths):
        path_cost_view[i] = lattice.tails[i].cost
        position, node = 0, i
        while lattice.tails[position * top_n + node].token != END:
            tail = lattice.tails[position * top_n + node]
            total += 1
            position += tail.length
            node = tail.next
        offset_view[i + 1] = total
    out = np.empty(total, dtype=np.int32)
    cdef id_t[::1] out_view = out
    total = 0
    for i in range(n_paths):
        position, node = 0, i
        while lattice.tails[position * top_n + node].token != END:
            tail = lattice.tails[position * top_n + node]
            out_view[total] = tail.token
            total += 1
            position += tail.length
            node = tail.next
    return out, token_offsets, path_costs


def longest_prefix(RadixTree tree not None, symbols, bounds):
    """Greedy longest match from the left in every part; the tokens of the whole document."""
    cdef const id_t[::1] symbol_view = as_array(symbols, np.int32, "symbols")
    cdef const int64_t[::1] bound_view = as_array(bounds, np.int64, "bounds")
    check_offsets(bound_view, symbol_view.shape[0], "bounds")
    check_ids(symbol_view, tree.n_base, "parts")
    cdef Py_ssize_t n = symbol_view.shape[0], n_parts = bound_view.shape[0] - 1, part, p
    cdef Py_ssize_t n_matches, count = 0
    cdef vector[int32_t] lengths = vector[int32_t](max(1, tree.max_length))
    cdef vector[id_t] tokens = vector[id_t](max(1, tree.max_length))
    out = np.empty(n, dtype=np.int32)  # never more tokens than symbols
    cdef id_t[::1] out_view = out
    with nogil:
        for part in range(n_parts):
            p = bound_view[part]
            while p < bound_view[part + 1]:
                n_matches = tree._prefix_matches(&symbol_view[p], bound_view[part + 1] - p,
                                                 lengths.data(), tokens.data())
                # matches come shortest first: the last is the longest
                out_view[count] = tokens[n_matches - 1]
                count += 1
                p += lengths[n_matches - 1]
    return out[:count].copy()


cdef class _Flota:
    """FLOTA's state for one document: each position's longest match inside its span and a
    segment tree whose node holds the best position of its range (longest match, then
    leftmost)."""

    cdef RadixTree tree
    cdef const id_t* symbols
    cdef vector[int32_t] best_length
    cdef vector[id_t] best_token
    cdef vector[int32_t] segments   # node i covers leaves of 2i and 2i + 1; leaves at size + p
    cdef Py_ssize_t size
    cdef vector[int32_t] match_lengths
    cdef vector[id_t] match_tokens

    cdef inline int32_t better(self, int32_t a, int32_t b) noexcept nogil:
        if a == NO_POSITION:
            return b
        if b == NO_POSITION:
            return a
        if self.best_length[a] != self.best_length[b]:
            return a if self.best_length[a] > self.best_length[b] else b
        return a if a < b else b

    cdef void longest_within(self, Py_ssize_t p, Py_ssize_t end) noexcept nogil:
        """Position ``p``'s longest match that ends by ``end``."""
        cdef Py_ssize_t n_matches = self.tree._prefix_matches(
            self.symbols + p, end - p, self.match_lengths.data(), self.match_tokens.data())
        self.best_length[p] = self.match_lengths[n_matches - 1]
        self.best_token[p] = self.match_tokens[n_matches - 1]

    cdef void update(self, Py_ssize_t p) noexcept nogil:
        cdef Py_ssize_t node = (self.size + p) >> 1
        while node >= 1:
            self.segments[node] = self.better(self.segments[2 * node], self.segments[2 * node + 1])
            node >>= 1

    cdef int32_t query(self, Py_ssize_t first, Py_ssize_t end) noexcept nogil:
        """The best position in ``first..end - 1`` (the order is total, so the order in which
        nodes are combined does not matter)."""
        cdef int32_t found = NO_POSITION
        cdef Py_ssize_t low = first + self.size, high = end + self.size
        while low < high:
            if low & 1:
                found = self.better(found, self.segments[low])
                low += 1
            if high & 1:
                high -= 1
                found = self.better(found, self.segments[high])
            low >>= 1
            high >>= 1
        return found

    cdef int encode(self, const int64_t* bounds, Py_ssize_t n_parts, id_t* token_at) except -1 nogil:
        """``token_at[p]``: the token chosen at ``p``, or ``END`` inside a token (``spans``
        grows: MemoryError propagates, ``except -1``)."""
        cdef Py_ssize_t n = bounds[n_parts], part, p, first, end, start, stop
        cdef vector[int64_t] spans   # pending spans, (first, end) pairs
        for part in range(n_parts):
            for p in range(bounds[part], bounds[part + 1]):
                self.longest_within(p, bounds[part + 1])
                self.segments[self.size + p] = <int32_t>p
                token_at[p] = END
            spans.push_back(bounds[part])
            spans.push_back(bounds[part + 1])
        for p in range(self.size - 1, 0, -1):
            self.segments[p] = self.better(self.segments[2 * p], self.segments[2 * p + 1])
        while spans.size():
            end = spans.back()
            spans.pop_back()
            first = spans.back()
            spans.pop_back()
            if first >= end:
                continue
            start = self.query(first, end)
            stop = start + self.best_length[start]
            token_at[start] = self.best_token[start]
            # the span left of the token now ends at start: shrink the matches that cross it
            # (only positions within the longest piece of start can reach past it)
            for p in range(max(first, start - self.tree.max_length + 1), start):
                if p + self.best_length[p] > start:
                    self.longest_within(p, start)
                    self.update(p)
            spans.push_back(first)
            spans.push_back(start)
            spans.push_back(stop)
            spans.push_back(end)
        return 0


def longest_token(RadixTree tree not None, symbols, bounds):
    """FLOTA in every part (see the module docstring); the tokens of the whole document."""
    cdef const id_t[::1] symbol_view = as_array(symbols, np.int32, "symbols")
    cdef const int64_t[::1] bound_view = as_array(bounds, np.int64, "bounds")
    check_offsets(bound_view, symbol_view.shape[0], "bounds")
    check_ids(symbol_view, tree.n_base, "parts")
    cdef Py_ssize_t n = symbol_view.shape[0], n_parts = bound_view.shape[0] - 1, p
    cdef _Flota flota = _Flota()
    flota.tree = tree
    flota.symbols = &symbol_view[0] if n else NULL
    flota.size = 1
    while flota.size < n:
        flota.size <<= 1
    flota.best_length.resize(max(1, n))
    flota.best_token.resize(max(1, n))
    flota.segments.resize(2 * flota.size, NO_POSITION)
    flota.match_lengths.resize(max(1, tree.max_length))
    flota.match_tokens.resize(max(1, tree.max_length))
    token_at = np.empty(n, dtype=np.int32)
    cdef id_t[::1] token_view = token_at
    cdef Py_ssize_t count = 0
    with nogil:
        if n:
            flota.encode(&bound_view[0], n_parts, &token_view[0])
            # token starts in order of position are the tokens left to right
            for p in range(n):
                if token_view[p] != END:
                    token_view[count] = token_view[p]
                    count += 1
    return token_at[:count].copy()

