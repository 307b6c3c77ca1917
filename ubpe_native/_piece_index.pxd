# A sentencepiece model's pieces by text: the hash table `_spm_proto` builds its tables with and
# `_spm.SpmBPE` looks a pair of symbols up in when it merges by the pieces' texts (a ``.model``
# file's BPE: no merge rules derived at load, as sentencepiece itself does). Moved here from
# `_spm_proto` so that both use one index.
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcmp
from libcpp.vector cimport vector

cdef extern from *:
    """
    #include <cstdint>
    #include <cstring>
    /* the hash of pieces: a polynomial one (mod 2**64), so that a piece's prefix and suffix
       hashes come from its running hashes in O(1) each (the index mixes the keys again) */
    static const uint64_t ubpe_HASH_BASE = 0x100000001B3ULL;
    static const uint64_t ubpe_GOLDEN = 0x9E3779B97F4A7C15ULL;  /* 2**64 / phi: a slot is hash times this */
    /* whether a[:n] == b[:n], eight bytes at a time: both must be readable up to 7 bytes past n */
    static inline int ubpe_same_text(const uint8_t* a, const uint8_t* b, int64_t n) {
        uint64_t x, y;
        for (; n > 8; n -= 8, a += 8, b += 8) {
            std::memcpy(&x, a, 8);
            std::memcpy(&y, b, 8);
            if (x != y)
                return 0;
        }
        if (n <= 0)
            return 1;
        std::memcpy(&x, a, 8);
        std::memcpy(&y, b, 8);
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        return ((x ^ y) >> (64 - 8 * n)) == 0;
    #else
        return ((x ^ y) << (64 - 8 * n)) == 0;
    #endif
    }
    """
    const uint64_t HASH_BASE "ubpe_HASH_BASE"
    const uint64_t GOLDEN "ubpe_GOLDEN"
    bint same_text "ubpe_same_text"(const uint8_t* a, const uint8_t* b, int64_t n) noexcept nogil

cdef enum:
    # the schema's SentencePiece.Type
    NORMAL = 1
    UNKNOWN = 2
    CONTROL = 3
    USER_DEFINED = 4
    UNUSED = 5
    BYTE = 6
    PADDING = 8  # bytes readable past a text that `same_text` compares
    FILTER_BITS_PER_SLOT = 16  # `PieceIndex`' filter: a text that is no piece passes 1 time in 32
    FILTER_SHIFT = 8  # its bits of a hash times GOLDEN: from the 8th up (the slot's: the top ones)


cdef inline bint in_first_table(int32_t kind) noexcept nogil:
    """Normal, user-defined and unused pieces share a table (sentencepiece's ``pieces_``)."""
    return kind == NORMAL or kind == USER_DEFINED or kind == UNUSED


cdef inline uint64_t piece_hash(const uint8_t* piece, Py_ssize_t length) noexcept nogil:
    """``sum((piece[i] + 1) * HASH_BASE ** (length - 1 - i))`` mod 2**64."""
    cdef uint64_t h = 0
    cdef Py_ssize_t i
    for i in range(length):
        h = h * HASH_BASE + piece[i] + 1
    return h


cdef struct PieceSlot:
    # a piece in `PieceIndex` (eight bytes: a hit reads the piece's offsets and text after it)
    uint32_t check  # more bits of its hash
    int32_t id  # -1: an empty slot


cdef struct PieceIndex:
    # text -> id of the pieces (the last of equal texts wins, as a dict built in id order): open
    # addressing, linear probing, a slot picked by the top bits of the hash times GOLDEN; in
    # front of it a filter of 16 bits a slot (FILTER_BITS_PER_SLOT), one set per piece
    # (more bits of the same product): most texts that are no piece stop there, in a table
    # a quarter of the slots' size, without reading a slot
    const uint8_t* blob  # the pieces' blob followed by PADDING bytes (`same_text` reads past a text)
    const int64_t* offsets  # piece k is blob[offsets[k]:offsets[k + 1]]
    PieceSlot* slots
    uint64_t mask
    int shift
    const uint64_t* filter
    uint64_t filter_mask


cdef struct IndexMemory:
    # the storage of a `PieceIndex`
    vector[uint8_t] text  # its padded blob
    vector[PieceSlot] slots
    vector[uint64_t] filter


cdef inline uint64_t filter_bit(const PieceIndex* pieces, uint64_t mixed) noexcept nogil:
    """The filter's bit of a text whose hash times GOLDEN is ``mixed`` (bits below those that
    pick its slot)."""
    return (mixed >> FILTER_SHIFT) & pieces.filter_mask


cdef inline int64_t find_piece(const PieceIndex* pieces, const uint8_t* s, int64_t n, uint64_t h,
                               bint padded=True) noexcept nogil:
    """The id of the piece whose text is ``s[:n]`` (of `piece_hash` ``h``), else -1. ``s``
    must be readable PADDING bytes past ``n``, unless not ``padded`` (then the texts are
    compared with memcmp)."""
    cdef uint64_t mixed = h * GOLDEN, i = mixed >> pieces.shift
    cdef uint32_t check = <uint32_t>(mixed >> 16)
    cdef const PieceSlot* slot
    cdef int64_t start
    cdef uint64_t bit = filter_bit(pieces, mixed)
    if not pieces.filter[bit >> 6] >> (bit & 63) & 1:
        return -1
    while True:
        slot = pieces.slots + i
        if slot.id < 0:
            return -1
        if slot.check == check:
            start = pieces.offsets[slot.id]
            if pieces.offsets[slot.id + 1] - start == n and (
                    same_text(pieces.blob + start, s, n) if padded else memcmp(pieces.blob + start, s, n) == 0):
                return slot.id
        i = (i + 1) & pieces.mask


cdef inline int index_pieces(PieceIndex* pieces, const uint8_t* blob, const int64_t* offsets, Py_ssize_t n,
                             IndexMemory& memory, const uint64_t* hashes, bint padded=True) except -1 nogil:
    """Fills ``pieces``' table (``memory``: its storage, two slots a piece or more;
    ``hashes``: the pieces' `piece_hash`, or NULL). Returns 1 if two pieces have one text
    (the last one's id is kept), else 0. With ``padded`` the index holds a padded copy of
    the texts (`find_piece`'s ``padded`` look-ups need it); else it points into ``blob`` and
    ``offsets``, which must outlive it, and only look-ups not ``padded`` may be made."""
    cdef Py_ssize_t k
    cdef uint64_t size = 16, mixed, i, bit
    cdef int bits = 4, repeated = 0
    cdef PieceSlot empty
    cdef PieceSlot* slot
    cdef int64_t length, start
    if padded:
        memory.text.reserve(offsets[n] + PADDING)
        memory.text.insert(memory.text.end(), blob, blob + offsets[n])
        memory.text.resize(offsets[n] + PADDING, 0)
        blob = memory.text.data()
    pieces.blob = blob
    pieces.offsets = offsets
    while size < 2 * <uint64_t>n:
        size <<= 1
        bits += 1
    empty.id = -1
    memory.slots.resize(size, empty)
    pieces.slots = memory.slots.data()
    pieces.mask = size - 1
    pieces.shift = 64 - bits
    memory.filter.resize(size * FILTER_BITS_PER_SLOT // 64, 0)
    pieces.filter = memory.filter.data()
    pieces.filter_mask = size * FILTER_BITS_PER_SLOT - 1
    for k in range(n):
        length = offsets[k + 1] - offsets[k]
        mixed = (hashes[k] if hashes != NULL else piece_hash(blob + offsets[k], length)) * GOLDEN
        bit = filter_bit(pieces, mixed)
        memory.filter[bit >> 6] |= 1ULL << (bit & 63)
        i = mixed >> pieces.shift
        while True:
            slot = pieces.slots + i
            if slot.id < 0:
                break
            start = offsets[slot.id]
            if (slot.check == <uint32_t>(mixed >> 16) and offsets[slot.id + 1] - start == length
                    and (same_text(blob + start, blob + offsets[k], length) if padded
                         else memcmp(blob + start, blob + offsets[k], length) == 0)):
                repeated = 1
                break
            i = (i + 1) & pieces.mask
        slot.check = <uint32_t>(mixed >> 16)
        slot.id = <int32_t>k  # (equal texts: the last one's)
    return repeated
