# The doubly linked chain of nodes that every BPE merge loop walks (_merge_core's, and
# _classic's): node i holds a token; merging a pair keeps the left node, drops the right one
# from the chain. Node indices are int32 (half the memory of Py_ssize_t in the loops' hot
# vectors, and a node fits beside a 32-bit rank in one 64-bit heap key), so a word must hold
# fewer than 2**31 units: `check_chain_length` guards every chain before it is built.
from libc.stdint cimport int32_t
from libcpp.vector cimport vector

from ubpe_native._typedefs cimport id_t

cdef enum:
    # the most nodes a chain may hold: indices 0..2**31 - 2 and -1 ("none") are int32
    MAX_CHAIN_LENGTH = 0x7FFFFFFF


cdef inline int check_chain_length(Py_ssize_t n) except -1 nogil:
    """ValueError for a word of ``n >= 2**31`` units: its node indices would not fit int32."""
    if n > MAX_CHAIN_LENGTH:
        with gil:
            raise ValueError(f"a word of {n} units is too long to merge: at most {MAX_CHAIN_LENGTH} "
                             "units (node indices are 32-bit)")
    return 0


cdef inline int chain_init(vector[int32_t]& next_node, vector[int32_t]& prev_node,
                           Py_ssize_t n) except -1 nogil:
    """Nodes ``0..n-1`` in a row; -1 ends the chain on both sides (ValueError for a word too
    long for int32 indices, MemoryError if the two vectors cannot grow to ``n``)."""
    cdef Py_ssize_t i
    check_chain_length(n)
    next_node.resize(n)
    prev_node.resize(n)
    for i in range(n):
        next_node[i] = <int32_t>(i + 1) if i + 1 < n else -1
        prev_node[i] = <int32_t>(i - 1)
    return 0


cdef inline int32_t chain_merge(vector[id_t]& token_at, vector[int32_t]& next_node,
                                vector[int32_t]& prev_node, int32_t left, int32_t right,
                                id_t token, id_t gone) noexcept nogil:
    """Node ``left`` takes ``token``, node ``right`` (its successor) gets ``gone`` and leaves
    the chain; returns the node now after ``left`` (-1 at the end)."""
    cdef int32_t after = next_node[right]
    token_at[left] = token
    token_at[right] = gone
    next_node[left] = after
    if after >= 0:
        prev_node[after] = left
    return after
