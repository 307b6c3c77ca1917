# The unigram lattice kernel, declared for the kernels that call it without the GIL (_spm).
from libc.stdint cimport int32_t, int64_t, uint8_t
from libcpp.vector cimport vector

from ubpe_native._typedefs cimport id_t


cdef class UnigramLattice:
    cdef bint built  # __init__ ran (_checks.build_once)
    # the pieces' bytes as a double-array trie (see _build_trie); entry: piece index or -1
    cdef vector[int32_t] da_base, da_check, da_entry
    cdef vector[id_t] ids
    cdef vector[double] scores  # float32 values unless hf_unknowns' files give doubles
    cdef vector[uint8_t] user_defined
    cdef readonly id_t unk_id
    cdef readonly id_t n_ids  # 1 + the largest id it can write
    cdef readonly double unk_score
    cdef id_t byte_fallback[256]
    cdef bint has_byte_fallback
    cdef readonly bint double_sums  # llama.cpp's and HF's sums (see the module docstring)
    cdef readonly bint hf_unknowns  # HF's Unigram::tokenize for unknown runs (module docstring)

    cdef void _build_trie(self, const uint8_t[::1] blob, const int64_t[::1] offsets,
                          const id_t[::1] ids) except *
    cdef Py_ssize_t _grow(self, vector[int32_t]& free_up, Py_ssize_t size) except -1
    cdef int _encode(self, const uint8_t* data, Py_ssize_t size, vector[id_t]& out) except -1 nogil
    cdef id_t _piece_id(self, const uint8_t* data, Py_ssize_t size) noexcept nogil
    cdef int _write_unknown(self, const uint8_t* data, Py_ssize_t start, Py_ssize_t end,
                            vector[id_t]& out) except -1 nogil
    cdef int _encode_with(self, const uint8_t* data, Py_ssize_t size, vector[id_t]& out,
                          vector[double]& best_score, vector[int64_t]& best_start,
                          vector[id_t]& best_id, vector[int64_t]& path) except -1 nogil
