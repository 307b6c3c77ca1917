# distutils: language = c++
"""Id tables for loading big vocabularies: which token each merge operand and result is.

`StringIds(blob, offsets)` indexes strings ``blob[offsets[k]:offsets[k+1]]`` (id ``k``) by a
64-bit hash of their bytes; `pair_ids` looks up, for many ``"left right"`` lines of one UTF-8
blob, the ids of ``left``, ``right`` and ``left + right`` (-1: not a string of the table).
Every hit is checked byte for byte, so a hash collision never gives a wrong id; two indexed
strings with one hash make the table refuse (``ValueError``), and the caller uses dicts.

>>> import numpy as np
>>> table = StringIds(b"abab", np.array([0, 1, 2, 4]))
>>> table.find(b"ab"), table.find(b"ba")
(2, -1)
>>> [a.tolist() for a in table.pair_ids(b"a b\\nab a", np.array([0, 4]), np.array([1, 6]), np.array([3, 8]))]
[[0, 2], [1, 0], [2, -1]]

`pair_ids_in` looks up tokenizer.json's merge rules (``"left right"`` strings or ``[left, right]``
pairs, as the JSON decoder gives them) in its ``vocab`` dict, in one pass without Python frames:

>>> *ids, repeated = pair_ids_in({"a": 0, "b": 1, "ab": 2}, ["a b", ["b", "a"], ("a", "ab"), "b a"])
>>> [a.tolist() for a in ids], repeated
([[0, 1, 0, 1], [1, 0, 2, 0], [2, -1, -1, -1]], True)
>>> pair_ids_in({"a": 0}, ["a b c"]) is None, pair_ids_in({"a": 0}, [["a"]]) is None
(True, True)

`length_prefixed` reads a GGUF string array (each string: a little-endian u64 byte count,
then the bytes) into one NUL-separated blob.

>>> length_prefixed(b"\\x02\\0\\0\\0\\0\\0\\0\\0hi\\x00\\0\\0\\0\\0\\0\\0\\0", 0, 2, 100)
(b'hi\\x00', 18, False)
"""

from cpython.unicode cimport PyUnicode_Concat, PyUnicode_FindChar, PyUnicode_Substring
from libc.stdint cimport int64_t, uint8_t, uint64_t
from libc.string cimport memcmp
from libcpp.vector cimport vector

from ubpe_native._numpy import np

from ubpe_native._checks cimport build_once, check_offsets
from ubpe_native._flat_map cimport FlatMap, pack_key
from ubpe_native._typedefs cimport id_t

cdef uint64_t FNV_OFFSET = 0xCBF29CE484222325ULL
cdef uint64_t FNV_PRIME = 0x100000001B3ULL
cdef uint64_t RESERVED = 0xFFFFFFFFFFFFFFFFULL  # FlatMap's empty key


cdef inline uint64_t fnv1a(uint64_t h, const uint8_t* s, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t k
    for k in range(n):
        h = (h ^ s[k]) * FNV_PRIME
    return h


cdef inline uint64_t finish(uint64_t h) noexcept nogil:
    return h - 1 if h == RESERVED else h


cdef class StringIds:
    """``StringIds(blob, offsets)``: string ``k`` is ``blob[offsets[k]:offsets[k+1]]``; of
    equal strings the last keeps its id (as ``dict(zip(texts, range(n)))``)."""

    cdef bytes blob
    cdef vector[int64_t] offsets
    cdef FlatMap ids  # hash -> id + 1

    cdef bint built  # __init__ ran (build_once)

    def __init__(self, bytes blob not None, const int64_t[::1] offsets not None):
        build_once(&self.built, self)
        cdef Py_ssize_t n = offsets.shape[0] - 1, k
        cdef const uint8_t* data = <const uint8_t*><const char*>blob
        cdef int64_t* slot
        cdef id_t other
        check_offsets(offsets, len(blob), "offsets")
        self.blob = blob
        self.offsets.assign(&offsets[0], &offsets[0] + n + 1)
        for k in range(n):
            slot = self.ids.slot(finish(fnv1a(FNV_OFFSET, data + offsets[k], offsets[k + 1] - offsets[k])))
            if slot[0] != 0:
                other = <id_t>(slot[0] - 1)
                if not self._same(other, data + offsets[k], offsets[k + 1] - offsets[k], NULL, 0):
                    raise ValueError(f"strings {other} and {k} share a hash")
            slot[0] = k + 1

    cdef inline bint _same(self, id_t token, const uint8_t* a, Py_ssize_t na, const uint8_t* b,
                           Py_ssize_t nb) noexcept:
        """Whether string ``token`` is ``a[:na] + b[:nb]``."""
        cdef const uint8_t* data = <const uint8_t*><const char*>self.blob
        cdef int64_t start = self.offsets[token], length = self.offsets[token + 1] - start
        return length == na + nb and memcmp(data + start, a, na) == 0 \
            and (nb == 0 or memcmp(data + start + na, b, nb) == 0)

    cdef inline id_t _find(self, const uint8_t* a, Py_ssize_t na, const uint8_t* b, Py_ssize_t nb) noexcept:
        cdef uint64_t h = fnv1a(FNV_OFFSET, a, na)
        if nb:
            h = fnv1a(h, b, nb)
        cdef int64_t found = self.ids.get(finish(h), 0)
        if found == 0 or not self._same(<id_t>(found - 1), a, na, b, nb):
            return -1
        return <id_t>(found - 1)

    def find(self, bytes text not None):
        """The id of ``text``, -1 if it is none of the strings."""
        return self._find(<const uint8_t*><const char*>text, len(text), NULL, 0)

    def pair_ids(self, bytes text not None, const int64_t[::1] starts not None, const int64_t[::1] cuts not None,
                 const int64_t[::1] ends not None):
        """``(left, right, result)`` ids of the lines ``text[starts[k]:ends[k]]`` cut at
        ``cuts[k]`` (the separator's position: left ``starts[k]:cuts[k]``, right
        ``cuts[k]+1:ends[k]``), -1 where a part is no string of the table."""
        cdef Py_ssize_t n = starts.shape[0], k
        cdef const uint8_t* data = <const uint8_t*><const char*>text
        if cuts.shape[0] != n or ends.shape[0] != n:
            raise ValueError("starts, cuts and ends disagree in length")
        for k in range(n):
            if not 0 <= starts[k] <= cuts[k] < ends[k] <= len(text):
                raise ValueError(f"line {k} is not inside the text with its cut")
        left = np.empty(n, dtype=np.int32)
        right = np.empty(n, dtype=np.int32)
        result = np.empty(n, dtype=np.int32)
        cdef id_t[::1] lv = left, rv = right, mv = result
        for k in range(n):
            lv[k] = self._find(data + starts[k], cuts[k] - starts[k], NULL, 0)
            rv[k] = self._find(data + cuts[k] + 1, ends[k] - cuts[k] - 1, NULL, 0)
            mv[k] = self._find(data + starts[k], cuts[k] - starts[k], data + cuts[k] + 1, ends[k] - cuts[k] - 1)
        return left, right, result


cdef inline id_t _vocab_id(dict vocab, object text) except -2:
    """``vocab[text]`` as an id, -1 when absent; -2 raises (a value that is no id in range)."""
    cdef object value = vocab.get(text)
    if value is None:
        return -1
    if type(value) is not int or not 0 <= value < 2147483647:
        raise ValueError(f"the vocabulary gives {text!r:.40} the id {value!r:.40}, no non-negative int32")
    return <id_t>value


def pair_ids_in(dict vocab not None, list rules not None):
    """``(left, right, result, repeated)``: the int32 ids in ``vocab`` of every rule's left and
    right strings and of their concatenation (-1: not a key), and whether some pair of ids
    comes twice (two missing strings count as one id), for rules that are each a ``str``
    holding exactly one space (cut there, as HF cuts ``"left right"``) or a ``list`` / ``tuple``
    of two ``str``; None when some rule is neither (the caller's own checks then name it).
    ``ValueError`` when a value of ``vocab`` met is no id from 0 to 2**31 - 2."""
    cdef Py_ssize_t n = len(rules), k, cut, size
    cdef object rule, first, second
    cdef FlatMap seen = FlatMap(<size_t>n)
    cdef int64_t* slot
    cdef bint repeated = False
    left = np.empty(n, dtype=np.int32)
    right = np.empty(n, dtype=np.int32)
    result = np.empty(n, dtype=np.int32)
    cdef id_t[::1] lv = left, rv = right, mv = result
    for k in range(n):
        rule = rules[k]
        if type(rule) is str:
            size = len(<str>rule)
            cut = PyUnicode_FindChar(rule, 0x20, 0, size, 1)
            if cut < 0 or PyUnicode_FindChar(rule, 0x20, cut + 1, size, 1) >= 0:
                return None
            first, second = PyUnicode_Substring(rule, 0, cut), PyUnicode_Substring(rule, cut + 1, size)
        elif (type(rule) is list or type(rule) is tuple) and len(rule) == 2:
            first, second = rule[0], rule[1]
            if type(first) is not str or type(second) is not str:
                return None
        else:
            return None
        lv[k] = _vocab_id(vocab, first)
        rv[k] = _vocab_id(vocab, second)
        mv[k] = _vocab_id(vocab, PyUnicode_Concat(first, second))
        slot = seen.slot(pack_key(lv[k] + 1, rv[k] + 1))
        repeated |= slot[0] != 0
        slot[0] = 1
    return left, right, result, repeated


def length_prefixed(const uint8_t[::1] data not None, Py_ssize_t pos, Py_ssize_t n, uint64_t max_length):
    """``(blob, end, nul_inside)``: the ``n`` strings from ``pos`` joined by NUL bytes, the
    position after them, and whether some string holds a NUL itself (then the blob cannot be
    cut at NULs). A string running past the end or longer than ``max_length`` raises
    ``ValueError`` naming its offset."""
    cdef Py_ssize_t size = data.shape[0], k, start = pos
    cdef uint64_t length
    cdef int j
    cdef bint nul_inside = False
    if pos < 0 or n < 0:
        raise ValueError("pos and n must be non-negative")
    for k in range(n):  # first pass: bounds, total size
        if pos + 8 > size:
            raise ValueError(f"a string array runs past the end at offset {pos}")
        length = 0
        for j in range(8):
            length |= <uint64_t>data[pos + j] << (8 * j)
        if length > max_length or length > <uint64_t>(size - pos - 8):
            raise ValueError(f"corrupt string length {length} at offset {pos}")
        pos += 8 + <Py_ssize_t>length
    cdef bytearray out = bytearray(pos - start - 8 * n + (n - 1 if n else 0))
    cdef uint8_t* write = <uint8_t*>(<char*>out) if len(out) else NULL
    cdef Py_ssize_t w = 0
    pos = start
    for k in range(n):
        length = 0
        for j in range(8):
            length |= <uint64_t>data[pos + j] << (8 * j)
        pos += 8
        if k:
            write[w] = 0
            w += 1
        for j in range(<Py_ssize_t>length):
            nul_inside |= data[pos + j] == 0
            write[w + j] = data[pos + j]
        w += <Py_ssize_t>length
        pos += <Py_ssize_t>length
    return bytes(out), pos, nul_inside
