# Argument checks shared by the kernels' `def` boundaries.
from libc.stdint cimport int64_t

from ubpe_native._typedefs cimport id_t


cdef inline check_parts(const id_t[::1] symbols, const int64_t[::1] bounds, id_t n_base):
    """A document's parts: ``bounds`` from 0 to ``len(symbols)``, never decreasing, and only
    base ids (``0..n_base - 1``) in ``symbols``; ValueError otherwise."""
    cdef Py_ssize_t i, n_bounds = bounds.shape[0]
    if n_bounds < 1:
        raise ValueError("bounds needs at least one entry")
    if bounds[0] != 0 or bounds[n_bounds - 1] != symbols.shape[0]:
        raise ValueError("bounds must start at 0, end at len(symbols) and never decrease")
    for i in range(1, n_bounds):
        if bounds[i] < bounds[i - 1]:
            raise ValueError("bounds must start at 0, end at len(symbols) and never decrease")
    for i in range(symbols.shape[0]):
        if symbols[i] < 0 or symbols[i] >= n_base:
            raise ValueError(f"parts may hold base ids only (0..{n_base - 1})")
