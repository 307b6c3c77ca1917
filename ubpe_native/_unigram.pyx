# distutils: language = c++
"""Sentencepiece's unigram inference: the Viterbi best path over piece log-probabilities.

This is ``unigram::Model::EncodeOptimized`` step for step, in the same float32 arithmetic, so
that equal and nearly equal paths resolve as sentencepiece resolves them: positions are UTF-8
bytes; from each character start every piece that matches (shortest first) offers
``score + best score so far`` to its end position, replacing the current best only when
strictly greater; a user-defined piece scores ``0.1 * (bytes - 1)``; where no piece covers the
first character alone, an unknown node of score ``min score - 10`` covers it; the running
scores are shifted back to 0 when they leave +-1e5 (as sentencepiece does on long texts).
Unknown pieces become their bytes' ``<0xXX>`` ids (byte fallback) or one unknown id per run.

``double_sums=True`` is llama.cpp's ``llm_tokenizer_ugm`` instead (GGUF ``t5``): the same walk,
but path scores add up in double precision and are never shifted, so a near tie can resolve
the other way than in sentencepiece's float32 sums (user-defined pieces score 0 there: the
caller passes them as pieces of score 0).

``hf_unknowns=True`` (with ``double_sums``) is HF ``tokenizers``' ``Unigram`` model: its scores
are doubles, and its ``tokenize`` writes a run of unknown nodes (and of matches of the unknown
piece itself) as one string, looked up again: a piece's id if the run spells one, else with
byte fallback its bytes' ``<0xXX>`` ids if every byte has one, else one unknown id.
`UnigramLattice.encode_words` runs many words (HF's pre-tokens) in one call without the GIL.

>>> import numpy as np
>>> pieces = [b"a", b"b", b"ab"]
>>> lattice = UnigramLattice(b"".join(pieces), np.array([0, 1, 2, 4]), np.array([3, 4, 5], np.int32),
...                          np.array([-1.0, -1.0, -1.5], np.float32), np.zeros(3, np.uint8),
...                          0, -11.0, np.full(256, -1, np.int32))
>>> lattice.encode(np.frombuffer(b"abxxb", np.uint8)).tolist()
[5, 0, 4]
"""

from cpython cimport array as carray
from libc.math cimport isfinite
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libcpp.vector cimport vector

from ubpe_native._numpy import np

from ubpe_native._checks cimport build_once, check_offsets, check_range
from ubpe_native._flat_map cimport FlatMap
from ubpe_native._typedefs cimport id_t
from ubpe_native._shared cimport id_array, utf8_length

cdef int32_t PREFIX_ONLY = -1
cdef float RESET_THRESHOLD = 100000.0
cdef float UNK_PENALTY = 10.0
# the largest id a lattice may write: n_ids, one more, must still be an int32
cdef int64_t ID_MAX = 0x7FFFFFFE




cdef Py_ssize_t _first_free(vector[int32_t]& free_up, Py_ssize_t j) noexcept nogil:
    """The first free slot at or after ``j`` (path halving; the last slot stays free)."""
    while free_up[j] != j:
        free_up[j] = free_up[free_up[j]]
        j = free_up[j]
    return j


cdef class UnigramLattice:
    """``UnigramLattice(blob, offsets, ids, scores, user_defined, unk_id, unk_score,
    byte_fallback, double_sums=False, hf_unknowns=False)``: piece ``k`` is
    ``blob[offsets[k]:offsets[k+1]]`` with id ``ids[k]``, score ``scores[k]`` (any float
    array: float32 for sentencepiece, float64 for HF) and ``user_defined[k]``; ``byte_fallback[b]`` is the id of byte ``b``'s
    piece, or -1 everywhere when the model has no byte fallback (unknown runs -> ``unk_id``).
    Scores given as an ``array.array`` of doubles are read as they are (no numpy).
    Unused pieces are left out by the caller but their text must still be a trie path, so
    pass them with ``ids[k] = -1``."""

    # attributes: see _unigram.pxd (other kernels call `_encode` without the GIL)

    def __init__(self, const uint8_t[::1] blob not None, const int64_t[::1] offsets not None,
                 const id_t[::1] ids not None, scores_in not None,
                 const uint8_t[::1] user_defined not None, id_t unk_id, double unk_score,
                 const id_t[::1] byte_fallback not None, bint double_sums=False, bint hf_unknowns=False):
        build_once(&self.built, self)
        cdef Py_ssize_t n = ids.shape[0], k, j
        cdef const double[::1] scores
        if isinstance(scores_in, carray.array) and scores_in.typecode == "d":
            scores = scores_in  # (a .model file's load imports no numpy)
        else:
            scores = np.ascontiguousarray(scores_in, dtype=np.float64)
        self.double_sums = double_sums
        self.hf_unknowns = hf_unknowns
        if offsets.shape[0] != n + 1 or scores.shape[0] != n or user_defined.shape[0] != n:
            raise ValueError("offsets, ids, scores and user_defined disagree in length")
        if n:
            check_offsets(offsets, blob.shape[0], "offsets", 1)  # no empty piece
        for k in range(n):
            if ids[k] < -1:
                raise ValueError(f"piece {k} has a negative id")
            check_range(ids[k], -1, ID_MAX, "piece ids")  # (n_ids = 1 + the largest must not wrap)
            if not isfinite(scores[k]):
                raise ValueError(f"piece {k} has a score that is not finite")
        if unk_id < 0:
            raise ValueError("unk_id must be an id")
        check_range(unk_id, 0, ID_MAX, "unk_id")
        if byte_fallback.shape[0] != 256:
            raise ValueError("byte_fallback must hold 256 ids")
        self.has_byte_fallback = False
        for k in range(256):
            if byte_fallback[k] < -1:
                raise ValueError("byte_fallback ids must be >= -1")
            check_range(byte_fallback[k], -1, ID_MAX, "byte_fallback ids")
            self.byte_fallback[k] = byte_fallback[k]
            if byte_fallback[k] >= 0:
                self.has_byte_fallback = True
        self.unk_id = unk_id
        self.unk_score = unk_score
        self.n_ids = unk_id + 1
        for k in range(n):
            self.n_ids = max(self.n_ids, ids[k] + 1)
        for k in range(256):
            self.n_ids = max(self.n_ids, byte_fallback[k] + 1)
        if n:
            self.ids.assign(&ids[0], &ids[0] + n)
            self.scores.assign(&scores[0], &scores[0] + n)
            self.user_defined.assign(&user_defined[0], &user_defined[0] + n)
        self._build_trie(blob, offsets, ids)

    cdef void _build_trie(self, const uint8_t[::1] blob, const int64_t[::1] offsets,
                          const id_t[::1] ids) except *:
        """The pieces' bytes as a double-array trie: node ``m``'s child by byte ``b`` is
        ``base[m] + b`` if that slot's ``check`` is ``m`` (one add and one compare per byte, as
        sentencepiece's Darts trie). Built from a hashed trie, nodes in creation order (a parent
        before its children), each node's children at the first base where all their slots
        are free."""
        cdef FlatMap children
        cdef vector[int32_t] entry_of, parent_of, new_index, first_child, child_list
        cdef vector[uint8_t] byte_of
        cdef int64_t node, m
        cdef int64_t* slot
        cdef Py_ssize_t k, j, n = ids.shape[0], n_nodes, c, base
        entry_of.push_back(PREFIX_ONLY)  # the root
        parent_of.push_back(-1)
        byte_of.push_back(0)
        for k in range(n):
            node = 0
            for j in range(offsets[k], offsets[k + 1]):
                slot = children.slot((<uint64_t>node << 8) | blob[j])
                if slot[0] == 0:
                    entry_of.push_back(PREFIX_ONLY)
                    parent_of.push_back(<int32_t>node)
                    byte_of.push_back(blob[j])
                    slot[0] = entry_of.size() - 1
                node = slot[0]
            if ids[k] >= 0:
                entry_of[node] = <int32_t>k
        n_nodes = entry_of.size()
        # Here and below: clear() then resize(n, v), never assign(n, v), which is not
        # ``except +`` - out of memory it would abort the process instead of raising MemoryError
        first_child.resize(n_nodes + 1, 0)  # children grouped by parent (counting sort)
        for m in range(1, n_nodes):
            first_child[parent_of[m] + 1] += 1
        for m in range(n_nodes):
            first_child[m + 1] += first_child[m]
        child_list.resize(n_nodes, 0)
        new_index.resize(n_nodes, 0)
        for m in range(1, n_nodes):
            child_list[first_child[parent_of[m]] + new_index[parent_of[m]]] = <int32_t>m
            new_index[parent_of[m]] += 1
        # free slots: a union-find over positions, ``free_up[j]`` leads to the first free
        # slot >= j (an occupied slot points at the next position)
        cdef vector[int32_t] free_up
        cdef Py_ssize_t size = n_nodes + 257
        self.da_base.clear()
        self.da_base.resize(size, 0)
        self.da_check.clear()
        self.da_check.resize(size, -1)
        self.da_entry.clear()
        self.da_entry.resize(size, PREFIX_ONLY)
        free_up.resize(size)
        for j in range(size):
            free_up[j] = <int32_t>j
        free_up[0] = 1
        self.da_entry[0] = entry_of[0]
        new_index[0] = 0
        for m in range(n_nodes):
            if first_child[m] == first_child[m + 1]:
                continue
            c = byte_of[child_list[first_child[m]]]  # the smallest child byte
            j = _first_free(free_up, c + 1)
            while True:
                base = j - c
                for k in range(first_child[m], first_child[m + 1]):
                    if base + byte_of[child_list[k]] < size and self.da_check[base + byte_of[child_list[k]]] != -1:
                        break
                else:
                    break
                if j + 1 >= size:
                    size = self._grow(free_up, size)
                j = _first_free(free_up, j + 1)
            if base + 256 >= size:  # room for the children (the last slot stays free)
                size = self._grow(free_up, size)
            self.da_base[new_index[m]] = <int32_t>base
            for k in range(first_child[m], first_child[m + 1]):
                j = base + byte_of[child_list[k]]
                self.da_check[j] = new_index[m]
                self.da_entry[j] = entry_of[child_list[k]]
                new_index[child_list[k]] = <int32_t>j
                free_up[j] = <int32_t>(j + 1)

    cdef Py_ssize_t _grow(self, vector[int32_t]& free_up, Py_ssize_t size) except -1:
        """Doubles the double array (new slots free); returns the new size."""
        cdef Py_ssize_t k
        free_up.resize(2 * size)
        for k in range(size, 2 * size):
            free_up[k] = <int32_t>k
        self.da_base.resize(2 * size, 0)
        self.da_check.resize(2 * size, -1)
        self.da_entry.resize(2 * size, PREFIX_ONLY)
        return 2 * size

    def encode(self, const uint8_t[::1] data not None):
        """The ids of the best path over ``data`` (normalized UTF-8)."""
        cdef vector[id_t] out
        if data.shape[0]:
            with nogil:
                self._encode(&data[0], data.shape[0], out)
        return id_array(out)

    cdef int _encode(self, const uint8_t* data, Py_ssize_t size, vector[id_t]& out) except -1 nogil:
        # the growing vectors raise MemoryError through ``except -1``
        cdef vector[double] best_score
        cdef vector[int64_t] best_start, path
        cdef vector[id_t] best_id
        return self._encode_with(data, size, out, best_score, best_start, best_id, path)

    cdef int _encode_with(self, const uint8_t* data, Py_ssize_t size, vector[id_t]& out,
                          vector[double]& best_score, vector[int64_t]& best_start,
                          vector[id_t]& best_id, vector[int64_t]& path) except -1 nogil:
        """`_encode` with the caller's scratch vectors (reused from text to text). The scores
        are held as doubles; without ``double_sums`` every one is a float32 sum, as
        sentencepiece computes it."""
        cdef Py_ssize_t starts_at = 0, max_frontier = 0, key_pos, i, mblen, length, end
        cdef double till, candidate, score
        cdef float offset
        cdef bint in_float = not self.double_sums
        cdef bint has_single
        cdef int64_t node, child, n_slots = self.da_check.size()
        cdef int32_t entry
        cdef id_t token
        path.clear()
        best_score.clear()  # then resize: resize raises MemoryError; assign(n, v) aborts
        best_start.clear()
        best_id.clear()
        best_score.resize(size + 1, 0.0)
        best_start.resize(size + 1, -1)
        best_id.resize(size + 1, -1)
        while starts_at < size:
            till = best_score[starts_at]
            if in_float and (till < -RESET_THRESHOLD or till > RESET_THRESHOLD):
                offset = <float>till
                for i in range(starts_at, max_frontier + 1):
                    if i == starts_at or best_start[i] != -1:
                        best_score[i] = <float>(<float>best_score[i] - offset)
                till = 0.0
            has_single = False
            mblen = utf8_length(data[starts_at])
            if mblen > size - starts_at:
                mblen = size - starts_at
            node = 0
            for key_pos in range(starts_at, size):
                child = self.da_base[node] + data[key_pos]
                if child >= n_slots or self.da_check[child] != node:
                    break
                node = child
                entry = self.da_entry[node]
                if entry == PREFIX_ONLY:
                    continue
                end = key_pos + 1
                length = end - starts_at
                if end > max_frontier:
                    max_frontier = end
                if self.user_defined[entry]:
                    score = <float>(0.1 * (length - 1))
                else:
                    score = self.scores[entry]
                candidate = <float>(<float>score + <float>till) if in_float else score + till
                if best_start[end] == -1 or candidate > best_score[end]:
                    best_score[end] = candidate
                    best_start[end] = starts_at
                    best_id[end] = self.ids[entry]
                if length == mblen:
                    has_single = True
            if not has_single:
                end = starts_at + mblen
                if end > max_frontier:
                    max_frontier = end
                candidate = <float>(<float>self.unk_score + <float>till) if in_float else self.unk_score + till
                if best_start[end] == -1 or candidate > best_score[end]:
                    best_score[end] = candidate
                    best_start[end] = starts_at
                    best_id[end] = self.unk_id
            starts_at += mblen
        end = size
        while end > 0:
            path.push_back(end)
            end = best_start[end]
        cdef bint previous_unk = False
        cdef int64_t start, run_start = -1
        if self.hf_unknowns:  # HF: a run of unknown nodes is one string, looked up again
            for i in range(<Py_ssize_t>path.size() - 1, -1, -1):
                end = path[i]
                if best_id[end] == self.unk_id:
                    if run_start < 0:
                        run_start = best_start[end]
                    if i == 0 or best_id[path[i - 1]] != self.unk_id:
                        self._write_unknown(data, run_start, end, out)
                        run_start = -1
                else:
                    out.push_back(best_id[end])
            return 0
        for i in range(<Py_ssize_t>path.size() - 1, -1, -1):
            end = path[i]
            start = best_start[end]
            token = best_id[end]
            if token == self.unk_id and self.has_byte_fallback:
                for key_pos in range(start, end):
                    out.push_back(self.byte_fallback[data[key_pos]] if self.byte_fallback[data[key_pos]] >= 0
                                  else self.unk_id)
            elif token == self.unk_id and previous_unk:
                pass  # sentencepiece merges a run of unknown pieces into one
            else:
                out.push_back(token)
            previous_unk = token == self.unk_id
        return 0

    cdef id_t _piece_id(self, const uint8_t* data, Py_ssize_t size) noexcept nogil:
        """The id of the piece spelt ``data[:size]`` exactly, or -1."""
        cdef int64_t node = 0, child, n_slots = self.da_check.size()
        cdef Py_ssize_t k
        for k in range(size):
            child = self.da_base[node] + data[k]
            if child >= n_slots or self.da_check[child] != node:
                return -1
            node = child
        if size == 0 or self.da_entry[node] == PREFIX_ONLY:
            return -1
        return self.ids[self.da_entry[node]]

    cdef int _write_unknown(self, const uint8_t* data, Py_ssize_t start, Py_ssize_t end,
                            vector[id_t]& out) except -1 nogil:
        """HF's ``Unigram::tokenize`` for the fused unknown run ``data[start:end]``: the piece
        it spells, else its bytes' pieces if every byte has one, else the unknown id."""
        cdef id_t token = self._piece_id(data + start, end - start)
        cdef Py_ssize_t k
        cdef bint every_byte = self.has_byte_fallback
        if token >= 0:
            out.push_back(token)
            return 0
        if every_byte:
            for k in range(start, end):
                if self.byte_fallback[data[k]] < 0:
                    every_byte = False
                    break
        if every_byte:
            for k in range(start, end):
                out.push_back(self.byte_fallback[data[k]])
        else:
            out.push_back(self.unk_id)
        return 0

    def encode_words(self, const uint8_t[::1] data not None, const int64_t[::1] bounds not None,
                     bint split_spaces=False):
        """``(ids, offsets)``: the best path of every word ``data[bounds[k]:bounds[k+1]]`` on
        its own (HF runs its model on each pre-token), the ids of word ``k`` at
        ``ids[offsets[k]:offsets[k+1]]``; one call without the GIL. ``split_spaces``: each
        word is cut again before every ``▁`` (U+2581), each piece its own lattice: HF's
        ``Metaspace`` split (``MergedWithNext``) done here, not in Python.

        >>> import numpy as np
        >>> lattice = UnigramLattice(b"abab", np.array([0, 1, 2, 4]), np.array([0, 1, 2], np.int32),
        ...                          np.array([-1.0, -1.0, -1.5]), np.zeros(3, np.uint8), 3, -11.0,
        ...                          np.full(256, -1, np.int32), double_sums=True, hf_unknowns=True)
        >>> ids, offsets = lattice.encode_words(np.frombuffer(b"abba", np.uint8), np.array([0, 2, 4]))
        >>> ids.tolist(), offsets.tolist()
        ([2, 1, 0], [0, 1, 3])
        >>> ids, offsets = lattice.encode_words(np.frombuffer("ab▁ab".encode(), np.uint8), np.array([0, 7]), True)
        >>> ids.tolist(), offsets.tolist()  # "ab" | "▁ab": the ▁ is unknown here
        ([2, 3, 2], [0, 3])
        """
        cdef Py_ssize_t n_words = bounds.shape[0] - 1, k, start, end, cut
        check_offsets(bounds, data.shape[0], "bounds")
        cdef vector[id_t] out
        cdef vector[double] best_score
        cdef vector[int64_t] best_start, path
        cdef vector[id_t] best_id
        offsets = np.zeros(n_words + 1, dtype=np.int64)
        cdef int64_t[::1] word_offsets = offsets
        with nogil:
            for k in range(n_words):
                start, end = bounds[k], bounds[k + 1]
                while start < end:
                    cut = end
                    if split_spaces:  # the next ▁ after the first byte starts the next piece
                        cut = start + 1
                        while cut < end and not (cut + 2 < end and data[cut] == 0xE2 and data[cut + 1] == 0x96
                                                 and data[cut + 2] == 0x81):
                            cut += 1
                    self._encode_with(&data[0] + start, cut - start, out, best_score, best_start, best_id, path)
                    start = cut
                word_offsets[k + 1] = out.size()
        return id_array(out), offsets
