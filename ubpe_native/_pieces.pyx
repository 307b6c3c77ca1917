# distutils: language = c++
"""The pieces of a vocabulary's merges, in C: what a model's load checks and expands without
numpy or Python frames per token (:mod:`ubpe.vocabulary`; kept out of the encoders' kernels,
so a fit imports none of them).

``first_misspelled`` checks recorded merges against the pieces a file holds (a universal
model's load); ``flatten_pairs`` expands pairs into pieces (a classic model's load, a fit's
vocabulary), refusing pairs whose pieces would pass :data:`MAX_PIECE_SYMBOLS`.
"""

from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.string cimport memcpy
from libcpp.vector cimport vector

from array import array

from ubpe_native._checks cimport as_buffer, check_buffer, check_offsets
from ubpe_native._typedefs cimport id_t


def first_misspelled(id_t n_base, merges, piece_offsets, piece_symbols):
    """The index ``t`` of the first merged token whose recorded merge ``(left, right)`` does not
    spell its piece (``piece(left) + piece(right) != piece(n_base + t)``, a base id spelling
    itself) or names an id outside the vocabulary; -1 if every recorded merge spells its piece.
    A merge with a component of -1 records none and is skipped. ``merges`` is the pairs back to
    back (int32, ``2 * T`` ids), ``piece_offsets`` (int64, ``T + 1``) and ``piece_symbols``
    (int32) the pieces of the ``T`` merged tokens: what a load checks a model file's merges
    against its pieces with, in C and without numpy (:meth:`ubpe.vocabulary.Vocabulary.from_pieces`).

    >>> from array import array
    >>> offsets, symbols = array("q", [0, 2, 5]), array("i", [0, 1, 0, 1, 1])
    >>> first_misspelled(2, array("i", [0, 1, 2, 1]), offsets, symbols)
    -1
    >>> first_misspelled(2, array("i", [0, 1, 1, 2]), offsets, symbols)
    1
    >>> first_misspelled(2, array("i", [-1, -1, 2, 1]), offsets, symbols)
    -1
    """
    if n_base < 0:
        raise ValueError(f"n_base must be non-negative, got {n_base}")
    cdef const id_t[::1] pairs = as_buffer(merges, "i", "int32", "merges")
    cdef const int64_t[::1] offsets = as_buffer(piece_offsets, "q", "int64", "piece_offsets")
    cdef const id_t[::1] symbols = as_buffer(piece_symbols, "i", "int32", "piece_symbols")
    cdef Py_ssize_t n = offsets.shape[0] - 1, t
    check_offsets(offsets, symbols.shape[0], "piece_offsets")
    if pairs.shape[0] != 2 * n:
        raise ValueError(f"merges must hold two ids per piece ({2 * n}), not {pairs.shape[0]}")
    with nogil:
        t = _first_misspelled(n_base, pairs, offsets, symbols)
    return t


cdef Py_ssize_t _first_misspelled(id_t n_base, const id_t[::1] pairs, const int64_t[::1] offsets,
                                  const id_t[::1] symbols) noexcept nogil:
    """:func:`first_misspelled` of checked buffers."""
    cdef Py_ssize_t n = offsets.shape[0] - 1, t, k, k2, at, start, length, part_length
    cdef int64_t limit = <int64_t>n_base + n
    cdef id_t part, parts[2]
    for t in range(n):
        parts[0], parts[1] = pairs[2 * t], pairs[2 * t + 1]
        if parts[0] == -1 or parts[1] == -1:
            continue
        if parts[0] < 0 or parts[1] < 0 or parts[0] >= limit or parts[1] >= limit:
            return t
        at = offsets[t]
        length = offsets[t + 1] - at
        for k in range(2):
            part = parts[k]
            if part < n_base:
                if length < 1 or symbols[at] != part:
                    return t
                at += 1
                length -= 1
            else:
                start = offsets[part - n_base]
                part_length = offsets[part - n_base + 1] - start
                if part_length > length:
                    return t
                for k2 in range(part_length):
                    if symbols[at + k2] != symbols[start + k2]:
                        return t
                at += part_length
                length -= part_length
        if length != 0:
            return t
    return -1


cdef enum:
    _CORRUPT = 1
    _TOO_LONG = 2
    _MAX_SYMBOLS = 1 << 28

#: the most symbols the pieces of a vocabulary's merges may spell in all (1 GiB of int32): past
#: it a model is refused before anything is allocated - a chain of merges that each double
#: their component (token k = (k - 1, k - 1)) spells 2**k symbols from a few bytes of file
MAX_PIECE_SYMBOLS = _MAX_SYMBOLS

#: :func:`flatten_pairs`' answers when the pieces are not made
FLATTEN_CORRUPT = _CORRUPT  # a component outside the vocabulary, or a token built from itself
FLATTEN_TOO_LONG = _TOO_LONG  # the pieces would hold more than MAX_PIECE_SYMBOLS symbols


def flatten_pairs(id_t n_base, merges):
    """The pieces of every merged token from its pair (token ``n_base + t`` is
    ``(merges[2t], merges[2t + 1])``; components may come after the tokens they build):
    ``(offsets, symbols)`` as int64 and int32 ``array.array``, each piece its left component's
    piece then its right's (a base id spells itself). :data:`FLATTEN_CORRUPT` if a component is
    outside the vocabulary or a token is built from itself (the caller names the token),
    :data:`FLATTEN_TOO_LONG` if the pieces would pass :data:`MAX_PIECE_SYMBOLS`. Linear in the
    pieces' length, in C: a 0.3.0 classic model's load (``UBPEClassic.loads``) expands its pairs
    with it.

    >>> from array import array
    >>> [a.tolist() for a in flatten_pairs(2, array("i", [3, 1, 0, 1]))]
    [[0, 3, 5], [0, 1, 1, 0, 1]]
    >>> flatten_pairs(2, array("i", [2, 1])) == FLATTEN_CORRUPT, flatten_pairs(2, array("i", [0, 5])) == FLATTEN_CORRUPT
    (True, True)
    >>> flatten_pairs(2, array("i", [0, 1] + [k for t in range(2, 40) for k in (t, t)])) == FLATTEN_TOO_LONG
    True
    """
    if n_base < 0:
        raise ValueError(f"n_base must be non-negative, got {n_base}")
    cdef const id_t[::1] pairs = as_buffer(merges, "i", "int32", "merges")
    if pairs.shape[0] % 2:
        raise ValueError(f"merges must hold two ids per token, not {pairs.shape[0]} ids")
    cdef Py_ssize_t n = pairs.shape[0] // 2
    check_buffer(n + 1, 1, 8, "the pieces' offsets")
    offsets = array("q", bytes(8 * (n + 1)))
    cdef int64_t[::1] offset_view = offsets
    cdef vector[int32_t] order  # the tokens, each after its components (post-order)
    cdef int status
    with nogil:
        status = _piece_lengths(n_base, pairs, offset_view, order)
    if status:
        return status
    symbols = array("i", bytes(4 * offset_view[n]))
    cdef id_t[::1] symbol_view = symbols
    with nogil:
        _spell_pieces(n_base, pairs, offset_view, order, symbol_view)
    return offsets, symbols


cdef int _piece_lengths(id_t n_base, const id_t[::1] pairs, int64_t[::1] offsets,
                        vector[int32_t]& order) except -1 nogil:
    """Every piece's length (into ``offsets[1:]``, then summed into offsets) and the order to
    spell them in; FLATTEN_CORRUPT or FLATTEN_TOO_LONG instead where that is the answer."""
    cdef Py_ssize_t n = offsets.shape[0] - 1, t, root
    cdef int64_t limit = <int64_t>n_base + n, length
    cdef vector[uint8_t] state  # 0 new, 1 on the stack, 2 done
    cdef vector[int32_t] stack
    cdef id_t c, k
    state.resize(n, 0)
    order.reserve(n)
    for root in range(n):
        if state[root]:
            continue
        stack.push_back(root)
        while stack.size():
            t = stack.back()
            if state[t] == 0:
                state[t] = 1
                for k in range(2):
                    c = pairs[2 * t + k]
                    if c < 0 or c >= limit:
                        return _CORRUPT
                    if c >= n_base:
                        if state[c - n_base] == 1:
                            return _CORRUPT
                        if state[c - n_base] == 0:
                            stack.push_back(c - n_base)
            else:
                stack.pop_back()
                if state[t] == 1:
                    length = 0
                    for k in range(2):
                        c = pairs[2 * t + k]
                        length += 1 if c < n_base else offsets[c - n_base + 1]
                    if length > _MAX_SYMBOLS:
                        return _TOO_LONG
                    offsets[t + 1] = length
                    state[t] = 2
                    order.push_back(t)
    length = 0
    for t in range(n):
        length += offsets[t + 1]
        if length > _MAX_SYMBOLS:
            return _TOO_LONG
        offsets[t + 1] = length
    return 0


cdef void _spell_pieces(id_t n_base, const id_t[::1] pairs, const int64_t[::1] offsets,
                        const vector[int32_t]& order, id_t[::1] symbols) noexcept nogil:
    """Each piece, in ``order`` (components first), as its components' pieces back to back."""
    cdef Py_ssize_t i, at, start, end
    cdef int32_t t
    cdef id_t c, k
    for i in range(<Py_ssize_t>order.size()):
        t = order[i]
        at = offsets[t]
        for k in range(2):
            c = pairs[2 * t + k]
            if c < n_base:
                symbols[at] = c
                at += 1
            else:
                start, end = offsets[c - n_base], offsets[c - n_base + 1]
                memcpy(&symbols[at], &symbols[start], (end - start) * sizeof(id_t))
                at += end - start
