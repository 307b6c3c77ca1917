# Pre-tokenization of UTF-8 text by the preset split patterns (see _pretokenize.pyx).
from libc.stdint cimport int64_t, uint8_t, uint16_t
from libcpp.vector cimport vector

# One entry per code point of the table that ubpe.bytelevel.code_point_classes builds.
ctypedef uint16_t class_t

# Pattern ids, as in ubpe.bytelevel.NATIVE_PATTERNS.
cdef enum:
    PATTERN_GPT2 = 1
    PATTERN_CL100K = 2
    PATTERN_LLAMA3 = 3
    PATTERN_O200K = 4
    PATTERN_WORDS = 5  # ubpe.splitting.WORDS (not a byte-level preset: it can leave gaps)

cdef check_split_arguments(Py_ssize_t n_classes, int pattern)

cdef int check_utf8(const uint8_t[::1] data) except -1

# ``bounds`` must have room for ``n + 1`` offsets (reserve it with the GIL): it is noexcept.
cdef void split_pieces(const uint8_t* s, Py_ssize_t n, const class_t* classes, int pattern,
                       vector[int64_t]& bounds) noexcept nogil
