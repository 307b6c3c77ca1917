# The unigram lattice kernel, declared for the kernels that call it without the GIL (_spm).
from libc.stdint cimport int32_t, uint8_t
from libcpp.vector cimport vector

from ubpe_native._flat_map cimport FlatMap
from ubpe_native._typedefs cimport id_t


cdef class UnigramLattice:
    cdef FlatMap children  # node << 8 | byte -> child node (trie of the pieces' bytes)
    cdef vector[int32_t] node_entry  # node -> piece index, or PREFIX_ONLY
    cdef vector[id_t] ids
    cdef vector[float] scores
    cdef vector[uint8_t] user_defined
    cdef readonly id_t unk_id
    cdef readonly float unk_score
    cdef id_t byte_fallback[256]
    cdef bint has_byte_fallback

    cdef void _encode(self, const uint8_t* data, Py_ssize_t size, vector[id_t]& out) noexcept nogil
