# Sentencepiece's BPE model and normalizer, declared for the pipeline that runs them over many
# texts without the GIL (_spm_pipeline).
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libcpp.string cimport string
from libcpp.unordered_map cimport unordered_map
from libcpp.vector cimport vector

from ubpe_native._flat_map cimport FlatMap
from ubpe_native._merge_core cimport MergeScratch, ScratchPool
from ubpe_native._piece_index cimport IndexMemory, PieceIndex
from ubpe_native._typedefs cimport id_t


cdef class BpeScratch(MergeScratch):
    # what `SpmBPE.encode_into` needs from text to text beside the merge core's scratch (the
    # word being merged, the unit cutter's node starts, the word cache with split_words):
    # allocated once per batch, not per text
    cdef vector[id_t] text_token, stack  # the text's units; _emit's pieces to split
    cdef vector[uint8_t] text_frozen
    cdef vector[Py_ssize_t] word_start
    cdef vector[uint64_t] prefix_hash, powers  # by_text: the word's prefixes' piece_hash; HASH_BASE ** k


cdef class SpmBPE:
    cdef bint built  # __init__ ran (_checks.build_once)
    cdef readonly id_t n_ids
    cdef readonly id_t unk_id
    cdef readonly bint collapse_unk
    cdef readonly bint split_words
    cdef readonly bint hf_unknowns
    cdef FlatMap pairs  # pair_key -> (rank << 32 | result) + 1
    cdef FlatMap trie  # node << 8 | byte -> child node, over the units' bytes
    cdef vector[int64_t] node_unit  # trie node -> unit index, or NOT_A_UNIT
    cdef int64_t ascii_unit[128]  # an ASCII byte's unit without a trie walk, or NOT_A_UNIT / WALK
    cdef vector[id_t] unit_id
    cdef vector[uint8_t] unit_frozen
    cdef bint has_frozen
    cdef vector[uint8_t] unused
    cdef bint has_unused
    cdef vector[int64_t] expand_offsets
    cdef vector[id_t] expand_ids
    cdef id_t byte_fallback[256]
    cdef bint has_byte_fallback
    cdef ScratchPool scratches  # for `encode`: a scratch per call, kept (its word cache too) from call to call
    # by_text (a .model file's): no rules; a pair merges into the piece its text is
    cdef readonly bint by_text
    cdef IndexMemory index_memory
    cdef PieceIndex pieces  # the pieces by text (pointers into index_memory and the views below)
    cdef const uint8_t[::1] piece_blob  # the pieces as given (held: their buffers cannot move)
    cdef const int64_t[::1] piece_offsets
    cdef const int32_t[::1] piece_types
    cdef const float[::1] piece_scores
    cdef int64_t longest_piece  # in bytes

    cdef int _unknown(self, const uint8_t* data, int64_t start, int64_t end, vector[id_t]& out) except -1 nogil
    cdef bint _all_bytes(self, const uint8_t* data, int64_t start, int64_t end) noexcept nogil
    cdef int _emit(self, id_t token, BpeScratch s, vector[id_t]& out) except -1 nogil
    cdef Py_ssize_t _units(self, const uint8_t* data, Py_ssize_t size, BpeScratch s) except -1 nogil
    cdef int _merge_word(self, const uint8_t* data, Py_ssize_t first, Py_ssize_t stop, BpeScratch s,
                         vector[id_t]& out) except -1 nogil
    cdef int _take_pieces(self, id_t n_ids, const uint8_t[::1] blob, const int64_t[::1] offsets,
                          const int32_t[::1] types, const float[::1] scores) except -1
    cdef int _propose_by_text(self, const uint8_t* data, Py_ssize_t first, Py_ssize_t stop, BpeScratch s,
                              int32_t left, int32_t right) except -1 nogil
    cdef int _merge_by_text(self, const uint8_t* data, Py_ssize_t first, Py_ssize_t stop,
                            BpeScratch s) except -1 nogil
    cdef int encode_into(self, const uint8_t* data, Py_ssize_t size, vector[id_t]& out,
                         BpeScratch s) except -1 nogil


cdef class SpmNormalizer:
    cdef bint built  # __init__ ran (_checks.build_once)
    cdef vector[uint32_t] units
    cdef string replacements
    cdef readonly bint add_dummy_prefix, remove_extra_whitespaces, escape_whitespaces
    cdef readonly bint treat_whitespace_as_suffix
    cdef FlatMap protected  # node << 8 | byte -> child node
    cdef vector[id_t] protected_id  # node -> id of the piece ending there, or -1
    cdef bint plain[128]  # ASCII bytes no rule and no protected piece starts with (not space)
    cdef bint plain_space  # no rule and no protected piece starts with a space

    cdef bint _rule_starts_with(self, uint8_t byte) noexcept nogil
    cdef int64_t _longest_rule(self, const uint8_t* data, Py_ssize_t size, Py_ssize_t* used) noexcept nogil
    cdef Py_ssize_t protected_at(self, const uint8_t* data, Py_ssize_t size, id_t* token) noexcept nogil
    cdef Py_ssize_t _prefix(self, const uint8_t* data, Py_ssize_t size, const char** piece,
                            Py_ssize_t* length) noexcept nogil
    cdef int normalize_into(self, const uint8_t* data, Py_ssize_t size, string& out) except -1 nogil
