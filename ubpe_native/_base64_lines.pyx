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

from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
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
