# Argument checks shared by the kernels' def functions: offsets into a flat array of parts.
from libc.stdint cimport int64_t

from ubpe_native._typedefs cimport id_t


cdef inline int check_offsets(const int64_t[::1] offsets, Py_ssize_t length, str name,
                              int64_t min_run=0) except -1:
    """``offsets`` must cut ``length`` items into runs of at least ``min_run`` items: start at
    0, end at ``length``, grow by ``min_run`` or more. ``name`` is the argument's name in the
    error message."""
    cdef Py_ssize_t k
    if offsets.shape[0] < 1:
        raise ValueError(f"{name} needs at least one entry")
    if offsets[0] != 0 or offsets[offsets.shape[0] - 1] != length:
        raise ValueError(f"{name} must start at 0 and end at {length}")
    for k in range(offsets.shape[0] - 1):
        if offsets[k + 1] - offsets[k] < min_run:
            raise ValueError(f"{name} must grow by at least {min_run} at every step")
    return 0


cdef inline int check_ids(const id_t[::1] ids, int64_t limit, str what) except -1:
    """Every id must be in ``0..limit - 1``; ``what`` names them in the error message."""
    cdef Py_ssize_t k
    for k in range(ids.shape[0]):
        if ids[k] < 0 or ids[k] >= limit:
            raise ValueError(f"{what} may hold ids 0..{limit - 1} only, not {ids[k]} (at {k})")
    return 0


cdef inline int check_top_n(Py_ssize_t top_n) except -1:
    """A k-best kernel needs ``top_n >= 1``."""
    if top_n < 1:
        raise ValueError(f"top_n must be at least 1, got {top_n}")
    return 0


cdef inline int check_per_token(int64_t max_token, Py_ssize_t n_values, str what) except -1:
    """A value per token (weights, costs) is needed up to the largest token a table holds."""
    if max_token >= n_values:
        raise ValueError(f"the table holds token {max_token} but there are only {n_values} {what}")
    return 0


cdef inline int check_parts(const id_t[::1] symbols, const int64_t[::1] bounds, id_t n_base) except -1:
    """A document's parts back to back: ``bounds`` cut ``symbols`` into runs (from 0 to
    ``len(symbols)``, never decreasing) and ``symbols`` hold base ids (``0..n_base - 1``) only."""
    check_offsets(bounds, symbols.shape[0], "bounds")
    check_ids(symbols, n_base, "parts")
    return 0


cdef inline object as_array(values, object dtype, str name):
    """``values`` as a C-contiguous numpy array of ``dtype``, for ``def`` functions that take
    any array-like. An integer ``dtype`` takes integers that fit only: no silent wrap of
    ``2**32`` to 0, no truncated floats or bools (TypeError / ValueError naming ``name``).
    Arrays already of ``dtype`` pass unchecked (and uncopied if contiguous)."""
    import numpy
    array = numpy.asarray(values)
    if array.dtype != dtype and array.size:
        if numpy.issubdtype(dtype, numpy.integer):
            if array.dtype.kind not in "iu":
                raise TypeError(f"{name} must hold integers, not {array.dtype}")
            info = numpy.iinfo(dtype)
            if array.min() < info.min or array.max() > info.max:
                raise ValueError(f"{name} holds values outside {info.min}..{info.max}")
        elif array.dtype.kind not in "iuf":
            raise TypeError(f"{name} must hold numbers, not {array.dtype}")
    return numpy.ascontiguousarray(array, dtype=dtype)
