# distutils: language = c++
"""Id tables for loading big vocabularies: which token each merge operand and result is.

`StringIds(blob, offsets)` indexes strings ``blob[offsets[k]:offsets[k+1]]`` (id ``k``) by a
64-bit hash of their bytes; `pair_ids` looks up, for many ``"left right"`` lines of one UTF-8
blob, the ids of ``left``, ``right`` and ``left + right`` (-1: not a string of the table).
Every hit is checked byte for byte, so a hash collision never gives a wrong id.

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

from cpython cimport array as carray
from cpython.dict cimport PyDict_Next
from cpython.long cimport PyLong_AsLongLong
from cpython.object cimport PyObject
from cpython.unicode cimport PyUnicode_Concat, PyUnicode_FindChar, PyUnicode_Substring
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memchr, memcmp, memcpy
from libcpp.vector cimport vector

from ubpe_native._numpy import np

from ubpe_native._checks cimport build_once, check_offsets
from ubpe_native._flat_map cimport FlatMap, pack_key
from ubpe_native._pretokenize cimport check_utf8
from ubpe_native._shared cimport (PyUnicode_DATA, PyUnicode_GET_LENGTH, PyUnicode_KIND, PyUnicode_READ,
                                  PyUnicode_READY, push_code_point)
from ubpe_native._typedefs cimport id_t

# the columns of ids come back as ``array.array('i')``: a model loads without numpy
cdef carray.array INT32_TEMPLATE = carray.array("i")

cdef uint64_t FNV_OFFSET = 0xCBF29CE484222325ULL
cdef uint64_t FNV_PRIME = 0x100000001B3ULL


cdef inline uint64_t fnv1a(uint64_t h, const uint8_t* s, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t k
    for k in range(n):
        h = (h ^ s[k]) * FNV_PRIME
    return h


cdef inline id_t _vocab_id(dict vocab, object text) except -2:
    """``vocab[text]`` as an id, -1 when absent; -2 raises (a value that is no id in range)."""
    cdef object value = vocab.get(text)
    if value is None:
        return -1
    if type(value) is not int or not 0 <= value < 2147483647:
        raise ValueError(f"the vocabulary gives {text!r:.40} the id {value!r:.40}, no non-negative int32")
    return <id_t>value


def pair_ids_in(dict vocab not None, list rules not None):
    """``(left, right, result, repeated)``: the int32 ids (``array.array('i')``) in ``vocab`` of every rule's left and
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
    cdef carray.array left = carray.clone(INT32_TEMPLATE, n, False)
    cdef carray.array right = carray.clone(INT32_TEMPLATE, n, False)
    cdef carray.array result = carray.clone(INT32_TEMPLATE, n, False)
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


# -- tokenizer.json's merge rules from the file's bytes ---------------------------------------
# A 280k-rule file decoded by the json module is 280k strings, cut and looked up one by one
# (~0.2 s of Llama 3's load). `merges_span` finds the rules' array in the bytes, and
# `pair_ids_in_json` reads it against the vocabulary in one pass that makes no Python object.
# Both read strict JSON only and say None for anything they do not read exactly as the json
# module would (the caller then decodes the document as before, which names what is wrong).

cdef inline bint is_blank(uint8_t c) noexcept nogil:
    return c == 0x20 or c == 0x0A or c == 0x0D or c == 0x09


cdef inline Py_ssize_t skip_blanks(const uint8_t* s, Py_ssize_t n, Py_ssize_t i) noexcept nogil:
    while i < n and is_blank(s[i]):
        i += 1
    return i


cdef inline int hex4(const uint8_t* s) noexcept nogil:
    """The value of 4 hex digits, -1 if they are not."""
    cdef int value = 0, k, digit
    cdef uint8_t c
    for k in range(4):
        c = s[k]
        if 0x30 <= c <= 0x39:
            digit = c - 0x30
        elif 0x41 <= c <= 0x46:
            digit = c - 0x37
        elif 0x61 <= c <= 0x66:
            digit = c - 0x57
        else:
            return -1
        value = value * 16 + digit
    return value


cdef uint64_t ONES = 0x0101010101010101ULL, HIGHS = 0x8080808080808080ULL


cdef inline bint plain_word(const uint8_t* s) noexcept nogil:
    """Whether none of the 8 bytes at ``s`` is ``"``, ``\\`` or a control character (below
    0x20): a string's run of plain bytes (the usual bit tricks: a byte below ``k`` sets its high
    bit in ``x - k * ONES & ~x``, a byte equal to ``v`` is a zero byte of ``x ^ v * ONES``)."""
    cdef uint64_t x, q, b
    memcpy(&x, s, 8)
    q = x ^ (0x22 * ONES)
    b = x ^ (0x5C * ONES)
    return not (((x - 0x20 * ONES) & ~x) | ((q - ONES) & ~q) | ((b - ONES) & ~b)) & HIGHS


cdef Py_ssize_t string_end(const uint8_t* s, Py_ssize_t n, Py_ssize_t i, bint* escaped) noexcept nogil:
    """The position after the JSON string that starts at ``s[i]`` (its ``"``), ``escaped`` set
    if it holds an escape; -1 at a control character (the json module refuses it), a malformed
    escape or the end of the data. Any ``\\uXXXX`` is taken (the json module takes lone
    surrogates; `unescaped` does not)."""
    cdef uint8_t c
    if i >= n or s[i] != 0x22:
        return -1
    i += 1
    while i < n:
        if i + 8 <= n and plain_word(s + i):
            i += 8
            continue
        c = s[i]
        if c == 0x22:
            return i + 1
        if c < 0x20:
            return -1
        if c != 0x5C:
            i += 1
            continue
        escaped[0] = True
        if i + 1 >= n:
            return -1
        c = s[i + 1]
        if c == 0x75:
            if i + 6 > n or hex4(s + i + 2) < 0:
                return -1
            i += 6
        elif c == 0x22 or c == 0x5C or c == 0x2F or c == 0x62 or c == 0x66 or c == 0x6E or c == 0x72 or c == 0x74:
            i += 2
        else:
            return -1
    return -1


cdef int unescaped(const uint8_t* s, Py_ssize_t n, vector[uint8_t]& out) except -2 nogil:
    """The content ``s[:n]`` of a JSON string that `string_end` read (quotes left out),
    unescaped into ``out`` (UTF-8) as the json module decodes it: 0; -1 at an escape of a lone
    surrogate (no UTF-8)."""
    cdef Py_ssize_t i = 0, run
    cdef uint8_t c
    cdef int unit, low
    out.clear()
    while i < n:
        c = s[i]
        if c != 0x5C:
            run = i
            while i < n and s[i] != 0x5C:
                i += 1
            out.insert(out.end(), s + run, s + i)
            continue
        c = s[i + 1]
        if c == 0x75:  # \uXXXX, a surrogate pair as two of them
            unit = hex4(s + i + 2)
            i += 6
            if 0xDC00 <= unit < 0xE000:
                return -1
            if 0xD800 <= unit < 0xDC00:
                if i + 6 > n or s[i] != 0x5C or s[i + 1] != 0x75:
                    return -1
                low = hex4(s + i + 2)
                if not 0xDC00 <= low < 0xE000:
                    return -1
                unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                i += 6
            push_code_point(out, <uint32_t>unit)
            continue
        if c == 0x62:
            c = 0x08
        elif c == 0x66:
            c = 0x0C
        elif c == 0x6E:
            c = 0x0A
        elif c == 0x72:
            c = 0x0D
        elif c == 0x74:
            c = 0x09
        out.push_back(c)  # (or the escaped ", \ or /)
        i += 2
    return 0


cdef Py_ssize_t value_end(const uint8_t* s, Py_ssize_t n, Py_ssize_t i, Py_ssize_t* elements) noexcept nogil:
    """The position after the JSON value at ``s[i]``, -1 where it is not one; for an array,
    its number of elements in ``elements`` (if not NULL). Strings are read as `string_end`
    reads them; an array or object only by its brackets and the strings in it (the json module
    reads it later and names a fault), a number or literal up to the next delimiter."""
    cdef Py_ssize_t depth = 0, commas = 0
    cdef bint escaped = False, empty = True
    cdef uint8_t c, opening
    if i >= n:
        return -1
    opening = s[i]
    if opening == 0x22:
        return string_end(s, n, i, &escaped)
    if opening == 0x7B or opening == 0x5B:
        while i < n:
            c = s[i]
            if c == 0x20 or c == 0x0A:  # (first: most bytes of a pretty-printed file)
                i += 1
                continue
            if c == 0x22:
                i = string_end(s, n, i, &escaped)
                if i < 0:
                    return -1
                empty = False
                continue
            if c == 0x7B or c == 0x5B:
                depth += 1
                if depth > 1:
                    empty = False
            elif c == 0x7D or c == 0x5D:
                depth -= 1
                if depth == 0:
                    if elements != NULL:
                        elements[0] = 0 if empty else commas + 1
                    return i + 1
            elif depth == 1 and c == 0x2C:
                commas += 1
            elif not is_blank(c):
                empty = False
            i += 1
        return -1
    while i < n and not is_blank(s[i]) and s[i] != 0x2C and s[i] != 0x5D and s[i] != 0x7D:
        i += 1
    return i


cdef int member_of(const uint8_t* s, Py_ssize_t n, Py_ssize_t i, const char* name, Py_ssize_t length,
                   const char* inner, Py_ssize_t inner_length, Py_ssize_t* start, Py_ssize_t* end,
                   Py_ssize_t* elements, Py_ssize_t* object_end) noexcept nogil:
    """Where the value of member ``name`` of the JSON object at ``s[i]`` is (``start``, ``end``;
    ``elements``: its length if it is an array), or with ``inner`` the value of that member of
    it (an object read once); ``object_end``: the position after this object. 1 found once, 0
    not found, -1 not an object as read here, or a key with an escape (it might spell a name),
    or a name twice (the json module keeps the last)."""
    cdef Py_ssize_t key, key_end, value, after
    cdef bint escaped = False
    cdef int found = 0
    if i >= n or s[i] != 0x7B:
        return -1
    i = skip_blanks(s, n, i + 1)
    if i < n and s[i] == 0x7D:
        if object_end != NULL:
            object_end[0] = i + 1
        return 0
    while True:
        key = i
        key_end = string_end(s, n, i, &escaped)
        if key_end < 0 or escaped:
            return -1
        i = skip_blanks(s, n, key_end)
        if i >= n or s[i] != 0x3A:
            return -1
        value = skip_blanks(s, n, i + 1)
        if key_end - key - 2 == length and memcmp(s + key + 1, name, length) == 0:
            if found:
                return -1
            found = 1
            if inner == NULL:
                after = value_end(s, n, value, elements)
                start[0], end[0] = value, after
            elif member_of(s, n, value, inner, inner_length, NULL, 0, start, end, elements, &after) != 1:
                return -1
        else:
            after = value_end(s, n, value, NULL)
        if after < 0:
            return -1
        i = skip_blanks(s, n, after)
        if i < n and s[i] == 0x2C:
            i = skip_blanks(s, n, i + 1)
        elif i < n and s[i] == 0x7D:
            if object_end != NULL:
                object_end[0] = i + 1
            return found
        else:
            return -1


cdef enum:
    HEAD = 12  # bytes of a key kept in its entry
    AHEAD = 8  # look-ups asked for in advance


cdef extern from "<string.h>" nogil:
    void* memmem(const void* haystack, size_t haystack_size, const void* needle, size_t needle_size)


cdef extern from *:
    void __builtin_prefetch(const void* address) noexcept nogil


cdef struct KeyEntry:
    uint64_t hash   # `mixed` fnv1a of the key's bytes
    int32_t id      # -1: an empty slot
    uint32_t size   # the key's bytes
    uint32_t place  # where they are in the blob
    uint8_t head[HEAD]  # its first bytes: all of a short key's, so that a hit reads one entry


cdef inline uint64_t mixed(uint64_t x) noexcept nogil:
    """splitmix64's finaliser: FNV's low bits, which pick the slot, spread."""
    x ^= x >> 30
    x *= 0xBF58476D1CE4E5B9ULL
    x ^= x >> 27
    x *= 0x94D049BB133111EBULL
    return x ^ (x >> 31)


cdef class StringIds:
    """``StringIds(blob, offsets)``: string ``k`` is ``blob[offsets[k]:offsets[k+1]]``; of
    equal strings the last keeps its id (as ``dict(zip(texts, range(n)))``). Found by a hash
    of their bytes, each hit checked byte for byte, from the entry itself for a string of up to
    `HEAD` bytes, which most are: one cache line read per look-up. `pair_ids_in_json` fills
    one from a vocabulary dict instead (`strings_of`)."""

    cdef vector[uint8_t] blob
    cdef vector[KeyEntry] entries
    cdef uint64_t mask
    cdef Py_ssize_t n_ids  # the highest id + 1

    cdef bint built  # __init__ ran (build_once), or `strings_of` filled it

    def __init__(self, bytes blob not None, const int64_t[::1] offsets not None):
        build_once(&self.built, self)
        cdef Py_ssize_t n = offsets.shape[0] - 1, k
        cdef const uint8_t* data = <const uint8_t*><const char*>blob
        cdef KeyEntry entry
        check_offsets(offsets, len(blob), "offsets")
        if len(blob) >= 0x7FFFFFFF or n >= 0x7FFFFFFF:
            raise ValueError("StringIds holds less than 2**31 - 1 bytes and strings")
        self._size_for(n)
        self.blob.assign(data, data + len(blob))
        self.n_ids = n
        for k in range(n):
            entry.place, entry.size, entry.id = <uint32_t>offsets[k], <uint32_t>(offsets[k + 1] - offsets[k]), <int32_t>k
            entry.hash = mixed(fnv1a(FNV_OFFSET, data + entry.place, entry.size))
            memcpy(entry.head, data + entry.place, entry.size if entry.size < HEAD else HEAD)
            self._put(entry)

    cdef int _size_for(self, Py_ssize_t n) except -1:
        """Empty slots for ``n`` strings: at most 3/4 full (one 32-byte entry per string and a third)."""
        cdef Py_ssize_t capacity = 16
        cdef KeyEntry entry
        while 3 * capacity < 4 * n:
            capacity *= 2
        entry.id = -1
        self.entries.clear()
        self.entries.resize(capacity, entry)
        self.mask = capacity - 1
        return 0

    cdef void _put(self, const KeyEntry& entry) noexcept:
        """``entry`` into its slot, or over an equal string's (the last keeps its id)."""
        cdef uint64_t slot = entry.hash & self.mask
        cdef KeyEntry* there
        while self.entries[slot].id >= 0:
            there = &self.entries[slot]
            if there.hash == entry.hash and there.size == entry.size and memcmp(
                    self.blob.data() + there.place, self.blob.data() + entry.place, entry.size) == 0:
                there.id = entry.id
                return
            slot = (slot + 1) & self.mask
        self.entries[slot] = entry

    cdef int fill(self, dict vocab) except -1:
        """0; 1 where a key or an id is not one this table holds as `pair_ids_in` reads it (a
        key that is no str or holds a surrogate, an id that is no int in 0..2**31 - 2): the
        caller then uses the dict."""
        cdef Py_ssize_t position = 0, length, k, place
        cdef PyObject* key
        cdef PyObject* value
        cdef int kind
        cdef void* chars
        cdef uint32_t cp
        cdef long long number
        cdef KeyEntry entry
        cdef vector[KeyEntry] pending  # in the dict's order; placed below, the table read ahead
        self._size_for(len(vocab))
        self.blob.reserve(8 * len(vocab))
        pending.reserve(len(vocab))
        while PyDict_Next(vocab, &position, &key, &value):
            if type(<object>key) is not str or type(<object>value) is not int:
                return 1
            try:
                number = PyLong_AsLongLong(<object>value)
            except OverflowError:
                return 1
            if not 0 <= number < 2147483647 or self.blob.size() >= 0x7FFFFFFF:
                return 1
            PyUnicode_READY(<object>key)
            kind, chars, length = PyUnicode_KIND(<object>key), PyUnicode_DATA(<object>key), PyUnicode_GET_LENGTH(<object>key)
            place = <Py_ssize_t>self.blob.size()
            for k in range(length):
                cp = PyUnicode_READ(kind, chars, k)
                if 0xD800 <= cp < 0xE000:
                    return 1
                push_code_point(self.blob, cp)
            entry.size = <uint32_t>(self.blob.size() - place)
            entry.place = <uint32_t>place
            entry.id = <int32_t>number
            self.n_ids = max(self.n_ids, <Py_ssize_t>number + 1)
            entry.hash = mixed(fnv1a(FNV_OFFSET, self.blob.data() + place, entry.size))
            memcpy(entry.head, self.blob.data() + place, entry.size if entry.size < HEAD else HEAD)
            pending.push_back(entry)
        with nogil:
            self._place(pending)
        return 0

    cdef void _place(self, const vector[KeyEntry]& pending) noexcept nogil:
        """Each entry into its slot (a dict's keys are distinct: none is met again), the slot
        of the entry `AHEAD` places on asked for in advance: the table is read at random."""
        cdef Py_ssize_t k, n = <Py_ssize_t>pending.size()
        cdef uint64_t slot
        for k in range(n):
            if k + AHEAD < n:
                __builtin_prefetch(&self.entries[pending[k + AHEAD].hash & self.mask])
            slot = pending[k].hash & self.mask
            while self.entries[slot].id >= 0:
                slot = (slot + 1) & self.mask
            self.entries[slot] = pending[k]

    cdef inline void ask(self, uint64_t hash) noexcept nogil:
        """Ask for the slot of a string of ``hash`` ahead of `find_hashed`."""
        __builtin_prefetch(&self.entries[hash & self.mask])

    cdef inline id_t find_hashed(self, uint64_t hash, const uint8_t* a, Py_ssize_t na, const uint8_t* b,
                                 Py_ssize_t nb) noexcept nogil:
        """The id of ``a[:na] + b[:nb]`` (whose `mixed` `fnv1a` hash is ``hash``), -1 if it is
        no string of the table."""
        cdef uint64_t slot = hash & self.mask
        cdef const KeyEntry* entry
        cdef const uint8_t* key
        while True:
            entry = &self.entries[slot]
            if entry.id < 0:
                return -1
            if entry.hash == hash and entry.size == na + nb:
                key = <const uint8_t*>entry.head if entry.size <= HEAD else self.blob.data() + entry.place
                if (na == 0 or memcmp(key, a, na) == 0) and (nb == 0 or memcmp(key + na, b, nb) == 0):
                    return entry.id
            slot = (slot + 1) & self.mask

    cdef inline id_t _find(self, const uint8_t* a, Py_ssize_t na, const uint8_t* b, Py_ssize_t nb) noexcept nogil:
        cdef uint64_t h = fnv1a(FNV_OFFSET, a, na)
        if nb:
            h = fnv1a(h, b, nb)
        return self.find_hashed(mixed(h), a, na, b, nb)

    cdef int _check_built(self) except -1:
        if not self.built:
            raise ValueError("a StringIds is made by StringIds(blob, offsets)")
        return 0

    def find(self, bytes text not None):
        """The id of ``text``, -1 if it is none of the strings."""
        self._check_built()
        return self._find(<const uint8_t*><const char*>text, len(text), NULL, 0)

    def pair_ids(self, bytes text not None, const int64_t[::1] starts not None, const int64_t[::1] cuts not None,
                 const int64_t[::1] ends not None):
        """``(left, right, result)`` ids of the lines ``text[starts[k]:ends[k]]`` cut at
        ``cuts[k]`` (the separator's position: left ``starts[k]:cuts[k]``, right
        ``cuts[k]+1:ends[k]``), -1 where a part is no string of the table."""
        cdef Py_ssize_t n = starts.shape[0], k
        cdef const uint8_t* data = <const uint8_t*><const char*>text
        self._check_built()
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


cdef StringIds strings_of(dict vocab):
    """A `StringIds` of ``vocab``'s keys and ids (`StringIds.fill`); None where it cannot hold them."""
    cdef StringIds table = StringIds.__new__(StringIds)
    if table.fill(vocab):
        return None
    table.built = True
    return table


cdef struct Operand:
    const uint8_t* text
    Py_ssize_t size


cdef Py_ssize_t operand_at(const uint8_t* s, Py_ssize_t n, Py_ssize_t i, vector[uint8_t]& buffer,
                           Operand* out) except -2 nogil:
    """The JSON string at ``s[i]`` as UTF-8 (``out``: in ``s`` itself, or unescaped into
    ``buffer``): the position after it; -1 where it is not read exactly."""
    cdef bint escaped = False
    cdef Py_ssize_t end = string_end(s, n, i, &escaped)
    if end < 0:
        return -1
    if not escaped:
        out.text, out.size = s + i + 1, end - i - 2
        return end
    if unescaped(s + i + 1, end - i - 2, buffer) < 0:
        return -1
    out.text, out.size = buffer.data(), <Py_ssize_t>buffer.size()
    return end


cdef struct Rule:
    uint64_t hashes[3]  # of the left operand, the right, the result (left + right)
    int64_t left        # where the operands' bytes are: >= 0 in the JSON, else -1 - k in the
    int64_t right       # buffer of unescaped ones
    uint32_t left_size
    uint32_t right_size


cdef Py_ssize_t read_rules(const uint8_t* s, Py_ssize_t n, StringIds table, vector[id_t]& ids) except -2 nogil:
    """The number of merge rules in the JSON array ``s[:n]`` (``"a b"`` strings, ``["a", "b"]``
    pairs), each one's left, right and result ids appended to ``ids``; -1 where the array is
    not read exactly (see `operand_at`), or a string rule holds no space or two. The rules are
    read first, then looked up, each one's slots asked for `AHEAD` rules in advance."""
    cdef vector[uint8_t] first_buffer, second_buffer, unescaped_ones
    cdef vector[Rule] rules
    cdef Rule rule
    cdef Operand first, second
    cdef Py_ssize_t i, k, count
    cdef const uint8_t* space
    cdef const uint8_t* a
    cdef const uint8_t* b
    if n < 2 or s[0] != 0x5B:
        return -1
    rules.reserve(n // 18 + 1)  # (a rule takes ~18 bytes)
    i = skip_blanks(s, n, 1)
    if i < n and s[i] == 0x5D:
        return 0 if i + 1 == n else -1
    while True:
        if i < n and s[i] == 0x22:  # "left right", cut at its one space
            i = operand_at(s, n, i, first_buffer, &first)
            if i < 0:
                return -1
            space = <const uint8_t*>memchr(first.text, 0x20, first.size)
            if space == NULL or memchr(space + 1, 0x20, first.text + first.size - space - 1) != NULL:
                return -1
            second.text, second.size = space + 1, first.text + first.size - space - 1
            first.size = space - first.text
        elif i < n and s[i] == 0x5B:  # ["left", "right"]
            i = operand_at(s, n, skip_blanks(s, n, i + 1), first_buffer, &first)
            if i >= 0:
                i = skip_blanks(s, n, i)
                i = operand_at(s, n, skip_blanks(s, n, i + 1), second_buffer, &second) \
                    if i < n and s[i] == 0x2C else -1
            if i >= 0:
                i = skip_blanks(s, n, i)
                i = i + 1 if i < n and s[i] == 0x5D else -1
            if i < 0:
                return -1
        else:
            return -1
        rule.hashes[0] = fnv1a(FNV_OFFSET, first.text, first.size)
        rule.hashes[1] = mixed(fnv1a(FNV_OFFSET, second.text, second.size))
        rule.hashes[2] = mixed(fnv1a(rule.hashes[0], second.text, second.size))
        rule.hashes[0] = mixed(rule.hashes[0])
        rule.left_size, rule.right_size = <uint32_t>first.size, <uint32_t>second.size
        if s <= first.text < s + n:
            rule.left = first.text - s
        else:
            rule.left = -1 - <int64_t>unescaped_ones.size()
            unescaped_ones.insert(unescaped_ones.end(), first.text, first.text + first.size)
        if s <= second.text < s + n:
            rule.right = second.text - s
        else:
            rule.right = -1 - <int64_t>unescaped_ones.size()
            unescaped_ones.insert(unescaped_ones.end(), second.text, second.text + second.size)
        rules.push_back(rule)
        i = skip_blanks(s, n, i)
        if i < n and s[i] == 0x2C:
            i = skip_blanks(s, n, i + 1)
        elif i < n and s[i] == 0x5D:
            if i + 1 != n:
                return -1
            break
        else:
            return -1
    count = <Py_ssize_t>rules.size()
    ids.resize(3 * count)
    for k in range(count):
        if k + AHEAD < count:
            table.ask(rules[k + AHEAD].hashes[0])
            table.ask(rules[k + AHEAD].hashes[1])
            table.ask(rules[k + AHEAD].hashes[2])
        a = s + rules[k].left if rules[k].left >= 0 else unescaped_ones.data() + (-1 - rules[k].left)
        b = s + rules[k].right if rules[k].right >= 0 else unescaped_ones.data() + (-1 - rules[k].right)
        ids[3 * k] = table.find_hashed(rules[k].hashes[0], a, rules[k].left_size, NULL, 0)
        ids[3 * k + 1] = table.find_hashed(rules[k].hashes[1], b, rules[k].right_size, NULL, 0)
        ids[3 * k + 2] = table.find_hashed(rules[k].hashes[2], a, rules[k].left_size, b, rules[k].right_size)
    return count


cdef bint repeats(const vector[id_t]& ids, Py_ssize_t count, Py_ssize_t n_ids) except -1 nogil:
    """Whether some pair of ids comes twice among the ``count`` rules (left, right, result
    triples of ``ids``; two missing strings count as one id). One pair has one result, so a
    pair is compared in a hash set only when another rule has its result (few do: a map of all
    pairs is tens of MB, read at random) or when an id is missing. Ids far more spread than the
    rules (a vocabulary of few tokens with large ids) put every pair in the set instead."""
    cdef vector[int32_t] owner  # result id -> the first rule with it, -1
    cdef vector[uint8_t] shared  # result id -> its first rule's pair is in the set
    cdef FlatMap seen
    cdef int64_t* slot
    cdef Py_ssize_t k, first
    cdef id_t result
    cdef bint by_result = n_ids <= 4 * count + 65536
    if by_result:
        owner.resize(n_ids, -1)
        shared.resize(n_ids, 0)
    for k in range(count):
        result = ids[3 * k + 2]
        if by_result and result >= 0 and ids[3 * k] >= 0 and ids[3 * k + 1] >= 0:
            first = owner[result]
            if first < 0:
                owner[result] = <int32_t>k
                continue
            if not shared[result]:
                shared[result] = 1
                seen.slot(pack_key(ids[3 * first] + 1, ids[3 * first + 1] + 1))[0] = 1
        slot = seen.slot(pack_key(ids[3 * k] + 1, ids[3 * k + 1] + 1))
        if slot[0] != 0:
            return True
        slot[0] = 1
    return False


cdef Py_ssize_t merges_candidate(const uint8_t* s, Py_ssize_t n) noexcept nogil:
    """Where the one array that follows a key ``"merges"`` in the bytes starts (its ``[``); -1
    where there is none, -2 where there are two or more. Every key so spelled is found (its
    closing quote unescaped, as a key's is), and inside a string no ``"merges"`` is followed by
    ``:`` (a quote there ends the string); a key spelled with an escape is not found."""
    cdef Py_ssize_t at = 0, i, found = -1
    cdef const uint8_t* key
    while at + 8 <= n:
        key = <const uint8_t*>memmem(s + at, n - at, b'"merges"', 8)
        if key == NULL:
            break
        at = key - s + 8
        i = skip_blanks(s, n, at)
        if i < n and s[i] == 0x3A:
            i = skip_blanks(s, n, i + 1)
            if i < n and s[i] == 0x5B:
                if found >= 0:
                    return -2
                found = i
    return found


def merges_span(const uint8_t[::1] data not None):
    """``(start, end, count)``: where in a tokenizer.json's bytes the value of ``model.merges``
    is, an array of ``count`` elements in well-formed UTF-8, or None. Where one key
    ``"merges"`` holds an array, its span (found without reading the rest: the vocabulary is a
    large part of a file), which the caller proves to be the model's by decoding the document
    with a placeholder in its place (`ubpe.io.hf_import._read_apart`: the placeholder comes
    back as ``model.merges``, or the file is read whole); where more hold one, the model
    object's, read as `member_of` reads objects (None if the document is not an object with
    one ``model`` object holding one ``merges`` array so read). Nothing is claimed of the
    rest: the json module reads it, and `pair_ids_in_json` the array.

    >>> merges_span(b'{"model": {"vocab": {"a b": 0}, "merges": ["a b", ["a", "b"]]}, "x": 1}')
    (42, 61, 2)
    >>> merges_span(b'{"model": {"merges": ["a b"], "merges": []}}') is None
    True
    >>> merges_span(b'{"x": {"merges": []}, "model": {"merges": ["a b"]}}')  # (the model's)
    (42, 49, 1)
    >>> merges_span(b'{"model": {"merges": ["a b", "\\xff"]}}') is None  # (not UTF-8)
    True
    """
    cdef Py_ssize_t n = data.shape[0], start = 0, end = 0, count = -1
    cdef int found = 0
    if n == 0:
        return None
    cdef const uint8_t* s = &data[0]
    with nogil:
        start = merges_candidate(s, n)
        if start >= 0:
            end = value_end(s, n, start, &count)
            found = 1 if end > start else 0
        elif start == -2:  # the top-level object and, once, the model's
            found = member_of(s, n, skip_blanks(s, n, 0), b"model", 5, b"merges", 6, &start, &end, &count, NULL)
    if found != 1 or s[start] != 0x5B:
        return None
    try:
        check_utf8(data[start:end])
    except ValueError:
        return None
    return start, end, count


def vocab_span(const uint8_t[::1] data not None):
    """``(start, end)``: where in a tokenizer.json's bytes the value of ``model.vocab`` is, an
    object (WordPiece, WordLevel, BPE; a unigram model's vocab is an array); None if the
    document is not an object with one ``model`` object holding one ``vocab`` object as read
    here (`member_of`). Nothing is claimed of the rest: the json module reads it, and
    `ubpe_native._vocab.vocab_from_json` the object (which checks it is UTF-8).

    >>> vocab_span(b'{"model": {"vocab": {"a": 0}, "merges": []}}'), vocab_span(b'{"model": {"vocab": []}}')
    ((20, 28), None)
    """
    cdef Py_ssize_t n = data.shape[0], start = 0, end = 0
    cdef int found = 0
    if n == 0:
        return None
    cdef const uint8_t* s = &data[0]
    with nogil:
        found = member_of(s, n, skip_blanks(s, n, 0), b"model", 5, b"vocab", 5, &start, &end, NULL, NULL)
    if found != 1 or s[start] != 0x7B:
        return None
    return start, end


def pair_ids_in_json(dict vocab not None, const uint8_t[::1] rules not None):
    """`pair_ids_in` of the merge rules in the JSON array ``rules`` (bytes `merges_span` found),
    read without a Python object per rule; None where it might not be `pair_ids_in` of the
    decoded array exactly: the array not read exactly (see `read_rules`), a key of ``vocab``
    that is no str or holds a surrogate, a value that is no id (`pair_ids_in` names it).

    >>> *ids, repeated = pair_ids_in_json({"a": 0, "b": 1, "ab": 2}, b'["a b", ["b", "a"], ["a", "ab"], "b a"]')
    >>> [a.tolist() for a in ids], repeated
    ([[0, 1, 0, 1], [1, 0, 2, 0], [2, -1, -1, -1]], True)
    """
    cdef Py_ssize_t n = rules.shape[0], count
    cdef bint repeated = False
    cdef vector[id_t] ids
    if n == 0:
        return None
    cdef StringIds table = strings_of(vocab)
    if table is None:
        return None
    with nogil:
        count = read_rules(&rules[0], n, table, ids)
        if count > 0:
            repeated = repeats(ids, count, table.n_ids)
    if count < 0:
        return None
    cdef carray.array left = carray.clone(INT32_TEMPLATE, count, False)
    cdef carray.array right = carray.clone(INT32_TEMPLATE, count, False)
    cdef carray.array result = carray.clone(INT32_TEMPLATE, count, False)
    cdef id_t[::1] lv = left, rv = right, mv = result
    cdef Py_ssize_t k
    for k in range(count):
        lv[k], rv[k], mv[k] = ids[3 * k], ids[3 * k + 1], ids[3 * k + 2]
    return left, right, result, repeated
