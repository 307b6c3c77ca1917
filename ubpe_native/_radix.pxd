# The radix tree over id sequences: what other kernels (the lattice) may cimport.
from libc.stdint cimport int32_t, int64_t
from libcpp.vector cimport vector

from ubpe_native._flat_map cimport FlatMap
from ubpe_native._typedefs cimport id_t


cdef class RadixTree:
    # node k: its edge label is label_symbols[label_start[k]:label_start[k] + label_length[k]],
    # value[k] the token of the key ending at k (-1: no key ends there); node 0 is the root
    cdef vector[int64_t] label_start
    cdef vector[int32_t] label_length
    cdef vector[id_t] value
    cdef vector[id_t] label_symbols
    # (node, first symbol of the child's label) -> child node
    cdef FlatMap children
    cdef readonly Py_ssize_t n_keys
    cdef readonly Py_ssize_t max_length
    cdef readonly id_t max_token
    cdef readonly id_t n_base

    cdef int _insert(self, const id_t* key, Py_ssize_t length, id_t token) except -1 nogil
    cdef void _count_key(self, Py_ssize_t length) noexcept nogil
    cdef int64_t _new_node(self, const id_t* label, Py_ssize_t length, id_t token) except -1 nogil
    cdef int64_t _new_label_node(self, int64_t start, Py_ssize_t length) except -1 nogil
    cdef id_t _get(self, const id_t* key, Py_ssize_t length) noexcept nogil
    cdef Py_ssize_t _prefix_matches(self, const id_t* sequence, Py_ssize_t length,
                                   int32_t* match_lengths, id_t* match_tokens) noexcept nogil
