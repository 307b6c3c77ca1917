# Small helpers shared by the merge and unigram kernels.
from libc.stdint cimport uint8_t, uint32_t
from libcpp.vector cimport vector

from ubpe_native._typedefs cimport id_t


cdef inline Py_ssize_t utf8_length(uint8_t lead) noexcept nogil:
    """Bytes of the character a lead byte starts, by its high nibble (llama.cpp's
    ``unicode_len_utf8``, sentencepiece's ``OneCharLen``): a stray continuation byte counts 1."""
    cdef uint8_t high = lead >> 4
    if high < 0xC:
        return 1
    if high < 0xE:
        return 2
    if high == 0xE:
        return 3
    return 4


cdef inline object id_array(const vector[id_t]& values):
    """The ids as a new int32 numpy array."""
    import numpy
    result = numpy.empty(values.size(), dtype=numpy.int32)
    cdef id_t[::1] view = result
    cdef size_t i
    for i in range(values.size()):
        view[i] = values[i]
    return result


cdef extern from "Python.h":
    # a str's code points where they are (one, two or four bytes each), without a copy
    int PyUnicode_READY(object) except? -1
    int PyUnicode_KIND(object) nogil
    void* PyUnicode_DATA(object) nogil
    Py_ssize_t PyUnicode_GET_LENGTH(object) nogil
    uint32_t PyUnicode_READ(int kind, void* data, Py_ssize_t index) nogil


cdef inline int push_code_point(vector[uint8_t]& out, uint32_t cp) except -1 nogil:
    """Append code point ``cp`` (a scalar value) as UTF-8."""
    if cp < 0x80:
        out.push_back(<uint8_t>cp)
        return 0
    if cp < 0x800:
        out.push_back(<uint8_t>(0xC0 | (cp >> 6)))
    elif cp < 0x10000:
        out.push_back(<uint8_t>(0xE0 | (cp >> 12)))
        out.push_back(<uint8_t>(0x80 | ((cp >> 6) & 0x3F)))
    else:
        out.push_back(<uint8_t>(0xF0 | (cp >> 18)))
        out.push_back(<uint8_t>(0x80 | ((cp >> 12) & 0x3F)))
        out.push_back(<uint8_t>(0x80 | ((cp >> 6) & 0x3F)))
    out.push_back(<uint8_t>(0x80 | (cp & 0x3F)))
    return 0
