# The arrays the kernels' def functions return on the fit path, as array.array: building
# them needs no numpy (ubpe_native._numpy says why). Typecodes: 'i' int32 (id_t), 'q' int64,
# 'd' float64, 'B' uint8, 'H' uint16.
from cpython cimport array
from libc.string cimport memcpy


cdef inline array.array new_array(str typecode, Py_ssize_t n, bint zero=False):
    """An array.array of ``n`` items of ``typecode``, zeroed or not initialised."""
    return array.clone(array.array(typecode), n, zero)


cdef inline array.array copy_array(str typecode, const void* data, Py_ssize_t n):
    """An array.array of ``typecode`` holding a copy of the ``n`` items at ``data``."""
    cdef array.array out = new_array(typecode, n)
    if n:
        memcpy(out.data.as_voidptr, data, n * out.ob_descr.itemsize)
    return out
