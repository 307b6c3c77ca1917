# The compensated sum every tf-idf score is added with (see _score.pxd).
from libc.math cimport fabs, isfinite


cdef inline void add_term(double* high, double* low, double x) noexcept nogil:
    """One step of CPython's float ``sum`` (>= 3.12: Neumaier's compensated summation):
    ``high`` holds the running sum, ``low`` the bits its additions lost."""
    cdef double t = high[0] + x
    if fabs(high[0]) >= fabs(x):
        low[0] += (high[0] - t) + x
    else:
        low[0] += (x - t) + high[0]
    high[0] = t


cdef inline double sum_value(double high, double low) noexcept nogil:
    """The value ``sum`` returns from its state ``(high, low)``."""
    if low != 0.0 and isfinite(low):
        return high + low
    return high
