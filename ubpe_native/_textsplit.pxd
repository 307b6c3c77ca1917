# What other kernels use of _textsplit: the splitter of str documents into parts.
from libc.stdint cimport int64_t, uint8_t
from libcpp.vector cimport vector

from ubpe_native._pretokenize cimport class_t
from ubpe_native._typedefs cimport id_t


cdef struct Text:
    int kind
    const void* data
    Py_ssize_t length


cdef class TextSplitter:
    cdef bint built  # __init__ ran (_checks.build_once)
    cdef readonly object table
    cdef const id_t[::1] table_view
    cdef const class_t[::1] classes
    cdef readonly int pattern
    cdef readonly id_t max_id
    cdef const uint8_t[::1] kinds  # per alphabet id: BREAK_SYMBOL | STOP_SYMBOL bits (empty: none)
    cdef bint plain  # the scanner's pieces alone: no break or stop symbols, a pattern

    cdef bint split_into(self, tuple docs, vector[id_t]& ids, vector[int64_t]& part_offsets,
                         vector[uint8_t]& separator, vector[int64_t]& doc_part_offsets,
                         vector[uint8_t]& utf8, vector[int64_t]& bounds) except -1
    cdef int _split_text(self, const Text& text, vector[id_t]& ids, vector[int64_t]& part_offsets,
                         vector[uint8_t]& separator, vector[uint8_t]& utf8, vector[int64_t]& bounds) except -1 nogil
    cdef int _split_run(self, const id_t* ids, const uint8_t* utf8, Py_ssize_t first, Py_ssize_t last,
                        Py_ssize_t n_bytes, Py_ssize_t start, vector[int64_t]& part_offsets,
                        vector[uint8_t]& separator, vector[int64_t]& bounds) except -1 nogil
    cdef void _push_piece(self, const id_t* ids, Py_ssize_t first, Py_ssize_t last, bint gap, Py_ssize_t start,
                          vector[int64_t]& part_offsets, vector[uint8_t]& separator) noexcept nogil
