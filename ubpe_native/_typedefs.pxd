# Integer types shared by the kernels.
from libc.stdint cimport int32_t, int64_t, uint64_t

# A token or symbol id. Ids fit in 31 bits; -1 marks "none" / "removed".
ctypedef int32_t id_t
# Counts and offsets into corpora, which may exceed 2**31 symbols.
ctypedef int64_t count_t
