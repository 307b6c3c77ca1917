# The lattice kernel's workspace, declared for _lattice_cache (the parts' cache and
# ``Lattice``), whose entries are the workspace's outputs: see _lattice.pyx.
from libc.stdint cimport int32_t, int64_t
from libcpp.vector cimport vector

from ubpe_native._radix cimport RadixTree
from ubpe_native._typedefs cimport id_t


cdef struct Candidate:
    double score        # what the reference compares: high + low
    double high         # the compensated sum's state
    double low
    int64_t tail        # node of the tail this candidate extends
    int32_t length      # tokens in the candidate
    int32_t count       # occurrences of token in the candidate, 0 for a weightless token
    id_t token


# Buffers of one call, reused from part to part (one per call: calls may run in parallel
# threads once the GIL is released).
cdef class _Workspace:
    # tail nodes: position p keeps its tails at nodes p * top_n .. p * top_n + kept[p] - 1
    cdef vector[id_t] node_token
    cdef vector[int64_t] node_next
    cdef vector[double] node_score
    cdef vector[double] node_high
    cdef vector[double] node_low
    cdef vector[int32_t] node_length
    cdef vector[int32_t] node_counts    # root of the node's count trie
    cdef vector[int32_t] kept
    # count tries: node k has children trie[16k .. 16k + 15]; at the last level they are counts
    cdef vector[int32_t] trie
    cdef vector[int32_t] compacted
    cdef vector[int32_t] renumber
    cdef int trie_depth                 # levels of the count tries
    cdef Py_ssize_t compaction_threshold
    cdef Py_ssize_t min_compaction
    # the exact sums' scratch space
    cdef vector[int32_t] occurrences
    cdef vector[id_t] walk
    cdef vector[id_t] key_order
    # outputs
    cdef vector[id_t] out_tokens
    cdef vector[int64_t] out_token_offsets
    cdef vector[int64_t] out_candidate_offsets
    cdef vector[double] out_scores
    # the entry (a run of candidates in the outputs) of each part of the call
    cdef vector[int64_t] part_entry
    # a call's scratch space: prefix matches, the heap of one position, position 0's order
    cdef vector[int32_t] match_lengths
    cdef vector[id_t] match_tokens
    cdef vector[Candidate] heap
    cdef vector[int64_t] order

    cdef int32_t _new_trie_node(self, int32_t copy_of, bint last_level) except -1 nogil
    cdef int32_t count_of(self, int32_t root, int32_t key) noexcept nogil
    cdef int32_t with_count(self, int32_t root, int32_t key, int32_t count) except -1 nogil
    cdef int32_t _compact_from(self, int32_t node, int level) noexcept nogil
    cdef int compact(self, Py_ssize_t first, Py_ssize_t last, Py_ssize_t top_n) except -1 nogil
    cdef void exact_score(self, int64_t tail, id_t token, const double* weights,
                          Candidate* candidate) noexcept nogil
    # room for a part of ``longest`` symbols (MemoryError here, with the GIL)
    cdef int reserve(self, Py_ssize_t longest, Py_ssize_t top_n) except -1
    # one part's top_n candidates, appended to the outputs
    cdef int encode_part(self, RadixTree tree, const double* weights, id_t n_base,
                         const id_t* part, Py_ssize_t n, Py_ssize_t top_n, bint exact,
                         int32_t* match_lengths, id_t* match_tokens,
                         Candidate* heap, int64_t* order) except -1 nogil
    cdef int _sort_by_reported_scores(self, Py_ssize_t size, int64_t* order) except -1 nogil
