# Distinct runs of ids by content: the hash-and-probe lookup that _fit (a corpus' distinct
# parts) and _parts (a counter's distinct parts) share.
from libc.stdint cimport int64_t, uint32_t, uint64_t

from ubpe_native._flat_map cimport FlatMap
from ubpe_native._typedefs cimport id_t


cdef inline uint64_t run_hash(const id_t* run, Py_ssize_t length) noexcept nogil:
    """FNV-1a over the ids, then the length."""
    cdef uint64_t key = 1469598103934665603ULL
    cdef Py_ssize_t i
    for i in range(length):
        key = (key ^ <uint64_t>(<uint32_t>run[i])) * 1099511628211ULL
    return (key ^ <uint64_t>length) * 1099511628211ULL


cdef inline int64_t* run_slot(FlatMap& index, const id_t* run, Py_ssize_t length,
                              const id_t* stored, const int64_t* starts,
                              const int64_t* ends) except NULL nogil:
    """The slot of ``index`` (content hash -> run number + 1) for the run ``run[:length]``,
    where run ``r`` is stored as ``stored[starts[r]:ends[r]]``. The slot holds the number
    + 1 of the equal run, or 0 for a new run: the caller stores the new number + 1 there
    (the pointer stays valid until ``index``'s next insertion). Collisions probe the next
    key. May grow ``index``: MemoryError."""
    cdef uint64_t key = run_hash(run, length)
    cdef int64_t* slot
    cdef int64_t r, begin
    cdef Py_ssize_t i
    while True:
        if key == ~(<uint64_t>0):  # the map's empty marker
            key = 0
        slot = index.slot(key)
        if slot[0] == 0:
            return slot
        r = slot[0] - 1
        begin = starts[r]
        if ends[r] - begin == length:
            i = 0
            while i < length and stored[begin + i] == run[i]:
                i += 1
            if i == length:
                return slot
        key += 1
