# ubpe's tf-idf score of one part, shared by _score.score_tokens and the kernels that report
# scores (_lattice, _classic): one summation order everywhere, so equal tokens score equally.
from libc.math cimport log
from libc.stdint cimport int32_t
from libcpp.vector cimport vector

from ubpe_native._sums cimport add_term, sum_value
from ubpe_native._typedefs cimport id_t


cdef inline void add_part_terms(const id_t* tokens, Py_ssize_t n, const double* weights,
                                int32_t* counts, vector[id_t]& key_order,
                                double* high, double* low) noexcept nogil:
    """Add the part ``tokens[:n]``'s terms ``(1 + ln count) * weight`` to the compensated sum
    ``(high, low)``, one per distinct token of non-zero weight, in the order of their *first
    occurrence from the right* (the order of ubpe 0.3.0's ``Counter`` as its universal encoder
    grows a path from the end). ``counts`` (one zero per id) is left zeroed again.
    ``key_order`` must have room for ``n`` ids (callers reserve it with the GIL): this
    function is ``noexcept`` and must not allocate."""
    cdef Py_ssize_t i
    cdef id_t t
    key_order.clear()
    for i in range(n - 1, -1, -1):
        t = tokens[i]
        if weights[t] != 0.0:  # a 0.0 term leaves the sum as it is
            if counts[t] == 0:
                key_order.push_back(t)
            counts[t] += 1
    for i in range(<Py_ssize_t>key_order.size()):
        t = key_order[i]
        add_term(high, low, (1.0 + log(<double>counts[t])) * weights[t])
        counts[t] = 0


cdef inline double part_score(const id_t* tokens, Py_ssize_t n, const double* weights,
                              int32_t* counts, vector[id_t]& key_order) noexcept nogil:
    """The score of the part ``tokens[:n]`` (see ``add_part_terms``)."""
    cdef double high = 0.0, low = 0.0
    add_part_terms(tokens, n, weights, counts, key_order, &high, &low)
    return sum_value(high, low)
