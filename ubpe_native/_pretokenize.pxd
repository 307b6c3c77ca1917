# Pre-tokenization of UTF-8 text by the preset split patterns (see _pretokenize.pyx).
from libc.stdint cimport int64_t, uint8_t, uint16_t, uint32_t
from libcpp.vector cimport vector

# One entry per code point of the table that ubpe.text.patterns.code_point_classes builds.
ctypedef uint16_t class_t

# Pattern ids, as in ubpe.text.patterns.NATIVE_PATTERNS.
cdef enum:
    PATTERN_GPT2 = 1
    PATTERN_CL100K = 2
    PATTERN_LLAMA3 = 3
    PATTERN_O200K = 4
    PATTERN_WORDS = 5  # ubpe.splitting.WORDS (not a byte-level preset: it can leave gaps)

# Class bits of the table that other kernels read (ubpe.text.patterns.CLASS_BITS).
cdef enum:
    CLASS_NUMBER = 2  # \p{N}

cdef check_split_arguments(Py_ssize_t n_classes, int pattern)

cdef int check_utf8(const uint8_t[::1] data) except -1

# ``bounds`` must have room for ``n + 1`` offsets (reserve it with the GIL). -1 with the
# exception set when a compiled pattern's match is refused or interrupted (see _regex.pyx).
cdef int split_pieces(const uint8_t* s, Py_ssize_t n, const class_t* classes, int pattern,
                      vector[int64_t]& bounds) except -1 nogil

# End (a byte offset) of the piece of ``s[:n]`` that starts at byte ``i`` (valid UTF-8); -1
# with the exception set as for ``split_pieces``.
cdef Py_ssize_t piece_end(const uint8_t* s, Py_ssize_t n, Py_ssize_t i, const class_t* classes,
                          int pattern) except -1 nogil


# Documents back to back (encode_batch kernels): the byte offsets of documents given by their
# lengths in code points, checked; whether a document holds a code point a table flags; one
# document's pieces (reserves what it needs: MemoryError through ``except -1``).
cdef object document_offsets(const uint8_t[::1] data, const int64_t[::1] char_lengths)

cdef object utf8_documents(const uint8_t[::1] data, object char_lengths)

cdef object document_starts(const uint8_t[::1] data, object char_lengths, Py_ssize_t n_classes,
                            int pattern)

cdef object document_flags(object values, Py_ssize_t n_docs, str name)

cdef object flag_table(object values)

cdef bint holds_flagged(const uint8_t* s, Py_ssize_t n, const uint8_t* table) noexcept nogil

cdef int split_document(const uint8_t* s, Py_ssize_t n, const class_t* classes, int pattern,
                        bint single_digits, vector[int64_t]& bounds,
                        vector[int64_t]& scratch) except -1 nogil


cdef inline uint32_t decode_utf8(const uint8_t* s, Py_ssize_t i, Py_ssize_t* width) noexcept nogil:
    """The code point at byte ``i`` of valid UTF-8 (checked by ``check_utf8``) and its width."""
    cdef uint8_t b = s[i]
    if b < 0x80:
        width[0] = 1
        return b
    if b < 0xE0:
        width[0] = 2
        return ((b & 0x1F) << 6) | (s[i + 1] & 0x3F)
    if b < 0xF0:
        width[0] = 3
        return ((b & 0x0F) << 12) | ((s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F)
    width[0] = 4
    return (((b & 0x07) << 18) | ((s[i + 1] & 0x3F) << 12) | ((s[i + 2] & 0x3F) << 6)
            | (s[i + 3] & 0x3F))
