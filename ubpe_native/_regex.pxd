# The compiled-pattern registry of _regex.pyx and the VM of regex_vm.h that runs its programs.
from libc.stddef cimport ptrdiff_t
from libc.stdint cimport uint8_t
from libcpp cimport bool as cbool

cdef extern from "regex_vm.h" namespace "ubpe_regex" nogil:
    cdef cppclass Program:
        cbool total
    # Both throw (std::bad_alloc; Stopped with the Python exception set: over the match's
    # budget, or interrupted by a signal): `except +` turns either into the Python exception.
    ptrdiff_t program_piece_end "ubpe_regex::piece_end"(const Program& p, const uint8_t* s, ptrdiff_t n,
                                                          ptrdiff_t i) except +
    cbool find_next(const Program& p, const uint8_t* s, ptrdiff_t n, ptrdiff_t i, ptrdiff_t* start,
                    ptrdiff_t* end) except +

# Pattern ids from here on name registered programs (the presets' ids are below it).
cdef enum:
    FIRST_PROGRAM_ID = 64

# The registered program of pattern id ``pattern``, or NULL (no lock: a program is written
# once, under the GIL, before its id is handed out, and never freed).
cdef const Program* program_of(int pattern) noexcept nogil
