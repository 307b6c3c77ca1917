# HF tokenizers' pre-tokenizer steps as a native program (see _hf_pretok.pyx).
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t
from libcpp.vector cimport vector

from ubpe_native._pretokenize cimport class_t

# a step's kind (column 0 of the steps table); cpdef: the module's ints too, which
# ubpe.text.hf_pipeline and ubpe.models.ranked_bpe write their tables with
cpdef enum:
    STEP_SPLIT = 0        # (STEP_SPLIT, pattern id, behaviour, invert)
    STEP_BYTE_LEVEL = 1   # (STEP_BYTE_LEVEL, add_prefix_space, use_regex, 0)

# HF's SplitDelimiterBehavior, in ubpe.text.hf_pipeline.BEHAVIORS order
cpdef enum:
    REMOVED = 0
    ISOLATED = 1
    MERGED_WITH_PREVIOUS = 2
    MERGED_WITH_NEXT = 3
    CONTIGUOUS = 4

# What the words come out as: their bytes, or the units of an end-of-word model (each byte b
# as code point b, the last one as 256 + b, in UTF-8: ubpe.models.clip.word_units)
cdef enum:
    OUT_BYTES = 0
    OUT_END_OF_WORD = 1

cdef struct Step:
    int32_t kind, a, b, c

# One call's working space: the text the words point into and the words as (start, end)
# pairs; the other two are where a step writes before they are swapped in. Never shared
# between threads.
cdef struct PretokBuffers:
    vector[uint8_t] text
    vector[uint8_t] next_text
    vector[int64_t] words
    vector[int64_t] next_words
    vector[int64_t] spans


cdef class HFPreTokenizer:
    cdef bint built  # __init__ ran (_checks.build_once)
    cdef vector[Step] steps
    cdef object classes_ref  # keeps the class table alive
    cdef const class_t* classes
    cdef uint32_t spelling[256]  # byte -> GPT-2's printable code point
    cdef uint8_t unspelling[2048]  # and back (code points < 0x800), 0 where none
    cdef bint spelled_at[2048]
    cdef readonly int output
    # a character model's unknown characters (``known`` None: none): each one not in the table
    # becomes ``sentinel`` (one per run with ``fuse``), or is dropped (sentinel < 0)
    cdef object known_ref
    cdef const uint8_t* known
    cdef int32_t sentinel
    cdef bint fuse
    cdef readonly bint unspell  # the words are spelled after the last step: read them back

    # the words of valid UTF-8 ``s[:n]`` into ``buffers`` (``text``, ``words``); growing a
    # container raises MemoryError
    cdef int run(self, const uint8_t* s, Py_ssize_t n, PretokBuffers& buffers) except -1 nogil
    cdef int _split(self, Step step, PretokBuffers& buffers) except -1 nogil
    cdef int _byte_level(self, Step step, bint spell, PretokBuffers& buffers) except -1 nogil
    cdef int _rewrite(self, PretokBuffers& buffers, int how) except -1 nogil
