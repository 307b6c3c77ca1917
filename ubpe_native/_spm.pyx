# distutils: language = c++
"""Sentencepiece's BPE inference (``bpe::Model::SampleEncode`` without dropout), step for step.

The normalized text is cut into symbols: at each position the longest user-defined piece that
starts there (a *frozen* symbol: it never merges), else one UTF-8 character. Of all adjacent
pairs of unfrozen symbols whose concatenation is a piece (normal, user-defined or unused), the
one forming the piece of highest score merges first, the leftmost on ties. The rules are
explicit pairs ``(left, right) -> (rank, result)`` (rank 0 = highest score), as in
`_merges.PairMerges`; or, given the pieces themselves (a ``.model`` file's, ``by_text``), a
pair is looked up by its text as sentencepiece does, in a hash table of the pieces, and no
rules are derived at load (``_spm_proto.bpe_tables`` derives 60k for a 32k vocabulary: 7-10
ms, most of a cold load). A finished symbol that is an *unused* piece is split again into the two
symbols whose pair was last proposed for that piece (sentencepiece's ``rev_merge``), and those
likewise, recursively. A symbol that is no piece (a character no piece spells, or an id
``>= n_ids``: a character that is only part of pieces) becomes the ids of its bytes
(``byte_fallback``), or the unknown id, one per run of unknown symbols when ``collapse_unk``.
With ``hf_unknowns`` it is HF ``tokenizers``' ``BPE::merge_word`` instead: a character whose
bytes all have ids becomes them, any other the unknown id - written only when the next
character that is a piece comes, or another unknown one (``collapse_unk``: fused with it), or
the word ends; so after the bytes of characters between - or, with no unknown id, nothing at
all (its neighbours then meet and may merge).

The merge loop, its rule table and the word cache are `_merge_core`'s: user-defined symbols
are its *frozen* hook, the ``rev_merge`` records its *unused* hook. Rules that would make the
re-splitting of unused pieces loop forever (an unused piece reached again from itself, as a
self-referencing rule does) are refused at construction.

Speed: texts are cut into units once (an ASCII byte without a trie walk); with ``split_words``
the words that ``▁`` starts are merged one by one and cached per `BpeScratch`, which
`SpmBPE.encode` and `_spm_pipeline.SpmPipeline` keep from call to call (one per thread that
calls them, from a `_merge_core.ScratchPool`); the working vectors are reused from text to text. The pipeline that
runs `SpmNormalizer` and the models over many texts is in `_spm_pipeline`, behind ``_spm.pxd``.
(The module holds `SpmBPE` and the C port of the normalizer with its Darts-clone trie walk;
the normalizer is the next to move out.)

>>> import numpy as np
>>> i32 = lambda *v: np.array(v, np.int32)
>>> # pieces: 0 <unk>, 1 'a', 2 'b', 3 'ab' (unused), 4 'abb'; units 'a' 'b'
>>> model = SpmBPE(5, i32(1, 3), i32(2, 2), i32(3, 4), np.array([0, 1]),
...                np.array([0, 0, 0, 1, 0], np.uint8), b"ab", np.array([0, 1, 2]), i32(1, 2),
...                np.zeros(2, np.uint8), i32(), np.array([0]), 0, np.full(256, -1, np.int32), True)
>>> model.encode(b"abbab").tolist()  # 'ab' 'b' -> 'abb'; the last 'ab' is unused: 'a' 'b'
[4, 1, 2]
"""

from libc.math cimport isfinite
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memchr, memcpy
from libcpp.string cimport string
from libcpp.unordered_map cimport unordered_map
from libcpp.utility cimport pair
from libcpp.vector cimport vector
from cython.operator cimport dereference as deref

from ubpe_native._numpy import np

from ubpe_native._chain cimport chain_init, chain_merge
from ubpe_native._checks cimport build_once, check_ids, check_offsets
from ubpe_native._flat_map cimport FlatMap, pack_key
from ubpe_native._heap cimport heap_pop, heap_push
from ubpe_native._merge_core cimport (MAX_RANK, MERGE_HEAP_ARITY, MERGED_AWAY, MergeEntry, MergeHooks, ScratchPool,
                                      cache_find, cache_store, check_rules, lower_entry, merge_word,
                                      refuse_unused_cycles, rule_add)
from ubpe_native._piece_index cimport HASH_BASE, find_piece, in_first_table, index_pieces
from ubpe_native._typedefs cimport id_t
from ubpe_native._shared cimport id_array, utf8_length

# a character no unit spells (never merges; written as byte fallback or the unknown id)
cdef id_t UNKNOWN_UNIT = -2
cdef uint64_t LOW_HALF = 0xFFFFFFFFULL
cdef int64_t NOT_A_UNIT = -1
cdef int64_t WALK = -2  # ascii_unit: a longer (frozen) unit starts with this byte
cdef Py_ssize_t CACHE_MAX_WORD = 64  # longer words are merged, not cached
cdef size_t CACHE_LIMIT = 1 << 15  # cached words per scratch (a few MB), then the cache starts over


cdef inline uint32_t score_rank(float score) noexcept nogil:
    """A piece's rank in the merge heap by its score: a higher score a lower rank, equal
    scores (-0.0 and 0.0 too) one rank - the order of the ranks ``bpe_tables`` derives."""
    cdef uint32_t bits
    if score == 0.0:
        score = 0.0
    memcpy(&bits, &score, 4)
    bits = ~bits if bits >> 31 else bits | 0x80000000U  # (now it grows with the score)
    return ~bits


cdef class BpeScratch(MergeScratch):
    """Working memory of `SpmBPE.encode_into`, reused from text to text (one per thread)."""


cdef class SpmBPE:
    """``SpmBPE(n_ids, left, right, result, rank, unused, unit_blob, unit_offsets, unit_ids,
    unit_frozen, expand_ids, expand_offsets, unk_id, byte_fallback, collapse_unk,
    split_words=False, hf_unknowns=False)``:

    * rule ``k`` merges ``left[k] right[k]`` into ``result[k]`` (an id ``< n_ids``) with
      ``rank[k]`` (the first rule of a pair is kept); ``unused[i]`` marks the unused pieces;
    * unit ``k`` is the string ``unit_blob[unit_offsets[k]:unit_offsets[k+1]]`` with id
      ``unit_ids[k]``: a one-character unit when ``unit_frozen[k] == 0``, else a user-defined
      piece (matched longest first, frozen);
    * id ``n_ids + j`` (a character that is no piece) is written as
      ``expand_ids[expand_offsets[j]:expand_offsets[j+1]]``;
    * ``byte_fallback[b]``: the id of byte ``b`` of an unknown character, -1 everywhere for none;
    * ``split_words``: a unit starting with ``▁`` starts a word, and words merge apart (HF's
      ``Metaspace(split=True)``; for a model whose rules never join a symbol to one starting
      with ``▁`` and that has no unused pieces, the same ids faster). Words' ids are cached per
      `BpeScratch` (`encode` and the pipeline keep one per thread that calls them).
    * ``hf_unknowns``: characters that are no piece as HF's ``merge_word`` writes them (see
      the module's docstring); ``byte_fallback`` may then cover only some bytes, and
      ``unk_id`` -1 means none (such characters are dropped).
    * ``pieces``: ``(blob, offsets, types, scores)`` of the ``n_ids`` pieces (as
      `_spm_proto.read_model_proto` gives them; each text once), with no rules: a pair of
      symbols merges into the piece its text is, if that piece is normal, user-defined or
      unused, ranked by the pieces' scores - sentencepiece's own look-up, and the rules
      ``bpe_tables`` derives from the same pieces, without deriving them at load.
    """

    def __cinit__(self, *args, **kwargs):
        # here, not in __init__: even an object __init__ never ran on has its pool
        self.scratches = ScratchPool(BpeScratch)

    def __init__(self, id_t n_ids, const id_t[::1] left not None, const id_t[::1] right not None,
                 const id_t[::1] result not None, const int64_t[::1] rank not None,
                 const uint8_t[::1] unused not None, const uint8_t[::1] unit_blob not None,
                 const int64_t[::1] unit_offsets not None, const id_t[::1] unit_ids not None,
                 const uint8_t[::1] unit_frozen not None, const id_t[::1] expand_ids not None,
                 const int64_t[::1] expand_offsets not None, id_t unk_id,
                 const id_t[::1] byte_fallback not None, bint collapse_unk, bint split_words=False,
                 bint hf_unknowns=False, tuple pieces=None):
        build_once(&self.built, self)
        cdef Py_ssize_t n_rules = left.shape[0], n_units = unit_ids.shape[0], k, j
        cdef Py_ssize_t n_extra = expand_offsets.shape[0] - 1
        if n_ids < 1:
            raise ValueError("n_ids must be positive")
        if unused.shape[0] != n_ids:
            raise ValueError("unused needs one flag per id")
        if unit_offsets.shape[0] != n_units + 1 or unit_frozen.shape[0] != n_units:
            raise ValueError("unit_offsets, unit_ids and unit_frozen disagree in length")
        check_offsets(unit_offsets, unit_blob.shape[0], "unit_offsets", 1)
        check_offsets(expand_offsets, expand_ids.shape[0], "expand_offsets")
        check_ids(expand_ids, n_ids, "expand_ids")
        check_ids(unit_ids, n_ids + n_extra, "unit_ids")
        check_rules(left, right, result, rank, n_ids + n_extra, n_ids)
        if not (-1 if hf_unknowns else 0) <= unk_id < n_ids:
            raise ValueError(f"unk_id must be an id in 0..{n_ids - 1}" + (" or -1" if hf_unknowns else ""))
        if byte_fallback.shape[0] != 256:
            raise ValueError("byte_fallback must hold 256 ids")
        self.n_ids = n_ids
        self.unk_id = unk_id
        self.collapse_unk = collapse_unk
        self.split_words = split_words
        self.hf_unknowns = hf_unknowns
        self.has_byte_fallback = False
        for k in range(256):
            if not -1 <= byte_fallback[k] < n_ids:
                raise ValueError("byte_fallback ids must be -1 or ids")
            self.byte_fallback[k] = byte_fallback[k]
            self.has_byte_fallback |= byte_fallback[k] >= 0
        self.unused.assign(&unused[0], &unused[0] + n_ids)
        self.has_unused = False
        for k in range(n_ids):
            self.has_unused |= unused[k] != 0
        self.expand_offsets.assign(&expand_offsets[0], &expand_offsets[0] + n_extra + 1)
        if expand_ids.shape[0]:
            self.expand_ids.assign(&expand_ids[0], &expand_ids[0] + expand_ids.shape[0])
        cdef int64_t* slot
        cdef vector[uint8_t] kept  # rule k is its pair's rule (not a later duplicate)
        kept.resize(n_rules)
        self.pairs = FlatMap(<size_t>n_rules)  # sized once (growing it rule by rule rehashes ~15 times)
        for k in range(n_rules):
            kept[k] = rule_add(self.pairs, left[k], right[k], rank[k], result[k])
        if self.has_unused:
            refuse_unused_cycles(n_ids, &unused[0], left, right, result, kept)
        if pieces is not None:
            if n_rules:
                raise ValueError("give merge rules or pieces, not both")
            if hf_unknowns:  # (it drops characters: a pair's symbols would not cover one text)
                raise ValueError("pieces are for sentencepiece's loop, not with hf_unknowns")
            if len(pieces) != 4:
                raise ValueError("pieces must be (blob, offsets, types, scores)")
            if any(part is None for part in pieces):
                raise ValueError("pieces must be (blob, offsets, types, scores), none of them None")
            self._take_pieces(n_ids, pieces[0], pieces[1], pieces[2], pieces[3])
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
        self.has_frozen = False
        for k in range(n_units):
            self.has_frozen |= unit_frozen[k] != 0
        for k in range(128):  # an ASCII byte no longer unit starts with needs no trie walk
            node = self.trie.get(<uint64_t>k, 0)
            self.ascii_unit[k] = NOT_A_UNIT if node == 0 else self.node_unit[node]
        for k in range(n_units):
            if unit_offsets[k + 1] - unit_offsets[k] > 1 and unit_blob[unit_offsets[k]] < 0x80:
                self.ascii_unit[unit_blob[unit_offsets[k]]] = WALK

    cdef int _take_pieces(self, id_t n_ids, const uint8_t[::1] blob, const int64_t[::1] offsets,
                          const int32_t[::1] types, const float[::1] scores) except -1:
        """`__init__`'s ``pieces``: held as they are (views: their buffers cannot move or be
        resized while this model lives), and the index of their texts."""
        cdef Py_ssize_t n = offsets.shape[0] - 1, k
        if n != n_ids or types.shape[0] != n or scores.shape[0] != n:
            raise ValueError(f"pieces: {n_ids} ids need {n_ids} offsets' runs, types and scores, not "
                             f"{n}, {types.shape[0]} and {scores.shape[0]}")
        check_offsets(offsets, blob.shape[0], "the pieces' offsets")
        self.longest_piece = 0
        for k in range(n):
            if not isfinite(scores[k]):
                raise ValueError(f"the score of piece {k} is NaN or infinite")
            self.longest_piece = max(self.longest_piece, offsets[k + 1] - offsets[k])
        self.piece_blob, self.piece_offsets, self.piece_types, self.piece_scores = blob, offsets, types, scores
        if index_pieces(&self.pieces, &blob[0] if blob.shape[0] else <const uint8_t*>b"", &offsets[0], n,
                        self.index_memory, NULL, False):
            raise ValueError("two pieces have one text: a pair is looked up by its text")
        self.by_text = True
        return 0

    def encode(self, const uint8_t[::1] data not None):
        """The ids of one normalized text (UTF-8 bytes)."""
        cdef vector[id_t] out
        cdef BpeScratch scratch
        if data.shape[0]:
            scratch = <BpeScratch>self.scratches.take()  # under the GIL: this call's alone
            try:
                with nogil:
                    self.encode_into(&data[0], data.shape[0], out, scratch)
            finally:
                self.scratches.give(scratch)
        return id_array(out)

    cdef int _unknown(self, const uint8_t* data, int64_t start, int64_t end,
                       vector[id_t]& out) except -1 nogil:
        cdef int64_t i
        if self.has_byte_fallback:
            for i in range(start, end):
                out.push_back(self.byte_fallback[data[i]] if self.byte_fallback[data[i]] >= 0
                              else self.unk_id)
        else:
            out.push_back(self.unk_id)
        return 0

    cdef bint _all_bytes(self, const uint8_t* data, int64_t start, int64_t end) noexcept nogil:
        """Whether every byte of ``data[start:end]`` has a byte fallback id."""
        cdef int64_t i
        for i in range(start, end):
            if self.byte_fallback[data[i]] < 0:
                return False
        return True

    cdef int _emit(self, id_t token, BpeScratch s, vector[id_t]& out) except -1 nogil:
        """Writes a finished symbol that is a piece or an intermediate id, unused pieces split."""
        cdef int64_t j
        if token < self.n_ids and not self.unused[token]:
            out.push_back(token)
            return 0
        s.stack.clear()
        s.stack.push_back(token)
        while s.stack.size():
            token = s.stack.back()
            s.stack.pop_back()
            if token >= self.n_ids:
                j = token - self.n_ids
                out.insert(out.end(), self.expand_ids.begin() + self.expand_offsets[j],
                           self.expand_ids.begin() + self.expand_offsets[j + 1])
                continue
            if self.unused[token]:
                found = s.word.proposed.find(token)
                if found != s.word.proposed.end():
                    s.stack.push_back(<id_t>(deref(found).second & LOW_HALF))
                    s.stack.push_back(<id_t>(deref(found).second >> 32))
                    continue
            out.push_back(token)
        return 0

    cdef Py_ssize_t _units(self, const uint8_t* data, Py_ssize_t size, BpeScratch s) except -1 nogil:
        """Cuts ``data[:size]`` into units (``s.token_at``, ``s.frozen``, ``s.node_start``) and
        words (``s.word_start``, unit indices); returns the number of units."""
        cdef Py_ssize_t pos = 0, k, char_length, best_length
        cdef int64_t node, unit, best_unit
        cdef uint8_t byte
        s.text_token.clear()
        s.text_frozen.clear()
        s.node_start.clear()
        s.word_start.clear()
        while pos < size:
            byte = data[pos]
            if self.split_words and byte == 0xE2 and pos + 2 < size and data[pos + 1] == 0x96 \
                    and data[pos + 2] == 0x81 and s.text_token.size():
                s.word_start.push_back(s.text_token.size())
            if byte < 0x80 and self.ascii_unit[byte] != WALK:
                best_unit = self.ascii_unit[byte]
                best_length = 1
            else:
                char_length = utf8_length(byte)
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
            if best_unit == NOT_A_UNIT and self.hf_unknowns and self.unk_id < 0 \
                    and not self._all_bytes(data, pos, pos + best_length):
                pos += best_length  # HF drops it when there is no unknown token: its neighbours meet
                continue
            if best_unit == NOT_A_UNIT:
                s.text_token.push_back(UNKNOWN_UNIT)
                s.text_frozen.push_back(0)
            else:
                s.text_token.push_back(self.unit_id[best_unit])
                s.text_frozen.push_back(self.unit_frozen[best_unit])
            s.node_start.push_back(pos)
            pos += best_length
        s.node_start.push_back(size)
        return s.text_token.size()

    cdef int _merge_word(self, const uint8_t* data, Py_ssize_t first, Py_ssize_t stop, BpeScratch s,
                         vector[id_t]& out) except -1 nogil:
        """Merges units ``first..stop-1`` (of `_units`) and writes their ids."""
        cdef Py_ssize_t n = stop - first
        cdef int32_t node
        cdef id_t token
        cdef int64_t start, end, i
        cdef bint pending = False  # hf_unknowns: an unknown id not yet written
        cdef MergeHooks hooks
        hooks.frozen = self.has_frozen  # user-defined symbols never merge
        hooks.unused = self.unused.data() if self.has_unused else NULL  # rev_merge
        hooks.dropout = 0.0
        hooks.rng = NULL
        s.word.token_at.assign(s.text_token.begin() + first, s.text_token.begin() + stop)
        if self.has_frozen:
            s.word.frozen.assign(s.text_frozen.begin() + first, s.text_frozen.begin() + stop)
        if self.by_text:
            self._merge_by_text(data, first, stop, s)
        else:
            merge_word(self.pairs, s.word, n, hooks)
        node = 0 if n else -1
        while node >= 0:
            token = s.word.token_at[node]
            start = s.node_start[first + node]
            end = s.node_start[first + node + 1]
            node = s.word.next_node[node]
            if not self.hf_unknowns:
                if token == UNKNOWN_UNIT:
                    self._unknown(data, start, end, out)
                else:
                    self._emit(token, s, out)
                continue
            # HF's order: an unknown id waits for the next piece (byte ids go before it)
            if token == UNKNOWN_UNIT:  # one character; the span to the next unit may hold dropped ones
                end = min(end, start + utf8_length(data[start]))
            if token != UNKNOWN_UNIT:
                if pending:
                    out.push_back(self.unk_id)
                    pending = False
                self._emit(token, s, out)
            elif self._all_bytes(data, start, end):
                for i in range(start, end):
                    out.push_back(self.byte_fallback[data[i]])
            elif pending and not self.collapse_unk:
                out.push_back(self.unk_id)
            else:
                pending = True
        if pending:
            out.push_back(self.unk_id)
        return 0

    cdef int _propose_by_text(self, const uint8_t* data, Py_ssize_t first, Py_ssize_t stop, BpeScratch s,
                              int32_t left, int32_t right) except -1 nogil:
        """`_merge_core.merge_propose` by text: push the pair of nodes ``left right`` (of the
        units ``first..stop-1``) if its text is a piece it may become."""
        cdef id_t a = s.word.token_at[left], b = s.word.token_at[right]
        cdef int32_t after
        cdef int64_t start, length, token
        cdef MergeEntry entry
        if a < 0 or b < 0 or self.has_frozen and (s.word.frozen[left] or s.word.frozen[right]):
            return 0
        after = s.word.next_node[right]
        start = s.node_start[first + left]
        length = (s.node_start[first + after] if after >= 0 else s.node_start[stop]) - start
        if length > self.longest_piece:
            return 0
        start -= s.node_start[first]  # (from the word's start: its prefixes' hashes give the text's)
        token = find_piece(&self.pieces, data + s.node_start[first] + start, length,
                           s.prefix_hash[start + length] - s.prefix_hash[start] * s.powers[length], False)
        if token < 0 or not in_first_table(self.piece_types[token]):
            return 0
        entry.key = (<uint64_t>score_rank(self.piece_scores[token]) << 32) | <uint32_t>left
        entry.left_token = a
        entry.right_token = b
        entry.token = <id_t>token
        if self.has_unused and self.unused[token]:  # the last pair proposed for it wins (rev_merge)
            found = s.word.proposed.find(entry.token)
            if found != s.word.proposed.end():
                deref(found).second = pack_key(a, b)
            else:
                s.word.proposed.insert(pair[id_t, uint64_t](entry.token, pack_key(a, b)))
        heap_push(s.word.heap, entry, MERGE_HEAP_ARITY, lower_entry)
        return 0

    cdef int _merge_by_text(self, const uint8_t* data, Py_ssize_t first, Py_ssize_t stop,
                            BpeScratch s) except -1 nogil:
        """`_merge_core.merge_word` with the pairs looked up by text (``by_text``): the
        units ``first..stop-1`` of ``data`` (``s.word.token_at``, ``s.word.frozen`` filled)."""
        cdef Py_ssize_t n = stop - first, i
        cdef int64_t size = s.node_start[stop] - s.node_start[first], longest = min(size, self.longest_piece)
        cdef const uint8_t* word = data + s.node_start[first]
        cdef uint64_t h = 0
        cdef int32_t left, right, after
        cdef MergeEntry entry
        s.prefix_hash.resize(size + 1)
        s.prefix_hash[0] = 0
        for i in range(size):
            h = h * HASH_BASE + word[i] + 1
            s.prefix_hash[i + 1] = h
        if s.powers.empty():
            s.powers.push_back(1)
        while <int64_t>s.powers.size() <= longest:
            s.powers.push_back(s.powers.back() * HASH_BASE)
        chain_init(s.word.next_node, s.word.prev_node, n)
        s.word.heap.clear()
        for i in range(n - 1):
            self._propose_by_text(data, first, stop, s, <int32_t>i, <int32_t>(i + 1))
        while s.word.heap.size():
            entry = heap_pop(s.word.heap, MERGE_HEAP_ARITY, lower_entry)
            left = <int32_t>(entry.key & 0xFFFFFFFFULL)
            right = s.word.next_node[left]
            if s.word.token_at[left] != entry.left_token or right < 0 or s.word.token_at[right] != entry.right_token:
                continue  # stale: a node of it merged since
            after = chain_merge(s.word.token_at, s.word.next_node, s.word.prev_node, left, right, entry.token,
                                MERGED_AWAY)
            if s.word.prev_node[left] >= 0:
                self._propose_by_text(data, first, stop, s, s.word.prev_node[left], left)
            if after >= 0:
                self._propose_by_text(data, first, stop, s, left, after)
        return 0

    cdef int encode_into(self, const uint8_t* data, Py_ssize_t size, vector[id_t]& out,
                         BpeScratch s) except -1 nogil:
        """Appends the ids of ``data[:size]`` (normalized UTF-8) to ``out``."""
        cdef Py_ssize_t n = self._units(data, size, s), w, first, stop, length
        cdef size_t floor = out.size(), kept, k
        s.word.proposed.clear()
        if n == 0:  # nothing, or only characters dropped (hf_unknowns)
            return 0
        if not self.split_words:
            self._merge_word(data, 0, n, s, out)
        else:
            s.word_start.push_back(n)
            first = 0
            for w in range(<Py_ssize_t>s.word_start.size()):
                stop = s.word_start[w]
                length = s.node_start[stop] - s.node_start[first]
                if stop - first == 1 or length > CACHE_MAX_WORD:
                    self._merge_word(data, first, stop, s, out)
                    first = stop
                    continue
                if not cache_find(s.cache, data + s.node_start[first], length, out):
                    s.word_out.clear()
                    self._merge_word(data, first, stop, s, s.word_out)
                    out.insert(out.end(), s.word_out.begin(), s.word_out.end())
                    cache_store(s.cache, s.word_out, CACHE_LIMIT)
                first = stop
        if self.collapse_unk and not self.hf_unknowns:  # one unknown id per run of them
            kept = floor
            for k in range(floor, out.size()):
                if not (out[k] == self.unk_id and kept > floor and out[kept - 1] == self.unk_id):
                    out[kept] = out[k]
                    kept += 1
            out.resize(kept)
        return 0


# -- the normalizer -------------------------------------------------------------------------

cdef const char* REPLACEMENT = b"\xef\xbf\xbd"  # U+FFFD
cdef const char* ESCAPED_SPACE = b"\xe2\x96\x81"  # U+2581
cdef const char* PLAIN_SPACE = b" "
cdef uint32_t DARTS_LABEL = 0x800000FFU


cdef inline uint32_t darts_offset(uint32_t unit) noexcept nogil:
    return (unit >> 10) << ((unit & (1 << 9)) >> 6)


cdef inline bint valid_utf8(const uint8_t* s, Py_ssize_t n) noexcept nogil:
    """Whether ``s[:n]`` is one well-formed UTF-8 character (Python's strict decoder)."""
    cdef uint8_t lead = s[0]
    cdef Py_ssize_t k
    if n == 1:
        return lead < 0x80
    if n == 2:
        if not 0xC2 <= lead <= 0xDF:
            return False
    elif n == 3:
        if not 0xE0 <= lead <= 0xEF or lead == 0xE0 and s[1] < 0xA0 or lead == 0xED and s[1] > 0x9F:
            return False
    elif n == 4:
        if not 0xF0 <= lead <= 0xF4 or lead == 0xF0 and s[1] < 0x90 or lead == 0xF4 and s[1] > 0x8F:
            return False
    else:
        return False
    for k in range(1, n):
        if s[k] & 0xC0 != 0x80:
            return False
    return True


cdef class SpmNormalizer:
    """``SpmNormalizer(trie_units, replacements, add_dummy_prefix, remove_extra_whitespaces,
    escape_whitespaces, treat_whitespace_as_suffix, protected_blob, protected_offsets,
    protected_ids)``: `ubpe.text.normalizers.Normalizer` in C (that module documents
    the rules): ``trie_units`` is the charsmap's Darts double array, ``replacements`` its blob
    of NUL-terminated strings, the protected (user-defined) pieces are copied as they are,
    longest first. ``protected_ids[k]`` is piece ``k``'s id (the unigram pipeline cuts the
    normalized text at them).

    >>> import numpy as np
    >>> norm = SpmNormalizer(np.zeros(0, np.uint32), b"", True, True, True, False, b"", np.array([0]),
    ...                      np.zeros(0, np.int32))
    >>> norm.normalize("  Hello   world ".encode()).decode()
    '▁Hello▁world'
    """

    def __init__(self, const uint32_t[::1] trie_units not None, bytes replacements not None,
                 bint add_dummy_prefix,
                 bint remove_extra_whitespaces, bint escape_whitespaces,
                 bint treat_whitespace_as_suffix, const uint8_t[::1] protected_blob not None,
                 const int64_t[::1] protected_offsets not None, const id_t[::1] protected_ids not None):
        build_once(&self.built, self)
        cdef Py_ssize_t k, j, used
        cdef int64_t node
        cdef int64_t* slot
        cdef const char* piece
        cdef Py_ssize_t length
        if protected_offsets.shape[0] != protected_ids.shape[0] + 1:
            raise ValueError("protected_offsets and protected_ids disagree in length")
        check_offsets(protected_offsets, protected_blob.shape[0], "protected_offsets", 1)
        if trie_units.shape[0]:
            self.units.assign(&trie_units[0], &trie_units[0] + trie_units.shape[0])
        self.replacements = replacements
        self.add_dummy_prefix = add_dummy_prefix
        self.remove_extra_whitespaces = remove_extra_whitespaces
        self.escape_whitespaces = escape_whitespaces
        self.treat_whitespace_as_suffix = treat_whitespace_as_suffix
        self.protected_id.push_back(-1)
        for k in range(protected_ids.shape[0]):
            node = 0
            for j in range(protected_offsets[k], protected_offsets[k + 1]):
                slot = self.protected.slot((<uint64_t>node << 8) | protected_blob[j])
                if slot[0] == 0:
                    self.protected_id.push_back(-1)
                    slot[0] = self.protected_id.size() - 1
                node = slot[0]
            if self.protected_id[node] < 0:
                self.protected_id[node] = protected_ids[k] if protected_ids[k] >= 0 else 0
        cdef uint8_t byte
        for k in range(128):
            byte = <uint8_t>k
            self.plain[k] = k > 0x20 and self.protected.get(byte, 0) == 0 \
                and self._longest_rule(&byte, 1, &used) < 0 and not self._rule_starts_with(byte)
        byte = 0x20
        self.plain_space = self.protected.get(byte, 0) == 0 and self._longest_rule(&byte, 1, &used) < 0 \
            and not self._rule_starts_with(byte)

    cdef bint _rule_starts_with(self, uint8_t byte) noexcept nogil:
        if self.units.size() == 0:
            return False
        cdef uint32_t node = darts_offset(self.units[0]) ^ byte
        return node < self.units.size() and self.units[node] & DARTS_LABEL == byte

    cdef int64_t _longest_rule(self, const uint8_t* data, Py_ssize_t size, Py_ssize_t* used) noexcept nogil:
        """The value of the longest charsmap rule at ``data`` (-1: none), its length in ``used``
        (Darts-clone's commonPrefixSearch)."""
        cdef size_t n_units = self.units.size()
        cdef uint32_t node, unit
        cdef int64_t best = -1
        cdef Py_ssize_t i
        if n_units == 0:
            return -1
        node = darts_offset(self.units[0])
        for i in range(size):
            node ^= data[i]
            if node >= n_units:
                break
            unit = self.units[node]
            if unit & DARTS_LABEL != data[i]:
                break
            node ^= darts_offset(unit)
            if (unit >> 8) & 1:
                if node >= n_units:
                    break
                best = self.units[node] & 0x7FFFFFFF
                used[0] = i + 1
        return best

    cdef Py_ssize_t protected_at(self, const uint8_t* data, Py_ssize_t size, id_t* token) noexcept nogil:
        """Bytes of the longest protected piece at ``data`` (0: none), its id in ``token``."""
        cdef int64_t node = 0
        cdef Py_ssize_t i, best = 0
        if self.protected_id.size() == 1:
            return 0
        for i in range(size):
            node = self.protected.get((<uint64_t>node << 8) | data[i], 0)
            if node == 0:
                break
            if self.protected_id[node] >= 0:
                best = i + 1
                token[0] = self.protected_id[node]
        return best

    cdef Py_ssize_t _prefix(self, const uint8_t* data, Py_ssize_t size, const char** piece,
                            Py_ssize_t* length) noexcept nogil:
        """The normalized bytes at ``data`` (``piece``, ``length``); returns the bytes used."""
        cdef id_t token
        cdef Py_ssize_t used = self.protected_at(data, size, &token), n
        cdef int64_t value
        cdef const void* end
        if used:
            piece[0] = <const char*>data
            length[0] = used
            return used
        value = self._longest_rule(data, size, &used)
        if value >= 0 and <size_t>value < self.replacements.size():
            piece[0] = self.replacements.data() + value
            end = memchr(piece[0], 0, self.replacements.size() - value)
            length[0] = (<const char*>end - piece[0]) if end != NULL else <Py_ssize_t>(self.replacements.size() - value)
            return used
        n = utf8_length(data[0])
        if n > size:
            n = size
        if not valid_utf8(data, n):
            piece[0] = REPLACEMENT
            length[0] = 3
            return 1
        piece[0] = <const char*>data
        length[0] = n
        return n

    def normalize(self, const uint8_t[::1] data not None):
        """The normalized UTF-8 bytes of ``data``."""
        cdef string out
        if data.shape[0]:
            with nogil:
                self.normalize_into(&data[0], data.shape[0], out)
        return bytes(out)

    cdef int normalize_into(self, const uint8_t* data, Py_ssize_t size, string& out) except -1 nogil:
        """Appends the normalization of ``data[:size]`` to ``out``."""
        cdef Py_ssize_t pos = 0, used, length, k, start = out.size()
        cdef const char* piece
        cdef const char* space = ESCAPED_SPACE if self.escape_whitespaces else PLAIN_SPACE
        cdef Py_ssize_t space_length = 3 if self.escape_whitespaces else 1
        cdef bint previous_space
        cdef uint8_t byte
        if self.remove_extra_whitespaces:
            while pos < size:
                used = self._prefix(data + pos, size - pos, &piece, &length)
                if not (length == 1 and piece[0] == b" "):
                    break
                pos += used
        if pos >= size:
            return 0
        if not self.treat_whitespace_as_suffix and self.add_dummy_prefix:
            out.append(space, space_length)
        previous_space = self.remove_extra_whitespaces
        while pos < size:
            byte = data[pos]
            if byte < 0x80 and self.plain[byte]:
                out.push_back(<char>byte)
                pos += 1
                previous_space = False
                continue
            if byte == 0x20 and self.plain_space:  # what the general step below does with a space
                if not previous_space:
                    out.append(space, space_length)
                previous_space = self.remove_extra_whitespaces
                pos += 1
                continue
            used = self._prefix(data + pos, size - pos, &piece, &length)
            if previous_space:
                while length and piece[0] == b" ":
                    piece += 1
                    length -= 1
            if length:
                for k in range(length):
                    if piece[k] == b" ":
                        out.append(space, space_length)
                    else:
                        out.push_back(piece[k])
                previous_space = piece[length - 1] == b" "
            pos += used
            if not self.remove_extra_whitespaces:
                previous_space = False
        if self.remove_extra_whitespaces:
            while <Py_ssize_t>out.size() - start >= space_length \
                    and out.compare(out.size() - space_length, space_length, space, space_length) == 0:
                out.resize(out.size() - space_length)
        if self.treat_whitespace_as_suffix and self.add_dummy_prefix:
            out.append(space, space_length)
        return 0
