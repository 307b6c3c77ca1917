# distutils: language = c++
"""The lattice of all segmentations of a document: counting, the forward algorithm, sampling.

The lattice of a document (its parts back to back) has a node at every position and an edge
``p -> p + L`` for every prefix match ``(L, token)`` of the part holding ``p`` (from the radix
tree: one token per piece, every base id a key). Edges never cross the end of a part, so a
path through the document is a path through each part, and counts multiply over parts.

With an additive score ``s(e)`` per edge (already divided by the temperature) a path ``y`` has
probability ``exp(sum of s over y) / Z``. ``SegmentLattice.backward`` computes, from the end
backwards (linear in the number of edges), ``log Z``, the entropy of the path distribution
and the expected number of tokens; ``sample`` draws paths exactly by backward filtering and
forward sampling: from position ``p`` edge ``e`` is taken with probability
``exp(s(e) + beta(p + L) - beta(p))``, where ``beta(p)`` is the log-sum over tails from ``p``.

>>> import numpy as np
>>> from ubpe_native._radix import RadixTree
>>> tree = RadixTree(2, np.array([0, 2]), np.array([0, 1], np.int32))   # token 2 = [0 1]
>>> lattice = SegmentLattice(tree, np.array([0, 1, 0, 1], np.int32), np.array([0, 4]))
>>> lattice.n_edges, lattice.count_parts()[0].tolist()                  # 6 edges, 4 paths
(6, [4])
>>> log_z, entropy, tokens = lattice.backward(np.zeros(6))
>>> bool(np.isclose(log_z, np.log(4))), bool(np.isclose(entropy, np.log(4))), tokens
(True, True, 3.0)
"""

from libc.math cimport exp, log, isfinite, INFINITY
from libc.stdint cimport int32_t, int64_t, uint64_t
from libcpp.vector cimport vector

from ubpe_native._numpy import np

from ubpe_native._checks cimport as_array, build_once, check_parts as _check_parts
from ubpe_native._radix cimport RadixTree
from ubpe_native._typedefs cimport id_t

cdef uint64_t MAX_COUNT = 0xFFFFFFFFFFFFFFFFULL


cdef class SegmentLattice:
    """Every prefix match of every position of a document: edges ``first[p]..first[p + 1] - 1``
    leave position ``p``, shortest first; edge ``e`` spans ``length[e]`` symbols and stands for
    ``token[e]``. Built once per document; the score-dependent passes take one score per edge.
    """

    cdef vector[int64_t] first
    cdef vector[int32_t] length
    cdef vector[id_t] token
    cdef vector[int64_t] bounds
    cdef readonly Py_ssize_t n_symbols
    cdef readonly Py_ssize_t n_edges
    cdef readonly Py_ssize_t n_parts

    cdef bint built  # __init__ ran (build_once)

    def __init__(self, RadixTree tree not None, symbols, bounds):
        build_once(&self.built, self)
        cdef const id_t[::1] symbol_view = as_array(symbols, np.int32, "symbols")
        cdef const int64_t[::1] bound_view = as_array(bounds, np.int64, "bounds")
        _check_parts(symbol_view, bound_view, tree.n_base)
        cdef Py_ssize_t n = symbol_view.shape[0], n_parts = bound_view.shape[0] - 1, part, p, m, count
        cdef vector[int32_t] lengths = vector[int32_t](max(1, tree.max_length))
        cdef vector[id_t] tokens = vector[id_t](max(1, tree.max_length))
        self.n_symbols = n
        self.n_parts = n_parts
        self.first.resize(n + 1)
        for part in range(n_parts + 1):
            self.bounds.push_back(bound_view[part])
        with nogil:
            for part in range(n_parts):
                for p in range(bound_view[part], bound_view[part + 1]):
                    self.first[p] = <int64_t>self.token.size()
                    count = tree._prefix_matches(&symbol_view[p], bound_view[part + 1] - p,
                                                 lengths.data(), tokens.data())
                    for m in range(count):
                        self.length.push_back(lengths[m])
                        self.token.push_back(tokens[m])
            self.first[n] = <int64_t>self.token.size()
        self.n_edges = self.token.size()

    def edges(self):
        """``(first, lengths, tokens)`` as numpy arrays (copies): see the class docstring."""
        first = np.array(<int64_t[:self.n_symbols + 1]>self.first.data(), dtype=np.int64)
        if self.n_edges == 0:
            return first, np.zeros(0, np.int32), np.zeros(0, np.int32)
        return (first,
                np.array(<int32_t[:self.n_edges]>self.length.data(), dtype=np.int32),
                np.array(<id_t[:self.n_edges]>self.token.data(), dtype=np.int32))

    def count_parts(self):
        """Paths through each part: ``(counts, overflowed)``, a uint64 count per part and
        whether it overflowed 64 bits (then its count is meaningless: count it exactly with
        Python integers)."""
        counts = np.zeros(self.n_parts, dtype=np.uint64)
        overflowed = np.zeros(self.n_parts, dtype=np.uint8)
        cdef uint64_t[::1] count_view = counts
        cdef unsigned char[::1] over_view = overflowed
        cdef vector[uint64_t] tails = vector[uint64_t](self.n_symbols + 1)
        cdef Py_ssize_t part, p, e, start, end
        cdef uint64_t total, add
        cdef bint over
        with nogil:
            for part in range(self.n_parts):
                start, end = self.bounds[part], self.bounds[part + 1]
                tails[end] = 1
                over = False
                for p in range(end - 1, start - 1, -1):
                    total = 0
                    for e in range(self.first[p], self.first[p + 1]):
                        add = tails[p + self.length[e]]
                        if total > MAX_COUNT - add:
                            over = True
                            add = 0
                        total += add
                    tails[p] = total
                count_view[part] = tails[start]
                over_view[part] = over
        return counts, overflowed.astype(np.bool_)

    cdef object _scores(self, edge_scores):
        array = as_array(edge_scores, np.float64, "edge_scores")
        if array.shape != (self.n_edges,):
            raise ValueError(f"one score per edge is needed: shape ({self.n_edges},), got {array.shape}")
        if not np.isfinite(array).all():
            raise ValueError("edge scores must be finite")
        return array

    cdef void _beta(self, const double* score, double* beta) noexcept nogil:
        """``beta[p]``: log of the summed ``exp(score)`` of the paths from ``p`` to the end."""
        cdef Py_ssize_t p, e
        cdef double top, total, value
        beta[self.n_symbols] = 0.0
        for p in range(self.n_symbols - 1, -1, -1):
            top = -INFINITY
            for e in range(self.first[p], self.first[p + 1]):
                value = score[e] + beta[p + self.length[e]]
                if value > top:
                    top = value
            total = 0.0
            for e in range(self.first[p], self.first[p + 1]):
                total += exp(score[e] + beta[p + self.length[e]] - top)
            beta[p] = top + log(total)

    def backward(self, edge_scores):
        """``(log_z, entropy, expected_tokens)`` of the distribution ``exp(score(path)) / Z``:
        entropy in nats, computed as the expected ``-log`` of each step's choice (a sum of
        non-negative terms), and the expected number of tokens of a path."""
        scores = self._scores(edge_scores)
        cdef const double[::1] score_view = scores
        cdef vector[double] beta = vector[double](self.n_symbols + 1)
        cdef vector[double] entropy = vector[double](self.n_symbols + 1)
        cdef vector[double] tokens = vector[double](self.n_symbols + 1)
        cdef Py_ssize_t p, e, nxt
        cdef double log_w, w, h, t
        with nogil:
            self._beta(&score_view[0] if self.n_edges else NULL, beta.data())
            for p in range(self.n_symbols - 1, -1, -1):
                h = 0.0
                t = 0.0
                for e in range(self.first[p], self.first[p + 1]):
                    nxt = p + self.length[e]
                    log_w = score_view[e] + beta[nxt] - beta[p]
                    w = exp(log_w)
                    h += w * (entropy[nxt] - log_w)
                    t += w * (1.0 + tokens[nxt])
                entropy[p] = h if h > 0.0 else 0.0
                tokens[p] = t
        return beta[0], entropy[0], tokens[0]

    def sample(self, edge_scores, uniforms):
        """One path per row of ``uniforms`` (a 2-d array of numbers in ``[0, 1)``, at least
        ``n_symbols`` per row: step ``i`` of a path uses column ``i``): the edges taken,
        ``(edges, offsets)`` with path ``i`` at ``edges[offsets[i]:offsets[i + 1]]``."""
        scores = self._scores(edge_scores)
        draws = as_array(uniforms, np.float64, "uniforms")
        if draws.ndim != 2 or draws.shape[1] < self.n_symbols:
            raise ValueError(f"uniforms must be 2-d with at least {self.n_symbols} columns")
        if draws.size and not ((draws >= 0.0) & (draws < 1.0)).all():
            raise ValueError("uniforms must lie in [0, 1)")
        cdef const double[::1] score_view = scores
        cdef const double[:, ::1] draw_view = draws
        cdef Py_ssize_t n_paths = draws.shape[0], i, p, e, step, last, total = 0
        cdef vector[double] beta = vector[double](self.n_symbols + 1)
        cdef vector[int64_t] taken
        offsets = np.zeros(n_paths + 1, dtype=np.int64)
        cdef int64_t[::1] offset_view = offsets
        cdef double u, cumulative
        with nogil:
            self._beta(&score_view[0] if self.n_edges else NULL, beta.data())
            for i in range(n_paths):
                p = 0
                step = 0
                while p < self.n_symbols:
                    u = draw_view[i, step]
                    step += 1
                    cumulative = 0.0
                    last = self.first[p + 1] - 1
                    # rounding may leave the probabilities summing just below u: take the last
                    for e in range(self.first[p], last + 1):
                        cumulative += exp(score_view[e] + beta[p + self.length[e]] - beta[p])
                        if u < cumulative:
                            last = e
                            break
                    taken.push_back(last)
                    p += self.length[last]
                offset_view[i + 1] = <int64_t>taken.size()
        edges = np.empty(taken.size(), dtype=np.int64)
        cdef int64_t[::1] edge_view = edges
        for i in range(<Py_ssize_t>taken.size()):
            edge_view[i] = taken[i]
        return edges, offsets

    def locate(self, positions, lengths):
        """The edge leaving ``positions[i]`` with ``lengths[i]`` symbols, for each ``i``
        (-1 where there is none)."""
        cdef const int64_t[::1] position_view = as_array(positions, np.int64, "positions")
        cdef const int64_t[::1] length_view = as_array(lengths, np.int64, "lengths")
        if position_view.shape[0] != length_view.shape[0]:
            raise ValueError("positions and lengths must have the same length")
        out = np.full(position_view.shape[0], -1, dtype=np.int64)
        cdef int64_t[::1] out_view = out
        cdef Py_ssize_t i, e, p
        for i in range(position_view.shape[0]):
            p = position_view[i]
            if not 0 <= p < self.n_symbols:
                continue
            for e in range(self.first[p], self.first[p + 1]):
                if self.length[e] == length_view[i]:
                    out_view[i] = e
                    break
        return out
