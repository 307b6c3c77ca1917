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


cdef inline object as_buffer(values, str typecode, str dtype, str name):
    """``values`` as they are if they are a buffer numpy is not needed for - an
    ``array.array`` of ``typecode`` or a 1-D contiguous ``memoryview`` of that format (what a
    load without numpy hands the kernels) - else :func:`as_array` of numpy's ``dtype`` (a
    name: ``"uint16"``), which imports numpy."""
    if type(values) is memoryview:
        if values.format == typecode and values.ndim == 1 and values.c_contiguous:
            return values
    elif type(values).__name__ == "array" and type(values).__module__ == "array":
        if values.typecode == typecode:
            return values
    import numpy
    return as_array(values, getattr(numpy, dtype), name)


# -- Sizes, lengths and busy objects (issue 28: every def entry checked the same way) ---------

cdef extern from *:
    """
    /* No buffer a kernel sizes from its arguments may exceed 1 TiB: a larger request comes
       from a hostile or corrupt size (a top_n of 2**40, a thread count of 2**31) and is refused
       before anything is allocated. It is also the most AddressSanitizer's allocator serves,
       so the debug lane sees a MemoryError, not an abort. */
    static const long long UBPE_MAX_BUFFER_BYTES = 1LL << 40;
    """
    const long long MAX_BUFFER_BYTES "UBPE_MAX_BUFFER_BYTES"


cdef inline int check_buffer(Py_ssize_t rows, Py_ssize_t per_row, Py_ssize_t item_bytes,
                             str what) except -1:
    """A buffer of ``rows * per_row`` items of ``item_bytes`` bytes (``what`` names it) is
    refused before it is allocated when it would pass ``MAX_BUFFER_BYTES`` (MemoryError; the
    product is never formed, so it cannot overflow): ``check_buffer(n + 1, top_n, 8, "...")``."""
    if rows < 0 or per_row < 0:
        raise ValueError(f"{what} cannot have a negative size ({rows} x {per_row})")
    if rows and per_row and per_row > MAX_BUFFER_BYTES // item_bytes // rows:
        raise MemoryError(f"{what} would need {rows} x {per_row} items of {item_bytes} bytes: "
                          f"more than the {MAX_BUFFER_BYTES >> 30} GiB a kernel may allocate")
    return 0


cdef inline int check_length(Py_ssize_t length, Py_ssize_t expected, str name, str per) except -1:
    """``name`` must have ``expected`` entries; ``per`` says what they stand for
    (``check_length(len(scores), n_candidates, "scores", "one per candidate")``)."""
    if length != expected:
        raise ValueError(f"{name} must have {expected} entries ({per}), not {length}")
    return 0


cdef inline int build_once(bint* built, object owner) except -1:
    """The first statement of a kernel object's ``__init__`` (``&self.built``): a second
    ``__init__`` raises ValueError instead of rebuilding tables that other threads may be
    reading without the GIL (a segfault) or appending to what the first one built."""
    if built[0]:
        raise ValueError(f"a {type(owner).__name__} is built once: make a new one")
    built[0] = True
    return 0


cdef inline int claim(bint* busy, object owner) except -1:
    """Take a stateful kernel object's busy flag (``&self.busy``) before the call's first
    ``nogil`` block. The test and the set run with the GIL held, so no other thread can come
    between them; a second call on the object while the first runs without the GIL - from
    another thread - raises ``ubpe_native.BusyError`` instead of sharing the object's vectors.
    The caller gives the flag back (``self.busy = False``) in a ``finally``."""
    if busy[0]:
        from ubpe_native._errors import BusyError
        raise BusyError(f"this {type(owner).__name__} is in use by another call (another thread?): "
                        "one object serves one call at a time; use one per thread")
    busy[0] = True
    return 0


cdef inline int check_none_empty(const int64_t[::1] offsets, str what) except -1:
    """Every run ``offsets[p]:offsets[p + 1]`` (already checked by :func:`check_offsets`) holds
    at least one item: a kernel that takes each part's first ``what`` reads it unchecked."""
    cdef Py_ssize_t p
    for p in range(offsets.shape[0] - 1):
        if offsets[p + 1] <= offsets[p]:
            raise ValueError(f"part {p} has no {what}")
    return 0


cdef inline int check_range(int64_t value, int64_t low, int64_t high, str name) except -1:
    """``low <= value <= high`` (``check_range(top_n, 1, INT32_MAX, "top_n")`` where a kernel
    hands ``top_n`` on as a C int)."""
    if not low <= value <= high:
        raise ValueError(f"{name} must be in {low}..{high}, not {value}")
    return 0
