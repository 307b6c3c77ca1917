# distutils: language = c++
"""Rank-ordered BPE inference: the merge loop of tiktoken, llama.cpp and sentencepiece.

A word starts as its base ids. Two adjacent tokens may merge when the concatenation of their
pieces is itself a token's piece; of all such adjacent pairs the one forming the token of
lowest *priority* (its creation rank, or its id) merges first, the leftmost on ties. This is
tiktoken's rule (``_educational.bpe_encode``, Rust ``byte_pair_merge``), which rescans the word
after every merge, O(n * m). Here it is the shared merge loop of `_merge_core` (a chain of
nodes, the candidate pairs in a min-heap keyed by ``(priority, left node)``, O(n log n)) over
a rule table with one rule per split of every piece into two tokens; BPE-dropout is the loop's
dropout hook.

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

from array import array

from ubpe_native._numpy import np

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.unicode cimport PyUnicode_AsUTF8String

from ubpe_native._checks cimport as_array, as_buffer, build_once, check_ids, check_offsets
from ubpe_native._combine cimport id_list, id_table_for
from ubpe_native._flat_map cimport FlatMap
from ubpe_native._merge_core cimport (MAX_RANK, MergeHooks, MergeScratch, MergeWord, ScratchPool, cache_find,
                                      cache_store, merge_word, rule_add)
from ubpe_native._pretokenize cimport (check_split_arguments, check_utf8, class_t, document_flags,
                                       document_starts, split_document, split_pieces)
from ubpe_native._typedefs cimport id_t

# Multiplier of the polynomial hash of id runs (odd, so multiplication is a bijection mod 2**64).
cdef uint64_t HASH_BASE = 0x9E3779B97F4A7C15ULL
# FlatMap reserves the all-ones key for empty slots.
cdef uint64_t RESERVED_KEY = 0xFFFFFFFFFFFFFFFFULL
# Priorities are the ranks of the rule table (`_merge_core`): 31 bits.
cdef int64_t MAX_PRIORITY = MAX_RANK
cdef id_t NO_TOKEN = -1
# bits per merged token of the filter of runs that are no piece (a 1/32 false positive rate)
cdef size_t PRESENT_BITS_PER_TOKEN = 32
# rules per merged token that the rule table is sized for (GPT-2's ranks: 108,299 for 50,000)
cdef size_t RULES_PER_TOKEN = 2
# byte-level text: the base ids are the byte values
cdef int N_BYTE_VALUES = 256
# Words of a text are cached (word bytes -> ids) up to this many per scratch, then the cache
# starts over: pieces repeat (Zipf), so most words of a text cost one hash look-up.
cdef size_t CACHE_LIMIT = 1 << 18
# Longer pieces (a run of spaces, a long number) are merged each time, not cached.
cdef Py_ssize_t CACHE_MAX_WORD = 256


cdef inline uint64_t hash_step(uint64_t h, id_t symbol) noexcept nogil:
    # symbol + 1: a run of zeros must not hash like the empty run
    return h * HASH_BASE + <uint64_t>(<uint32_t>symbol) + 1


cdef inline uint64_t usable_key(uint64_t h) noexcept nogil:
    return h - 1 if h == RESERVED_KEY else h


cdef class MergeTable:
    """The merge rules of a vocabulary, ready for rank-ordered encoding.

    ``MergeTable(n_base, piece_offsets, piece_symbols, priorities)``: merged token
    ``n_base + t`` stands for ``piece_symbols[piece_offsets[t]:piece_offsets[t + 1]]`` and
    merges before any token of larger ``priorities[t]``. Where several tokens share a piece,
    the one of lowest priority (then lowest id) represents it.

    * ``pairs``: the rule table (`_merge_core`): ``(left, right) -> (priority, token)`` for
      every split of every piece into two pieces that are both tokens (base ids are
      one-symbol pieces);
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
    # encode_text(s) may run in several threads at once (they release the GIL): each call
    # takes an idle scratch, and its word cache, from here (`_merge_core`'s one cache policy)
    cdef ScratchPool scratches
    cdef size_t cache_limit  # words cached per scratch (0: no cache)

    def __cinit__(self, *args, **kwargs):
        # here, not in __init__: even an object __init__ never ran on has its pool
        self.scratches = ScratchPool()
        self.cache_limit = CACHE_LIMIT

    cdef bint built  # __init__ ran (build_once)

    def __init__(self, id_t n_base, const int64_t[::1] piece_offsets not None,
                 const id_t[::1] piece_symbols not None, const int64_t[::1] priorities not None):
        build_once(&self.built, self)
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
        cdef vector[uint64_t] present  # a bit per hash prefix of the pieces' keys
        cdef int present_log2 = 16
        cdef uint64_t h
        cdef id_t token, left, right, other
        cdef int64_t* slot
        self.offsets.assign(&piece_offsets[0], &piece_offsets[0] + n + 1)
        if piece_symbols.shape[0]:
            self.symbols.assign(&piece_symbols[0], &piece_symbols[0] + piece_symbols.shape[0])
        if n:
            self.priority.assign(&priorities[0], &priorities[0] + n)
        # sized once for their final counts (a piece per token; about two rules per token in
        # real vocabularies): no rehash while they fill
        self.piece_heads = FlatMap(<size_t>n)
        self.pairs = FlatMap(<size_t>(RULES_PER_TOKEN * n))
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
        # 2. every split of every piece into two tokens, with O(1) substring hashes. Most runs
        # are no token: a bit per hash prefix (`present`, a few bits per token, small enough
        # to stay in cache) answers most of them without a probe of the piece table.
        while (<size_t>1 << present_log2) < PRESENT_BITS_PER_TOKEN * <size_t>n:
            present_log2 += 1
        present.resize((<size_t>1 << present_log2) // 64 + 1)
        for t in range(n):
            h = self._hash_of(t) >> (64 - present_log2)
            present[h >> 6] |= (<uint64_t>1) << (h & 63)
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
            for k in range(1, length):
                left = self._token_of_run(start, k, prefix[k], present, present_log2)
                if left == NO_TOKEN:
                    continue
                h = prefix[length] - prefix[k] * power[length - k]
                right = self._token_of_run(start + k, length - k, h, present, present_log2)
                if right == NO_TOKEN:
                    continue
                # a pair splits one piece only, since its concatenation *is* the piece
                rule_add(self.pairs, left, right, self.priority[t], <id_t>(self.n_base + t))
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

    cdef inline id_t _token_of_run(self, int64_t start, Py_ssize_t length, uint64_t h,
                                   const vector[uint64_t]& present, int present_log2) noexcept nogil:
        """Token of ``symbols[start:start + length]`` (a run inside a piece, ``h`` its hash), or
        NO_TOKEN; ``present``: a bit per ``present_log2``-bit hash prefix of the pieces."""
        if length == 1:
            return self.symbols[start]
        cdef uint64_t key = usable_key(h)
        cdef uint64_t bit = key >> (64 - present_log2)
        if not (present[bit >> 6] >> (bit & 63)) & 1:
            return NO_TOKEN
        return self._lookup(&self.symbols[0] + start, length, key)

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
        cdef MergeScratch scratch
        if n_words > 0:
            scratch = self.scratches.take()
            try:
                with nogil:
                    n_out = self._encode_words(&symbols[0] if symbols.shape[0] else NULL, NULL,
                                               &bounds[0], n_words, &tokens[0] if symbols.shape[0] else NULL,
                                               whole_piece_shortcut, dropout, seed, scratch)
            finally:
                self.scratches.give(scratch)
        return out[:n_out]

    cdef Py_ssize_t _encode_words(self, const id_t* symbols, const uint8_t* data, const int64_t* bounds,
                                  Py_ssize_t n_words, id_t* tokens, bint whole_piece_shortcut,
                                  double dropout, uint64_t seed, MergeScratch scratch) except -1 nogil:
        """Encode every word ``symbols[bounds[w]:bounds[w + 1]]`` into ``tokens``; how many
        tokens it wrote. With ``data`` (the words' bytes, one per symbol: byte-level text) and
        a cache limit, a word's ids are looked up in the scratch's word cache first and stored
        there after (never with dropout: its words differ from call to call). The scratch is
        this call's alone (no lock); growing it may raise MemoryError."""
        cdef MergeHooks hooks
        cdef uint64_t rng = seed
        cdef Py_ssize_t n_out = 0, w, length, i, n_word
        cdef int64_t start
        cdef bint cached = data != NULL and dropout == 0.0 and self.cache_limit > 0
        hooks.frozen = False
        hooks.unused = NULL
        hooks.dropout = dropout
        hooks.rng = &rng
        for w in range(n_words):
            start = bounds[w]
            length = bounds[w + 1] - start
            if length == 0:
                continue
            if length == 1:
                tokens[n_out] = symbols[start]
                n_out += 1
                continue
            if cached and length <= CACHE_MAX_WORD:
                scratch.word_out.clear()
                if cache_find(scratch.cache, data + start, length, scratch.word_out):
                    for i in range(<Py_ssize_t>scratch.word_out.size()):
                        tokens[n_out + i] = scratch.word_out[i]
                    n_out += scratch.word_out.size()
                    continue
                n_word = self._encode_word(&symbols[start], length, &tokens[n_out], whole_piece_shortcut,
                                           scratch.word, hooks)
                scratch.word_out.assign(&tokens[n_out], &tokens[n_out] + n_word)
                cache_store(scratch.cache, scratch.word_out, self.cache_limit)
                n_out += n_word
            else:
                n_out += self._encode_word(&symbols[start], length, &tokens[n_out], whole_piece_shortcut,
                                           scratch.word, hooks)
        return n_out

    cdef inline Py_ssize_t _encode_word(self, const id_t* symbols, Py_ssize_t length, id_t* out,
                                        bint whole_piece_shortcut, MergeWord& word,
                                        const MergeHooks& hooks) except -1 nogil:
        """One word of two symbols or more: its token if it is a piece (with the shortcut),
        else merged; how many tokens it wrote."""
        cdef id_t whole
        if whole_piece_shortcut:
            whole = self._find(symbols, length)
            if whole != NO_TOKEN:
                out[0] = self._representative(whole)
                return 1
        return self._merge_word(symbols, length, out, word, hooks)

    cdef inline id_t _representative(self, id_t token) noexcept nogil:
        return self.n_base + self.canonical[token - self.n_base]

    cdef Py_ssize_t _merge_word(self, const id_t* symbols, Py_ssize_t length, id_t* out,
                                MergeWord& word, const MergeHooks& hooks) except -1 nogil:
        """Merge one word into ``out`` (`_merge_core.merge_word`, BPE-dropout as its hook
        describes); returns how many tokens it wrote."""
        cdef Py_ssize_t n_written = 0
        cdef int32_t node = 0
        word.token_at.assign(symbols, symbols + length)
        merge_word(self.pairs, word, length, hooks)
        while node >= 0:
            out[n_written] = word.token_at[node]
            n_written += 1
            node = word.next_node[node]
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
        cdef MergeScratch scratch = self.scratches.take()
        try:
            with nogil:
                split_pieces(&data[0], n, &classes[0], pattern, bounds)
                for i in range(n):
                    symbols[i] = data[i]
                n_out = self._encode_words(symbols.data(), &data[0], bounds.data(), bounds.size() - 1,
                                           &tokens[0], True, 0.0, 0, scratch)
        finally:
            self.scratches.give(scratch)
        return out[:n_out]

    def set_cache_limit(self, size_t limit):
        """Cache at most ``limit`` words per scratch (0: no word cache), forgetting those cached."""
        self.cache_limit = limit
        self.scratches.clear()

    def clear_cache(self):
        """Forget the cached words."""
        self.scratches.clear()

    def cache_size(self):
        """How many words are cached (by the scratches no call is using)."""
        return self.scratches.cached_words()

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
        cdef MergeScratch scratch = self.scratches.take()
        try:
            with nogil:
                for i in range(n):
                    symbols[i] = data[i]
                n_out = self._encode_documents(&data[0], symbols.data(), &starts[0], n_docs, &classes[0],
                                               pattern, &skip_view[0], &tokens[0], &offset_view[0], scratch)
        finally:
            self.scratches.give(scratch)
        return out[:n_out], offsets

    cdef Py_ssize_t _encode_documents(self, const uint8_t* data, const id_t* symbols,
                                      const int64_t* starts, Py_ssize_t n_docs, const class_t* classes,
                                      int pattern, const uint8_t* skip, id_t* tokens,
                                      int64_t* offsets, MergeScratch scratch) except -1 nogil:
        """Split and encode every document of ``encode_texts`` (``symbols``: ``data`` as ids);
        how many tokens it wrote."""
        cdef vector[int64_t] bounds, split_scratch
        cdef Py_ssize_t d, n, n_out = 0
        for d in range(n_docs):
            n = starts[d + 1] - starts[d]
            if n and not skip[d]:
                split_document(data + starts[d], n, classes, pattern, False, bounds, split_scratch)
                n_out += self._encode_words(symbols + starts[d], data + starts[d], bounds.data(),
                                            <Py_ssize_t>bounds.size() - 1, tokens + n_out, True, 0.0, 0, scratch)
            offsets[d + 1] = n_out
        return n_out


#: the ids returned as shared int objects (``_combine.id_table_for``) up to this one; larger ones are new ints
cdef Py_ssize_t ID_TABLE_SIZE = 1 << 21


cdef class TextEncoder:
    """``encoder(text)``: the ids of one str, split by a preset ``pattern`` of the scanner and
    encoded by ``table`` - :meth:`MergeTable.encode_text` plus the id map and the list, in
    one call: what ``ByteLevelBPE.encode`` runs for a short text when no special token can
    apply (its per-call cost, not the merges, is what a short text pays). ``ids``: vocabulary
    id -> the id returned (None: the same). Returns None for a text with lone surrogates (the
    caller's path replaces them)."""

    cdef MergeTable table
    cdef const class_t[::1] classes
    cdef int pattern
    cdef const id_t[::1] ids
    cdef bint mapped
    cdef Py_ssize_t id_limit  # one more than the largest id returned
    cdef bint built  # __init__ ran (build_once)

    def __init__(self, MergeTable table not None, classes, int pattern, ids=None):
        build_once(&self.built, self)
        self.classes = as_buffer(classes, "H", "uint16", "classes")  # (a load's memoryview: no numpy)
        check_split_arguments(self.classes.shape[0], pattern)
        if table.n_base < N_BYTE_VALUES:
            raise ValueError("byte-level encoding needs a vocabulary over the 256 byte values")
        self.mapped = ids is not None
        self.ids = as_buffer(array("i") if ids is None else ids, "i", "int32", "ids")
        if self.mapped and self.ids.shape[0] < table.n_base + table.n_merged:
            raise ValueError(f"ids must hold one entry per token ({table.n_base + table.n_merged})")
        cdef Py_ssize_t k
        self.id_limit = table.n_base + table.n_merged
        if self.mapped:
            self.id_limit = 0
            for k in range(self.ids.shape[0]):
                if self.ids[k] < 0:
                    raise ValueError(f"ids[{k}] is negative")
                self.id_limit = max(self.id_limit, self.ids[k] + 1)
        self.table = table
        self.pattern = pattern

    def __call__(self, str text not None):
        try:
            data = PyUnicode_AsUTF8String(text)
        except UnicodeEncodeError:
            return None
        cdef const uint8_t* bytes_ = <const uint8_t*>PyBytes_AS_STRING(data)
        cdef Py_ssize_t n = PyBytes_GET_SIZE(data), i, n_out = 0
        if n == 0:
            return []
        cdef vector[int64_t] bounds
        cdef vector[id_t] symbols, tokens
        # with the GIL (MemoryError): split_pieces must not grow ``bounds`` (one piece per byte
        # at most), nor the merges ``tokens``
        bounds.reserve(n + 1)
        symbols.resize(n)
        tokens.resize(n)
        cdef MergeScratch scratch = self.table.scratches.take()
        try:
            with nogil:
                split_pieces(bytes_, n, &self.classes[0], self.pattern, bounds)
                for i in range(n):
                    symbols[i] = bytes_[i]
                n_out = self.table._encode_words(symbols.data(), bytes_, bounds.data(), bounds.size() - 1,
                                                 tokens.data(), True, 0.0, 0, scratch)
                if self.mapped:
                    for i in range(n_out):
                        tokens[i] = self.ids[tokens[i]]
        finally:
            self.table.scratches.give(scratch)
        return id_list(id_table_for(min(self.id_limit, ID_TABLE_SIZE), n_out), tokens.data(), n_out)
