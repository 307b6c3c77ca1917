# distutils: language = c++
"""Rank-ordered BPE inference: the merge loop of tiktoken, llama.cpp and sentencepiece.

A word starts as its base ids. Two adjacent tokens may merge when the concatenation of their
pieces is itself a token's piece; of all such adjacent pairs the one forming the token of
lowest *priority* (its creation rank, or its id) merges first, the leftmost on ties. This is
tiktoken's rule (``_educational.bpe_encode``, Rust ``byte_pair_merge``), which rescans the word
after every merge, O(n * m). Here the word is a doubly linked list of nodes and the candidate
pairs sit in a min-heap keyed by ``(priority, left node)``: a merge changes only the two pairs
around it, so the loop is O(n log n). Heap entries are invalidated lazily: an entry is current
only if both nodes still hold the tokens it was pushed with (tokens only grow, so a node never
returns to an old token).

>>> import numpy as np
>>> # token 2 = (0, 1) with priority 1, token 3 = (0, 0) with priority 0
>>> table = MergeTable(2, np.array([0, 2, 4]), np.array([0, 1, 0, 0], np.int32), np.array([1, 0]))
>>> table.encode(np.array([0, 0, 1], np.int32), np.array([0, 3]), False, 0.0, 0).tolist()
[3, 1]
>>> table.encode(np.array([0, 0, 0], np.int32), np.array([0, 3]), False, 0.0, 0).tolist()
[3, 0]

``0 0 1`` merges ``(0, 0)`` first (priority 0), after which ``3 1`` is no token; in ``0 0 0``
both pairs tie and the leftmost merges.

For byte-level text, ``MergeTable.encode_text`` splits a whole document with the preset
patterns' scanner (``_pretokenize``) and merges every piece, in one call without the GIL.
"""

from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libcpp.vector cimport vector

from ubpe_native._numpy import np

from ubpe_native._chain cimport chain_init, chain_merge
from ubpe_native._checks cimport check_ids, check_offsets
from ubpe_native._flat_map cimport FlatMap, pack_key
from ubpe_native._heap cimport heap_pop, heap_push
from ubpe_native._pretokenize cimport (check_split_arguments, check_utf8, class_t, document_flags,
                                       document_starts, split_document, split_pieces)
from ubpe_native._typedefs cimport id_t

# Multiplier of the polynomial hash of id runs (odd, so multiplication is a bijection mod 2**64).
cdef uint64_t HASH_BASE = 0x9E3779B97F4A7C15ULL
# FlatMap reserves the all-ones key for empty slots.
cdef uint64_t RESERVED_KEY = 0xFFFFFFFFFFFFFFFFULL
# Priorities are packed into the high half of a 64-bit heap key and of a pair-table value.
cdef int64_t MAX_PRIORITY = 0x7FFFFFFF
cdef id_t NO_TOKEN = -1
cdef uint64_t LOW_HALF = 0xFFFFFFFFULL
# 53 random bits -> a double in [0, 1).
cdef double UNIT_SCALE = 1.0 / 9007199254740992.0
# A 4-ary heap: half the depth of a binary one, and the four children share a cache line or two.
cdef enum:
    HEAP_ARITY = 4
# byte-level text: the base ids are the byte values
cdef int N_BYTE_VALUES = 256


cdef struct HeapEntry:
    uint64_t key  # priority << 32 | left node: lowest priority first, then leftmost
    id_t left_token
    id_t right_token
    id_t token  # what the pair becomes



cdef inline uint64_t hash_step(uint64_t h, id_t symbol) noexcept nogil:
    # symbol + 1: a run of zeros must not hash like the empty run
    return h * HASH_BASE + <uint64_t>(<uint32_t>symbol) + 1


cdef inline uint64_t usable_key(uint64_t h) noexcept nogil:
    return h - 1 if h == RESERVED_KEY else h


cdef inline uint64_t splitmix64(uint64_t* state) noexcept nogil:
    state[0] += 0x9E3779B97F4A7C15ULL
    cdef uint64_t z = state[0]
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline double uniform(uint64_t* state) noexcept nogil:
    return <double>(splitmix64(state) >> 11) * UNIT_SCALE


cdef inline bint lower_key(const HeapEntry& a, const HeapEntry& b) noexcept nogil:
    """The heap's order: lowest priority first, then leftmost (keys are unique per node)."""
    return a.key < b.key


cdef class MergeTable:
    """The merge rules of a vocabulary, ready for rank-ordered encoding.

    ``MergeTable(n_base, piece_offsets, piece_symbols, priorities)``: merged token
    ``n_base + t`` stands for ``piece_symbols[piece_offsets[t]:piece_offsets[t + 1]]`` and
    merges before any token of larger ``priorities[t]``. Where several tokens share a piece,
    the one of lowest priority (then lowest id) represents it.

    * ``pairs``: ``(left << 32 | right) -> priority << 32 | token`` for every split of every
      piece into two pieces that are both tokens (base ids are one-symbol pieces);
    * ``piece_heads`` / ``piece_chain``: piece hash -> token, collisions chained and resolved
      by comparing symbols, for the whole-piece shortcut.
    """

    cdef readonly id_t n_base
    cdef readonly id_t n_merged
    cdef vector[int64_t] offsets
    cdef vector[id_t] symbols
    cdef vector[int64_t] priority
    cdef FlatMap pairs
    cdef FlatMap piece_heads  # piece hash -> token + 1 (0: absent)
    cdef vector[id_t] piece_chain  # token index -> next token index with the same hash, or -1
    cdef vector[id_t] canonical  # token index -> the token representing its piece

    def __init__(self, id_t n_base, const int64_t[::1] piece_offsets not None,
                 const id_t[::1] piece_symbols not None, const int64_t[::1] priorities not None):
        cdef Py_ssize_t n = priorities.shape[0]
        cdef Py_ssize_t t
        if n_base < 1:
            raise ValueError("n_base must be at least 1")
        if piece_offsets.shape[0] != n + 1:
            raise ValueError("piece_offsets must have one entry more than priorities")
        if n_base + n >= MAX_PRIORITY:
            raise ValueError("too many tokens for 31-bit ids")
        # a merged token's piece holds two symbols or more
        check_offsets(piece_offsets, piece_symbols.shape[0], "piece_offsets", 2)
        check_ids(piece_symbols, n_base, "pieces")
        for t in range(n):
            if not 0 <= priorities[t] <= MAX_PRIORITY:
                raise ValueError(f"priority of token {n_base + t} is outside 0..2**31-1")
        self.n_base = n_base
        self.n_merged = <id_t>n
        with nogil:
            self._build(piece_offsets, piece_symbols, priorities)

    cdef int _build(self, const int64_t[::1] piece_offsets, const id_t[::1] piece_symbols,
                    const int64_t[::1] priorities) except -1 nogil:
        # every growing container raises MemoryError through ``except -1`` (never "Exception
        # ignored" with a half-built table)
        cdef Py_ssize_t n = priorities.shape[0]
        cdef Py_ssize_t t, k, length
        cdef int64_t start
        cdef vector[uint64_t] prefix  # prefix[k]: hash of the first k symbols of a piece
        cdef vector[uint64_t] power  # HASH_BASE ** k
        cdef uint64_t h
        cdef id_t token, left, right, other
        cdef int64_t* slot
        cdef int64_t packed, current
        self.offsets.assign(&piece_offsets[0], &piece_offsets[0] + n + 1)
        if piece_symbols.shape[0]:
            self.symbols.assign(&piece_symbols[0], &piece_symbols[0] + piece_symbols.shape[0])
        if n:
            self.priority.assign(&priorities[0], &priorities[0] + n)
        # vector.assign(n, value) is not declared ``except +`` (bad_alloc would abort): resize is
        self.piece_chain.resize(n, NO_TOKEN)
        self.canonical.resize(n, NO_TOKEN)
        # 1. piece -> token, the lowest (priority, id) representing a shared piece
        for t in range(n):
            token = self._find(&self.symbols[0] + self.offsets[t],
                               self.offsets[t + 1] - self.offsets[t])
            if token == NO_TOKEN:
                slot = self.piece_heads.slot(self._hash_of(t))
                self.piece_chain[t] = <id_t>(slot[0] - 1) if slot[0] else NO_TOKEN
                slot[0] = t + 1
                self.canonical[t] = <id_t>t
            else:
                other = token - self.n_base
                if self.priority[t] < self.priority[other]:
                    self._replace_in_chain(other, <id_t>t)
                    self.canonical[t] = <id_t>t
                    self.canonical[other] = <id_t>t
                else:
                    self.canonical[t] = other
        for t in range(n):  # a replaced representative may have left stale references
            token = self.canonical[t]
            while self.canonical[token] != token:
                token = self.canonical[token]
            self.canonical[t] = token
        # 2. every split of every piece into two tokens, with O(1) substring hashes
        power.push_back(1)
        for t in range(n):
            if self.canonical[t] != t:
                continue
            start = self.offsets[t]
            length = self.offsets[t + 1] - start
            prefix.resize(length + 1)  # prefix[0] stays 0, the rest is written below
            for k in range(length):
                prefix[k + 1] = hash_step(prefix[k], self.symbols[start + k])
            while <Py_ssize_t>power.size() <= length:
                power.push_back(power.back() * HASH_BASE)
            packed = (self.priority[t] << 32) | (self.n_base + t)
            for k in range(1, length):
                left = self._token_of_run(start, k, prefix[k])
                if left == NO_TOKEN:
                    continue
                h = prefix[length] - prefix[k] * power[length - k]
                right = self._token_of_run(start + k, length - k, h)
                if right == NO_TOKEN:
                    continue
                # a pair splits one piece only, since its concatenation *is* the piece
                self.pairs.slot(pack_key(left, right))[0] = packed + 1
        return 0

    cdef uint64_t _hash_of(self, Py_ssize_t t) noexcept nogil:
        cdef uint64_t h = 0
        cdef int64_t k
        for k in range(self.offsets[t], self.offsets[t + 1]):
            h = hash_step(h, self.symbols[k])
        return usable_key(h)

    cdef int _replace_in_chain(self, id_t old, id_t new) except -1 nogil:
        cdef int64_t* slot = self.piece_heads.slot(self._hash_of(old))
        cdef id_t t = <id_t>(slot[0] - 1)
        self.piece_chain[new] = self.piece_chain[old]
        if t == old:
            slot[0] = new + 1
            return 0
        while self.piece_chain[t] != old:
            t = self.piece_chain[t]
        self.piece_chain[t] = new
        return 0

    cdef inline id_t _token_of_run(self, int64_t start, Py_ssize_t length,
                                   uint64_t h) noexcept nogil:
        """Token of ``symbols[start:start + length]`` (a run inside a piece), or NO_TOKEN."""
        if length == 1:
            return self.symbols[start]
        return self._lookup(&self.symbols[0] + start, length, usable_key(h))

    cdef id_t _find(self, const id_t* run, Py_ssize_t length) noexcept nogil:
        """Token whose piece is ``run`` (two symbols or more), or NO_TOKEN."""
        cdef uint64_t h = 0
        cdef Py_ssize_t k
        for k in range(length):
            h = hash_step(h, run[k])
        return self._lookup(run, length, usable_key(h))

    cdef id_t _lookup(self, const id_t* run, Py_ssize_t length, uint64_t key) noexcept nogil:
        cdef int64_t head = self.piece_heads.get(key, 0)
        cdef id_t t = <id_t>(head - 1)
        cdef int64_t start
        cdef Py_ssize_t k
        while t != NO_TOKEN:
            start = self.offsets[t]
            if self.offsets[t + 1] - start == length:
                k = 0
                while k < length and self.symbols[start + k] == run[k]:
                    k += 1
                if k == length:
                    return self.n_base + t
            t = self.piece_chain[t]
        return NO_TOKEN

    # -- encoding -------------------------------------------------------------------------

    def encode(self, const id_t[::1] symbols not None, const int64_t[::1] bounds not None,
               bint whole_piece_shortcut, double dropout, uint64_t seed):
        """Encode every word ``symbols[bounds[w]:bounds[w + 1]]``; the tokens, concatenated.

        ``whole_piece_shortcut``: a word that is a token's piece becomes that token without
        merging (tiktoken does this). ``dropout``: BPE-dropout probability, drawn from a
        splitmix64 stream started at ``seed``.
        """
        cdef Py_ssize_t n_words = bounds.shape[0] - 1
        cdef Py_ssize_t w
        check_offsets(bounds, symbols.shape[0], "bounds")
        check_ids(symbols, self.n_base, "symbols")
        if not 0.0 <= dropout <= 1.0:
            raise ValueError("dropout must be in [0, 1]")
        out = np.empty(symbols.shape[0], dtype=np.int32)
        cdef id_t[::1] tokens = out
        cdef Py_ssize_t n_out = 0
        if n_words > 0:
            with nogil:
                n_out = self._encode_words(&symbols[0] if symbols.shape[0] else NULL,
                                           &bounds[0], n_words, &tokens[0] if symbols.shape[0] else NULL,
                                           whole_piece_shortcut, dropout, seed)
        return out[:n_out]

    cdef Py_ssize_t _encode_words(self, const id_t* symbols, const int64_t* bounds,
                                  Py_ssize_t n_words, id_t* tokens, bint whole_piece_shortcut,
                                  double dropout, uint64_t seed) except -1 nogil:
        # scratch space shared by all words of the call; growing it may raise MemoryError
        cdef vector[id_t] token_at  # the token each node holds, NO_TOKEN once merged away
        cdef vector[int32_t] next_node
        cdef vector[int32_t] prev_node
        cdef vector[HeapEntry] heap
        cdef vector[HeapEntry] skipped
        cdef uint64_t rng = seed
        cdef Py_ssize_t n_out = 0, w, length, i
        cdef int64_t start
        cdef id_t whole
        for w in range(n_words):
            start = bounds[w]
            length = bounds[w + 1] - start
            if length == 0:
                continue
            if length == 1:
                tokens[n_out] = symbols[start]
                n_out += 1
                continue
            if whole_piece_shortcut:
                whole = self._find(&symbols[start], length)
                if whole != NO_TOKEN:
                    tokens[n_out] = self._representative(whole)
                    n_out += 1
                    continue
            n_out += self._merge_word(&symbols[start], length, &tokens[n_out], token_at,
                                      next_node, prev_node, heap, skipped, dropout, &rng)
        return n_out

    cdef inline id_t _representative(self, id_t token) noexcept nogil:
        return self.n_base + self.canonical[token - self.n_base]

    cdef inline int _push_pair(self, vector[HeapEntry]& heap, const vector[id_t]& token_at,
                               int32_t left, int32_t right) except -1 nogil:
        cdef HeapEntry entry
        cdef int64_t packed = self.pairs.get(pack_key(token_at[left], token_at[right]), 0)
        if packed == 0:
            return 0
        packed -= 1
        entry.key = (<uint64_t>(packed >> 32) << 32) | <uint32_t>left
        entry.left_token = token_at[left]
        entry.right_token = token_at[right]
        entry.token = <id_t>(<uint64_t>packed & LOW_HALF)
        heap_push(heap, entry, HEAP_ARITY, lower_key)
        return 0

    cdef Py_ssize_t _merge_word(self, const id_t* word, Py_ssize_t length, id_t* out,
                                vector[id_t]& token_at, vector[int32_t]& next_node,
                                vector[int32_t]& prev_node, vector[HeapEntry]& heap,
                                vector[HeapEntry]& skipped, double dropout,
                                uint64_t* rng) except -1 nogil:
        """Merge one word into ``out``; returns how many tokens it wrote.

        BPE-dropout follows Provilkov et al. (2020) as YouTokenToMe implements it: at every
        merge step each current candidate is dropped with probability ``dropout`` (the coins
        are flipped lazily, best candidate first, so the first survivor is the best surviving
        merge), dropped candidates come back after the next merge, and the word is done when
        a step drops them all. With ``dropout == 0`` no coin is flipped at all.
        """
        cdef Py_ssize_t i, n_written = 0
        cdef int32_t left, right, after
        cdef HeapEntry entry
        token_at.assign(word, word + length)
        chain_init(next_node, prev_node, length)
        heap.clear()
        skipped.clear()
        for i in range(length - 1):
            self._push_pair(heap, token_at, <int32_t>i, <int32_t>(i + 1))
        while heap.size():
            entry = heap_pop(heap, HEAP_ARITY, lower_key)
            left = <int32_t>(entry.key & LOW_HALF)
            right = next_node[left]
            # stale: the left node merged (its token grew or it was merged away) or the right one did
            if token_at[left] != entry.left_token or right < 0 or token_at[right] != entry.right_token:
                continue
            if dropout > 0.0 and uniform(rng) < dropout:
                skipped.push_back(entry)
                continue
            after = chain_merge(token_at, next_node, prev_node, left, right, entry.token, NO_TOKEN)
            if prev_node[left] >= 0:
                self._push_pair(heap, token_at, prev_node[left], left)
            if after >= 0:
                self._push_pair(heap, token_at, left, after)
            for i in range(<Py_ssize_t>skipped.size()):
                heap_push[HeapEntry](heap, skipped[i], HEAP_ARITY, lower_key)
            skipped.clear()
        left = 0
        while left >= 0:
            out[n_written] = token_at[left]
            n_written += 1
            left = next_node[left]
        return n_written

    def encode_text(self, const uint8_t[::1] data not None, const class_t[::1] classes not None, int pattern):
        """Split UTF-8 ``data`` with a preset ``pattern`` (``_pretokenize.split_text``) and
        encode every piece, whole-piece shortcut first, in one call without the GIL."""
        check_split_arguments(classes.shape[0], pattern)
        check_utf8(data)
        if self.n_base < N_BYTE_VALUES:
            raise ValueError("byte-level encoding needs a vocabulary over the 256 byte values")
        cdef Py_ssize_t n = data.shape[0], i
        out = np.empty(n, dtype=np.int32)
        cdef id_t[::1] tokens = out
        cdef Py_ssize_t n_out = 0
        cdef vector[int64_t] bounds
        cdef vector[id_t] symbols
        if n == 0:
            return out
        # with the GIL (MemoryError): split_pieces must not grow ``bounds`` (one piece per byte
        # at most), and the words' symbols
        bounds.reserve(n + 1)
        symbols.resize(n)
        with nogil:
            split_pieces(&data[0], n, &classes[0], pattern, bounds)
            for i in range(n):
                symbols[i] = data[i]
            n_out = self._encode_words(symbols.data(), bounds.data(), bounds.size() - 1,
                                       &tokens[0], True, 0.0, 0)
        return out[:n_out]

    def pair_count(self):
        """How many (left, right) pairs merge into a token."""
        return self.pairs.size()

    def find(self, const id_t[::1] run not None):
        """The token whose piece is ``run`` (its representative), a base id, or -1."""
        if run.shape[0] == 0:
            return NO_TOKEN
        if run.shape[0] == 1:
            return run[0] if 0 <= run[0] < self.n_base else NO_TOKEN
        cdef id_t token = self._find(&run[0], run.shape[0])
        return self._representative(token) if token != NO_TOKEN else NO_TOKEN

    # -- many documents at once (encode_batch) ------------------------------------------------

    def encode_texts(self, const uint8_t[::1] data not None, char_lengths,
                     const class_t[::1] classes not None, int pattern, skip=None):
        """`encode_text` of many documents in one call without the GIL: ``data`` holds their
        UTF-8 bytes back to back, ``char_lengths`` each one's length in code points. A document
        with ``skip[d]`` non-zero is left out (no tokens: the caller encodes it another way).
        Returns ``(tokens, offsets)``: document ``d``'s tokens are
        ``tokens[offsets[d]:offsets[d + 1]]``."""
        if self.n_base < N_BYTE_VALUES:
            raise ValueError("byte-level encoding needs a vocabulary over the 256 byte values")
        cdef const int64_t[::1] starts = document_starts(data, char_lengths, classes.shape[0], pattern)
        cdef Py_ssize_t n_docs = starts.shape[0] - 1, n = data.shape[0], i
        cdef const uint8_t[::1] skip_view = document_flags(skip, n_docs, "skip")
        out = np.empty(n, dtype=np.int32)  # a token per byte at most
        offsets = np.zeros(n_docs + 1, dtype=np.int64)
        cdef id_t[::1] tokens = out
        cdef int64_t[::1] offset_view = offsets
        cdef vector[id_t] symbols
        cdef Py_ssize_t n_out = 0
        if n == 0:
            return out, offsets
        symbols.resize(n)  # with the GIL: MemoryError
        with nogil:
            for i in range(n):
                symbols[i] = data[i]
            n_out = self._encode_documents(&data[0], symbols.data(), &starts[0], n_docs, &classes[0],
                                           pattern, &skip_view[0], &tokens[0], &offset_view[0])
        return out[:n_out], offsets

    cdef Py_ssize_t _encode_documents(self, const uint8_t* data, const id_t* symbols,
                                      const int64_t* starts, Py_ssize_t n_docs, const class_t* classes,
                                      int pattern, const uint8_t* skip, id_t* tokens,
                                      int64_t* offsets) except -1 nogil:
        """Split and encode every document of ``encode_texts`` (``symbols``: ``data`` as ids);
        how many tokens it wrote."""
        cdef vector[int64_t] bounds, scratch
        cdef Py_ssize_t d, n, n_out = 0
        for d in range(n_docs):
            n = starts[d + 1] - starts[d]
            if n and not skip[d]:
                split_document(data + starts[d], n, classes, pattern, False, bounds, scratch)
                n_out += self._encode_words(symbols + starts[d], bounds.data(), <Py_ssize_t>bounds.size() - 1,
                                            tokens + n_out, True, 0.0, 0)
            offsets[d + 1] = n_out
        return n_out
