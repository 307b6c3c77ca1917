# The doubly linked chain of nodes that the merge loops of _ranked and _merges walk: node i
# holds a token; merging a pair keeps the left node, drops the right one from the chain.
from libc.stdint cimport int32_t
from libcpp.vector cimport vector

from ubpe_native._typedefs cimport id_t


cdef inline int chain_init(vector[int32_t]& next_node, vector[int32_t]& prev_node,
                           Py_ssize_t n) except -1 nogil:
    """Nodes ``0..n-1`` in a row; -1 ends the chain on both sides (MemoryError if the two
    vectors cannot grow to ``n``)."""
    cdef Py_ssize_t i
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
