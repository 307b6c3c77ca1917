# distutils: language = c++
"""ubpe's tf-idf score of an encoding: the one implementation every encoder's score goes through.

Per part (tokens never cross a part), the score is the sum over its distinct tokens of
``(1 + ln count) * weight`` (base ids weigh 0). The sum is CPython's compensated ``sum``
(Neumaier) over the distinct tokens in the order of their first occurrence from the right,
which is the order of ubpe 0.3.0's universal encoder: its ``Counter`` is filled as a path
grows from the end of the part. A document's score is its parts' scores added left to right,
plainly, as the reference adds them for its best encoding.

The kernels that report scores (``_lattice``, ``_classic``) cimport the same per-part sum
from ``_score.pxd``; :class:`ubpe.encoders.TfidfScorer` calls :func:`score_tokens`.

>>> import numpy as np
>>> weights = np.array([0.0, 0.0, 0.5, 0.25])
>>> score_tokens(weights, np.array([2, 0, 2, 3], np.int32), np.array([0, 4]))   # one part
1.0965735902799727
>>> part_scores(weights, np.array([2, 0, 2, 3], np.int32), np.array([0, 2, 4])).tolist()
[0.5, 0.75]
"""

from libc.stdint cimport int32_t, int64_t
from libcpp.vector cimport vector

from ubpe_native._numpy import np

from ubpe_native._checks cimport as_array, check_ids, check_offsets
from ubpe_native._score cimport part_score
from ubpe_native._typedefs cimport id_t


def part_scores(weights, tokens, token_offsets):
    """The score of every part ``tokens[token_offsets[k]:token_offsets[k + 1]]``, as float64.

    ``weights[t]`` is id ``t``'s weight (0 for base ids); ``tokens`` are int32 ids below
    ``len(weights)``; ``token_offsets`` int64 offsets (see the module docstring).
    """
    cdef const double[::1] weight_view = as_array(weights, np.float64, "weights")
    cdef const id_t[::1] token_view = as_array(tokens, np.int32, "tokens")
    cdef const int64_t[::1] offset_view = as_array(token_offsets, np.int64, "token_offsets")
    check_offsets(offset_view, token_view.shape[0], "token_offsets")
    check_ids(token_view, weight_view.shape[0], "tokens")
    cdef Py_ssize_t n_parts = offset_view.shape[0] - 1, k
    out = np.zeros(n_parts, dtype=np.float64)
    cdef double[::1] out_view = out
    cdef vector[int32_t] counts = vector[int32_t](weight_view.shape[0], 0)
    cdef vector[id_t] key_order
    cdef Py_ssize_t longest = 0
    for k in range(n_parts):
        longest = max(longest, offset_view[k + 1] - offset_view[k])
    key_order.reserve(longest)  # part_score must not allocate
    # with no tokens nothing is read through these
    cdef const double* weight_data = &weight_view[0] if weight_view.shape[0] else NULL
    cdef const id_t* token_data = &token_view[0] if token_view.shape[0] else NULL
    with nogil:
        for k in range(n_parts):
            out_view[k] = part_score(token_data + offset_view[k], offset_view[k + 1] - offset_view[k],
                                     weight_data, counts.data(), key_order)
    return out


def score_tokens(weights, tokens, token_offsets):
    """A document's score: its :func:`part_scores` added left to right (a float)."""
    cdef const double[::1] scores = part_scores(weights, tokens, token_offsets)
    cdef double total = 0.0
    cdef Py_ssize_t k
    for k in range(scores.shape[0]):
        total += scores[k]
    return total
