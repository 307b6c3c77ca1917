# distutils: language = c++
r"""A tokenizer file's vocabulary (``{"token": id, ...}``, as the json module decoded it)
checked in one pass, without a Python object per entry.

What a loader asks of a vocabulary - every key a ``str``, every value an ``int`` (not a
``bool``) within bounds, the largest id, whether the ids are ``0, 1, 2, ...`` in the file's
order (the usual file: then they are distinct and the tokens' list is the keys' list) - took
seven passes of the interpreter over the dict (``min``, ``max``, ``set(map(type, ...))``...:
61 M instructions for BERT's 30k entries, more than ``tokenizers``' whole load of the file).

>>> vocab_ids({"a": 0, "b": 1, "c": 2}, 100), vocab_ids({"a": 5, "b": 1}, 100), vocab_ids({}, 100)
((2, True), (5, False), (-1, True))
>>> vocab_ids({"a": True}, 100), vocab_ids({"a": 101}, 100), vocab_ids({1: 0}, 100), vocab_ids({"a": -1}, 100)
(None, None, None, None)

And the vocabulary read from the file's bytes, where the json module would make a str for each
text and a temporary str for each number, and look each key up in its memo of keys
(`vocab_from_json`: BERT's 30k entries, 14 of the 17 ms of its load):

>>> vocab_from_json(rb'{"a": 0, "\u00e9\"": 1,"a":2}'), vocab_from_json(b'{"a": 1.0}')
({'a': 2, 'é"': 1}, None)
"""

from cpython.dict cimport PyDict_Next, PyDict_SetItem
from cpython.long cimport PyLong_AsLongLongAndOverflow, PyLong_FromLongLong
from cpython.ref cimport PyObject
from cpython.unicode cimport PyUnicode_4BYTE_KIND, PyUnicode_Check, PyUnicode_DecodeUTF8, PyUnicode_FromKindAndData
from libc.stdint cimport int64_t, uint8_t, uint32_t
from libcpp.vector cimport vector

from ubpe_native._pretokenize cimport check_utf8, decode_utf8

#: the most digits of an id read here (more: the json module reads the object)
cdef int MAX_DIGITS = 18


def vocab_ids(dict vocab not None, int64_t largest):
    """``(top, in_order)`` of a vocabulary: its largest id (-1 if it is empty) and whether its
    ids are ``0, 1, 2, ...`` in the dict's order; ``None`` unless every key is a ``str`` (or a
    subclass) and every value an ``int`` (exactly: no ``bool``) from 0 to ``largest``."""
    if largest < 0:
        raise ValueError(f"largest must be >= 0, not {largest}")
    cdef Py_ssize_t pos = 0, k = 0
    cdef PyObject* key
    cdef PyObject* value
    cdef long long id_value, top = -1
    cdef int overflow = 0
    cdef bint in_order = True
    # (nothing below runs Python code: the dict cannot change while it is read)
    while PyDict_Next(vocab, &pos, &key, &value):
        if not PyUnicode_Check(<object>key) or type(<object>value) is not int:
            return None
        id_value = PyLong_AsLongLongAndOverflow(<object>value, &overflow)
        if overflow or id_value < 0 or id_value > largest:
            return None
        if id_value > top:
            top = id_value
        if id_value != k:
            in_order = False
        k += 1
    return top, in_order


cdef inline Py_ssize_t skip_blanks(const uint8_t* s, Py_ssize_t n, Py_ssize_t i) noexcept nogil:
    """The first position from ``i`` that is not JSON whitespace."""
    while i < n and (s[i] == 0x20 or s[i] == 0x0A or s[i] == 0x0D or s[i] == 0x09):
        i += 1
    return i


cdef inline int hex4(const uint8_t* s, Py_ssize_t n, Py_ssize_t i) noexcept nogil:
    """The value of the four hex digits at ``s[i]`` (either case), -1 if they are not."""
    cdef int value = 0, k, digit
    cdef uint8_t c
    if i + 4 > n:
        return -1
    for k in range(4):
        c = s[i + k]
        if 0x30 <= c <= 0x39:
            digit = c - 0x30
        elif 0x41 <= c <= 0x46:
            digit = c - 0x41 + 10
        elif 0x61 <= c <= 0x66:
            digit = c - 0x61 + 10
        else:
            return -1
        value = value << 4 | digit
    return value


cdef inline int escaped_char(uint8_t c) noexcept nogil:
    """The character of a one-letter escape ``\\c``, -1 if it is none."""
    if c == 0x22 or c == 0x5C or c == 0x2F:
        return c
    if c == 0x62:
        return 0x08
    if c == 0x66:
        return 0x0C
    if c == 0x6E:
        return 0x0A
    if c == 0x72:
        return 0x0D
    if c == 0x74:
        return 0x09
    return -1


cdef object json_string(const uint8_t* s, Py_ssize_t n, Py_ssize_t* at, vector[uint32_t]& chars):
    """The str of the JSON string at ``s[at[0]]`` (its ``"``; ``s`` well-formed UTF-8), as the
    json module decodes it (a ``\\uXXXX`` high surrogate joined to a low one right after it, a
    lone one kept), ``at[0]`` moved past it; None where the json module refuses it (a control
    character, a malformed escape, no end)."""
    cdef Py_ssize_t i = at[0] + 1, start = i, width
    cdef int c, low
    while i < n and s[i] != 0x22 and s[i] != 0x5C and s[i] >= 0x20:  # (most texts: no escape)
        i += 1
    if i >= n or s[i] < 0x20:
        return None
    if s[i] == 0x22:
        at[0] = i + 1
        return PyUnicode_DecodeUTF8(<char*>s + start, i - start, NULL)
    chars.clear()
    i = start
    while True:
        if i >= n or s[i] < 0x20:
            return None
        if s[i] == 0x22:
            break
        if s[i] != 0x5C:
            chars.push_back(decode_utf8(s, i, &width))
            i += width
            continue
        if i + 1 >= n:
            return None
        if s[i + 1] != 0x75:  # \" \\ \/ \b \f \n \r \t
            c = escaped_char(s[i + 1])
            if c < 0:
                return None
            chars.push_back(c)
            i += 2
            continue
        c = hex4(s, n, i + 2)
        if c < 0:
            return None
        i += 6
        # (the json module: a high surrogate and, with room for more, "\\u" next: four hex digits
        # that must be there, joined if they are a low surrogate, else read again on their own)
        if 0xD800 <= c < 0xDC00 and i + 6 < n and s[i] == 0x5C and s[i + 1] == 0x75:
            low = hex4(s, n, i + 2)
            if low < 0:
                return None
            if 0xDC00 <= low < 0xE000:
                c = 0x10000 + ((c - 0xD800) << 10) + (low - 0xDC00)
                i += 6
        chars.push_back(c)
    at[0] = i + 1
    return PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, chars.data(), chars.size())


cdef object json_id(const uint8_t* s, Py_ssize_t n, Py_ssize_t* at):
    """The int of the JSON integer at ``s[at[0]]`` (``-?(0|[1-9][0-9]*)``, at most
    `MAX_DIGITS` digits, not followed by a fraction or an exponent), ``at[0]`` moved past it;
    None where the value is anything else (the json module reads it, or refuses it)."""
    cdef Py_ssize_t i = at[0], first
    cdef bint negative = i < n and s[i] == 0x2D
    cdef long long value = 0
    if negative:
        i += 1
    first = i
    if i < n and s[i] == 0x30:
        i += 1
    else:
        while i < n and 0x30 <= s[i] <= 0x39 and i - first < MAX_DIGITS:
            value = value * 10 + (s[i] - 0x30)
            i += 1
    if i == first or i < n and (0x30 <= s[i] <= 0x39 or s[i] == 0x2E or s[i] == 0x65 or s[i] == 0x45):
        return None
    at[0] = i
    return PyLong_FromLongLong(-value if negative else value)


def vocab_from_json(const uint8_t[::1] data not None):
    """The dict ``json.loads(data)`` gives for a JSON object whose every value is an integer
    (a tokenizer.json's ``model.vocab``: ``{"token": id, ...}``), read from its UTF-8 bytes with
    no memo of keys and no str per number; None if ``data`` is any other JSON, or no JSON
    (the json module then reads it, or says what is wrong), or not UTF-8. Keys are decoded as
    the json module decodes them; of equal keys the last value is kept, in the first one's place.

    >>> vocab_from_json(b' { } '), vocab_from_json(b'{"x": 1,}'), vocab_from_json(b'{"x": 01}')
    ({}, None, None)
    """
    cdef Py_ssize_t n = data.shape[0], i
    if n == 0:
        return None
    try:
        check_utf8(data)
    except ValueError:
        return None
    cdef const uint8_t* s = &data[0]
    cdef vector[uint32_t] chars  # an escaped key's code points
    cdef dict vocab = {}
    i = skip_blanks(s, n, 0)
    if i >= n or s[i] != 0x7B:
        return None
    i = skip_blanks(s, n, i + 1)
    if i < n and s[i] == 0x7D:
        return vocab if skip_blanks(s, n, i + 1) == n else None
    while True:
        if i >= n or s[i] != 0x22:
            return None
        key = json_string(s, n, &i, chars)
        if key is None:
            return None
        i = skip_blanks(s, n, i)
        if i >= n or s[i] != 0x3A:
            return None
        i = skip_blanks(s, n, i + 1)
        value = json_id(s, n, &i)
        if value is None:
            return None
        PyDict_SetItem(vocab, key, value)
        i = skip_blanks(s, n, i)
        if i < n and s[i] == 0x2C:
            i = skip_blanks(s, n, i + 1)
        elif i < n and s[i] == 0x7D:
            return vocab if skip_blanks(s, n, i + 1) == n else None
        else:
            return None
