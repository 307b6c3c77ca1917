# Declarations of flat_map.h, the hash map shared by the kernels, and its one key packing.
from libc.stdint cimport int64_t, uint32_t, uint64_t

from ubpe_native._typedefs cimport id_t


cdef extern from "flat_map.h" namespace "ubpe" nogil:
    cdef cppclass FlatMap:
        FlatMap()
        FlatMap(size_t expected) except +
        int64_t* slot(uint64_t key) except +  # may grow the table: MemoryError
        int64_t get(uint64_t key, int64_t missing)
        size_t size()


cdef inline uint64_t pack_key(int64_t high, id_t low) noexcept nogil:
    """One 64-bit map key from two numbers: ``high`` (a pair's left id, a tree node) in the
    upper 32 bits, the id ``low`` in the lower 32. Keys of non-negative inputs are never the
    map's reserved all-ones key."""
    return (<uint64_t>high << 32) | <uint64_t>(<uint32_t>low)
