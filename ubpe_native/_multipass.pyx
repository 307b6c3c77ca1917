# distutils: language = c++
"""llama.cpp's pre-tokenizers that are lists of regexes, without the GIL.

llama.cpp cuts a text with each regex of a list in turn: every regex splits every piece the
previous ones left (matched within the piece alone: ``$`` and lookaheads see the piece's end)
into its matches and the stretches between them, which stay pieces too (nothing is dropped).
`split_passes` does that for many documents back to back, each regex a program of the regex
VM (``regex_vm.h``, registered by ``_regex``; ``ubpe.text.pretokenizers.vm_pattern`` writes
llama.cpp's regexes, collapsed-text ones included, as such programs).

>>> import numpy as np
>>> from ubpe.text.regex_program import compile_pattern
>>> digits, words = compile_pattern(r"[0-9]").pattern_id, compile_pattern(r" ?[a-z]+").pattern_id
>>> bounds, chars, pieces = split_passes("ab12 cd!".encode(), [4, 0, 4], np.array([digits, words], np.int32))
>>> bounds.tolist(), chars.tolist(), pieces.tolist()
([0, 2, 3, 4, 7, 8], [2, 1, 1, 3, 1], [0, 3, 3, 5])
"""

from libc.stddef cimport ptrdiff_t
from libc.stdint cimport int32_t, int64_t, uint8_t
from libcpp.algorithm cimport swap
from libcpp.vector cimport vector

from ubpe_native._numpy import np

from ubpe_native._pretokenize cimport document_flags, utf8_documents
from ubpe_native._regex cimport Program, find_next, program_of


def split_passes(const uint8_t[::1] data not None, char_lengths, const int32_t[::1] patterns not None,
                 skip=None):
    """The pieces of documents back to back in UTF-8 ``data`` (``char_lengths``: each one's
    length in code points) after every pattern of ``patterns`` (ids of registered programs) in
    turn, as llama.cpp's lists of regexes cut text. A document with ``skip[d]`` non-zero is one
    piece, uncut; an empty one has none. The pieces tile ``data``.

    Returns ``(bounds, chars, pieces)`` (int64): piece ``k`` is ``data[bounds[k]:bounds[k + 1]]``,
    ``chars[k]`` code points long; document ``d``'s pieces are ``pieces[d]`` to ``pieces[d + 1]``.
    """
    cdef Py_ssize_t k
    cdef vector[const Program*] programs
    for k in range(patterns.shape[0]):
        programs.push_back(program_of(patterns[k]))
        if programs.back() == NULL:
            raise ValueError(f"pattern {patterns[k]} is no registered program of the regex VM")
    cdef const int64_t[::1] starts = utf8_documents(data, char_lengths)
    cdef Py_ssize_t n_docs = starts.shape[0] - 1
    cdef const uint8_t[::1] skip_view = document_flags(skip, n_docs, "skip")
    pieces = np.zeros(n_docs + 1, dtype=np.int64)
    cdef int64_t[::1] piece_view = pieces
    cdef vector[int64_t] bounds, chars
    with nogil:
        _split_all(&data[0] if data.shape[0] else NULL, &starts[0], n_docs, programs,
                   &skip_view[0] if n_docs else NULL, bounds, chars, &piece_view[0])
    out_bounds = np.empty(bounds.size(), dtype=np.int64)
    out_chars = np.empty(chars.size(), dtype=np.int64)
    cdef int64_t[::1] bound_view = out_bounds, char_view = out_chars
    for k in range(<Py_ssize_t>bounds.size()):
        bound_view[k] = bounds[k]
    for k in range(<Py_ssize_t>chars.size()):
        char_view[k] = chars[k]
    return out_bounds, out_chars, pieces


cdef int _split_all(const uint8_t* data, const int64_t* starts, Py_ssize_t n_docs,
                    const vector[const Program*]& programs, const uint8_t* skip, vector[int64_t]& bounds,
                    vector[int64_t]& chars, int64_t* pieces) except -1 nogil:
    cdef vector[int64_t] current, following  # (start, end) pairs, flat
    cdef Py_ssize_t d, k, p
    cdef int64_t i, a, b, count
    bounds.push_back(0)
    for d in range(n_docs):
        current.clear()
        if starts[d + 1] > starts[d]:
            current.push_back(starts[d])
            current.push_back(starts[d + 1])
        for p in range(<Py_ssize_t>programs.size() if not skip[d] else 0):
            following.clear()
            for k in range(0, <Py_ssize_t>current.size(), 2):
                _split_piece(programs[p][0], data, current[k], current[k + 1], following)
            swap(current, following)
        for k in range(0, <Py_ssize_t>current.size(), 2):
            a = current[k]
            b = current[k + 1]
            count = 0
            for i in range(a, b):
                count += (data[i] & 0xC0) != 0x80  # a code point's first byte
            bounds.push_back(b)
            chars.push_back(count)
        pieces[d + 1] = chars.size()
    return 0


cdef int _split_piece(const Program& program, const uint8_t* data, int64_t a, int64_t b,
                      vector[int64_t]& out) except -1 nogil:
    """Appends the pieces of ``data[a:b]`` cut by ``program``'s matches (found in it alone)."""
    cdef ptrdiff_t i = 0, start, end, n = b - a
    while i < n and find_next(program, data + a, n, i, &start, &end):
        if start > i:
            out.push_back(a + i)
            out.push_back(a + start)
        out.push_back(a + start)
        out.push_back(a + end)
        i = end
    if i < n:
        out.push_back(a + i)
        out.push_back(b)
    return 0
