# Small helpers shared by the merge and unigram kernels.
from libc.stdint cimport uint8_t
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
