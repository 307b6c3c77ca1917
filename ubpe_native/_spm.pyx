# distutils: language = c++
"""Sentencepiece's BPE inference (``bpe::Model::SampleEncode`` without dropout), step for step.

The normalized text is cut into symbols: at each position the longest user-defined piece that
starts there (a *frozen* symbol: it never merges), else one UTF-8 character. Of all adjacent
pairs of unfrozen symbols whose concatenation is a piece (normal, user-defined or unused), the
one forming the piece of highest score merges first, the leftmost on ties. The rules are
explicit pairs ``(left, right) -> (rank, result)`` (rank 0 = highest score), as in
`_merges.PairMerges`. A finished symbol that is an *unused* piece is split again into the two
symbols whose pair was last proposed for that piece (sentencepiece's ``rev_merge``), and those
likewise, recursively. A symbol that is no piece (a character no piece spells, or an id
``>= n_ids``: a character that is only part of pieces) becomes the ids of its bytes
(``byte_fallback``), or the unknown id, one per run of unknown symbols when ``collapse_unk``.

>>> import numpy as np
>>> i32 = lambda *v: np.array(v, np.int32)
>>> # pieces: 0 <unk>, 1 'a', 2 'b', 3 'ab' (unused), 4 'abb'; units 'a' 'b'
>>> model = SpmBPE(5, i32(1, 3), i32(2, 2), i32(3, 4), np.array([0, 1]),
...                np.array([0, 0, 0, 1, 0], np.uint8), b"ab", np.array([0, 1, 2]), i32(1, 2),
...                np.zeros(2, np.uint8), i32(), np.array([0]), 0, np.full(256, -1, np.int32), True)
>>> model.encode(b"abbab").tolist()  # 'ab' 'b' -> 'abb'; the last 'ab' is unused: 'a' 'b'
[4, 1, 2]
"""

from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libcpp.unordered_map cimport unordered_map
from libcpp.utility cimport pair
from libcpp.vector cimport vector
from cython.operator cimport dereference as deref

import numpy as np

from ubpe_native._chain cimport chain_init, chain_merge
from ubpe_native._checks cimport check_ids, check_offsets
from ubpe_native._flat_map cimport FlatMap, pack_key
from ubpe_native._heap cimport heap_pop, heap_push
from ubpe_native._typedefs cimport id_t
from ubpe_native._shared cimport id_array, utf8_length

cdef id_t NO_ID = -1
cdef id_t UNKNOWN_UNIT = -2
cdef int64_t MAX_RANK = 0x7FFFFFFF
cdef uint64_t LOW_HALF = 0xFFFFFFFFULL
cdef int64_t NOT_A_UNIT = -1


cdef inline bint lower_key(const uint64_t& a, const uint64_t& b) noexcept nogil:
    """The heap's order: lowest rank first, then leftmost node."""
    return a < b


cdef class SpmBPE:
    """``SpmBPE(n_ids, left, right, result, rank, unused, unit_blob, unit_offsets, unit_ids,
    unit_frozen, expand_ids, expand_offsets, unk_id, byte_fallback, collapse_unk)``:

    * rule ``k`` merges ``left[k] right[k]`` into ``result[k]`` (an id ``< n_ids``) with
      ``rank[k]`` (the first rule of a pair is kept); ``unused[i]`` marks the unused pieces;
    * unit ``k`` is the string ``unit_blob[unit_offsets[k]:unit_offsets[k+1]]`` with id
      ``unit_ids[k]``: a one-character unit when ``unit_frozen[k] == 0``, else a user-defined
      piece (matched longest first, frozen);
    * id ``n_ids + j`` (a character that is no piece) is written as
      ``expand_ids[expand_offsets[j]:expand_offsets[j+1]]``;
    * ``byte_fallback[b]``: the id of byte ``b`` of an unknown character, -1 everywhere for none.
    """

    cdef readonly id_t n_ids
    cdef readonly id_t unk_id
    cdef readonly bint collapse_unk
    cdef FlatMap pairs  # pair_key -> (rank << 32 | result) + 1
    cdef FlatMap trie  # node << 8 | byte -> child node, over the units' bytes
    cdef vector[int64_t] node_unit  # trie node -> unit index, or NOT_A_UNIT
    cdef vector[id_t] unit_id
    cdef vector[uint8_t] unit_frozen
    cdef vector[uint8_t] unused
    cdef vector[int64_t] expand_offsets
    cdef vector[id_t] expand_ids
    cdef id_t byte_fallback[256]
    cdef bint has_byte_fallback

    def __init__(self, id_t n_ids, const id_t[::1] left, const id_t[::1] right,
                 const id_t[::1] result, const int64_t[::1] rank, const uint8_t[::1] unused,
                 const uint8_t[::1] unit_blob, const int64_t[::1] unit_offsets,
                 const id_t[::1] unit_ids, const uint8_t[::1] unit_frozen,
                 const id_t[::1] expand_ids, const int64_t[::1] expand_offsets, id_t unk_id,
                 const id_t[::1] byte_fallback, bint collapse_unk):
        cdef Py_ssize_t n_rules = left.shape[0], n_units = unit_ids.shape[0], k, j
        cdef Py_ssize_t n_extra = expand_offsets.shape[0] - 1
        if n_ids < 1:
            raise ValueError("n_ids must be positive")
        if right.shape[0] != n_rules or result.shape[0] != n_rules or rank.shape[0] != n_rules:
            raise ValueError("left, right, result and rank disagree in length")
        if unused.shape[0] != n_ids:
            raise ValueError("unused needs one flag per id")
        if unit_offsets.shape[0] != n_units + 1 or unit_frozen.shape[0] != n_units:
            raise ValueError("unit_offsets, unit_ids and unit_frozen disagree in length")
        check_offsets(unit_offsets, unit_blob.shape[0], "unit_offsets", 1)
        check_offsets(expand_offsets, expand_ids.shape[0], "expand_offsets")
        check_ids(expand_ids, n_ids, "expand_ids")
        check_ids(unit_ids, n_ids + n_extra, "unit_ids")
        check_ids(left, n_ids + n_extra, "left")
        check_ids(right, n_ids + n_extra, "right")
        check_ids(result, n_ids, "result")
        if not 0 <= unk_id < n_ids:
            raise ValueError(f"unk_id must be an id in 0..{n_ids - 1}")
        if byte_fallback.shape[0] != 256:
            raise ValueError("byte_fallback must hold 256 ids")
        for k in range(n_rules):
            if not 0 <= rank[k] < MAX_RANK:
                raise ValueError(f"rank {rank[k]} of rule {k} is outside 0..{MAX_RANK - 1}")
        self.n_ids = n_ids
        self.unk_id = unk_id
        self.collapse_unk = collapse_unk
        self.has_byte_fallback = False
        for k in range(256):
            if not -1 <= byte_fallback[k] < n_ids:
                raise ValueError("byte_fallback ids must be -1 or ids")
            self.byte_fallback[k] = byte_fallback[k]
            self.has_byte_fallback |= byte_fallback[k] >= 0
        self.unused.assign(&unused[0], &unused[0] + n_ids)
        self.expand_offsets.assign(&expand_offsets[0], &expand_offsets[0] + n_extra + 1)
        if expand_ids.shape[0]:
            self.expand_ids.assign(&expand_ids[0], &expand_ids[0] + expand_ids.shape[0])
        cdef int64_t* slot
        for k in range(n_rules):
            slot = self.pairs.slot(pack_key(left[k], right[k]))
            if slot[0] == 0:
                slot[0] = ((<int64_t>rank[k] << 32) | result[k]) + 1
        cdef int64_t node
        self.node_unit.push_back(NOT_A_UNIT)  # the root
        for k in range(n_units):
            if not unit_frozen[k] and unit_offsets[k + 1] - unit_offsets[k] != utf8_length(unit_blob[unit_offsets[k]]):
                raise ValueError(f"unit {k} is not one UTF-8 character")
            node = 0
            for j in range(unit_offsets[k], unit_offsets[k + 1]):
                slot = self.trie.slot((<uint64_t>node << 8) | unit_blob[j])
                if slot[0] == 0:
                    self.node_unit.push_back(NOT_A_UNIT)
                    slot[0] = self.node_unit.size() - 1
                node = slot[0]
            if self.node_unit[node] == NOT_A_UNIT or unit_frozen[k]:
                self.node_unit[node] = k
        self.unit_id.assign(&unit_ids[0], &unit_ids[0] + n_units) if n_units else None
        self.unit_frozen.assign(&unit_frozen[0], &unit_frozen[0] + n_units) if n_units else None

    def encode(self, const uint8_t[::1] data):
        """The ids of one normalized text (UTF-8 bytes)."""
        cdef vector[id_t] out
        if data.shape[0]:
            with nogil:
                self.encode_into(&data[0], data.shape[0], out)
        return id_array(out)

    cdef inline void _push(self, vector[uint64_t]& heap, const vector[id_t]& token_at,
                           const vector[uint8_t]& frozen, unordered_map[id_t, uint64_t]& rev,
                           int32_t left, int32_t right) noexcept nogil:
        cdef id_t a = token_at[left], b = token_at[right], piece
        if a < 0 or b < 0 or frozen[left] or frozen[right]:
            return
        cdef int64_t packed = self.pairs.get(pack_key(a, b), 0)
        if packed == 0:
            return
        piece = <id_t>(<uint64_t>(packed - 1) & LOW_HALF)
        if self.unused[piece]:  # sentencepiece's rev_merge: the last pair proposed wins
            rev[piece] = pack_key(a, b)
        heap_push(heap, (((<uint64_t>(packed - 1) >> 32) << 32) | <uint32_t>left), 4, lower_key)

    cdef void _unknown(self, const uint8_t* data, int64_t start, int64_t end,
                       vector[id_t]& out) noexcept nogil:
        cdef int64_t i
        if self.has_byte_fallback:
            for i in range(start, end):
                out.push_back(self.byte_fallback[data[i]] if self.byte_fallback[data[i]] >= 0
                              else self.unk_id)
        else:
            out.push_back(self.unk_id)

    cdef void _emit(self, id_t token, unordered_map[id_t, uint64_t]& rev,
                    vector[id_t]& stack, vector[id_t]& out) noexcept nogil:
        """Writes a finished symbol that is a piece or an intermediate id, unused pieces split."""
        cdef int64_t j
        stack.clear()
        stack.push_back(token)
        while stack.size():
            token = stack.back()
            stack.pop_back()
            if token >= self.n_ids:
                j = token - self.n_ids
                out.insert(out.end(), self.expand_ids.begin() + self.expand_offsets[j],
                           self.expand_ids.begin() + self.expand_offsets[j + 1])
                continue
            if self.unused[token]:
                found = rev.find(token)
                if found != rev.end():
                    stack.push_back(<id_t>(deref(found).second & LOW_HALF))
                    stack.push_back(<id_t>(deref(found).second >> 32))
                    continue
            out.push_back(token)

    cdef void encode_into(self, const uint8_t* data, Py_ssize_t size,
                          vector[id_t]& out) noexcept nogil:
        """Appends the ids of ``data[:size]`` (normalized UTF-8) to ``out``."""
        cdef vector[id_t] token_at, stack
        cdef vector[uint8_t] frozen
        cdef vector[int32_t] next_node, prev_node
        cdef vector[int64_t] node_start
        cdef vector[uint64_t] heap
        cdef unordered_map[id_t, uint64_t] rev
        cdef Py_ssize_t pos = 0, n, k, char_length, best_length
        cdef int64_t node, unit, best_unit
        cdef int32_t left, right, after
        cdef int64_t packed
        cdef uint64_t key
        cdef id_t token
        cdef size_t floor = out.size(), kept
        while pos < size:
            char_length = utf8_length(data[pos])
            if char_length > size - pos:
                char_length = size - pos
            best_length = char_length
            best_unit = NOT_A_UNIT
            node = 0
            for k in range(pos, size):
                node = self.trie.get((<uint64_t>node << 8) | data[k], 0)
                if node == 0:
                    break
                unit = self.node_unit[node]
                if unit == NOT_A_UNIT:
                    continue
                if self.unit_frozen[unit] or k + 1 - pos == char_length:
                    best_unit = unit
                    best_length = k + 1 - pos
            if best_unit == NOT_A_UNIT:
                token_at.push_back(UNKNOWN_UNIT)
                frozen.push_back(0)
            else:
                token_at.push_back(self.unit_id[best_unit])
                frozen.push_back(self.unit_frozen[best_unit])
            node_start.push_back(pos)
            pos += best_length
        node_start.push_back(size)
        n = token_at.size()
        chain_init(next_node, prev_node, n)
        for k in range(n - 1):
            self._push(heap, token_at, frozen, rev, <int32_t>k, <int32_t>(k + 1))
        while heap.size():
            key = heap_pop(heap, 4, lower_key)
            left = <int32_t>(key & LOW_HALF)
            right = next_node[left]
            if token_at[left] == NO_ID or right < 0:
                continue
            packed = self.pairs.get(pack_key(token_at[left], token_at[right]), 0)
            if packed == 0 or <uint64_t>((packed - 1) >> 32) != (key >> 32):
                continue  # stale: the pair at this node changed
            token = <id_t>(<uint64_t>(packed - 1) & LOW_HALF)
            after = chain_merge(token_at, next_node, prev_node, left, right, token, NO_ID)
            if prev_node[left] >= 0:
                self._push(heap, token_at, frozen, rev, prev_node[left], left)
            if after >= 0:
                self._push(heap, token_at, frozen, rev, left, after)
        node = 0 if n else -1
        while node >= 0:
            token = token_at[node]
            if token == UNKNOWN_UNIT:
                self._unknown(data, node_start[node], node_start[node + 1], out)
            else:
                self._emit(token, rev, stack, out)
            node = next_node[node]
        if self.collapse_unk:  # one unknown id per run of them
            kept = floor
            for k in range(floor, out.size()):
                if not (out[k] == self.unk_id and kept > floor and out[kept - 1] == self.unk_id):
                    out[kept] = out[k]
                    kept += 1
            out.resize(kept)
