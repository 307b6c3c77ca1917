# distutils: language = c++
"""Pre-tokenization of UTF-8 text by the preset split patterns of ``ubpe.text.patterns``.

tiktoken splits text with a backtracking regex before merging. For the presets (gpt2,
cl100k, o200k, llama3) the split is written out here as a scanner over code points; each rule
below names the alternative it implements, tried in the pattern's order (leftmost-first, like
the regex engine). Character classes come from a table with one entry per code point that
the caller builds with the `regex` module, so the scanner agrees with ``regex.findall`` on
every code point. ``split_pieces`` is the kernel (``_ranked.MergeTable.encode_text`` calls it
without the GIL); ``split_text`` exposes it to Python. For documents back to back (the
``encode_texts`` kernels) ``split_document`` splits one of them, optionally cutting numbers
into single code points, and ``holds_flagged`` finds those that a table of code points sends
elsewhere. The ``def`` wrappers check that the data is well-formed UTF-8 first
(``check_utf8``): the scanner decodes without bounds checks.

A pattern that is no preset runs on the regex VM of ``regex_vm.h`` (programs registered by
``_regex``, compiled by ``ubpe.text.regex_program``): the id of a compiled pattern whose
pieces tile any text (``>= FIRST_PROGRAM_ID``) goes wherever a preset's id goes, and
``find_pieces`` finds the matches of any compiled pattern.

The module is over 600 lines because the five scanners (one per preset, plus ``words``) share
their inline helpers and class bits, the regex VM's ids are dispatched where the presets' are
(one ``split_pieces`` for both), and the document helpers sit beside the scanner they drive. What would split it: the document helpers (``document_offsets`` ... ``split_document``)
into a module of their own with its own ``.pxd``, cimported by ``_merges`` and ``_ranked``.

>>> import numpy as np
>>> from ubpe.text.patterns import NATIVE_PATTERNS, PATTERNS, code_point_classes
>>> data = "DON'T say ʰAB!\\n/".encode()
>>> o200k = NATIVE_PATTERNS[PATTERNS["o200k"]]
>>> split_text(np.frombuffer(data, np.uint8), code_point_classes(), o200k).tolist()
[0, 5, 9, 12, 14, 17]

``DON'T``, `` say``, `` ʰ``, ``AB``, ``!\\n/`` (cl100k: ``DON``, ``'T``, `` say``, `` ʰAB``, ...).
"""

from libc.stddef cimport ptrdiff_t
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcpy
from libcpp.vector cimport vector

from ubpe_native._numpy import np

from ubpe_native._checks cimport as_array
from ubpe_native._regex cimport FIRST_PROGRAM_ID, Program, find_next, program_of, program_piece_end

cdef Py_ssize_t N_CODE_POINTS = 0x110000
# class bits of a code point (low byte) ...
cdef class_t LETTER = 1  # \p{L}
cdef class_t NUMBER = CLASS_NUMBER  # \p{N}
cdef class_t SPACE = 4  # \s
cdef class_t NEWLINE = 8  # \r or \n
cdef class_t UPPER = 16  # [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] (o200k)
cdef class_t LOWER = 32  # [\p{Ll}\p{Lm}\p{Lo}\p{M}] (o200k)
cdef class_t WORD_LETTER = 64  # [^\W\d_] (words)
cdef class_t DIGIT = 128  # \d (words)
cdef class_t WORD = 4096  # \w (words; above the fold index of the high byte)
cdef uint32_t UNDERSCORE = 0x5F
# ... and in the high byte which contraction letter it is under (?i): 1..8 = s d m t l v r e
cdef int FOLD_SHIFT = 8
cdef int FOLD_S = 1, FOLD_D = 2, FOLD_M = 3, FOLD_T = 4, FOLD_L = 5, FOLD_V = 6, FOLD_R = 7, FOLD_E = 8
# [^\s\p{L}\p{N}]: a character with none of these bits is "other" (punctuation, symbols, ...)
cdef class_t OTHER_BITS = LETTER | NUMBER | SPACE
cdef uint32_t APOSTROPHE = 0x27
cdef uint32_t BLANK = 0x20
cdef uint8_t CR = 0x0D, LF = 0x0A, SLASH = 0x2F
cdef uint64_t ASCII_MASK = 0x8080808080808080ULL  # the high bit of 8 bytes


cdef check_split_arguments(Py_ssize_t n_classes, int pattern):
    if n_classes != N_CODE_POINTS:
        raise ValueError("classes must hold one entry per code point (0x110000)")
    cdef const Program* program
    if pattern >= FIRST_PROGRAM_ID:
        program = program_of(pattern)
        if program == NULL:
            raise ValueError(f"unknown native pattern id {pattern}")
        if not program.total:
            raise ValueError(f"pattern {pattern} can leave text unmatched: find_pieces splits it, not the scanner")
    elif pattern not in (PATTERN_GPT2, PATTERN_CL100K, PATTERN_LLAMA3, PATTERN_O200K, PATTERN_WORDS):
        raise ValueError(f"unknown native pattern id {pattern}")


cdef Py_ssize_t invalid_utf8_at(const uint8_t* s, Py_ssize_t n) noexcept nogil:
    """Where the first byte of a malformed UTF-8 sequence of ``s[:n]`` is, or -1 if it is all
    well-formed (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF, no
    truncated sequence). ``decode_utf8`` may only read text that passed this check."""
    cdef Py_ssize_t i = 0, width, k
    cdef uint8_t b, second, low, high
    cdef uint64_t word
    while i < n:
        b = s[i]
        if b < 0x80:
            if i + 8 <= n:  # eight ASCII bytes at a time
                memcpy(&word, s + i, 8)
                if not word & ASCII_MASK:
                    i += 8
                    continue
            i += 1
            continue
        low, high = 0x80, 0xBF  # range of the second byte
        if 0xC2 <= b <= 0xDF:
            width = 2
        elif 0xE0 <= b <= 0xEF:
            width = 3
            if b == 0xE0:
                low = 0xA0  # no overlong three-byte form
            elif b == 0xED:
                high = 0x9F  # no surrogate
        elif 0xF0 <= b <= 0xF4:
            width = 4
            if b == 0xF0:
                low = 0x90  # no overlong four-byte form
            elif b == 0xF4:
                high = 0x8F  # nothing above U+10FFFF
        else:
            return i
        if i + width > n:
            return i
        second = s[i + 1]
        if second < low or second > high:
            return i
        for k in range(2, width):
            if s[i + k] < 0x80 or s[i + k] > 0xBF:
                return i
        i += width
    return -1


cdef int check_utf8(const uint8_t[::1] data) except -1:
    """``data`` must be well-formed UTF-8: the scanner reads code points without bounds checks."""
    cdef Py_ssize_t at = -1
    if data.shape[0]:
        with nogil:
            at = invalid_utf8_at(&data[0], data.shape[0])
    if at >= 0:
        raise ValueError(f"data is not valid UTF-8 (malformed sequence at byte {at})")
    return 0


cdef inline int fold_letter(uint32_t cp, class_t cls, int pattern) noexcept nogil:
    """Which contraction letter ``cp`` is: gpt2's contractions are case-sensitive."""
    if pattern == PATTERN_GPT2:
        if cp == 0x73: return FOLD_S
        if cp == 0x64: return FOLD_D
        if cp == 0x6D: return FOLD_M
        if cp == 0x74: return FOLD_T
        if cp == 0x6C: return FOLD_L
        if cp == 0x76: return FOLD_V
        if cp == 0x72: return FOLD_R
        if cp == 0x65: return FOLD_E
        return 0
    return (cls >> FOLD_SHIFT) & 0x0F  # the fold index: bits 8-11


cdef inline Py_ssize_t contraction_end(const uint8_t* s, Py_ssize_t n, Py_ssize_t i,
                                       const class_t* classes, int pattern) noexcept nogil:
    """End of ``'(?:[sdmt]|ll|ve|re)`` at byte ``i`` (case-insensitive except in gpt2), or
    ``i`` itself if there is none. o200k's ``'s|'t|'re|'ve|'m|'ll|'d`` is the same set."""
    cdef Py_ssize_t j, w1, w2
    cdef uint32_t c1, c2
    cdef int f1, f2
    if i + 1 >= n or s[i] != APOSTROPHE:
        return i
    j = i + 1
    c1 = decode_utf8(s, j, &w1)
    f1 = fold_letter(c1, classes[c1], pattern)
    if f1 == FOLD_S or f1 == FOLD_D or f1 == FOLD_M or f1 == FOLD_T:
        return j + w1
    if j + w1 < n and (f1 == FOLD_L or f1 == FOLD_V or f1 == FOLD_R):
        c2 = decode_utf8(s, j + w1, &w2)
        f2 = fold_letter(c2, classes[c2], pattern)
        if (f1 == FOLD_L and f2 == FOLD_L) or (f1 != FOLD_L and f2 == FOLD_E):
            return j + w1 + w2
    return i


cdef inline Py_ssize_t skip_class(const uint8_t* s, Py_ssize_t n, Py_ssize_t i,
                                  const class_t* classes, class_t wanted, bint wanted_set,
                                  Py_ssize_t at_most) noexcept nogil:
    """End of the run from ``i`` of at most ``at_most`` code points whose class has a bit of
    ``wanted`` (``wanted_set``) or has none of them (not ``wanted_set``)."""
    cdef Py_ssize_t width, count = 0
    cdef uint32_t cp
    while i < n and count < at_most:
        cp = decode_utf8(s, i, &width)
        if ((classes[cp] & wanted) != 0) != wanted_set:
            break
        i += width
        count += 1
    return i


cdef inline Py_ssize_t lower_word_end(const uint8_t* s, Py_ssize_t n, Py_ssize_t i,
                                      const class_t* classes) noexcept nogil:
    """End of ``[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+`` at ``i``
    as the backtracking engine finds it, or -1 if it does not match.

    The classes overlap (Lm, Lo and M are in both: "caseless"). The greedy star first takes
    the whole run of UPPER characters; if the character after the run is LOWER (then it is
    Ll), the plus takes the LOWER run from there. Otherwise the star gives back characters
    until the plus can start, i.e. at the *last caseless* character of the run, and the plus
    then takes that one character only (what follows it is Lu/Lt or not LOWER):
    ``ʰAB`` -> ``ʰ``, ``ABʰC.`` -> ``ABʰ``, ``AB.`` -> no match.
    """
    cdef Py_ssize_t width, last_caseless_end = -1
    cdef uint32_t cp
    cdef class_t cls
    while i < n:
        cp = decode_utf8(s, i, &width)
        cls = classes[cp]
        if not cls & UPPER:
            if cls & LOWER:
                return skip_class(s, n, i + width, classes, LOWER, True, n)
            break
        if cls & LOWER:
            last_caseless_end = i + width
        i += width
    return last_caseless_end


cdef inline Py_ssize_t upper_word_end(const uint8_t* s, Py_ssize_t n, Py_ssize_t i,
                                      const class_t* classes) noexcept nogil:
    """End of ``[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*`` at ``i``,
    or -1: both runs greedy, and nothing after them can fail, so no backtracking."""
    cdef Py_ssize_t width
    if i >= n or not classes[decode_utf8(s, i, &width)] & UPPER:
        return -1
    i = skip_class(s, n, i + width, classes, UPPER, True, n)
    return skip_class(s, n, i, classes, LOWER, True, n)


cdef Py_ssize_t whitespace_end(const uint8_t* s, Py_ssize_t n, Py_ssize_t i,
                               const class_t* classes, int pattern) noexcept nogil:
    """End of the piece at byte ``i`` where every earlier alternative failed and ``s[i]`` is
    whitespace: the patterns' trailing whitespace alternatives."""
    cdef Py_ssize_t q = i, last_start = i, newline_end = -1, width
    cdef uint32_t cp
    # the whitespace run [i, q): where its last character starts, where its last newline ends
    while q < n:
        cp = decode_utf8(s, q, &width)
        if not classes[cp] & SPACE:
            break
        if classes[cp] & NEWLINE:
            newline_end = q + width
        last_start = q
        q += width
    if pattern == PATTERN_LLAMA3 or pattern == PATTERN_O200K:
        # \s*[\r\n]+ (backtracks to the last newline), \s+(?!\S), \s+
        if newline_end >= 0:
            return newline_end
        if q == n:
            return n
        return last_start if last_start > i else q
    # \s++$
    if q == n:
        return n
    # cl100k: \s*[\r\n] (backtracks to the last newline)
    if pattern == PATTERN_CL100K and newline_end >= 0:
        return newline_end
    # \s+(?!\S): all but the last whitespace before a non-space; else \s (one character)
    if last_start > i:
        return last_start
    decode_utf8(s, i, &width)
    return i + width


cdef inline Py_ssize_t punctuation_end(const uint8_t* s, Py_ssize_t n, Py_ssize_t i, Py_ssize_t j,
                                       uint32_t c0, const class_t* classes, bint slash) noexcept nogil:
    """End of ``' ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*'`` at byte ``i`` (``[\\r\\n/]*`` with ``slash``),
    or -1 if no such piece starts there. ``j`` is the byte after the first code point ``c0``."""
    cdef Py_ssize_t width, end, p = j if c0 == BLANK and j < n else i
    if classes[decode_utf8(s, p, &width)] & OTHER_BITS:
        return -1
    end = skip_class(s, n, p, classes, OTHER_BITS, False, n)
    while end < n and (s[end] == CR or s[end] == LF or (slash and s[end] == SLASH)):  # ASCII: bytewise
        end += 1
    return end


cdef Py_ssize_t o200k_piece_end(const uint8_t* s, Py_ssize_t n, Py_ssize_t i,
                                const class_t* classes) noexcept nogil:
    """End of the o200k piece at byte ``i``.

    The two letter alternatives share ``[^\\r\\n\\p{L}\\p{N}]?`` (greedy, so tried with the
    prefix character first, then without) and the optional contraction at the end; the
    engine exhausts the first alternative both ways before trying the second. Without the
    prefix only a mark (M is in both letter classes) can start a word.
    """
    cdef Py_ssize_t w0, j, p, end
    cdef int alternative, attempt
    cdef uint32_t c0 = decode_utf8(s, i, &w0)
    cdef class_t k0 = classes[c0]
    cdef bint has_prefix = (k0 & (LETTER | NUMBER | NEWLINE)) == 0
    j = i + w0
    # [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|...)?
    # then [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|...)?
    for alternative in range(2):      # the lower-case word, then the upper-case word
        for attempt in range(2):      # with the prefix character first, then without
            if attempt == 0 and not has_prefix:
                continue
            p = j if attempt == 0 else i
            end = upper_word_end(s, n, p, classes) if alternative else lower_word_end(s, n, p, classes)
            if end >= 0:
                return contraction_end(s, n, end, classes, PATTERN_O200K)
    # \p{N}{1,3}
    if k0 & NUMBER:
        return skip_class(s, n, i, classes, NUMBER, True, 3)
    # ' ?[^\s\p{L}\p{N}]+[\r\n/]*' (a blank is whitespace, so it never starts the run itself)
    end = punctuation_end(s, n, i, j, c0, classes, True)
    if end >= 0:
        return end
    if not k0 & SPACE:  # unreachable: every code point is a letter, mark, digit, space or other
        return j
    return whitespace_end(s, n, i, classes, PATTERN_O200K)


cdef Py_ssize_t words_piece_end(const uint8_t* s, Py_ssize_t n, Py_ssize_t i,
                                const class_t* classes) noexcept nogil:
    """End of the ``words`` piece at byte ``i``:
    ``'s|'t|'re|'ve|'m|'ll|'d| ?[^\\W\\d_]+| ?\\d+| ?[^\\s\\w]+|\\s+(?!\\S)|\\s+``.

    The contractions are gpt2's (case-sensitive); each run takes one optional leading blank
    (tried first, then without: a blank is none of the runs' characters); the whitespace
    alternatives are gpt2's. A character no alternative matches (``_``, the one ``\\w``
    character that is no letter or digit) is a gap: a one-character piece, which the caller
    recognises as ``_`` (see ``split_ranges``).
    """
    cdef Py_ssize_t w0, w1, j, p, end
    cdef uint32_t c0, cp
    cdef class_t k0, kp
    end = contraction_end(s, n, i, classes, PATTERN_GPT2)
    if end > i:
        return end
    c0 = decode_utf8(s, i, &w0)
    k0 = classes[c0]
    j = i + w0
    p = j if c0 == BLANK and j < n else i
    cp = decode_utf8(s, p, &w1)
    kp = classes[cp]
    if kp & WORD_LETTER:
        return skip_class(s, n, p, classes, WORD_LETTER, True, n)
    if kp & DIGIT:
        return skip_class(s, n, p, classes, DIGIT, True, n)
    if not kp & (SPACE | WORD):
        return skip_class(s, n, p, classes, SPACE | WORD, False, n)
    if k0 & SPACE:
        return whitespace_end(s, n, i, classes, PATTERN_GPT2)
    return j  # a gap: no alternative matches here


cdef Py_ssize_t piece_end(const uint8_t* s, Py_ssize_t n, Py_ssize_t i, const class_t* classes,
                          int pattern) except -1 nogil:
    """End (a byte offset) of the piece starting at byte ``i``."""
    cdef Py_ssize_t w0, w1, j, p, end
    cdef uint32_t c0, cp
    cdef class_t k0
    if pattern >= FIRST_PROGRAM_ID:  # a compiled pattern (ubpe.text.regex_program), checked total
        return program_piece_end(program_of(pattern)[0], s, n, i)
    if pattern == PATTERN_O200K:
        return o200k_piece_end(s, n, i, classes)
    if pattern == PATTERN_WORDS:
        return words_piece_end(s, n, i, classes)
    c0 = decode_utf8(s, i, &w0)
    k0 = classes[c0]
    j = i + w0
    # '(?:[sdmt]|ll|ve|re) - case-insensitive except in gpt2
    end = contraction_end(s, n, i, classes, pattern)
    if end > i:
        return end
    if pattern == PATTERN_GPT2:
        # ' ?\p{L}++', ' ?\p{N}++', ' ?[^\s\p{L}\p{N}]++': an optional blank, then a run
        p = j if c0 == BLANK and j < n else i
        cp = decode_utf8(s, p, &w1)
        if classes[cp] & LETTER:
            return skip_class(s, n, p, classes, LETTER, True, n)
        if classes[cp] & NUMBER:
            return skip_class(s, n, p, classes, NUMBER, True, n)
        if not classes[cp] & OTHER_BITS:
            return skip_class(s, n, p, classes, OTHER_BITS, False, n)
    else:
        # [^\r\n\p{L}\p{N}]?+\p{L}++ : one optional character that is no letter, digit or
        # newline, then letters (the option is possessive, and backtracking it could not help)
        p = j if (k0 & (LETTER | NUMBER | NEWLINE)) == 0 else i
        if p < n:
            cp = decode_utf8(s, p, &w1)
            if classes[cp] & LETTER:
                return skip_class(s, n, p, classes, LETTER, True, n)
        # \p{N}{1,3}+
        if k0 & NUMBER:
            return skip_class(s, n, i, classes, NUMBER, True, 3)
        # ' ?[^\s\p{L}\p{N}]++[\r\n]*+'
        end = punctuation_end(s, n, i, j, c0, classes, False)
        if end >= 0:
            return end
    if not k0 & SPACE:  # unreachable: every code point is a letter, digit, space or other
        return j
    return whitespace_end(s, n, i, classes, pattern)


cdef int split_pieces(const uint8_t* s, Py_ssize_t n, const class_t* classes, int pattern,
                      vector[int64_t]& bounds) except -1 nogil:
    """Byte offsets of the pieces of ``s[:n]`` into ``bounds``: 0, then every piece's end."""
    cdef Py_ssize_t i = 0
    bounds.clear()
    bounds.push_back(0)
    while i < n:
        i = piece_end(s, n, i, classes, pattern)
        bounds.push_back(i)
    return 0


cdef object document_offsets(const uint8_t[::1] data, const int64_t[::1] char_lengths):
    """Byte offsets (one per document, and the end) of documents back to back in UTF-8 ``data``
    (checked by the caller) whose lengths in code points are ``char_lengths`` (what Python's
    ``len`` gives): ValueError unless those are >= 0 and add up to the code points of ``data``."""
    cdef Py_ssize_t n_docs = char_lengths.shape[0], n = data.shape[0], k, i = 0
    cdef int64_t count
    cdef bint fits = True
    for k in range(n_docs):
        if char_lengths[k] < 0:
            raise ValueError(f"char_lengths holds a negative length at {k}")
    offsets = np.empty(n_docs + 1, dtype=np.int64)
    cdef int64_t[::1] out = offsets
    with nogil:
        out[0] = 0
        for k in range(n_docs):
            count = char_lengths[k]
            while count > 0 and i < n:
                i += 1
                while i < n and (data[i] & 0xC0) == 0x80:  # continuation bytes
                    i += 1
                count -= 1
            if count:
                fits = False
                break
            out[k + 1] = i
    if not fits or i != n:
        raise ValueError("char_lengths must add up to the number of code points of data")
    return offsets


cdef object utf8_documents(const uint8_t[::1] data, object char_lengths):
    """The checks of a ``def`` that takes documents back to back in UTF-8 ``data``
    (``char_lengths``: theirs in code points, any integer array-like); their byte offsets."""
    check_utf8(data)
    return document_offsets(data, as_array(char_lengths, np.int64, "char_lengths"))


cdef object document_starts(const uint8_t[::1] data, object char_lengths, Py_ssize_t n_classes,
                            int pattern):
    """`utf8_documents` for a ``def`` that splits them by ``pattern``."""
    check_split_arguments(n_classes, pattern)
    return utf8_documents(data, char_lengths)


cdef object document_flags(object values, Py_ssize_t n_docs, str name):
    """``values`` (one per document, e.g. ``skip``; None: all 0) as a uint8 array, checked."""
    if values is None:
        return np.zeros(n_docs, dtype=np.uint8)
    flags = as_array(values, np.uint8, name)
    if flags.shape[0] != n_docs:
        raise ValueError(f"{name} must hold one entry per document ({n_docs}), not {flags.shape[0]}")
    return flags


cdef bint holds_flagged(const uint8_t* s, Py_ssize_t n, const uint8_t* table) noexcept nogil:
    """Whether valid UTF-8 ``s[:n]`` holds a non-ASCII code point ``cp`` with ``table[cp] != 0``
    (a table of 0x110000 entries; ASCII is never flagged, see ``flag_table``)."""
    cdef Py_ssize_t i = 0, width
    cdef uint64_t eight
    while i < n:
        while i + 8 <= n:  # 8 ASCII bytes at a time
            memcpy(&eight, s + i, 8)
            if eight & ASCII_MASK:
                break
            i += 8
        if i == n:
            break
        if s[i] < 0x80:
            i += 1
            continue
        if table[decode_utf8(s, i, &width)]:
            return True
        i += width
    return False


cdef object flag_table(object values):
    """``values`` as the ``flagged`` table of ``holds_flagged`` (None: no table), checked: one
    uint8 per code point, none for ASCII."""
    if values is None:
        return None
    table = as_array(values, np.uint8, "flagged")
    if table.shape[0] != N_CODE_POINTS:
        raise ValueError("flagged must hold one entry per code point (0x110000)")
    if table[:0x80].any():
        raise ValueError("flagged may not flag ASCII code points")
    return table


cdef int split_document(const uint8_t* s, Py_ssize_t n, const class_t* classes, int pattern,
                        bint single_digits, vector[int64_t]& bounds,
                        vector[int64_t]& scratch) except -1 nogil:
    """The pieces of valid UTF-8 ``s[:n]`` into ``bounds`` (0, then every piece's end), as
    ``split_pieces``; with ``single_digits`` every number code point (``\\p{N}``) is also cut
    out as a piece of its own (Qwen2's ``\\p{N}`` where Llama 3's pattern has ``\\p{N}{1,3}``).
    ``scratch`` is working space. Growing either raises MemoryError (``except -1``)."""
    cdef Py_ssize_t k, i, end, width
    bounds.reserve(n + 1)  # split_pieces does not grow it: it must find the room it needs
    split_pieces(s, n, classes, pattern, bounds)
    if not single_digits:
        return 0
    scratch.clear()
    scratch.push_back(0)
    for k in range(<Py_ssize_t>bounds.size() - 1):
        i = bounds[k]
        end = bounds[k + 1]
        while i < end:
            if classes[decode_utf8(s, i, &width)] & CLASS_NUMBER:
                if i > scratch.back():
                    scratch.push_back(i)
                scratch.push_back(i + width)
            i += width
        if end > scratch.back():
            scratch.push_back(end)
    bounds.swap(scratch)
    return 0


def or_classes(class_t[::1] classes not None, const uint32_t[::1] code_points not None,
               Py_ssize_t start, Py_ssize_t stop, class_t bits):
    """``classes[code_points[k]] |= bits`` for ``k`` in ``start..stop - 1``: a run of code
    points the `regex` module found in a class (``ubpe.text.patterns.classes_of``, which
    builds the scanner's table without numpy).

    >>> from array import array
    >>> classes = array("H", [0, 1, 0, 0])
    >>> or_classes(classes, array("I", [3, 1, 2]), 0, 2, 4)
    >>> classes.tolist()
    [0, 5, 0, 4]
    """
    cdef Py_ssize_t k
    if not 0 <= start <= stop <= code_points.shape[0]:
        raise ValueError(f"start..stop must lie in 0..{code_points.shape[0]}, not {start}..{stop}")
    for k in range(start, stop):
        if code_points[k] >= <uint32_t>classes.shape[0]:
            raise ValueError(f"code point {code_points[k]} is past the table ({classes.shape[0]} entries)")
    for k in range(start, stop):
        classes[code_points[k]] |= bits


def split_text(const uint8_t[::1] data not None, const class_t[::1] classes not None, int pattern):
    """Byte offsets of the pieces of UTF-8 ``data`` under a native pattern (a preset, or a
    compiled pattern whose pieces tile the text); ``data`` must be well-formed UTF-8
    (ValueError otherwise)."""
    check_split_arguments(classes.shape[0], pattern)
    check_utf8(data)
    cdef vector[int64_t] bounds
    bounds.reserve(data.shape[0] + 1)  # with the GIL: split_pieces must not allocate
    if data.shape[0]:
        with nogil:
            split_pieces(&data[0], data.shape[0], &classes[0], pattern, bounds)
    else:
        bounds.push_back(0)
    return np.asarray(<int64_t[:bounds.size()]>bounds.data()).copy()


def find_pieces(const uint8_t[::1] data not None, int pattern):
    """``(starts, ends)``: the byte bounds of every match of a compiled pattern (a registered
    id of ``_regex``, see ``ubpe.text.regex_program``) in UTF-8 ``data``, as ``regex.finditer``
    finds them: text between matches is left out. The GIL is released while scanning;
    ``data`` must be well-formed UTF-8 (ValueError otherwise).

    >>> from ubpe.text.regex_program import compile_pattern
    >>> starts, ends = find_pieces(np.frombuffer("é1 x".encode(), np.uint8), compile_pattern(r"\\w").pattern_id)
    >>> starts.tolist(), ends.tolist()
    ([0, 2, 4], [2, 3, 5])
    """
    cdef const Program* program = program_of(pattern)
    if pattern < FIRST_PROGRAM_ID or program == NULL:
        raise ValueError(f"{pattern} is not the id of a compiled pattern")
    check_utf8(data)
    cdef vector[int64_t] starts, ends
    cdef ptrdiff_t n = data.shape[0], i = 0, start, end
    if n:
        with nogil:
            while find_next(program[0], &data[0], n, i, &start, &end):
                starts.push_back(start)
                ends.push_back(end)
                i = end
    return _int64_array(starts), _int64_array(ends)


def split_ranges(const uint8_t[::1] data not None, const int64_t[::1] starts not None,
                 const int64_t[::1] ends not None, const class_t[::1] classes not None, int pattern):
    """Split each byte range ``data[starts[k]:ends[k]]`` of UTF-8 ``data`` on its own under a
    native pattern (the GIL is released while scanning): ``(bounds, gaps)``, every piece's
    start and end (byte offsets into ``data``, ascending) and the start of every gap piece
    (``words`` only: an unmatched ``_``). Ranges must be ascending, disjoint and cut ``data``
    at character boundaries (ValueError otherwise).

    >>> from ubpe.splitting import split_classes
    >>> data = np.frombuffer(b"a_b cd", np.uint8)
    >>> bounds, gaps = split_ranges(data, np.array([0, 3]), np.array([3, 6]), split_classes(), 5)
    >>> bounds.tolist(), gaps.tolist()
    ([0, 1, 1, 2, 2, 3, 3, 6], [1])
    """
    check_split_arguments(classes.shape[0], pattern)
    check_utf8(data)
    cdef Py_ssize_t k, n_ranges = starts.shape[0], n = data.shape[0], i, end, previous = 0
    if ends.shape[0] != n_ranges:
        raise ValueError("starts and ends must have the same length")
    for k in range(n_ranges):
        if starts[k] < previous or ends[k] < starts[k] or ends[k] > n:
            raise ValueError("ranges must be ascending, disjoint and inside the data")
        if (starts[k] < n and (data[starts[k]] & 0xC0) == 0x80) or (ends[k] < n and (data[ends[k]] & 0xC0) == 0x80):
            raise ValueError("ranges must start and end at character boundaries")
        previous = ends[k]
    cdef vector[int64_t] bounds, gaps
    cdef const uint8_t* s
    with nogil:
        for k in range(n_ranges):
            if ends[k] == starts[k]:
                continue
            s = &data[starts[k]]
            n = ends[k] - starts[k]
            i = 0
            while i < n:
                end = piece_end(s, n, i, &classes[0], pattern)
                bounds.push_back(starts[k] + i)
                bounds.push_back(starts[k] + end)
                if pattern == PATTERN_WORDS and end == i + 1 and s[i] == UNDERSCORE:
                    gaps.push_back(starts[k] + i)
                i = end
    return _int64_array(bounds), _int64_array(gaps)


cdef object _int64_array(vector[int64_t]& values):
    """A new int64 array holding ``values`` (copied directly: no intermediate view object)."""
    out = np.empty(values.size(), dtype=np.int64)
    cdef int64_t[::1] view
    if values.size():
        view = out
        memcpy(&view[0], values.data(), values.size() * sizeof(int64_t))
    return out
