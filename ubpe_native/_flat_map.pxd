# Declarations of flat_map.h, the hash map shared by the kernels.
from libc.stdint cimport int64_t, uint64_t


cdef extern from "flat_map.h" namespace "ubpe" nogil:
    cdef cppclass FlatMap:
        FlatMap()
        FlatMap(size_t expected)
        int64_t* slot(uint64_t key)
        int64_t get(uint64_t key, int64_t missing)
        size_t size()
