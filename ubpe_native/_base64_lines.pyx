# distutils: language = c++
"""Vocabulary files of base64 tokens, read in one pass: ``.tiktoken`` lines and tekken's fields.

A ``.tiktoken`` file is one ``base64(bytes) rank`` line per token (tiktoken's
``load_tiktoken_bpe`` decodes it line by line in Python). Here the whole file is decoded in C
into three arrays - the tokens' bytes back to back, their offsets and their ranks - so that
loading a vocabulary builds no Python object per token.

The fast path takes only the regular form: ``\\n`` or ``\\r\\n`` line ends, blank lines, and
lines of strict base64 (tiktoken's alphabet, padding as ``binascii`` requires it), one space and
a rank of at most ten digits below ``2**32``. Anything else gives ``None`` and the caller reads
the file the slow way, which knows every quirk and names the faulty line. A field of padding
alone (``=``) is the empty token, as tiktoken's loader reads it.

>>> import numpy as np
>>> pieces, offsets, ranks = parse_lines(b"YQ== 0\\nYWI= 7\\n\\n= 2\\n", True)
>>> bytes(pieces), offsets.tolist(), ranks.tolist()
(b'aab', [0, 1, 3, 3], [0, 7, 2])
>>> parse_lines(b"YQ== 0\\nYWI 7\\n", True) is None   # padding missing: the slow path says so
True
>>> first_repeat(np.frombuffer(b"abcbc", np.uint8), np.array([0, 1, 3, 5]))
2
"""

from cpython cimport array as carray
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcmp, memcpy
from libcpp.vector cimport vector

from ubpe_native._numpy import np

from ubpe_native._checks cimport check_offsets
from ubpe_native._flat_map cimport FlatMap

# base64 digit value per byte; NOT_BASE64 for any other byte
cdef uint8_t NOT_BASE64 = 0xFF
cdef uint8_t DIGIT_VALUE[256]
cdef bytes ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
cdef int _k
for _k in range(256):
    DIGIT_VALUE[_k] = NOT_BASE64
for _k in range(len(ALPHABET)):
    DIGIT_VALUE[<uint8_t>ALPHABET[_k]] = _k
cdef uint8_t PADDING = ord("=")
# tiktoken's ranks are 32-bit: at most ten digits, at most 2**32 - 1
cdef int MAX_RANK_DIGITS = 10
cdef uint64_t MAX_RANK = 0xFFFFFFFF
# FNV-1a, the hash of pieces in `first_repeat`
cdef uint64_t FNV_OFFSET = 0xCBF29CE484222325ULL
cdef uint64_t FNV_PRIME = 0x100000001B3ULL
cdef uint64_t RESERVED_KEY = 0xFFFFFFFFFFFFFFFFULL
# a byte-level vocabulary's single bytes
cdef Py_ssize_t N_BYTE_TOKENS = 256

cdef extern from *:
    """
    #include <algorithm>
    #include <vector>
    #include <cstdint>
    /* order (indices into ranks) sorted by rank, ties by index: a stable order */
    static void ubpe_sort_by_rank(std::vector<int64_t>& order, const std::vector<int64_t>& ranks) {
        std::stable_sort(order.begin(), order.end(),
                         [&ranks](int64_t a, int64_t b) { return ranks[a] < ranks[b]; });
    }
    """
    void sort_by_rank "ubpe_sort_by_rank"(vector[int64_t]& order, const vector[int64_t]& ranks) except + nogil


cdef Py_ssize_t decode_field(const uint8_t* field, Py_ssize_t length, uint8_t* out) noexcept nogil:
    """Decode the strict base64 ``field`` into ``out`` (room for ``3 * length / 4`` bytes);
    how many bytes it wrote, or -1 if the field is not in the regular form. Padding alone is
    the empty token (0 bytes)."""
    cdef Py_ssize_t n_digits = length, i, n_out = 0
    cdef uint32_t quad
    cdef uint8_t value
    if length == 0:
        return -1  # no field at all (a line that starts with its space)
    while n_digits > 0 and field[n_digits - 1] == PADDING:
        n_digits -= 1
    if n_digits == 0:
        return 0  # padding alone: the empty token
    # the only strict forms: full quads, or a last quad of 2 digits + "==" or 3 digits + "="
    if not ((n_digits % 4 == 0 and length == n_digits) or (n_digits % 4 == 2 and length == n_digits + 2)
            or (n_digits % 4 == 3 and length == n_digits + 1)):
        return -1
    quad = 0
    for i in range(n_digits):
        value = DIGIT_VALUE[field[i]]
        if value == NOT_BASE64:
            return -1
        quad = (quad << 6) | value
        if i % 4 == 3:
            out[n_out] = <uint8_t>(quad >> 16)
            out[n_out + 1] = <uint8_t>(quad >> 8)
            out[n_out + 2] = <uint8_t>quad
            n_out += 3
            quad = 0
    if n_digits % 4 == 2:  # 12 bits: one byte, the low 4 bits are padding
        out[n_out] = <uint8_t>(quad >> 4)
        n_out += 1
    elif n_digits % 4 == 3:  # 18 bits: two bytes, the low 2 bits are padding
        out[n_out] = <uint8_t>(quad >> 10)
        out[n_out + 1] = <uint8_t>(quad >> 2)
        n_out += 2
    return n_out


cdef int64_t parse_rank(const uint8_t* field, Py_ssize_t length) noexcept nogil:
    """The rank in ``field`` (decimal digits), or -1 if it is not a regular one."""
    cdef uint64_t rank = 0
    cdef Py_ssize_t i
    if length < 1 or length > MAX_RANK_DIGITS:
        return -1
    for i in range(length):
        if not (48 <= field[i] <= 57):
            return -1
        rank = rank * 10 + (field[i] - 48)
    return <int64_t>rank if rank <= MAX_RANK else -1


cdef int parse_all(const uint8_t* data, Py_ssize_t n, bint ranked, vector[uint8_t]& pieces,
                   vector[int64_t]& offsets, vector[int64_t]& ranks) except -1 nogil:
    """Fill the arrays of `parse_lines`; 1 if the data is not in the regular form, else 0."""
    cdef Py_ssize_t start = 0, end, line_end, space, n_bytes
    cdef int64_t rank
    pieces.resize(n)  # a field decodes to fewer bytes than it has
    offsets.push_back(0)
    while start < n:
        end = start
        while end < n and data[end] != 10:  # "\n"
            end += 1
        line_end = end
        if line_end > start and data[line_end - 1] == 13:  # "\r\n"
            line_end -= 1
        if line_end > start:
            if ranked:
                space = start
                while space < line_end and data[space] != 32:
                    space += 1
                if space == line_end:
                    return 1
                rank = parse_rank(data + space + 1, line_end - space - 1)
                if rank < 0:
                    return 1
            else:
                space = line_end
                rank = <int64_t>ranks.size()
            n_bytes = decode_field(data + start, space - start, pieces.data() + offsets.back())
            if n_bytes < 0:
                return 1
            offsets.push_back(offsets.back() + n_bytes)
            ranks.push_back(rank)
        start = end + 1
    pieces.resize(offsets.back())
    return 0


def parse_lines(const uint8_t[::1] data not None, bint ranked):
    """``(pieces, offsets, ranks)`` of base64 lines: token ``k`` is
    ``pieces[offsets[k]:offsets[k + 1]]`` (uint8, int64 offsets) of rank ``ranks[k]``. With
    ``ranked`` every line is ``base64 rank`` (a ``.tiktoken`` file); without, a line is a base64
    field alone and its rank is its place among the lines that are not blank. ``None`` if a
    line is not in the regular form (see the module docstring)."""
    cdef vector[uint8_t] pieces
    cdef vector[int64_t] offsets, ranks
    cdef int irregular = 0
    cdef Py_ssize_t n = data.shape[0]
    if n:
        with nogil:
            irregular = parse_all(&data[0], n, ranked, pieces, offsets, ranks)
    else:
        offsets.push_back(0)
    if irregular:
        return None
    return (as_numpy(pieces.data(), pieces.size(), np.uint8), as_numpy(offsets.data(), offsets.size(), np.int64),
            as_numpy(ranks.data(), ranks.size(), np.int64))


cdef object as_numpy(const void* data, size_t n, dtype):
    """A new numpy array of ``n`` items of ``dtype`` copied from ``data`` (a vector's buffer)."""
    out = np.empty(n, dtype=dtype)
    if n:
        memcpy(<void*><size_t>out.ctypes.data, data, n * out.itemsize)
    return out


cdef uint64_t piece_hash(const uint8_t* piece, Py_ssize_t length) noexcept nogil:
    cdef uint64_t h = FNV_OFFSET
    cdef Py_ssize_t i
    for i in range(length):
        h = (h ^ piece[i]) * FNV_PRIME
    return h - 1 if h == RESERVED_KEY else h


def first_repeat(const uint8_t[::1] pieces not None, const int64_t[::1] offsets not None):
    """The first ``k`` whose piece ``pieces[offsets[k]:offsets[k + 1]]`` equals an earlier
    one's, or -1 if the pieces are distinct (one hash look-up each)."""
    cdef Py_ssize_t n = offsets.shape[0] - 1, k, found = -1
    if n < 0:
        raise ValueError("offsets must hold at least one entry")
    check_offsets(offsets, pieces.shape[0], "offsets")
    cdef FlatMap seen = FlatMap(<size_t>n)  # hash -> index + 1 of the first piece with it
    cdef vector[int64_t] chain  # index -> the previous index of the same hash + 1 (0: none)
    cdef int64_t* slot
    cdef int64_t other
    cdef const uint8_t* base = &pieces[0] if pieces.shape[0] else NULL
    chain.resize(n)
    with nogil:
        for k in range(n):
            slot = seen.slot(piece_hash(base + offsets[k], offsets[k + 1] - offsets[k]))
            other = slot[0]
            while other:
                if (offsets[other] - offsets[other - 1] == offsets[k + 1] - offsets[k]
                        and memcmp(base + offsets[other - 1], base + offsets[k], offsets[k + 1] - offsets[k]) == 0):
                    found = k
                    break
                other = chain[other - 1]
            if found >= 0:
                break
            chain[k] = slot[0]
            slot[0] = k + 1
    return found


# -- A .tiktoken file's merge tables, without numpy -------------------------------------------

# the largest rank a vocabulary takes (``ubpe.text.specials.MAX_RANK``: ids are int32)
cdef int64_t MAX_VOCAB_RANK = 0x7FFFFFFE
cdef carray.array INT32_TEMPLATE = carray.array("i")
cdef carray.array INT64_TEMPLATE = carray.array("q")


cdef carray.array _array_of(carray.array template, const void* data, Py_ssize_t n, size_t itemsize):
    """A new ``array.array`` like ``template`` of ``n`` items copied from ``data``."""
    cdef carray.array out = carray.clone(template, n, False)
    if n:
        memcpy(out.data.as_voidptr, data, n * itemsize)
    return out


def ranked_tables(const uint8_t[::1] data not None):
    """What a ``.tiktoken`` file's bytes give a byte-level model, read and checked in C with no
    numpy array and no Python object per token: ``(symbols, offsets, token_ids, priorities,
    identity)``, or ``None`` when the file is not in the regular form (`parse_lines`) or breaks
    a rule of `ubpe.models.bytelevel_trainer.arrays_vocabulary` (the caller then reads it the
    way that names the fault).

    The empty token is left out (BPE never makes it). The merged tokens (two bytes or more), in
    rank order, are ``symbols[offsets[t]:offsets[t + 1]]`` (int32 byte values, int64 offsets
    from 0) with priority ``t``; ``token_ids`` (int32) gives each vocabulary id its rank: byte
    ``b`` is id ``b``, merged token ``t`` id ``256 + t``; ``identity``: every id is its rank.
    ``array.array`` objects of typecodes ``i`` and ``q`` (what the kernels take as they are).

    >>> symbols, offsets, ids, priorities, identity = ranked_tables(
    ...     b"\\n".join(__import__("base64").b64encode(bytes([b])) + b" %d" % b for b in range(256)) + b"\\nYWI= 256\\n")
    >>> symbols.tolist(), offsets.tolist(), ids[-1], priorities.tolist(), identity
    ([97, 98], [0, 2], 256, [0], True)
    """
    cdef vector[uint8_t] pieces
    cdef vector[int64_t] offsets, ranks, out_offsets, priorities
    cdef vector[int32_t] out_symbols, ids
    cdef Py_ssize_t n = data.shape[0], k
    cdef int invalid = 1
    if n:
        with nogil:
            invalid = parse_all(&data[0], n, True, pieces, offsets, ranks)
            if not invalid:
                invalid = rank_tables(pieces, offsets, ranks, out_symbols, out_offsets, ids, priorities)
    if invalid:
        return None
    cdef bint identity = True
    for k in range(<Py_ssize_t>ids.size()):
        if ids[k] != k:
            identity = False
            break
    return (_array_of(INT32_TEMPLATE, out_symbols.data(), out_symbols.size(), 4),
            _array_of(INT64_TEMPLATE, out_offsets.data(), out_offsets.size(), 8),
            _array_of(INT32_TEMPLATE, ids.data(), ids.size(), 4),
            _array_of(INT64_TEMPLATE, priorities.data(), priorities.size(), 8), identity)


cdef int rank_tables(const vector[uint8_t]& pieces, const vector[int64_t]& offsets, const vector[int64_t]& ranks,
                     vector[int32_t]& out_symbols, vector[int64_t]& out_offsets, vector[int32_t]& ids,
                     vector[int64_t]& priorities) except -1 nogil:
    """`ranked_tables`' checks and tables from `parse_all`'s arrays; 1 if a rule is broken
    (a rank out of range or given twice, a piece given twice, a single byte missing), else 0."""
    cdef vector[int64_t] kept  # the tokens that are not empty, in file order, then in rank order
    cdef vector[int64_t] byte_rank
    cdef vector[int64_t] chain  # kept index -> the previous kept index of the same hash + 1 (0: none)
    cdef Py_ssize_t k, j, count
    cdef int64_t length, start, other
    cdef int64_t* slot
    cdef bint sorted_ranks = True
    for k in range(<Py_ssize_t>ranks.size()):
        if offsets[k + 1] > offsets[k]:
            if ranks[k] < 0 or ranks[k] > MAX_VOCAB_RANK:
                return 1
            if kept.size() and ranks[k] <= ranks[kept.back()]:
                sorted_ranks = False
            kept.push_back(k)
    count = kept.size()
    cdef FlatMap seen = FlatMap(<size_t>count)  # piece hash -> kept index + 1 of the first with it
    chain.resize(count)
    for j in range(count):
        k = kept[j]
        length = offsets[k + 1] - offsets[k]
        slot = seen.slot(piece_hash(pieces.data() + offsets[k], length))
        other = slot[0]
        while other:
            start = kept[other - 1]
            if (offsets[start + 1] - offsets[start] == length
                    and memcmp(pieces.data() + offsets[start], pieces.data() + offsets[k], length) == 0):
                return 1
            other = chain[other - 1]
        chain[j] = slot[0]
        slot[0] = j + 1
    if not sorted_ranks:
        sort_by_rank(kept, ranks)
        for j in range(1, count):
            if ranks[kept[j]] == ranks[kept[j - 1]]:
                return 1
    byte_rank.resize(N_BYTE_TOKENS, -1)
    ids.resize(N_BYTE_TOKENS)
    out_offsets.push_back(0)
    for j in range(count):
        k = kept[j]
        if offsets[k + 1] - offsets[k] == 1:
            byte_rank[pieces[offsets[k]]] = ranks[k]
            continue
        for start in range(offsets[k], offsets[k + 1]):
            out_symbols.push_back(pieces[start])
        out_offsets.push_back(out_symbols.size())
        priorities.push_back(priorities.size())
        ids.push_back(<int32_t>ranks[k])
    for k in range(N_BYTE_TOKENS):
        if byte_rank[k] < 0:
            return 1
        ids[k] = <int32_t>byte_rank[k]
    return 0
