# distutils: language = c++
"""Combining the parts' candidate lists into a document's top-n (ubpe 0.3.0's walk).

The reference builds a document's ``top_n`` encodings from the last part back: the tails
start as ``[([], 0.0)]``; for each part it pairs its candidates with the tails, always taking
the current pair and then advancing in the list whose next element gives the better
``(score, -length)`` (ties: a new candidate). It is a heuristic, not an exact k-best.

Tails are stored once, as a chain (this part's candidate, then the next part's tail), so the
walk costs ``O(parts * top_n)`` and never copies token lists; the chains are spelled out at
the end.

>>> import numpy as np
>>> # two parts: part 0 has candidates 0 ([5], 1.0) and 1 ([1, 2], 0.5); part 1 has ([3], 0.0)
>>> walk(np.array([0, 2, 3]), np.array([0, 1, 3, 4]), np.array([5, 1, 2, 3], np.int32),
...      np.array([1.0, 0.5, 0.0]), 2)
([[5, 3], [1, 2, 3]], [1.0, 0.5])
"""

from libc.stdint cimport int32_t, int64_t
from libcpp.vector cimport vector

from ubpe_native._checks cimport check_offsets, check_top_n
from ubpe_native._typedefs cimport id_t


cdef struct Tail:
    int64_t candidate  # the candidate of this part
    int64_t rest  # the tail of the next part, -1 for the end
    double score
    int64_t length


def walk(const int64_t[::1] candidate_offsets not None, const int64_t[::1] token_offsets not None,
         const id_t[::1] tokens not None, const double[::1] scores not None, int top_n):
    """The reference's top-n of a document from its parts' candidates.

    Part ``p``'s candidates, best first, are ``candidate_offsets[p]:candidate_offsets[p+1]``;
    candidate ``j`` is ``tokens[token_offsets[j]:token_offsets[j+1]]`` scoring ``scores[j]``.
    Returns ``(token lists, scores)`` best first.
    """
    check_top_n(top_n)
    check_offsets(candidate_offsets, scores.shape[0], "candidate_offsets")
    check_offsets(token_offsets, tokens.shape[0], "token_offsets")
    if token_offsets.shape[0] != scores.shape[0] + 1:
        raise ValueError("token_offsets must have one entry per candidate and one more")
    cdef Py_ssize_t p
    for p in range(candidate_offsets.shape[0] - 1):
        if candidate_offsets[p + 1] == candidate_offsets[p]:
            raise ValueError(f"part {p} has no candidate")
    cdef vector[Tail] tails
    cdef vector[int64_t] current
    cdef Py_ssize_t n_parts = candidate_offsets.shape[0] - 1
    with nogil:
        _walk(candidate_offsets, token_offsets, scores, top_n, n_parts, tails, current)
    out_tokens, out_scores = [], []
    cdef int64_t node, k, j, t
    cdef vector[id_t] spelled  # one encoding, spelled in C, then one conversion to a list
    for k in range(<Py_ssize_t>current.size()):
        node = current[k]
        out_scores.append(tails[node].score if node >= 0 else 0.0)
        spelled.clear()
        with nogil:
            while node >= 0:
                j = tails[node].candidate
                for t in range(token_offsets[j], token_offsets[j + 1]):
                    spelled.push_back(tokens[t])
                node = tails[node].rest
        out_tokens.append(spelled)
    return out_tokens, out_scores


cdef inline double _score(vector[Tail]& tails, int64_t node) noexcept nogil:
    return tails[node].score if node >= 0 else 0.0


cdef inline int64_t _length(vector[Tail]& tails, int64_t node) noexcept nogil:
    return tails[node].length if node >= 0 else 0


cdef int _walk(const int64_t[::1] candidate_offsets, const int64_t[::1] token_offsets,
                const double[::1] scores, int top_n, Py_ssize_t n_parts,
                vector[Tail]& tails, vector[int64_t]& current) except -1 nogil:
    # the growing vectors raise MemoryError through ``except -1``
    cdef vector[int64_t] following
    cdef Py_ssize_t p
    cdef int64_t first, n_candidates, ci, ti, j, tail
    cdef double better_tail_score, better_candidate_score
    cdef int64_t better_tail_length, better_candidate_length
    cdef Tail node
    current.clear()
    current.push_back(-1)  # the empty tail ([], 0.0)
    for p in range(n_parts - 1, -1, -1):
        first = candidate_offsets[p]
        n_candidates = candidate_offsets[p + 1] - first
        following.clear()
        ci = 0
        ti = 0
        while ci < n_candidates and ti < <int64_t>current.size() and <int>following.size() < top_n:
            j = first + ci
            tail = current[ti]
            node.candidate = j
            node.rest = tail
            node.score = scores[j] + _score(tails, tail)  # the reference's order: candidate + tail
            node.length = (token_offsets[j + 1] - token_offsets[j]) + _length(tails, tail)
            tails.push_back(node)
            following.push_back(<int64_t>tails.size() - 1)
            if <int>following.size() == top_n or (ci == n_candidates - 1 and ti == <int64_t>current.size() - 1):
                break
            if ci == n_candidates - 1:
                ti += 1
            elif ti == <int64_t>current.size() - 1:
                ci += 1
            else:
                # (tail score + candidate score, -length) of advancing the tail vs the candidate
                better_tail_score = _score(tails, current[ti + 1]) + scores[j]
                better_tail_length = _length(tails, current[ti + 1]) + (token_offsets[j + 1] - token_offsets[j])
                better_candidate_score = _score(tails, tail) + scores[j + 1]
                better_candidate_length = _length(tails, tail) + (token_offsets[j + 2] - token_offsets[j + 1])
                if (better_tail_score > better_candidate_score or
                        (better_tail_score == better_candidate_score
                         and -better_tail_length > -better_candidate_length)):
                    ti += 1
                else:
                    ci += 1
        current.swap(following)
    return 0
