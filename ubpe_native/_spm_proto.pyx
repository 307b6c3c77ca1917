# distutils: language = c++
"""sentencepiece ``.model`` files read in C: the ModelProto's wire format, and the tables a model
is built from, with no protobuf, no numpy and no Python object per piece.

`read_model_proto` walks the protobuf wire format of sentencepiece's schema
(``sentencepiece_model.proto``, proto2) as the protobuf library reads it: a field given twice
keeps its last value, a message field given twice is merged, every ``pieces`` entry adds a
piece, unknown fields are skipped, an absent field has the schema's default. It keeps the fields
a reader uses - each piece's string, score and type; ``trainer_spec``'s ``model_type``,
``byte_fallback``, ``treat_whitespace_as_suffix``, ``unk_id``, ``bos_id``, ``eos_id``;
``normalizer_spec``'s ``precompiled_charsmap``, ``add_dummy_prefix``,
``remove_extra_whitespaces``, ``escape_whitespaces`` - and refuses what sentencepiece's
``ModelInterface::InitializePieces`` refuses (``ubpe.io.sentencepiece.check_pieces``). On
anything it is not sure of (malformed wire data, a group, a known field of another wire type,
an enum value the schema does not list, a piece that breaks a rule, a score that is NaN or
infinite, a model that is neither BPE nor unigram) it gives ``None``: the caller then reads the
file with protobuf, which names the fault. Every length read from the file is checked against
the bytes left before it is used.

`bpe_tables` derives a BPE model's merge rules from its pieces (what
``ubpe.models.sentencepiece.SentencePieceBPE._derive_merge_rules`` does in Python, in the same
order), or only the rest of its tables (a ``.model`` file's kernel looks its pairs up by text:
``_spm.SpmBPE``'s ``pieces``), `unigram_tables` a unigram model's lattice, `user_defined_table` the pieces the
normalizer keeps whole, `piece_texts` the pieces as str. All of them give ``array.array``
objects, which the kernels take as they are. (The module is over 600 lines because the reader
and the tables share the pieces' rules - UTF-8, the hash of pieces, sentencepiece's two tables -
and the derivation of the merge rules is a long single pass, kept in one place.)

>>> # pieces "<unk>" (type 2, unknown) and "a" (score 0.0); trainer_spec: model_type 2 (BPE)
>>> data = bytes.fromhex("0a090a053c756e6b3e1802" "0a080a01611500000000" "12021802")
>>> blob, offsets, scores, types, spec = read_model_proto(data)
>>> blob, offsets.tolist(), scores.tolist(), types.tolist(), spec["model_type"], spec["unk_id"]
(b'<unk>a', [0, 5, 6], [0.0, 0.0], [2, 1], 'bpe', 0)
>>> read_model_proto(data[:-1]) is None  # cut short: protobuf names the fault
True
>>> piece_texts(blob, offsets)
['<unk>', 'a']
"""

from cpython cimport array
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.list cimport PyList_New, PyList_SET_ITEM
from cpython.ref cimport Py_INCREF
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.math cimport isfinite
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcmp, memcpy
from libcpp.utility cimport pair
from libcpp.vector cimport vector

from ubpe_native._buffers cimport copy_array, new_array
from ubpe_native._checks cimport check_offsets
from ubpe_native._flat_map cimport FlatMap
from ubpe_native._piece_index cimport (BYTE, GOLDEN, HASH_BASE, NORMAL, UNKNOWN, UNUSED, USER_DEFINED,
                                       IndexMemory, PieceIndex, find_piece, in_first_table, index_pieces)
from ubpe_native._shared cimport push_code_point, utf8_length

# protobuf wire types (a group's start and end, 3 and 4, and 6, 7 are refused)
cdef int VARINT = 0
cdef int FIXED64 = 1
cdef int LENGTH = 2
cdef int FIXED32 = 5
cdef int MAX_VARINT_BYTES = 10
cdef uint64_t MAX_TAG = 0xFFFFFFFFULL
# ModelProto's fields, and those of its messages that a reader uses
cdef uint64_t MODEL_PIECES = 1, MODEL_TRAINER = 2, MODEL_NORMALIZER = 3, MODEL_DENORMALIZER = 5
cdef uint64_t PIECE_TEXT = 1, PIECE_SCORE = 2, PIECE_TYPE = 3
cdef uint64_t TRAINER_MODEL_TYPE = 3, TRAINER_SUFFIX = 24, TRAINER_BYTE_FALLBACK = 35
cdef uint64_t TRAINER_UNK_ID = 40, TRAINER_BOS_ID = 41, TRAINER_EOS_ID = 42
cdef uint64_t NORMALIZER_CHARSMAP = 2, NORMALIZER_DUMMY_PREFIX = 3, NORMALIZER_EXTRA_WHITESPACES = 4
cdef uint64_t NORMALIZER_ESCAPE = 5
# the schema's enums: TrainerSpec.ModelType and SentencePiece.Type
cdef int UNIGRAM = 1, BPE = 2, WORD = 3, CHAR = 4
# sentencepiece refuses a piece of this many bytes or more (kMaxPieceSize)
cdef int64_t MAX_PIECE_BYTES = 8000
cdef int N_BYTES = 256
# the unknown piece's lattice score: the lowest normal score minus this (kUnkPenalty)
cdef float UNK_PENALTY = 10.0
# ids are int32: a model's pieces and the characters that are no piece must fit
cdef int64_t MAX_IDS = 0x7FFFFFFE
# protobuf refuses a message of 2 GiB or more; so does the reader (piece places are 32-bit)
cdef Py_ssize_t MAX_MESSAGE_BYTES = 0x7FFFFFFF
# the second table of a unigram model's pieces (control, unknown and byte pieces) hashes apart
cdef uint32_t SPACE_SYMBOL = 0x2581  # "▁"
cdef uint32_t MAX_CODE_POINT = 0x10FFFF
cdef uint64_t ASCII_MASK = 0x8080808080808080ULL  # the high bits of eight bytes

cdef extern from *:
    """
    #include <algorithm>
    #include <cstdint>
    #include <utility>
    #include <vector>
    /* sorts `values`; a BPE model's scores come in a few sorted runs (the special and byte
       pieces, then the merged ones): those are merged in place, anything else is sorted */
    static void ubpe_sort_runs(std::vector<std::pair<double, int64_t> >& values) {
        const size_t max_runs = 64;
        std::vector<size_t> starts(1, 0);
        for (size_t k = 1; k < values.size(); ++k) {
            if (values[k] < values[k - 1]) {
                starts.push_back(k);
                if (starts.size() > max_runs) {
                    std::sort(values.begin(), values.end());
                    return;
                }
            }
        }
        starts.push_back(values.size());
        while (starts.size() > 2) {
            std::vector<size_t> next;
            size_t runs = starts.size() - 1;
            for (size_t i = 0; i < runs; i += 2) {
                next.push_back(starts[i]);
                if (i + 1 < runs)
                    std::inplace_merge(values.begin() + starts[i], values.begin() + starts[i + 1],
                                       values.begin() + starts[i + 2]);
            }
            next.push_back(starts[runs]);
            starts.swap(next);
        }
    }
    """
    void sort_runs "ubpe_sort_runs"(vector[pair[double, int64_t]]& values) except + nogil


cdef extern from *:
    """
    #include <cstdint>
    #include <cstring>
    /* the place, in memory order, of the first of eight bytes (read into `high`, other bits
       cleared) whose high bit is set; `high` is not 0 */
    static inline int ubpe_first_high_byte(uint64_t high) {
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        int k = 0;
        for (; !(high >> 63); high <<= 8) ++k;
        return k;
    #elif defined(__GNUC__) || defined(__clang__)
        return __builtin_ctzll(high) >> 3;
    #else
        int k = 0;
        for (; !(high & 0x80); high >>= 8) ++k;
        return k;
    #endif
    }
    """
    int first_high_byte "ubpe_first_high_byte"(uint64_t high) noexcept nogil


cdef list MODEL_TYPE_NAMES = [None, "unigram", "bpe"]


cdef struct Specs:
    # the TrainerSpec and NormalizerSpec fields a reader uses, the schema's defaults until read
    bint has_trainer
    int model_type
    bint byte_fallback
    bint treat_whitespace_as_suffix
    int32_t unk_id
    int32_t bos_id
    int32_t eos_id
    Py_ssize_t charsmap_start
    Py_ssize_t charsmap_length
    bint add_dummy_prefix
    bint remove_extra_whitespaces
    bint escape_whitespaces


cdef struct Pieces:
    # each piece's place in the file (a file is below 2 GiB, as protobuf's messages are), in
    # file order; its score and type go straight into the arrays `read_model_proto` returns,
    # of ``capacity`` items (`count_pieces`): a cold process pays for every page it touches.
    # The rules of ``check_pieces`` are checked as each piece is read, while its bytes are in
    # the cache (one pass over them: its text checked and hashed, and looked up among those
    # before it), and what decides only once the specs are known is kept for `pieces_break_rules`
    uint32_t* start
    uint32_t* length
    float* score
    int32_t* type
    Py_ssize_t capacity
    Py_ssize_t count
    bint broken  # a piece empty, too long, with a NUL, not UTF-8, of a score not finite, a
    #              byte piece that is no <0xXX>, or two pieces of one text in one of
    #              sentencepiece's two tables
    bint across  # two pieces of one text, one in each table (one table for a BPE model)
    int n_unknown
    int n_byte_pieces
    int n_bytes  # the distinct bytes of the byte pieces
    bint seen_byte[256]
    int32_t* table  # the pieces by text (index + 1; 0: empty), linear probing, of ``mask + 1`` slots
    uint64_t mask
    int bits


# -- the wire format ------------------------------------------------------------------------

cdef int read_varint(const uint8_t* data, Py_ssize_t* pos, Py_ssize_t end, uint64_t* value) noexcept nogil:
    """A base-128 varint at ``pos`` (advanced past it) into ``value``; 1 if it runs past ``end``
    or is longer than 64 bits."""
    cdef uint64_t result = 0
    cdef int k
    cdef uint8_t byte
    for k in range(MAX_VARINT_BYTES):
        if pos[0] >= end:
            return 1
        byte = data[pos[0]]
        pos[0] += 1
        if k == MAX_VARINT_BYTES - 1 and byte > 1:
            return 1  # bits past the 64th
        result |= <uint64_t>(byte & 0x7F) << (7 * k)
        if not byte & 0x80:
            value[0] = result
            return 0
    return 1


cdef int read_tag(const uint8_t* data, Py_ssize_t* pos, Py_ssize_t end, uint64_t* field,
                  int* wire) noexcept nogil:
    cdef uint64_t tag
    if read_varint(data, pos, end, &tag) or tag > MAX_TAG or tag >> 3 == 0:
        return 1
    field[0] = tag >> 3
    wire[0] = <int>(tag & 7)
    return 0


cdef inline int read_varint_field(const uint8_t* data, Py_ssize_t* pos, Py_ssize_t end, int wire,
                                  uint64_t* value) noexcept nogil:
    """A known varint field's value; 1 if the field comes with another wire type (protobuf
    would keep it among the unknown fields: not sure) or is cut short."""
    return wire != VARINT or read_varint(data, pos, end, value)


cdef int read_length(const uint8_t* data, Py_ssize_t* pos, Py_ssize_t end, Py_ssize_t* start,
                     Py_ssize_t* length) noexcept nogil:
    """A length-delimited field's bytes: ``start`` and ``length``, which fit before ``end``."""
    cdef uint64_t size
    if read_varint(data, pos, end, &size) or size > <uint64_t>(end - pos[0]):
        return 1
    start[0] = pos[0]
    length[0] = <Py_ssize_t>size
    pos[0] += <Py_ssize_t>size
    return 0


cdef int skip_field(const uint8_t* data, Py_ssize_t* pos, Py_ssize_t end, int wire) noexcept nogil:
    """Skips a field's value of wire type ``wire``; 1 for a group or a wire type that is none."""
    cdef uint64_t value
    cdef Py_ssize_t start, length
    if wire == VARINT:
        return read_varint(data, pos, end, &value)
    if wire == LENGTH:
        return read_length(data, pos, end, &start, &length)
    if wire == FIXED64 or wire == FIXED32:
        length = 8 if wire == FIXED64 else 4
        if end - pos[0] < length:
            return 1
        pos[0] += length
        return 0
    return 1


cdef int read_piece(const uint8_t* data, Py_ssize_t pos, Py_ssize_t end, Pieces* pieces) except -1 nogil:
    """One ``SentencePiece`` message (``data[pos:end]``) appended to ``pieces``; 1 if it is
    not sure (-1: out of memory, MemoryError)."""
    cdef uint64_t field, value
    cdef int wire
    cdef Py_ssize_t start = 0, length = 0
    cdef float score = 0.0
    cdef int32_t kind = NORMAL
    cdef uint32_t bits
    cdef Py_ssize_t k
    while pos < end:
        if read_tag(data, &pos, end, &field, &wire):
            return 1
        if field == PIECE_TEXT:
            if wire != LENGTH or read_length(data, &pos, end, &start, &length):
                return 1
        elif field == PIECE_SCORE:
            if wire != FIXED32 or end - pos < 4:
                return 1
            bits = (<uint32_t>data[pos] | <uint32_t>data[pos + 1] << 8 | <uint32_t>data[pos + 2] << 16
                    | <uint32_t>data[pos + 3] << 24)
            memcpy(&score, &bits, 4)
            pos += 4
        elif field == PIECE_TYPE:
            # a closed enum: a value it does not list is kept among the unknown fields
            if read_varint_field(data, &pos, end, wire, &value) or not NORMAL <= value <= BYTE:
                return 1
            kind = <int32_t>value
        elif skip_field(data, &pos, end, wire):
            return 1
    k = pieces.count
    if k >= pieces.capacity:
        return 1  # (more than `count_pieces` found: cannot be, as both walk the same fields)
    pieces.count = k + 1
    pieces.start[k] = <uint32_t>start
    pieces.length[k] = <uint32_t>length
    pieces.score[k] = score
    pieces.type[k] = kind
    check_piece(data, k, pieces)
    return 0


cdef void check_piece(const uint8_t* data, Py_ssize_t k, Pieces* pieces) noexcept nogil:
    """Piece ``k``, just read, checked against the rules of ``check_pieces`` (`Pieces`): its
    text (well-formed UTF-8 without NUL, hashed as `_piece_index.piece_hash` does in the same
    pass) and score, its type, and the pieces of its text read before it."""
    cdef const uint8_t* text = data + pieces.start[k]
    cdef Py_ssize_t length = pieces.length[k], pos = 0, size, j
    cdef uint64_t h = 0, i
    cdef uint8_t c
    cdef int32_t kind = pieces.type[k], other
    cdef int value
    if length == 0 or length >= MAX_PIECE_BYTES or not isfinite(pieces.score[k]):
        pieces.broken = True
        return
    while pos < length:
        c = text[pos]
        if c < 0x80:
            if c == 0:
                pieces.broken = True
                return
            h = h * HASH_BASE + c + 1
            pos += 1
            continue
        size = char_length(text + pos, length - pos)
        if size == 0:
            pieces.broken = True
            return
        for j in range(pos, pos + size):
            h = h * HASH_BASE + text[j] + 1
        pos += size
    if kind == UNKNOWN:
        pieces.n_unknown += 1
    elif kind == BYTE:
        pieces.n_byte_pieces += 1
        value = byte_piece(text, length)
        if value < 0:
            pieces.broken = True
            return
        if not pieces.seen_byte[value]:
            pieces.seen_byte[value] = True
            pieces.n_bytes += 1
    i = (h * GOLDEN) >> (64 - pieces.bits)
    while pieces.table[i]:
        j = pieces.table[i] - 1
        if pieces.length[j] == <uint32_t>length and memcmp(data + pieces.start[j], text, length) == 0:
            other = pieces.type[j]
            if in_first_table(other) == in_first_table(kind):
                pieces.broken = True
                return
            pieces.across = True
        i = (i + 1) & pieces.mask
    pieces.table[i] = <int32_t>(k + 1)


cdef int read_spec(const uint8_t* data, Py_ssize_t pos, Py_ssize_t end, uint64_t message,
                   Specs* specs) noexcept nogil:
    """A ``TrainerSpec`` (``message``: ``MODEL_TRAINER``) or ``NormalizerSpec`` message merged
    into ``specs``: the fields a reader uses are read, the others skipped."""
    cdef uint64_t field, value
    cdef int wire
    while pos < end:
        if read_tag(data, &pos, end, &field, &wire):
            return 1
        if message == MODEL_NORMALIZER and field == NORMALIZER_CHARSMAP:
            if wire != LENGTH or read_length(data, &pos, end, &specs.charsmap_start, &specs.charsmap_length):
                return 1
        elif not spec_varint(message, field):
            if skip_field(data, &pos, end, wire):
                return 1
        elif read_varint_field(data, &pos, end, wire, &value) or store_varint(specs, message, field, value):
            return 1
    return 0


cdef inline bint spec_varint(uint64_t message, uint64_t field) noexcept nogil:
    """Whether ``field`` of ``message`` is a varint field a reader uses."""
    if message == MODEL_TRAINER:
        return (field == TRAINER_MODEL_TYPE or field == TRAINER_SUFFIX or field == TRAINER_BYTE_FALLBACK
                or field == TRAINER_UNK_ID or field == TRAINER_BOS_ID or field == TRAINER_EOS_ID)
    return field == NORMALIZER_DUMMY_PREFIX or field == NORMALIZER_EXTRA_WHITESPACES or field == NORMALIZER_ESCAPE


cdef int store_varint(Specs* specs, uint64_t message, uint64_t field, uint64_t value) noexcept nogil:
    """``specs``' field ``field`` of ``message`` (of `spec_varint`) set to ``value``; 1 for a
    model type the schema does not list (a closed enum: protobuf keeps it among the unknown
    fields)."""
    if message == MODEL_NORMALIZER:
        if field == NORMALIZER_DUMMY_PREFIX:
            specs.add_dummy_prefix = value != 0
        elif field == NORMALIZER_EXTRA_WHITESPACES:
            specs.remove_extra_whitespaces = value != 0
        else:
            specs.escape_whitespaces = value != 0
    elif field == TRAINER_MODEL_TYPE:
        if not UNIGRAM <= value <= CHAR:
            return 1
        specs.model_type = <int>value
    elif field == TRAINER_SUFFIX:
        specs.treat_whitespace_as_suffix = value != 0
    elif field == TRAINER_BYTE_FALLBACK:
        specs.byte_fallback = value != 0
    elif field == TRAINER_UNK_ID:  # int32 fields: the low 32 bits, as protobuf reads them
        specs.unk_id = <int32_t>value
    elif field == TRAINER_BOS_ID:
        specs.bos_id = <int32_t>value
    else:
        specs.eos_id = <int32_t>value
    return 0


cdef void default_specs(Specs* specs) noexcept nogil:
    """The schema's defaults (a message absent, or a field of it)."""
    specs[0] = Specs(has_trainer=False, model_type=UNIGRAM, byte_fallback=False, treat_whitespace_as_suffix=False,
                     unk_id=0, bos_id=1, eos_id=2, charsmap_start=0, charsmap_length=0, add_dummy_prefix=True,
                     remove_extra_whitespaces=True, escape_whitespaces=True)


cdef Py_ssize_t count_pieces(const uint8_t* data, Py_ssize_t end) noexcept nogil:
    """The ``pieces`` fields of a ModelProto, as far as its wire data can be walked (`read_model`
    checks it)."""
    cdef uint64_t field
    cdef int wire
    cdef Py_ssize_t pos = 0, count = 0
    while pos < end:
        if read_tag(data, &pos, end, &field, &wire) or skip_field(data, &pos, end, wire):
            break
        count += field == MODEL_PIECES and wire == LENGTH
    return count


cdef int read_model(const uint8_t* data, Py_ssize_t end, Pieces* pieces, Specs* specs) except -1 nogil:
    """A ``ModelProto``: its pieces and specs; 1 if the wire data is not sure."""
    cdef uint64_t field
    cdef int wire
    cdef Py_ssize_t pos = 0, start, length
    cdef Specs ignored  # the denormalizer's spec: read to check it, as protobuf parses it
    default_specs(specs)
    default_specs(&ignored)
    while pos < end:
        if read_tag(data, &pos, end, &field, &wire):
            return 1
        if field == MODEL_PIECES or field == MODEL_TRAINER or field == MODEL_NORMALIZER \
                or field == MODEL_DENORMALIZER:
            if wire != LENGTH or read_length(data, &pos, end, &start, &length):
                return 1
            if field == MODEL_PIECES:
                if read_piece(data, start, start + length, pieces):
                    return 1
            elif field == MODEL_TRAINER:
                specs.has_trainer = True
                if read_spec(data, start, start + length, MODEL_TRAINER, specs):
                    return 1
            elif field == MODEL_NORMALIZER:
                if read_spec(data, start, start + length, MODEL_NORMALIZER, specs):
                    return 1
            elif read_spec(data, start, start + length, MODEL_NORMALIZER, &ignored):
                return 1
        elif skip_field(data, &pos, end, wire):
            return 1
    return 0


# -- the pieces' rules ----------------------------------------------------------------------

cdef inline Py_ssize_t char_length(const uint8_t* s, Py_ssize_t n) noexcept nogil:
    """Bytes of the well-formed UTF-8 character at ``s`` (of ``n`` bytes left; Python's strict
    decoder: no surrogate, no overlong form, at most U+10FFFF), 0 if there is none."""
    cdef uint8_t lead = s[0]
    cdef Py_ssize_t size = utf8_length(lead), k
    if size > n:
        return 0
    if size == 1:
        return 1 if lead < 0x80 else 0
    if size == 2:
        if not 0xC2 <= lead <= 0xDF:
            return 0
    elif size == 3:
        if lead == 0xE0 and s[1] < 0xA0 or lead == 0xED and s[1] > 0x9F:
            return 0
    elif not 0xF0 <= lead <= 0xF4 or lead == 0xF0 and s[1] < 0x90 or lead == 0xF4 and s[1] > 0x8F:
        return 0
    for k in range(1, size):
        if s[k] & 0xC0 != 0x80:
            return 0
    return size


cdef uint32_t code_point(const uint8_t* s, Py_ssize_t size) noexcept nogil:
    """The code point of the well-formed character ``s[:size]``."""
    cdef uint32_t cp
    cdef Py_ssize_t k
    if size == 1:
        return s[0]
    cp = s[0] & (0x7F >> size)
    for k in range(1, size):
        cp = (cp << 6) | (s[k] & 0x3F)
    return cp


cdef Py_ssize_t count_chars(const uint8_t* s, Py_ssize_t n) noexcept nogil:
    """The characters of ``s[:n]`` if it is well-formed UTF-8, else -1."""
    cdef Py_ssize_t pos = 0, size, count = 0
    while pos < n:
        size = char_length(s + pos, n - pos)
        if size == 0:
            return -1
        pos += size
        count += 1
    return count


cdef int byte_piece(const uint8_t* s, Py_ssize_t n) noexcept nogil:
    """The byte ``0xXX`` a piece ``<0xXX>`` (upper-case hex digits) stands for, else -1."""
    cdef int value = 0, k
    cdef uint8_t c
    if n != 6 or s[0] != c'<' or s[1] != c'0' or s[2] != c'x' or s[5] != c'>':
        return -1
    for k in range(3, 5):
        c = s[k]
        if c'0' <= c <= c'9':
            value = value * 16 + (c - c'0')
        elif c'A' <= c <= c'F':
            value = value * 16 + (c - c'A' + 10)
        else:
            return -1
    return value


cdef bint pieces_break_rules(const Pieces* pieces, bint byte_fallback, bint one_table) noexcept nogil:
    """Whether the pieces, read and checked one by one (`check_piece`), break a rule of
    ``check_pieces`` (too long, empty, a NUL, not UTF-8, defined twice, not one unknown piece,
    byte pieces without byte_fallback or not all 256 of them with it) or a score is NaN or
    infinite, now that the specs are known."""
    return (pieces.broken or one_table and pieces.across or pieces.n_unknown != 1
            or (pieces.n_bytes != N_BYTES if byte_fallback else pieces.n_byte_pieces != 0))


def read_model_proto(const uint8_t[::1] data not None):
    """A sentencepiece ModelProto's pieces and settings, read in C:
    ``(blob, offsets, scores, types, specs)`` - piece ``k`` is
    ``blob[offsets[k]:offsets[k + 1]]`` (UTF-8; ``offsets`` int64), of score ``scores[k]``
    (float32) and type ``types[k]`` (int32: 1 normal ... 6 byte); ``specs`` a dict of
    ``model_type`` (``"bpe"`` or ``"unigram"``), ``byte_fallback``, ``treat_whitespace_as_suffix``,
    ``unk_id``, ``bos_id``, ``eos_id``, ``precompiled_charsmap`` (bytes), ``add_dummy_prefix``,
    ``remove_extra_whitespaces`` and ``escape_whitespaces``. ``None`` when the file is not
    sure (see the module docstring): the caller reads it with protobuf."""
    cdef Pieces pieces
    cdef Specs specs
    cdef Py_ssize_t n = data.shape[0], k, total = 0
    cdef int unsure = 1
    cdef const uint8_t* base = &data[0] if n else NULL
    cdef array.array scores, types, offsets
    cdef vector[uint32_t] starts, lengths
    cdef vector[int32_t] table
    if n and n < MAX_MESSAGE_BYTES:
        with nogil:
            pieces.capacity = count_pieces(base, n)
        scores = new_array("f", pieces.capacity)
        types = new_array("i", pieces.capacity)
        pieces.score = <float*>scores.data.as_voidptr
        pieces.type = <int32_t*>types.data.as_voidptr
        with nogil:
            starts.resize(pieces.capacity)
            lengths.resize(pieces.capacity)
            pieces.bits = 4  # a table at least twice the pieces' number (a load factor of 1/2 at most)
            while (<uint64_t>1 << pieces.bits) < 2 * <uint64_t>pieces.capacity:
                pieces.bits += 1
            table.resize(<size_t>1 << pieces.bits, 0)
            pieces.start, pieces.length, pieces.table = starts.data(), lengths.data(), table.data()
            pieces.mask = (<uint64_t>1 << pieces.bits) - 1
            pieces.count = pieces.n_unknown = pieces.n_byte_pieces = pieces.n_bytes = 0
            pieces.broken = pieces.across = False
            for k in range(N_BYTES):
                pieces.seen_byte[k] = False
            unsure = read_model(base, n, &pieces, &specs)
            if not unsure:
                unsure = (pieces.count == 0 or not specs.has_trainer or pieces.count != pieces.capacity
                          or not (specs.model_type == UNIGRAM or specs.model_type == BPE)
                          or <int64_t>pieces.count > MAX_IDS
                          or pieces_break_rules(&pieces, specs.byte_fallback, specs.model_type == BPE))
    if unsure:
        return None
    n_pieces = pieces.count
    offsets = new_array("q", n_pieces + 1)
    cdef int64_t* ends = <int64_t*>offsets.data.as_voidptr
    ends[0] = 0
    for k in range(n_pieces):
        total += pieces.length[k]
        ends[k + 1] = total
    blob = PyBytes_FromStringAndSize(NULL, total)
    cdef char* out = blob
    for k in range(n_pieces):
        memcpy(out + ends[k], base + pieces.start[k], pieces.length[k])
    spec = {
        "model_type": MODEL_TYPE_NAMES[specs.model_type], "byte_fallback": bool(specs.byte_fallback),
        "treat_whitespace_as_suffix": bool(specs.treat_whitespace_as_suffix),
        "unk_id": specs.unk_id, "bos_id": specs.bos_id, "eos_id": specs.eos_id,
        "precompiled_charsmap": PyBytes_FromStringAndSize(<const char*>base + specs.charsmap_start,
                                                          specs.charsmap_length),
        "add_dummy_prefix": bool(specs.add_dummy_prefix),
        "remove_extra_whitespaces": bool(specs.remove_extra_whitespaces),
        "escape_whitespaces": bool(specs.escape_whitespaces),
    }
    return blob, offsets, scores, types, spec


cdef Py_ssize_t check_pieces_arguments(const uint8_t[::1] blob, const int64_t[::1] offsets,
                                       const int32_t[::1] types, const float[::1] scores) except -1:
    """The number of pieces, once ``offsets`` cut ``blob`` into UTF-8 pieces with a type and a
    finite score each (ValueError otherwise)."""
    cdef Py_ssize_t n = offsets.shape[0] - 1, k
    check_offsets(offsets, blob.shape[0], "offsets")
    if types.shape[0] != n or scores.shape[0] != n:
        raise ValueError(f"{n} pieces need {n} types and {n} scores, not {types.shape[0]} and {scores.shape[0]}")
    if n < 1:
        raise ValueError("a model needs at least one piece")
    if n + blob.shape[0] > MAX_IDS:
        raise ValueError("too many pieces for 32-bit ids")  # (and offsets below 2**32)
    if pieces_are_sound(&blob[0] if blob.shape[0] else <const uint8_t*>b"", &offsets[0], &scores[0], n):
        return n
    for k in range(n):  # which piece is not: the first one, as the error names it
        if offsets[k + 1] > offsets[k] and count_chars(&blob[0] + offsets[k], offsets[k + 1] - offsets[k]) < 0:
            raise ValueError(f"piece {k} is not UTF-8")
        if not isfinite(scores[k]):
            raise ValueError(f"the score of piece {k} is NaN or infinite")
    return n


cdef bint pieces_are_sound(const uint8_t* blob, const int64_t* offsets, const float* scores,
                           Py_ssize_t n) noexcept nogil:
    """Whether every piece is UTF-8 and every score finite, in one pass over the blob: the
    pieces (which cover it, `check_offsets`) are UTF-8 when the blob is and each piece starts
    a character (then each ends one too); ASCII eight bytes at a time."""
    cdef Py_ssize_t k, pos = 0, size, end = offsets[n]
    cdef uint64_t word
    for k in range(n):
        if not isfinite(scores[k]) or offsets[k] < end and blob[offsets[k]] & 0xC0 == 0x80:
            return False
    while pos < end:
        if end - pos >= 8:
            memcpy(&word, blob + pos, 8)
            word &= ASCII_MASK
            if word == 0:
                pos += 8
                continue
            pos += first_high_byte(word)  # (to the first byte that is not ASCII)
        elif blob[pos] < 0x80:
            pos += 1
            continue
        size = char_length(blob + pos, end - pos)
        if size == 0:
            return False
        pos += size
    return True


cdef int byte_pieces(const uint8_t* blob, const int64_t* offsets, Py_ssize_t n, int64_t* out) noexcept nogil:
    """Per byte, the id of its piece ``<0xXX>`` (the last of equal texts), else -1."""
    cdef Py_ssize_t k
    cdef int b
    for b in range(N_BYTES):
        out[b] = -1
    for k in range(n):
        if offsets[k + 1] - offsets[k] == 6:
            b = byte_piece(blob + offsets[k], 6)
            if b >= 0:
                out[b] = k
    return 0


cdef struct Symbols:
    # the merge operands of `bpe_tables`: pieces, and characters that are no piece (extra ids)
    const PieceIndex* pieces
    int64_t n_pieces
    FlatMap* char_ids  # code point -> id + 1 of the piece that is this one character
    FlatMap* extra_of  # code point -> extra index + 1
    vector[uint32_t]* extra  # the extra characters' code points, in the order of their ids


cdef int64_t char_symbol(Symbols* symbols, uint32_t cp) except -1 nogil:
    """The id of character ``cp``: its piece's, else an extra id (numbered in the order they
    are first asked for)."""
    cdef int64_t token = symbols.char_ids.get(cp, 0)
    cdef int64_t* slot
    if token:
        return token - 1
    slot = symbols.extra_of.slot(cp)
    if slot[0] == 0:
        symbols.extra.push_back(cp)
        slot[0] = symbols.extra.size()
    return symbols.n_pieces + slot[0] - 1


cdef struct Rules:
    vector[int32_t] left, right, result
    vector[int64_t] rank
    vector[int64_t] unit_offsets
    vector[uint8_t] unit_blob
    vector[int32_t] unit_ids
    vector[uint8_t] unit_frozen
    vector[int32_t] expand_ids
    vector[int64_t] expand_offsets
    vector[int32_t] fallback
    vector[uint8_t] unused
    bint joins_space  # a rule's right symbol starts with "▁"
    bint makes_unused  # a rule's result is an unused piece


cdef inline bint starts_with_space(const uint8_t* s, int64_t n) noexcept nogil:
    """Whether ``s[:n]`` starts with "▁" (E2 96 81)."""
    return n >= 3 and s[0] == 0xE2 and s[1] == 0x96 and s[2] == 0x81


cdef bint inner_space(const uint8_t* s, int64_t n) noexcept nogil:
    """Whether "▁" is in ``s[:n]`` after its first character (a cut of it may join one)."""
    cdef int64_t pos
    for pos in range(1, n - 2):
        if starts_with_space(s + pos, n - pos):
            return True
    return False


cdef int derive_rules(const uint8_t* blob, const int64_t* offsets, const int32_t* types, const float* scores,
                      Py_ssize_t n, int32_t unk_id, bint with_rules, Rules* rules) except -1 nogil:
    """`bpe_tables`' rules (the steps of ``_derive_merge_rules``, in its order); without
    ``with_rules`` only what the rules decide (``joins_space``, ``makes_unused``) and the other
    tables: the cuts are tried of the pieces that can decide those only."""
    cdef IndexMemory memory
    cdef FlatMap extra_of, char_ids
    cdef vector[int64_t] prev_length, rank_of
    cdef vector[uint32_t] n_chars  # (the blob is below 2**31 bytes: `check_pieces_arguments`)
    cdef vector[uint32_t] bounds  # a piece's characters' starts (from the piece's start), then its length
    cdef vector[pair[double, int64_t]] order
    cdef vector[uint64_t] hashes  # each piece's hash (`_piece_index.piece_hash`)
    cdef vector[uint64_t] running, powers  # a piece's prefix hashes; HASH_BASE ** k
    cdef vector[uint32_t] extra
    cdef vector[uint64_t] seen_chars  # a bit per code point: the pieces' characters
    cdef uint64_t ascii_seen[2]  # the same for code points below 128
    cdef vector[uint8_t] has_length
    cdef PieceIndex pieces
    cdef bint indexed
    cdef Symbols symbols
    cdef Py_ssize_t k, size, cut, pos, length, total, max_chars = 1, max_bytes = 0
    cdef int64_t a, b, start, end, rank, longest, first
    cdef int64_t byte_ids[256]
    cdef uint32_t cp
    cdef uint64_t h
    cdef uint8_t c
    cdef vector[uint8_t] utf8  # an extra character's bytes
    cdef int j
    # each piece's characters (a bit per code point), their number, its hash; the pieces of one
    # character by code point (the last of equal texts wins, as in the index)
    seen_chars.resize((MAX_CODE_POINT >> 6) + 1, 0)
    ascii_seen[0] = ascii_seen[1] = 0
    n_chars.resize(n)
    hashes.resize(n if with_rules else 0)
    for k in range(n):
        start = offsets[k]
        end = offsets[k + 1]
        if with_rules:
            h = 0
            for pos in range(start, end):
                h = h * HASH_BASE + blob[pos] + 1
            hashes[k] = h
        pos = start
        size = 0
        while pos < end:  # (the pieces are UTF-8: `check_pieces_arguments`)
            c = blob[pos]
            if c < 0x80:
                cp = c
                pos += 1
                ascii_seen[c >> 6] |= 1ULL << (c & 63)  # (in registers: no store per byte)
            else:
                length = utf8_length(c)
                cp = code_point(blob + pos, length)
                pos += length
                seen_chars[cp >> 6] |= 1ULL << (cp & 63)
            size += 1
        n_chars[k] = size
        if size == 1:
            char_ids.slot(cp)[0] = k + 1
        max_chars = max(max_chars, size)
        max_bytes = max(max_bytes, end - start)
    seen_chars[0] |= ascii_seen[0]
    seen_chars[1] |= ascii_seen[1]
    indexed = with_rules  # (without the rules: when a cut first needs it, if one does)
    if indexed:
        index_pieces(&pieces, blob, offsets, n, memory, hashes.data())
        blob = pieces.blob  # (the same bytes, padded for `same_text`)
    symbols.pieces = &pieces
    symbols.n_pieces = n
    symbols.char_ids = &char_ids
    symbols.extra_of = &extra_of
    symbols.extra = &extra
    # each score's rank among the distinct scores, highest first (np.unique of the negated;
    # a BPE model's scores usually come sorted already)
    order.resize(n if with_rules else 0)
    for k in range(<Py_ssize_t>order.size()):
        order[k].first = -<double>scores[k]
        order[k].second = k
    sort_runs(order)
    rank_of.resize(n if with_rules else 0)
    rank = 0
    for k in range(<Py_ssize_t>order.size()):
        if k and order[k].first != order[k - 1].first:  # (-0.0 and 0.0 are one score)
            rank += 1
        rank_of[order[k].second] = rank
    # each length's longest shorter one (a cut's halves are pieces or single characters)
    powers.resize(max_bytes + 1)
    powers[0] = 1
    for k in range(max_bytes):
        powers[k + 1] = powers[k] * HASH_BASE
    running.resize(max_bytes + 1)
    bounds.resize(max_chars + 1)
    has_length.resize(max_chars + 1, 0)
    has_length[1] = 1
    for k in range(n):
        has_length[n_chars[k]] = 1
    prev_length.resize(max_chars + 1, 0)
    longest = 0
    for k in range(max_chars + 1):
        prev_length[k] = longest
        if has_length[k]:
            longest = k
    rules.joins_space = rules.makes_unused = False
    # (a vocabulary has about twice as many rules as pieces, 1.8 times for Mistral's: they do
    # not grow and copy, and pages reserved but never written cost nothing)
    if with_rules:
        rules.left.reserve(2 * n)
        rules.right.reserve(2 * n)
        rules.result.reserve(2 * n)
        rules.rank.reserve(2 * n)
    for k in range(n):
        size = n_chars[k]
        if not in_first_table(types[k]) or size < 2:
            continue
        start = offsets[k]
        total = offsets[k + 1] - start
        if not with_rules and (rules.makes_unused or types[k] != UNUSED) and (
                rules.joins_space or not inner_space(blob + start, total)):
            continue  # (no cut of it can set a flag not yet set)
        # the characters' starts and the hashes of the piece's prefixes
        running[0] = h = 0
        j = 0
        for pos in range(total):
            c = blob[start + pos]
            if c & 0xC0 != 0x80:
                bounds[j] = <uint32_t>pos
                j += 1
            h = h * HASH_BASE + c + 1  # (in a local: not a chain of loads and stores)
            running[pos + 1] = h
        bounds[size] = <uint32_t>total
        # the first character's id, extra ids numbered in the order of the Python derivation
        first = char_symbol(&symbols, code_point(blob + start, bounds[1]))
        longest = prev_length[size]
        rank = rank_of[k] if with_rules else 0
        if size > 2 and not indexed:  # (a half of two characters or more is looked up)
            index_pieces(&pieces, blob, offsets, n, memory, NULL)
            blob = pieces.blob
            indexed = True
        for cut in range(max(1, size - longest), min(size - 1, longest) + 1):
            if not has_length[cut] or not has_length[size - cut]:
                continue
            length = bounds[cut]
            if cut == 1:
                a = first
            else:
                a = find_piece(&pieces, blob + start, length, running[length])
                if a < 0:
                    continue
            if size - cut == 1:
                b = char_symbol(&symbols, code_point(blob + start + length, total - length))
            else:
                b = find_piece(&pieces, blob + start + length, total - length,
                               running[total] - running[length] * powers[total - length])
                if b < 0:
                    continue
            if with_rules:
                rules.left.push_back(<int32_t>a)
                rules.right.push_back(<int32_t>b)
                rules.result.push_back(<int32_t>k)
                rules.rank.push_back(rank)
            rules.joins_space |= starts_with_space(blob + start + length, total - length)
            rules.makes_unused |= types[k] == UNUSED
    # units: every character of every piece (by code point), then the user-defined pieces, frozen
    rules.unit_offsets.push_back(0)
    for k in range(<Py_ssize_t>seen_chars.size()):
        if seen_chars[k] == 0:
            continue
        for j in range(64):
            if seen_chars[k] >> j & 1:
                cp = <uint32_t>(k << 6 | j)
                rules.unit_ids.push_back(<int32_t>char_symbol(&symbols, cp))
                push_code_point(rules.unit_blob, cp)
                rules.unit_offsets.push_back(rules.unit_blob.size())
                rules.unit_frozen.push_back(0)
    for k in range(n):
        if types[k] == USER_DEFINED and offsets[k + 1] > offsets[k]:
            rules.unit_ids.push_back(<int32_t>k)
            rules.unit_blob.insert(rules.unit_blob.end(), blob + offsets[k], blob + offsets[k + 1])
            rules.unit_offsets.push_back(rules.unit_blob.size())
            rules.unit_frozen.push_back(1)
    # a character that is no piece: its bytes' pieces, or the unknown piece
    byte_pieces(blob, offsets, n, byte_ids)
    rules.expand_offsets.push_back(0)
    for k in range(<Py_ssize_t>extra.size()):
        utf8.clear()
        push_code_point(utf8, extra[k])
        for j in range(<int>utf8.size()):
            rules.expand_ids.push_back(<int32_t>(byte_ids[utf8[j]] if byte_ids[utf8[j]] >= 0 else unk_id))
        rules.expand_offsets.push_back(rules.expand_ids.size())
    for j in range(N_BYTES):
        rules.fallback.push_back(<int32_t>(byte_ids[j] if byte_ids[j] >= 0 else unk_id))
    rules.unused.resize(n)
    for k in range(n):
        rules.unused[k] = types[k] == UNUSED
    return 0


def bpe_tables(const uint8_t[::1] blob not None, const int64_t[::1] offsets not None,
               const int32_t[::1] types not None, const float[::1] scores not None, int32_t unk_id,
               bint rules=True):
    """A sentencepiece BPE model's merge tables from its pieces (as `read_model_proto` gives
    them; ``unk_id`` its unknown piece): the arguments of `ubpe_native._spm.SpmBPE` after
    ``n_ids`` - ``(left, right, result, rank, unused, unit_blob, unit_offsets, unit_ids,
    unit_frozen, expand_ids, expand_offsets)`` - then ``(byte_fallback, collapse_unk,
    split_words)``, as ``SentencePieceBPE._build_spm_kernel`` makes them from
    ``_derive_merge_rules``: every cut of a normal, user-defined or unused piece into two known
    symbols (pieces, or characters that are no piece, which get ids ``n + j`` in the order
    they are first met) is a rule, ranked by the piece's place among the distinct scores
    (highest first); the units are every character of the pieces, by code point, then the
    user-defined pieces (frozen); ``collapse_unk`` when there are no byte pieces;
    ``split_words`` when no rule makes an unused piece nor joins a symbol to one that starts
    with ``▁``. Without ``rules`` the four rule arrays are empty (an `SpmBPE` given the pieces
    looks the pairs up by text as it merges) and the extra ids are numbered by code point;
    the rest is the same.

    >>> from array import array
    >>> # pieces: 0 <unk>, 1 a, 2 b, 3 ab, 4 ▁, 5 ▁ab
    >>> tables = bpe_tables("<unk>abab▁▁ab".encode(), array("q", [0, 5, 6, 7, 9, 12, 17]),
    ...                     array("i", [2, 1, 1, 1, 1, 1]), array("f", [0, -1, -1, -2, -1, -3]), 0)
    >>> [t.tolist() for t in tables[:4]], tables[7].tolist(), tables[-2:]
    ([[1, 4], [2, 3], [3, 5], [2, 3]], [6, 7, 1, 2, 8, 9, 10, 4], (True, True))
    """
    cdef Py_ssize_t n = check_pieces_arguments(blob, offsets, types, scores), k
    cdef Rules tables
    cdef bint has_byte = False, with_rules = rules
    if not 0 <= unk_id < n:
        raise ValueError(f"unk_id must be a piece id in 0..{n - 1}, not {unk_id}")
    for k in range(n):
        has_byte |= types[k] == BYTE
    cdef const uint8_t* data = &blob[0] if blob.shape[0] else <const uint8_t*>b""
    with nogil:
        derive_rules(data, &offsets[0], &types[0], &scores[0], n, unk_id, with_rules, &tables)
    return (copy_array("i", tables.left.data(), tables.left.size()),
            copy_array("i", tables.right.data(), tables.right.size()),
            copy_array("i", tables.result.data(), tables.result.size()),
            copy_array("q", tables.rank.data(), tables.rank.size()),
            copy_array("B", tables.unused.data(), tables.unused.size()),
            PyBytes_FromStringAndSize(<const char*>tables.unit_blob.data(), tables.unit_blob.size()),
            copy_array("q", tables.unit_offsets.data(), tables.unit_offsets.size()),
            copy_array("i", tables.unit_ids.data(), tables.unit_ids.size()),
            copy_array("B", tables.unit_frozen.data(), tables.unit_frozen.size()),
            copy_array("i", tables.expand_ids.data(), tables.expand_ids.size()),
            copy_array("q", tables.expand_offsets.data(), tables.expand_offsets.size()),
            copy_array("i", tables.fallback.data(), tables.fallback.size()),
            not has_byte, not tables.makes_unused and not tables.joins_space)



def unigram_tables(const uint8_t[::1] blob not None, const int64_t[::1] offsets not None,
                   const int32_t[::1] types not None, const float[::1] scores not None):
    """A sentencepiece unigram model's lattice from its pieces (as `read_model_proto` gives
    them): the arguments of `ubpe_native._unigram.UnigramLattice` - ``(blob, offsets, ids,
    scores, user_defined, unk_score, byte_fallback)``, the scores as doubles - as
    ``SentencePieceUnigram._build_lattice`` makes them: the normal, user-defined and unused
    pieces that are not empty (an unused one with id -1: never chosen), the unknown piece's
    score the lowest normal score minus 10 in float32 (``None`` without a normal piece), per
    byte the id of its piece ``<0xXX>`` or -1.

    >>> from array import array
    >>> tables = unigram_tables(b"<unk>ab", array("q", [0, 5, 6, 7]), array("i", [2, 1, 5]), array("f", [0, -1, -2]))
    >>> tables[0], tables[2].tolist(), tables[5]
    (b'ab', [1, -1], -11.0)
    """
    cdef Py_ssize_t n = check_pieces_arguments(blob, offsets, types, scores), k
    cdef vector[uint8_t] out_blob, user_defined
    cdef vector[int64_t] out_offsets
    cdef vector[int32_t] ids, fallback
    cdef vector[double] out_scores  # (float32 values: the lattice sums them in float32)
    cdef int64_t byte_ids[256]
    cdef bint has_normal = False
    cdef float lowest = 0.0
    cdef const uint8_t* data = &blob[0] if blob.shape[0] else <const uint8_t*>b""
    with nogil:
        out_offsets.push_back(0)
        for k in range(n):
            if types[k] == NORMAL and (not has_normal or scores[k] < lowest):
                lowest = scores[k]
                has_normal = True
            if not in_first_table(types[k]) or offsets[k + 1] == offsets[k]:
                continue
            out_blob.insert(out_blob.end(), data + offsets[k], data + offsets[k + 1])
            out_offsets.push_back(out_blob.size())
            ids.push_back(-1 if types[k] == UNUSED else <int32_t>k)
            out_scores.push_back(scores[k])
            user_defined.push_back(types[k] == USER_DEFINED)
        byte_pieces(data, &offsets[0], n, byte_ids)
        for k in range(N_BYTES):
            fallback.push_back(<int32_t>byte_ids[k])
    return (PyBytes_FromStringAndSize(<const char*>out_blob.data(), out_blob.size()),
            copy_array("q", out_offsets.data(), out_offsets.size()),
            copy_array("i", ids.data(), ids.size()),
            copy_array("d", out_scores.data(), out_scores.size()),
            copy_array("B", user_defined.data(), user_defined.size()),
            <float>(lowest - UNK_PENALTY) if has_normal else None,
            copy_array("i", fallback.data(), fallback.size()))


def user_defined_table(const uint8_t[::1] blob not None, const int64_t[::1] offsets not None,
                       const int32_t[::1] types not None):
    """The user-defined pieces that are not empty, in id order, as the normalizer
    (`ubpe_native._spm.SpmNormalizer`) takes them: ``(blob, offsets, ids)``.

    >>> from array import array
    >>> blob, offsets, ids = user_defined_table(b"<unk><sep>a", array("q", [0, 5, 10, 11]), array("i", [2, 4, 1]))
    >>> blob, offsets.tolist(), ids.tolist()
    (b'<sep>', [0, 5], [1])
    """
    cdef Py_ssize_t n = offsets.shape[0] - 1, k
    cdef vector[uint8_t] out_blob
    cdef vector[int64_t] out_offsets
    cdef vector[int32_t] ids
    check_offsets(offsets, blob.shape[0], "offsets")
    if types.shape[0] != n:
        raise ValueError(f"{n} pieces need {n} types, not {types.shape[0]}")
    out_offsets.push_back(0)
    for k in range(n):
        if types[k] == USER_DEFINED and offsets[k + 1] > offsets[k]:
            out_blob.insert(out_blob.end(), &blob[0] + offsets[k], &blob[0] + offsets[k + 1])
            out_offsets.push_back(out_blob.size())
            ids.push_back(<int32_t>k)
    return (PyBytes_FromStringAndSize(<const char*>out_blob.data(), out_blob.size()),
            copy_array("q", out_offsets.data(), out_offsets.size()),
            copy_array("i", ids.data(), ids.size()))


def piece_texts(const uint8_t[::1] blob not None, const int64_t[::1] offsets not None):
    """The pieces ``blob[offsets[k]:offsets[k + 1]]`` as a list of str (UTF-8; a piece that is
    not raises UnicodeDecodeError)."""
    cdef Py_ssize_t n = offsets.shape[0] - 1, k
    check_offsets(offsets, blob.shape[0], "offsets")
    cdef const char* data = <const char*>&blob[0] if blob.shape[0] else <const char*>b""
    cdef list out = PyList_New(n)
    for k in range(n):
        text = PyUnicode_DecodeUTF8(data + offsets[k], offsets[k + 1] - offsets[k], NULL)
        Py_INCREF(text)
        PyList_SET_ITEM(out, k, text)
    return out
