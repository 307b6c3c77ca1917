# The radix tree over id sequences: what other kernels (the lattice) may cimport.
from libc.stdint cimport int32_t, int64_t, uint64_t
from libcpp.vector cimport vector

from ubpe_native._flat_map cimport FlatMap
from ubpe_native._typedefs cimport id_t


# One node of the tree, in one record (a step down reads one cache line, not three arrays):
# its edge label is label_symbols[label_start:label_start + label_length], value the token of
# the key ending there (-1: no key ends there).
# Its children, once frozen: sorted_children[first_child:first_child + n_children].
cdef struct TreeNode:
    int64_t label_start
    int32_t label_length
    id_t value
    int32_t first_child
    int32_t n_children


# A child in a node's sorted run: the first id of its label, and the child.
cdef struct ChildLink:
    id_t symbol
    int32_t node


# A transition of the unfolded automaton: the next state (0: none) and the token of the key
# that ends there (-1: none).
cdef struct Transition:
    int32_t next_state
    id_t token


cdef class RadixTree:
    cdef bint built  # __init__ ran (_checks.build_once)
    # node 0 is the root
    cdef vector[TreeNode] nodes
    cdef vector[id_t] label_symbols
    # (node, first symbol of the child's label) -> child node
    cdef FlatMap children
    # dense[node * n_base + id] = the same child (0: none), for nodes below dense_nodes
    cdef vector[int32_t] dense
    cdef Py_ssize_t dense_nodes
    # every (node, first id) key ever linked, and the sorted runs built from them (when frozen)
    cdef vector[uint64_t] links
    cdef vector[ChildLink] sorted_children
    cdef bint frozen
    # the automaton: automaton[state * n_base + id] (automaton_states = 0: none)
    cdef vector[Transition] automaton
    cdef Py_ssize_t automaton_states
    cdef Py_ssize_t automaton_entries
    cdef readonly Py_ssize_t n_keys
    cdef readonly Py_ssize_t max_length
    cdef readonly id_t max_token
    cdef readonly id_t n_base

    cdef int _insert(self, const id_t* key, Py_ssize_t length, id_t token) except -1 nogil
    cdef int _linked(self, int64_t node, id_t symbol, int64_t child) except -1 nogil
    cdef int _freeze(self) except -1
    cdef int _unfold(self) except -1
    cdef void _count_key(self, Py_ssize_t length) noexcept nogil
    cdef int64_t _new_node(self, const id_t* label, Py_ssize_t length, id_t token) except -1 nogil
    cdef int64_t _new_label_node(self, int64_t start, Py_ssize_t length) except -1 nogil
    cdef id_t _get(self, const id_t* key, Py_ssize_t length) noexcept nogil
    cdef Py_ssize_t _prefix_matches(self, const id_t* sequence, Py_ssize_t length,
                                   int32_t* match_lengths, id_t* match_tokens) noexcept nogil
