# What other kernels use of _combine: the reference's walk over parts and the builders of a
# batch's encodings as Python lists or flat arrays (``_lattice.Lattice`` runs them straight
# after its parts; ``_merges`` and ``_spm_pipeline`` build their id lists with ``id_list``).
from libc.stdint cimport int64_t
from libcpp.vector cimport vector

from ubpe_native._typedefs cimport id_t


cdef struct Tail:
    int64_t candidate  # the candidate of this part
    int64_t rest  # the tail of the next part, -1 for the end
    double score
    int64_t length


# Candidates: candidate c is tokens[token_offsets[c]:token_offsets[c + 1]] scoring scores[c].
# Part p's candidates are candidate_offsets[e]:candidate_offsets[e + 1] where e is its entry,
# part_entry[p] (NULL: e = p).
cdef int walk_parts(const int64_t* candidate_offsets, const int64_t* part_entry, const int64_t* token_offsets,
                    const double* scores, int top_n, Py_ssize_t n_parts, vector[Tail]& tails,
                    vector[int64_t]& current) except -1 nogil

cdef list top1_lists(list ids, const id_t* tokens, const int64_t* token_offsets, const double* scores,
                     const int64_t* candidate_offsets, const int64_t* part_entry, const int64_t* doc_part_offsets,
                     Py_ssize_t n_docs)

cdef list nbest_lists(list ids, const id_t* tokens, const int64_t* token_offsets, const double* scores,
                      const int64_t* candidate_offsets, const int64_t* part_entry, const int64_t* doc_part_offsets,
                      Py_ssize_t n_docs, int top_n)

# The same encodings as (ids, token_offsets, scores, doc_offsets) arrays: no list is built.
cdef tuple top1_arrays(const id_t* tokens, const int64_t* token_offsets, const double* scores,
                       const int64_t* candidate_offsets, const int64_t* part_entry, const int64_t* doc_part_offsets,
                       Py_ssize_t n_docs)

cdef tuple nbest_arrays(const id_t* tokens, const int64_t* token_offsets, const double* scores,
                        const int64_t* candidate_offsets, const int64_t* part_entry, const int64_t* doc_part_offsets,
                        Py_ssize_t n_docs, int top_n)

# A list whose item t is the int t for every t < n (shared by all lists built here).
cdef list id_table(Py_ssize_t n)

# id_table for a call about to hand out n_out ids below limit: grown only as far as the ids
# handed out so far warrant (a process's first short encode makes a few ints, not the table).
cdef list id_table_for(Py_ssize_t limit, Py_ssize_t n_out)

# tokens[:n] as a new list of ints, those below len(ids) taken from ids = id_table(...).
cdef list id_list(list ids, const id_t* tokens, Py_ssize_t n)
