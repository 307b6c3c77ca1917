"""The exact top-n by ubpe's tf-idf score, by branch and bound, for parts up to a stated length.

The tf-idf score of a part's segmentation, ``sum over distinct tokens t of (1 + ln c_t) w_t``,
is not additive (a token's term counts all its occurrences), so the universal encoder's beam
can miss the best segmentation. This search cannot: a depth-first walk over the lattice of a
part that keeps the ``top_n`` best complete segmentations and prunes a partial one when even
the best *additive* completion cannot beat the ``top_n``-th:

* a further occurrence of ``t`` adds ``w_t`` (first) or ``w_t ln((c + 1) / c) < w_t``, so
  with non-negative weights (idf weights are) the tf-idf gain of any completion is at most
  the sum of its tokens' weights, and
* the best such sum from every position is one backward pass (Viterbi): an admissible bound.

Completions are tried best bound first, so good segmentations are found early. The search is
exponential in the worst case: parts longer than ``max_length`` symbols are refused, and a
search that expands more than ``max_nodes`` nodes stops with :class:`SearchLimitError` -
unless ``milp=True`` (the default), which then solves the part as an integer program instead
(:func:`milp_part_nbest`, HiGHS through ``scipy.optimize.milp``). A document's top-n is the
exact k-best of sums over its parts' lists.

Scores are compared within a relative ``1e-12``: segmentations whose scores differ by less
count as ties (for a part solved by the integer program: within HiGHS's absolute optimality
gap, ``1e-6``), and at the ``top_n``-th place a tie may be reported instead of another (one
with fewer tokens is not preferred there; above it, it is).

>>> from ubpe.vocabulary import Vocabulary
>>> vocab = Vocabulary.from_merges(2, [0, 2], [1, 0], documents=[1, 1], n_docs=2)
>>> ExactTfidf(vocab).encode_parts([np.array([0, 1, 0, 1, 0], np.int32)], top_n=2)
[([2, 3], 0.8109302162163288), ([2, 2, 0], 0.686512104608772)]
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence

import numpy as np

from ubpe_native._radix import RadixTree
from ubpe_native._sampling import SegmentLattice

from ..errors import InvalidParameterError, UBPEError
from ..vocabulary import Vocabulary
from ._base import Encoding, flatten_parts
from .paths import _PathEncoder
from .tfidf import best_sums

DEFAULT_MAX_LENGTH = 64
DEFAULT_MAX_NODES = 2_000_000
RELATIVE_SLACK = 1e-12


class SearchLimitError(UBPEError, RuntimeError):
    """The exact search gave up: a part too long, or more nodes than allowed."""


def tfidf_score(tokens: Sequence[int], weights: np.ndarray) -> float:
    """ubpe's score of one part's tokens: ``sum over distinct t of (1 + ln count) * w_t``."""
    counts: dict[int, int] = {}
    for t in tokens:
        counts[t] = counts.get(t, 0) + 1
    return float(sum((1.0 + math.log(c)) * weights[t] for t, c in sorted(counts.items())))


class ExactTfidf(_PathEncoder):
    """The exact ``top_n`` segmentations by tf-idf score (see the module docstring); ties
    are reported in the order found. The same lookup as ``tfidf`` (a piece shared by several
    tokens stands for the one of highest id)."""

    name = "tfidf_exact"
    supports_nbest = True

    def __init__(self, vocabulary: Vocabulary, *, max_length: int = DEFAULT_MAX_LENGTH,
                 max_nodes: int = DEFAULT_MAX_NODES, milp: bool = True):
        super().__init__(vocabulary)
        self.weights = np.concatenate([np.zeros(vocabulary.n_base), np.asarray(vocabulary.weights, np.float64)])
        if (self.weights < 0).any() or not np.isfinite(self.weights).all():
            raise InvalidParameterError("the exact tf-idf search needs finite non-negative weights")
        self.max_length = int(max_length)
        self.max_nodes = int(max_nodes)
        self.milp = bool(milp)
        self.milp_parts = 0  # parts solved by the integer program in the last call
        self._tree = RadixTree(vocabulary.n_base, vocabulary.piece_offsets, vocabulary.piece_symbols)
        self.nodes = 0  # nodes expanded by the last call

    def encode(self, parts: Sequence[np.ndarray], top_n: int = 1) -> list[Encoding]:
        return self.encode_parts(parts, top_n)

    def encode_parts(self, parts: Sequence[np.ndarray], top_n: int = 1) -> list[Encoding]:
        """The document's exact ``top_n`` ``[(tokens, score)]``, best first."""
        return [(tokens.tolist(), score) for tokens, score in self._paths(*flatten_parts(parts, self.vocabulary.n_base), top_n)]

    def _paths(self, symbols: np.ndarray, bounds: np.ndarray, top_n: int):
        self.nodes = self.milp_parts = 0
        lists = [self.part_nbest(symbols[a:b], top_n) for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist())]
        return [(np.asarray(tokens, dtype=np.int64), score) for tokens, score in best_sums(lists, top_n)]

    def part_nbest(self, part: np.ndarray, top_n: int) -> list[Encoding]:
        """One part's exact ``top_n``, best first (higher score, then fewer tokens)."""
        n = len(part)
        if n > self.max_length:
            raise SearchLimitError(f"a part of {n} symbols is longer than max_length={self.max_length}")
        if n == 0:
            return [([], 0.0)]
        edges = SegmentLattice(self._tree, part, np.array([0, n])).edges()
        try:
            return self._branch_and_bound(n, edges, top_n)
        except SearchLimitError:
            if not self.milp:
                raise
        self.milp_parts += 1
        return milp_part_nbest(n, edges, self.weights, top_n)

    def _branch_and_bound(self, n: int, edges, top_n: int) -> list[Encoding]:
        first, lengths, tokens = (a.tolist() for a in edges)
        w = self.weights
        budget = self.nodes + self.max_nodes
        bound = [0.0] * (n + 1)  # the best additive sum of weights from each position
        for p in range(n - 1, -1, -1):
            bound[p] = max(w[tokens[e]] + bound[p + lengths[e]] for e in range(first[p], first[p + 1]))
        # at each position, the edges in order of their best completion
        order = [sorted(range(first[p], first[p + 1]), key=lambda e: -(w[tokens[e]] + bound[p + lengths[e]]))
                 for p in range(n)]
        kept: list[tuple[float, int, int, list[int]]] = []  # min-heap (score, -length, serial, tokens)
        counts: dict[int, int] = {}
        path: list[int] = []
        serial = 0

        def threshold() -> float:
            if len(kept) < top_n:
                return -math.inf
            worst = kept[0][0]
            return worst + RELATIVE_SLACK * max(1.0, abs(worst))

        def visit(p: int, score: float) -> None:
            nonlocal serial
            self.nodes += 1
            if self.nodes > budget:
                raise SearchLimitError(f"more than max_nodes={self.max_nodes} nodes expanded")
            if p == n:
                entry = (tfidf_score(path, w), -len(path), -serial, list(path))
                serial += 1
                if len(kept) < top_n:
                    heapq.heappush(kept, entry)
                elif entry[:2] > kept[0][:2]:
                    heapq.heapreplace(kept, entry)
                return
            for e in order[p]:
                t = tokens[e]
                c = counts.get(t, 0)
                gain = w[t] if c == 0 else w[t] * math.log((c + 1) / c)
                if score + gain + bound[p + lengths[e]] <= threshold():
                    continue  # cannot beat the top_n-th (later edges may: gains differ)
                counts[t] = c + 1
                path.append(t)
                visit(p + lengths[e], score + gain)
                path.pop()
                counts[t] = c

        visit(0, 0.0)
        return [(tokens_, score) for score, _, _, tokens_ in sorted(kept, reverse=True)]


def milp_part_nbest(n: int, edges, weights: np.ndarray, top_n: int) -> list[Encoding]:
    """One part's exact ``top_n`` by tf-idf as integer programs (HiGHS, no optimality gap).

    A 0/1 variable per lattice edge with flow constraints makes a path; per token ``t`` the
    variables ``y_t1, y_t2, ...`` in ``[0, 1]`` with ``sum_k y_tk = count of t`` carry the
    objective ``w_t (y_t1 + ln(2/1) y_t2 + ln(3/2) y_t3 + ...)``: the increments decrease, so
    an optimum fills them in order and the objective is the tf-idf score. Each next solution
    excludes the paths found so far (one "not all of these edges" cut each).
    """
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import coo_matrix

    first, lengths, tokens = (np.asarray(a) for a in edges)
    n_edges = len(tokens)
    starts = np.repeat(np.arange(n), np.diff(first))
    ends = starts + lengths
    distinct, token_of_edge = np.unique(tokens, return_inverse=True)
    uses = np.bincount(token_of_edge, minlength=len(distinct))    # most occurrences possible
    y_token = np.repeat(np.arange(len(distinct)), uses)            # y variables, token by token
    y_rank = np.arange(len(y_token)) - np.repeat(np.cumsum(uses) - uses, uses) + 1
    increments = np.where(y_rank == 1, 1.0, np.log(y_rank / np.maximum(y_rank - 1, 1)))
    c = np.concatenate([np.zeros(n_edges), -weights[distinct][y_token] * increments])
    n_vars = n_edges + len(y_token)
    edge_ids = np.arange(n_edges)
    # flow: out of p minus into p is 1 at the start, -1 at the end, 0 between
    flow = coo_matrix((np.concatenate([np.ones(n_edges), -np.ones(n_edges)]),
                       (np.concatenate([starts, ends]), np.concatenate([edge_ids, edge_ids]))),
                      shape=(n + 1, n_vars))
    supply = np.zeros(n + 1)
    supply[0], supply[n] = 1.0, -1.0
    counting = coo_matrix((np.concatenate([np.ones(len(y_token)), -np.ones(n_edges)]),
                           (np.concatenate([y_token, token_of_edge]),
                            np.concatenate([n_edges + np.arange(len(y_token)), edge_ids]))),
                          shape=(len(distinct), n_vars))
    constraints = [LinearConstraint(flow, supply, supply), LinearConstraint(counting, 0.0, 0.0)]
    integrality = np.concatenate([np.ones(n_edges), np.zeros(len(y_token))])
    found: list[Encoding] = []
    while len(found) < top_n:
        result = milp(c, integrality=integrality, bounds=Bounds(0.0, 1.0), constraints=constraints,
                      options={"mip_rel_gap": 0.0, "presolve": True})
        if result.status != 0 or result.x is None:
            if result.status == 2:   # infeasible: every path has been found
                break
            raise SearchLimitError(f"the integer program failed: {result.message}")
        chosen = np.flatnonzero(result.x[:n_edges] > 0.5)
        path = tokens[chosen[np.argsort(starts[chosen])]].tolist()
        found.append((path, tfidf_score(path, weights)))
        row = np.zeros(n_vars)
        row[chosen] = 1.0
        constraints.append(LinearConstraint(row[None, :], -np.inf, len(chosen) - 1))
    # the solver's order within 1e-9 of the objective is not ours: sort as the search does
    return sorted(found, key=lambda e: (-e[1], len(e[0])))
