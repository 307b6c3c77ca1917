# distutils: language = c++
"""HF ``tokenizers``' pre-tokenizer steps as a native program: the words of a text without the
GIL, for the batch kernels (``_merges.PairMerges.encode_texts`` runs it per document).

The Python :class:`ubpe.text.hf_pipeline.PreTokenizer` is the readable oracle; this is the same
algorithm over byte offsets. The text is a list of words, ``(start, end)`` pairs into one
buffer, and each step turns every word into zero or more words:

* ``split`` finds its pattern's matches in the word (the regex VM of ``regex_vm.h``,
  ``find_next``: the word is the whole subject, so ``^``, ``$`` and lookaheads stop at its
  ends), marks the spans between matches as the other kind (``invert`` swaps them) and keeps,
  drops or joins them as HF's ``SplitDelimiterBehavior`` says;
* ``byte_level`` puts a blank in front of a word that has none (``add_prefix_space``: a new
  buffer), cuts it with GPT-2's regex (``use_regex``: the preset scanner of
  ``_pretokenize``), and - when more steps follow - spells its bytes in GPT-2's printable
  alphabet (a new buffer), which is what those steps see, as in HF.

At the end words that are spelled are read back to bytes (what a byte-level model merges),
and with ``OUT_END_OF_WORD`` written as an end-of-word model's units. For a character model
(no ``byte_level``) a table of ``known`` code points may say which characters are units: the
others become a sentinel character (the unknown token's unit) or are dropped, as
``HFCharBPE`` does before merging.

>>> import numpy as np
>>> from ubpe.text.patterns import code_point_classes
>>> from ubpe.text.regex_program import compile_pattern
>>> digit = compile_pattern(r"\\p{N}").pattern_id
>>> pre = HFPreTokenizer(np.array([[0, digit, 1, 0], [1, 0, 1, 0]], np.int32), code_point_classes(), GPT2_SPELLING)
>>> text, words = pre.words(np.frombuffer(b"ab12 cd", np.uint8))
>>> [text[a:b] for a, b in words.tolist()]
[b'ab', b'1', b'2', b' cd']
"""

from cpython cimport array as carray
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t
from libc.string cimport memcpy, memset
from libcpp.vector cimport vector

from ubpe_native._numpy import np

from ubpe_native._checks cimport as_array, as_buffer, build_once
from ubpe_native._pretokenize cimport PATTERN_GPT2, check_utf8, decode_utf8, piece_end
from ubpe_native._regex cimport FIRST_PROGRAM_ID, Program, find_next, program_of
from ubpe_native._shared cimport push_code_point

cdef Py_ssize_t N_CODE_POINTS = 0x110000
cdef int N_BEHAVIORS = 5
cdef uint8_t BLANK = 0x20
cdef uint32_t MAX_SPELLING = 0x800  # spelled characters take 1 or 2 UTF-8 bytes
cdef uint32_t END_OF_WORD_SHIFT = 256  # the unit of a word's last byte b is 256 + b
# how _rewrite writes the words anew
cdef enum:
    REWRITE_SPELL = 0
    REWRITE_UNSPELL = 1
    REWRITE_END_OF_WORD = 2
    REWRITE_UNKNOWNS = 3


def _gpt2_spelling():
    from array import array
    from ubpe.text.byte_chars import BYTE_TO_CHAR
    return array("I", [ord(BYTE_TO_CHAR[b]) for b in range(256)])


#: GPT-2's byte -> printable code point table (``ubpe.text.byte_chars.BYTE_TO_CHAR``), an
#: ``array.array`` of uint32: made without numpy, since every model module imports this one
GPT2_SPELLING = _gpt2_spelling()


cdef inline int push_utf8(vector[uint8_t]& out, uint32_t cp) except -1 nogil:
    """Append code point ``cp`` (< 0x800) as UTF-8."""
    if cp < 0x80:
        out.push_back(<uint8_t>cp)
    else:
        out.push_back(<uint8_t>(0xC0 | (cp >> 6)))
        out.push_back(<uint8_t>(0x80 | (cp & 0x3F)))
    return 0


cdef inline int push_word(vector[int64_t]& words, int64_t start, int64_t end) except -1 nogil:
    if end > start:  # empty pieces are dropped, as HF does
        words.push_back(start)
        words.push_back(end)
    return 0


cdef int split_word(const Program* program, int behavior, bint invert, const uint8_t* text,
                    int64_t start, int64_t end, vector[int64_t]& spans,
                    vector[int64_t]& out) except -1 nogil:
    """``ubpe.text.hf_pipeline.split_spans`` of the word ``text[start:end]``, its pieces
    appended to ``out`` as offsets into ``text``. ``spans`` is working space: triples
    ``(start, end, is_match)`` relative to the word."""
    cdef const uint8_t* s = text + start
    cdef ptrdiff_t n = end - start, i = 0, a, b, previous = 0
    cdef Py_ssize_t k, n_spans, first
    cdef int64_t last
    spans.clear()
    while find_next(program[0], s, n, i, &a, &b):
        if a > previous:
            spans.push_back(previous); spans.push_back(a); spans.push_back(invert)
        spans.push_back(a); spans.push_back(b); spans.push_back(not invert)
        previous = b
        i = b
    if previous < n:
        spans.push_back(previous); spans.push_back(n); spans.push_back(invert)
    n_spans = spans.size() // 3
    first = out.size()  # this word's pieces start here in ``out``
    if behavior == REMOVED:
        for k in range(n_spans):
            if not spans[3 * k + 2]:
                push_word(out, start + spans[3 * k], start + spans[3 * k + 1])
        return 0
    if behavior == ISOLATED:
        for k in range(n_spans):
            push_word(out, start + spans[3 * k], start + spans[3 * k + 1])
        return 0
    # the joining behaviours: pieces built in place (kept even when empty until the end, as
    # the oracle's ``kept`` list is), then the empty ones dropped
    last = -1
    if behavior == MERGED_WITH_NEXT:  # from the right: a match joins the piece after it
        last = 0
        for k in range(n_spans - 1, -1, -1):
            if <Py_ssize_t>out.size() > first and spans[3 * k + 2] and not last:
                out[out.size() - 2] = start + spans[3 * k]
            else:
                out.push_back(start + spans[3 * k])
                out.push_back(start + spans[3 * k + 1])
            last = spans[3 * k + 2]
        reverse_pairs(out, first)
    else:
        if behavior == MERGED_WITH_PREVIOUS:
            last = 0
        for k in range(n_spans):
            if <Py_ssize_t>out.size() > first and (
                    (behavior == CONTIGUOUS and spans[3 * k + 2] == last)
                    or (behavior == MERGED_WITH_PREVIOUS and spans[3 * k + 2] and not last)):
                out[out.size() - 1] = start + spans[3 * k + 1]
            else:
                out.push_back(start + spans[3 * k])
                out.push_back(start + spans[3 * k + 1])
            last = spans[3 * k + 2]
    drop_empty(out, first)
    return 0


cdef void reverse_pairs(vector[int64_t]& out, Py_ssize_t first) noexcept nogil:
    """Reverse the order of the (start, end) pairs of ``out[first:]``."""
    cdef Py_ssize_t lo = first, hi = <Py_ssize_t>out.size() - 2
    cdef int64_t a, b
    while lo < hi:
        a, b = out[lo], out[lo + 1]
        out[lo], out[lo + 1] = out[hi], out[hi + 1]
        out[hi], out[hi + 1] = a, b
        lo += 2
        hi -= 2


cdef void drop_empty(vector[int64_t]& out, Py_ssize_t first) noexcept nogil:
    """Remove the empty pairs of ``out[first:]``, keeping the order."""
    cdef Py_ssize_t k, kept = first
    for k in range(first, <Py_ssize_t>out.size(), 2):
        if out[k + 1] > out[k]:
            out[kept] = out[k]
            out[kept + 1] = out[k + 1]
            kept += 2
    out.resize(kept)


cdef carray.array INT32_TEMPLATE = carray.array("i")


cdef object step_rows(steps):
    """``steps`` as one int32 buffer of rows of 4: a list or tuple of rows of 4 ints (built
    without numpy: what a model's load hands over), or an array of shape ``(n, 4)``."""
    cdef carray.array flat
    if type(steps) is list or type(steps) is tuple:
        flat = carray.clone(INT32_TEMPLATE, 0, False)
        for row in steps:
            if len(row) != 4:
                raise ValueError("steps must be rows of 4 ints")
            if not all(type(value) is int for value in row):
                raise TypeError("steps must hold integers")
            try:
                flat.extend(row)
            except OverflowError:
                raise ValueError("steps holds values outside the int32 range") from None
        return flat
    if not len(steps):
        return carray.clone(INT32_TEMPLATE, 0, False)
    return as_array(steps, np.int32, "steps").reshape(-1, 4).reshape(-1)


cdef class HFPreTokenizer:
    """A list of HF pre-tokenizer steps, run natively (see the module docstring).

    ``HFPreTokenizer(steps, classes, spelling, output=OUT_BYTES)``: ``steps`` an int32 table
    of rows ``(STEP_SPLIT, pattern id, behaviour, invert)`` (a pattern compiled by
    ``ubpe.text.regex_program``; behaviours in ``ubpe.text.hf_pipeline.BEHAVIORS`` order) or
    ``(STEP_BYTE_LEVEL, add_prefix_space, use_regex, 0)``; ``classes`` the scanner's class
    table (``ubpe.text.patterns.code_point_classes``: GPT-2's regex runs on it; None without a
    ``use_regex`` step); ``spelling``
    the 256 code points bytes are spelled as (:data:`GPT2_SPELLING`); ``output``: the words'
    bytes (0) or an end-of-word model's units (1); ``known``: for a character model, one
    uint8 per code point, non-zero for a unit (None: every character is), ``sentinel`` the
    code point an unknown one becomes (-1: dropped), one per run with ``fuse``.
    """

    def __init__(self, steps, const class_t[::1] classes, spelling, int output=OUT_BYTES,
                 known=None, int sentinel=-1, bint fuse=False):
        build_once(&self.built, self)
        cdef const int32_t[::1] table = step_rows(steps)
        cdef const uint32_t[::1] spelled = as_buffer(spelling, "I", "uint32", "spelling")
        cdef Py_ssize_t k, n_steps = table.shape[0] // 4
        cdef Step step
        cdef bint byte_level = False
        if output != OUT_BYTES and output != OUT_END_OF_WORD:
            raise ValueError(f"output must be {OUT_BYTES} (bytes) or {OUT_END_OF_WORD} (end-of-word units)")
        if spelled.shape[0] != 256:
            raise ValueError("spelling must hold 256 code points")
        memset(self.unspelling, 0, sizeof(self.unspelling))
        memset(self.spelled_at, 0, sizeof(self.spelled_at))
        for k in range(256):
            if spelled[k] >= MAX_SPELLING or self.spelled_at[spelled[k]]:
                raise ValueError(f"spelling must hold 256 distinct code points below {MAX_SPELLING:#x}")
            self.spelling[k] = spelled[k]
            self.unspelling[spelled[k]] = <uint8_t>k
            self.spelled_at[spelled[k]] = True
        for k in range(n_steps):
            step.kind, step.a, step.b, step.c = table[4 * k], table[4 * k + 1], table[4 * k + 2], table[4 * k + 3]
            if step.kind == STEP_SPLIT:
                if step.a < FIRST_PROGRAM_ID or program_of(step.a) == NULL:
                    raise ValueError(f"step {k}: {step.a} is not the id of a compiled pattern")
                if not 0 <= step.b < N_BEHAVIORS or step.c not in (0, 1):
                    raise ValueError(f"step {k}: behaviour must be in 0..{N_BEHAVIORS - 1} and invert 0 or 1")
            elif step.kind == STEP_BYTE_LEVEL:
                if step.a not in (0, 1) or step.b not in (0, 1) or step.c != 0:
                    raise ValueError(f"step {k}: byte_level takes (add_prefix_space, use_regex, 0), flags 0 or 1")
                byte_level = True
                if step.b and (classes is None or classes.shape[0] != N_CODE_POINTS):
                    raise ValueError("classes must hold one entry per code point (0x110000)")
            else:
                raise ValueError(f"step {k}: unknown kind {step.kind}")
            self.steps.push_back(step)
        cdef const uint8_t[::1] known_view
        self.known = NULL
        if known is not None:
            if byte_level:
                raise ValueError("known is for a character model: steps without byte_level")
            known_view = as_buffer(known, "B", "uint8", "known")
            if known_view.shape[0] != N_CODE_POINTS:
                raise ValueError("known must hold one entry per code point (0x110000)")
            if not -1 <= sentinel < N_CODE_POINTS or 0xD800 <= sentinel < 0xE000:
                raise ValueError("sentinel must be -1 or a code point that is no surrogate")
            self.known_ref = known_view.base
            self.known = &known_view[0]
        self.sentinel = sentinel
        self.fuse = fuse
        self.classes = NULL  # read by use_regex steps only
        if classes is not None and classes.shape[0]:
            self.classes_ref = classes.base
            self.classes = &classes[0]
        self.output = output
        # a byte_level step before the last spells the words: they are read back at the end
        self.unspell = byte_level and self.steps.back().kind != STEP_BYTE_LEVEL

    cdef int run(self, const uint8_t* s, Py_ssize_t n, PretokBuffers& buffers) except -1 nogil:
        cdef Py_ssize_t k, last = <Py_ssize_t>self.steps.size() - 1
        cdef Step step
        buffers.text.resize(n)
        if n:
            memcpy(buffers.text.data(), s, n)
        buffers.words.clear()
        push_word(buffers.words, 0, n)
        for k in range(last + 1):
            step = self.steps[k]
            if step.kind == STEP_SPLIT:
                self._split(step, buffers)
            else:
                self._byte_level(step, k < last, buffers)
        if self.unspell:
            self._rewrite(buffers, REWRITE_UNSPELL)
        if self.output == OUT_END_OF_WORD:
            self._rewrite(buffers, REWRITE_END_OF_WORD)
        if self.known != NULL:
            self._rewrite(buffers, REWRITE_UNKNOWNS)
        return 0

    cdef int _split(self, Step step, PretokBuffers& buffers) except -1 nogil:
        cdef const Program* program = program_of(step.a)
        cdef Py_ssize_t w
        buffers.next_words.clear()
        for w in range(0, <Py_ssize_t>buffers.words.size(), 2):
            split_word(program, step.b, step.c, buffers.text.data(), buffers.words[w], buffers.words[w + 1],
                       buffers.spans, buffers.next_words)
        buffers.words.swap(buffers.next_words)
        return 0

    cdef int _byte_level(self, Step step, bint spell, PretokBuffers& buffers) except -1 nogil:
        cdef Py_ssize_t w, i, end
        cdef int64_t start, stop
        cdef const uint8_t* text
        if step.a:  # add_prefix_space: every word that has no blank in front gets one
            buffers.next_text.clear()
            buffers.next_words.clear()
            for w in range(0, <Py_ssize_t>buffers.words.size(), 2):
                start, stop = buffers.words[w], buffers.words[w + 1]
                buffers.next_words.push_back(buffers.next_text.size())
                if buffers.text[start] != BLANK:
                    buffers.next_text.push_back(BLANK)
                buffers.next_text.insert(buffers.next_text.end(), buffers.text.begin() + start,
                                         buffers.text.begin() + stop)
                buffers.next_words.push_back(buffers.next_text.size())
            buffers.text.swap(buffers.next_text)
            buffers.words.swap(buffers.next_words)
        if step.b:  # use_regex: GPT-2's pieces of every word
            buffers.next_words.clear()
            text = buffers.text.data()
            for w in range(0, <Py_ssize_t>buffers.words.size(), 2):
                start, stop = buffers.words[w], buffers.words[w + 1]
                i = 0
                while i < stop - start:
                    end = piece_end(text + start, stop - start, i, self.classes, PATTERN_GPT2)
                    push_word(buffers.next_words, start + i, start + end)
                    i = end
            buffers.words.swap(buffers.next_words)
        if spell:  # the next steps see the words in GPT-2's alphabet
            self._rewrite(buffers, REWRITE_SPELL)
        return 0

    cdef int _rewrite(self, PretokBuffers& buffers, int how) except -1 nogil:
        """Every word into a new buffer, written ``how`` says: spelled in GPT-2's alphabet,
        read back from it to bytes, as end-of-word units, or with its unknown characters
        replaced or dropped (``HFCharBPE``'s ``_unknown.sub``; a word they empty stays, empty)."""
        cdef Py_ssize_t w, i, stop, width
        cdef uint32_t cp
        cdef bint in_run
        cdef const uint8_t* text = buffers.text.data()
        cdef vector[uint8_t]* out = &buffers.next_text
        out.clear()
        buffers.next_words.clear()
        for w in range(0, <Py_ssize_t>buffers.words.size(), 2):
            buffers.next_words.push_back(out.size())
            i, stop = buffers.words[w], buffers.words[w + 1]
            in_run = False
            while i < stop:
                width = 1
                if how == REWRITE_SPELL:
                    push_utf8(out[0], self.spelling[text[i]])
                elif how == REWRITE_END_OF_WORD:
                    push_utf8(out[0], text[i] + (END_OF_WORD_SHIFT if i + 1 == stop else 0))
                else:
                    cp = decode_utf8(text, i, &width)
                    if how == REWRITE_UNSPELL:  # every character of a spelled word is one of the alphabet's
                        out.push_back(self.unspelling[cp] if cp < MAX_SPELLING else 0)
                    elif self.known[cp]:
                        out.insert(out.end(), text + i, text + i + width)
                        in_run = False
                    elif self.sentinel >= 0 and not (self.fuse and in_run):
                        push_code_point(out[0], self.sentinel)
                        in_run = True
                i += width
            buffers.next_words.push_back(out.size())
        buffers.text.swap(buffers.next_text)
        buffers.words.swap(buffers.next_words)
        return 0

    def words(self, const uint8_t[::1] data not None):
        """``(text, words)``: the buffer the words of UTF-8 ``data`` point into (bytes) and
        their ``(start, end)`` offsets (an int64 array of shape ``(n, 2)``). ValueError unless
        ``data`` is well-formed UTF-8."""
        check_utf8(data)
        cdef PretokBuffers buffers
        cdef Py_ssize_t n = data.shape[0]
        with nogil:
            self.run(&data[0] if n else NULL, n, buffers)
        text = (<const char*>buffers.text.data())[:buffers.text.size()] if buffers.text.size() else b""
        words = np.empty(buffers.words.size(), dtype=np.int64)
        cdef int64_t[::1] view = words
        if buffers.words.size():
            memcpy(&view[0], buffers.words.data(), buffers.words.size() * sizeof(int64_t))
        return text, words.reshape(-1, 2)
