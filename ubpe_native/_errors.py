"""The exception the kernels raise of their own (the rest are ValueError, TypeError,
MemoryError)."""


class BusyError(RuntimeError):
    """A stateful kernel object (a ``PartCounter``, a ``PairMerger``) was called while another
    call on it was still running, from another thread: one object serves one call at a time.

    >>> raise BusyError("this PartCounter is in use by another call")
    Traceback (most recent call last):
    ...
    ubpe_native._errors.BusyError: this PartCounter is in use by another call
    """
