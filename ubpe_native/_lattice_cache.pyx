# distutils: language = c++
"""The lattice kernel (``_lattice``) over many parts, with a cache of the parts it has
encoded: :class:`Lattice`, what the tf-idf encoder runs, and :func:`encode_parts`, one call
of an uncached ``Lattice``.

A part that comes again (a frequent word) costs a hash lookup instead of a lattice: every part
a call encodes becomes an *entry* of a :class:`_PartCache`, its candidates appended to the
``_Workspace``'s outputs (declared in ``_lattice.pxd``), and a later call points at the entry
instead of copying it. Results are the same with and without the cache, and whatever the
threads: each running call takes a cache of its own.

>>> import numpy as np
>>> from ubpe_native._radix import RadixTree
>>> tree = RadixTree(2, np.array([0, 2]), np.array([0, 1], np.int32))  # token 2 = [0 1]
>>> tokens, token_offsets, candidate_offsets, scores = encode_parts(
...     tree, np.array([0.0, 0.0, 0.5]), np.array([0, 1, 0], np.int32), np.array([0, 3]), top_n=2)
>>> candidate_offsets.tolist(), scores.tolist()
([0, 2], [0.5, 0.0])
"""

from cpython.pyport cimport PY_SSIZE_T_MAX
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libcpp.vector cimport vector

from array import array

from ubpe_native._numpy import np

from ubpe_native._checks cimport (as_array, as_buffer, build_once, check_buffer, check_ids, check_offsets,
                                  check_per_token, check_range)
from ubpe_native._combine cimport id_table, nbest_arrays, nbest_lists, top1_arrays, top1_lists
from ubpe_native._flat_map cimport FlatMap
from ubpe_native._lattice cimport _Workspace
from ubpe_native._radix cimport RadixTree
from ubpe_native._textsplit cimport TextSplitter
from ubpe_native._typedefs cimport id_t

from ubpe_native._lattice import DEFAULT_EXACT_MAX_LENGTH, TRIE_MIN_COMPACTION


def encode_parts(RadixTree tree not None, weights, tokens, offsets, Py_ssize_t top_n=1,
                 Py_ssize_t exact_max_length=DEFAULT_EXACT_MAX_LENGTH, *,
                 Py_ssize_t _min_compaction=TRIE_MIN_COMPACTION):
    """Encode every part ``tokens[offsets[k]:offsets[k + 1]]``; up to ``top_n`` paths each.

    ``weights[t]`` is token ``t``'s weight for every token the tree can return (0 for base
    ids). Returns ``(tokens, token_offsets, candidate_offsets, scores)``: part ``k``'s
    candidates, best first, are ``candidate_offsets[k]..candidate_offsets[k + 1] - 1``;
    candidate ``j`` is ``tokens[token_offsets[j]:token_offsets[j + 1]]`` with ``scores[j]``.
    ``_min_compaction`` (for tests) lowers the trie size below which no compaction happens.
    This is :meth:`Lattice.encode_parts` of a new, uncached :class:`Lattice`.
    """
    return Lattice(tree, weights, exact_max_length, cache=False,
                   _min_compaction=_min_compaction).encode_parts(tokens, offsets, top_n)


# Parts up to this many symbols are cached (longer ones rarely repeat).
cdef Py_ssize_t CACHE_MAX_PART = 64
# A cache starts over (after a call) once it holds this many parts' or tokens' candidates:
# about 10-20 MB per cache (a Lattice has one per thread that encoded at once).
CACHE_MAX_ENTRIES = 1 << 16
CACHE_MAX_TOKENS = 1 << 21
# top_n is handed to _combine's walk as a C int
cdef int64_t TOP_N_LIMIT = 0x7FFFFFFF
# Bytes of a lattice node: token, next, score, high, low, length, count trie.
cdef Py_ssize_t NODE_BYTES = 4 + 8 + 8 + 8 + 8 + 4 + 4
# A lattice grown past this many nodes is freed after its call.
cdef Py_ssize_t WORKSPACE_KEEP = 1 << 20
# Multiplier of the polynomial hash of a part (odd: a bijection mod 2**64).
cdef uint64_t HASH_BASE = 0x9E3779B97F4A7C15ULL


cdef struct EntryKey:
    int64_t offset  # the part's symbols: keys[offset:offset + length]
    int32_t length  # -1: the entry is not indexed
    int32_t top_n


cdef class _PartCache:
    """The parts one :class:`Lattice` has encoded and the workspace its calls reuse.

    Every part a call encodes becomes an *entry*: its candidates, appended to the workspace's
    outputs (entry ``e``'s candidates are ``out_candidate_offsets[e]:out_candidate_offsets[e + 1]``).
    Entries of parts up to ``CACHE_MAX_PART`` symbols are indexed by ``(top_n, symbols)``:
    when such a part comes again, the call points at the entry instead of encoding it. The
    outputs of a call are its parts' entries (``work.part_entry``). Used by one call (one
    thread) at a time; emptied after a call that left it over its limits."""

    cdef FlatMap index  # hash of (top_n, symbols) -> entry + 1
    cdef vector[EntryKey] entries
    cdef vector[id_t] keys
    cdef _Workspace work
    # encode_texts' split (scratch, reused from call to call)
    cdef vector[id_t] symbols
    cdef vector[int64_t] part_offsets
    cdef vector[uint8_t] separator
    cdef vector[int64_t] doc_part_offsets
    cdef vector[uint8_t] utf8
    cdef vector[int64_t] bounds

    cdef int clear(self) except -1:
        """Forget every entry and free the memory they held."""
        cdef vector[EntryKey] no_entries
        cdef vector[id_t] no_keys, no_tokens
        cdef vector[int64_t] no_token_offsets, no_candidate_offsets
        cdef vector[double] no_scores
        self.index = FlatMap()
        self.entries.swap(no_entries)
        self.keys.swap(no_keys)
        self.work.out_tokens.swap(no_tokens)
        self.work.out_token_offsets.swap(no_token_offsets)
        self.work.out_candidate_offsets.swap(no_candidate_offsets)
        self.work.out_scores.swap(no_scores)
        self.work.out_token_offsets.push_back(0)
        self.work.out_candidate_offsets.push_back(0)
        return 0

    cdef int free_split(self) except -1:
        """Free the split's scratch space (after a large call)."""
        cdef vector[id_t] no_symbols
        cdef vector[int64_t] no_offsets, no_docs, no_bounds
        cdef vector[uint8_t] no_separator, no_utf8
        self.symbols.swap(no_symbols)
        self.part_offsets.swap(no_offsets)
        self.doc_part_offsets.swap(no_docs)
        self.bounds.swap(no_bounds)
        self.separator.swap(no_separator)
        self.utf8.swap(no_utf8)
        return 0

    cdef bint full(self, Py_ssize_t max_entries, Py_ssize_t max_tokens) noexcept:
        return (<Py_ssize_t>self.entries.size() > max_entries
                or <Py_ssize_t>self.work.out_tokens.size() > max_tokens)

    cdef int64_t find(self, uint64_t key, const id_t* part, Py_ssize_t n, Py_ssize_t top_n) noexcept nogil:
        """The entry of the part, -1 if none, -2 if another part has its hash."""
        cdef int64_t entry = self.index.get(key, 0) - 1
        cdef Py_ssize_t i
        cdef const id_t* stored
        if entry < 0:
            return -1
        cdef EntryKey* found = &self.entries[entry]
        if found.top_n != top_n or found.length != n:
            return -2
        stored = self.keys.data() + found.offset
        for i in range(n):
            if stored[i] != part[i]:
                return -2
        return entry

    cdef int added(self, uint64_t key, const id_t* part, Py_ssize_t n, Py_ssize_t top_n,
                   bint indexed) except -1 nogil:
        """Record the entry the workspace has just written (the part ``part[:n]``)."""
        cdef int64_t entry = self.entries.size()
        cdef EntryKey record
        record.offset = self.keys.size()
        record.length = <int32_t>n if indexed else -1
        record.top_n = <int32_t>top_n
        self.entries.push_back(record)
        if indexed:
            self.keys.insert(self.keys.end(), part, part + n)
            self.index.slot(key)[0] = entry + 1
        return 0


cdef inline uint64_t part_key(const id_t* part, Py_ssize_t n, Py_ssize_t top_n) noexcept nogil:
    cdef uint64_t h = <uint64_t>top_n
    cdef Py_ssize_t i
    for i in range(n):
        h = h * HASH_BASE + <uint64_t>(<uint32_t>part[i]) + 1
    return h - 1 if h == 0xFFFFFFFFFFFFFFFFULL else h  # FlatMap reserves the all-ones key


cdef class Lattice:
    """The lattice kernel on one vocabulary (a radix tree of its pieces and their weights,
    checked once), with a cache of the parts it has encoded: a part that comes again (a
    frequent word) costs a hash lookup instead of a lattice. Results are the same with and
    without the cache, and whatever the threads: each running call takes a cache of its own
    (a Lattice keeps as many as calls ran at once), which starts over after a call that left
    it full (``CACHE_MAX_ENTRIES`` parts or ``CACHE_MAX_TOKENS`` tokens, or the limits
    ``_cache_entries`` / ``_cache_tokens`` given for tests; parts up to ``CACHE_MAX_PART``
    symbols are cached). ``cache=False``: no cache.

    >>> import numpy as np
    >>> from ubpe_native._radix import RadixTree
    >>> tree = RadixTree(2, np.array([0, 2]), np.array([0, 1], np.int32))  # token 2 = [0 1]
    >>> lattice = Lattice(tree, np.array([0.0, 0.0, 0.5]))
    >>> lattice.encode_documents(np.array([0, 1, 0, 1], np.int32), np.array([0, 2, 4]), np.array([0, 2, 2]))
    [[([2, 2], 1.0)], [([], 0.0)]]
    >>> lattice.encode_documents(np.array([0, 1, 0], np.int32), np.array([0, 3]), np.array([0, 1]), top_n=2)
    [[([2, 0], 0.5), ([0, 1, 0], 0.0)]]
    """

    cdef readonly RadixTree tree
    cdef const double[::1] weights
    cdef readonly Py_ssize_t exact_max_length
    cdef readonly bint cached
    cdef int trie_depth
    cdef Py_ssize_t min_compaction
    cdef Py_ssize_t max_entries
    cdef Py_ssize_t max_tokens
    cdef list free_caches

    cdef bint built  # __init__ ran (build_once)

    def __init__(self, RadixTree tree not None, weights, Py_ssize_t exact_max_length=DEFAULT_EXACT_MAX_LENGTH, *,
                 bint cache=True, Py_ssize_t _min_compaction=TRIE_MIN_COMPACTION,
                 Py_ssize_t _cache_entries=CACHE_MAX_ENTRIES, Py_ssize_t _cache_tokens=CACHE_MAX_TOKENS):
        build_once(&self.built, self)
        cdef const double[::1] weight_view = as_buffer(weights, "d", "float64", "weights")
        cdef Py_ssize_t k
        check_per_token(tree.max_token, weight_view.shape[0], "weights")
        for k in range(min(<Py_ssize_t>tree.n_base, weight_view.shape[0])):  # a C loop: no array per call
            if weight_view[k] != 0:
                raise ValueError("base ids must weigh 0")
        self.tree = tree
        self.weights = weight_view
        self.exact_max_length = exact_max_length
        self.cached = cache
        self.min_compaction = max(1, _min_compaction)
        self.max_entries = _cache_entries
        self.max_tokens = _cache_tokens
        # the trie keys are merged tokens' ids minus n_base; its depth is their bit length in
        # the count tries' digits (_lattice's TRIE_BITS = 4 bits a level)
        self.trie_depth = (int(max(2, weight_view.shape[0] - tree.n_base) - 1).bit_length() + 3) // 4
        self.free_caches = []

    def clear_cache(self):
        """Forget the parts encoded so far (results do not change)."""
        self.free_caches = []

    def encode_parts(self, tokens, offsets, Py_ssize_t top_n=1):
        """Encode every part ``tokens[offsets[k]:offsets[k + 1]]``: see :func:`encode_parts`."""
        cdef const id_t[::1] token_view = as_array(tokens, np.int32, "tokens")
        cdef const int64_t[::1] offset_view = as_array(offsets, np.int64, "offsets")
        check_range(top_n, 1, TOP_N_LIMIT, "top_n")  # (the walk takes it as a C int)
        check_offsets(offset_view, token_view.shape[0], "offsets")
        check_ids(token_view, self.tree.n_base, "parts")
        cdef _PartCache cache = self._acquire()
        cdef _Workspace work = cache.work
        cdef Py_ssize_t n_parts, k, n_tokens = 0, n_candidates = 0
        cdef int64_t entry, c, first, last, t = 0, j = 0
        try:
            self._run(cache, &token_view[0] if token_view.shape[0] else NULL, &offset_view[0],
                      offset_view.shape[0] - 1, top_n)
            n_parts = work.part_entry.size()
            for k in range(n_parts):
                entry = work.part_entry[k]
                first = work.out_candidate_offsets[entry]
                last = work.out_candidate_offsets[entry + 1]
                n_candidates += last - first
                n_tokens += work.out_token_offsets[last] - work.out_token_offsets[first]
            out_tokens = np.empty(n_tokens, dtype=np.int32)
            out_token_offsets = np.empty(n_candidates + 1, dtype=np.int64)
            out_candidate_offsets = np.empty(n_parts + 1, dtype=np.int64)
            out_scores = np.empty(n_candidates, dtype=np.float64)
            _gather(work, out_tokens, out_token_offsets, out_candidate_offsets, out_scores)
        finally:
            self._release(cache)
        return out_tokens, out_token_offsets, out_candidate_offsets, out_scores

    def encode_documents(self, tokens, part_offsets, doc_part_offsets, Py_ssize_t top_n=1, bint arrays=False):
        """Every document's ``top_n`` encodings ``[(tokens, score)]``, best first, as lists:
        document ``d`` holds parts ``doc_part_offsets[d]:doc_part_offsets[d + 1]``, part ``k``
        is ``tokens[part_offsets[k]:part_offsets[k + 1]]``. Top-1: the parts' best encodings
        back to back, scores added left to right; top-n: the reference's walk over the parts'
        candidates (``_combine``); one part: its own candidates. ``arrays=True``: the same
        encodings as the arrays ``(ids, token_offsets, scores, doc_offsets)`` of
        ``ubpe.encoders.EncodedBatch``, no list built."""
        cdef const id_t[::1] token_view = as_array(tokens, np.int32, "tokens")
        cdef const int64_t[::1] offset_view = as_array(part_offsets, np.int64, "part_offsets")
        cdef const int64_t[::1] doc_view = as_array(doc_part_offsets, np.int64, "doc_part_offsets")
        check_range(top_n, 1, TOP_N_LIMIT, "top_n")  # (the walk takes it as a C int)
        check_offsets(offset_view, token_view.shape[0], "part_offsets")
        check_ids(token_view, self.tree.n_base, "parts")
        check_offsets(doc_view, offset_view.shape[0] - 1, "doc_part_offsets")
        cdef _PartCache cache = self._acquire()
        try:
            self._run(cache, &token_view[0] if token_view.shape[0] else NULL, &offset_view[0],
                      offset_view.shape[0] - 1, top_n)
            return self._lists(cache, &doc_view[0], doc_view.shape[0] - 1, top_n, arrays)
        finally:
            self._release(cache)

    def encode_texts(self, TextSplitter splitter not None, docs, Py_ssize_t top_n=1, Py_ssize_t max_cells=-1,
                     bint arrays=False):
        """:meth:`encode_documents` of str documents split by ``splitter`` (no arrays in
        between: what ``UBPE.encode`` and ``encode_batch`` run for text). None - the caller's
        general path then raises its error - if a document is no str, has a symbol outside
        the splitter's alphabet or a lone surrogate, or if ``top_n > 1`` and the longest
        part's lattice would take more than ``max_cells`` cells (``(length + 1) * top_n``;
        -1: no limit). ``docs`` is a list or tuple. ``arrays``: see :meth:`encode_documents`."""
        check_range(top_n, 1, TOP_N_LIMIT, "top_n")  # (the walk takes it as a C int)
        if splitter.max_id >= self.tree.n_base:
            raise ValueError(f"the splitter gives ids up to {splitter.max_id}, the lattice has {self.tree.n_base} base ids")
        cdef tuple held = docs if type(docs) is tuple else tuple(docs)
        cdef _PartCache cache = self._acquire()
        try:
            if not splitter.split_into(held, cache.symbols, cache.part_offsets, cache.separator,
                                       cache.doc_part_offsets, cache.utf8, cache.bounds):
                return None
            if top_n > 1 and max_cells >= 0 and (_longest(cache.part_offsets) + 1) * top_n > max_cells:
                return None
            self._run(cache, cache.symbols.data(), cache.part_offsets.data(), cache.part_offsets.size() - 1, top_n)
            return self._lists(cache, cache.doc_part_offsets.data(), cache.doc_part_offsets.size() - 1, top_n,
                               arrays)
        finally:
            self._release(cache)

    cdef object _lists(self, _PartCache cache, const int64_t* doc_part_offsets, Py_ssize_t n_docs, Py_ssize_t top_n,
                       bint arrays):
        """The documents' encodings as lists (``arrays``: as arrays), from the entries of the
        parts just encoded."""
        cdef _Workspace work = cache.work
        if arrays and top_n == 1:
            return top1_arrays(work.out_tokens.data(), work.out_token_offsets.data(), work.out_scores.data(),
                               work.out_candidate_offsets.data(), work.part_entry.data(), doc_part_offsets, n_docs)
        if arrays:
            return nbest_arrays(work.out_tokens.data(), work.out_token_offsets.data(), work.out_scores.data(),
                                work.out_candidate_offsets.data(), work.part_entry.data(), doc_part_offsets, n_docs,
                                <int>top_n)
        cdef list ids = id_table(self.weights.shape[0])
        if top_n == 1:
            return top1_lists(ids, work.out_tokens.data(), work.out_token_offsets.data(), work.out_scores.data(),
                              work.out_candidate_offsets.data(), work.part_entry.data(), doc_part_offsets, n_docs)
        return nbest_lists(ids, work.out_tokens.data(), work.out_token_offsets.data(), work.out_scores.data(),
                           work.out_candidate_offsets.data(), work.part_entry.data(), doc_part_offsets, n_docs,
                           <int>top_n)

    cdef _PartCache _acquire(self):
        cdef _PartCache cache
        if self.free_caches:
            return self.free_caches.pop()
        cache = _PartCache()
        cache.work = self._new_workspace()
        cache.clear()
        return cache

    cdef _Workspace _new_workspace(self):
        cdef _Workspace work = _Workspace()
        work.min_compaction = self.min_compaction
        work.trie_depth = self.trie_depth
        work.occurrences.resize(self.weights.shape[0], 0)
        return work

    cdef int _release(self, _PartCache cache) except -1:
        """Give the cache back: emptied if over its limits, its lattice freed if grown large."""
        cdef vector[id_t] no_tokens
        cdef vector[int64_t] no_nodes
        cdef vector[double] no_scores
        cdef vector[int32_t] no_lengths
        if <Py_ssize_t>cache.work.node_token.capacity() > WORKSPACE_KEEP:
            cache.work.node_token.swap(no_tokens)
            cache.work.node_next.swap(no_nodes)
            no_nodes.clear()
            cache.work.node_score.swap(no_scores)
            cache.work.node_high.swap(no_scores)
            cache.work.node_low.swap(no_scores)
            no_scores.clear()
            cache.work.node_length.swap(no_lengths)
            cache.work.node_counts.swap(no_lengths)
            cache.work.trie.swap(no_lengths)
            cache.work.compacted.swap(no_lengths)
            cache.work.renumber.swap(no_lengths)
        if <Py_ssize_t>cache.utf8.capacity() > 4 * WORKSPACE_KEEP:
            cache.free_split()
        if not self.cached:
            return 0
        if cache.full(self.max_entries, self.max_tokens):
            cache.clear()
        self.free_caches.append(cache)
        return 0

    cdef int _run(self, _PartCache cache, const id_t* token_data, const int64_t* offsets, Py_ssize_t n_parts,
                  Py_ssize_t top_n) except -1:
        """Encode every part ``token_data[offsets[k]:offsets[k + 1]]`` (checked by the caller:
        base ids, ascending offsets, top_n >= 1) into the cache (an entry per part in
        ``work.part_entry``)."""
        cdef Py_ssize_t k, longest, length
        cdef RadixTree tree = self.tree
        longest = 0
        for k in range(n_parts):
            longest = max(longest, offsets[k + 1] - offsets[k])
        # the largest allocations, made here with the GIL: MemoryError before any work, and
        # before any allocation when no memory could hold them
        check_buffer(longest + 1, top_n, NODE_BYTES, "the lattice")
        if longest + 1 > PY_SSIZE_T_MAX // top_n // 8:
            raise MemoryError(f"a part of {longest} symbols with top_n={top_n} needs more memory than can be addressed")
        cdef _Workspace work = cache.work
        try:
            work.reserve(longest, top_n)
        except MemoryError:
            raise MemoryError(f"a part of {longest} symbols with top_n={top_n} needs about "
                              f"{(longest + 1) * top_n * 44 / 2**30:.1f} GiB for its lattice") from None
        work.part_entry.clear()
        work.part_entry.reserve(n_parts)
        # scratch space kept in the workspace from call to call (resize: MemoryError, with the GIL)
        work.match_lengths.resize(max(1, tree.max_length))
        work.match_tokens.resize(max(1, tree.max_length))
        work.heap.resize(top_n)
        work.order.resize(top_n)
        # empty inputs have no element 0 to point at: nothing is read through these then
        cdef const double* weight_data = &self.weights[0] if self.weights.shape[0] else NULL
        cdef const id_t* part
        cdef bint use_cache = self.cached
        cdef Py_ssize_t exact_max_length = self.exact_max_length
        cdef uint64_t key = 0
        cdef int64_t entry
        try:
            with nogil:
                for k in range(n_parts):
                    part = token_data + offsets[k]
                    length = offsets[k + 1] - offsets[k]
                    entry = -2
                    if use_cache and length <= CACHE_MAX_PART:
                        key = part_key(part, length, top_n)
                        entry = cache.find(key, part, length, top_n)
                        if entry >= 0:
                            work.part_entry.push_back(entry)
                            continue
                    work.part_entry.push_back(cache.entries.size())
                    work.encode_part(tree, weight_data, tree.n_base, part, length, top_n,
                                     length <= exact_max_length, work.match_lengths.data(),
                                     work.match_tokens.data(), work.heap.data(), work.order.data())
                    cache.added(key, part, length, top_n, entry == -1)
        except BaseException:
            cache.clear()  # never reuse a half-built cache
            raise
        return 0


cdef Py_ssize_t _longest(const vector[int64_t]& offsets) noexcept:
    cdef Py_ssize_t k, longest = 0
    for k in range(1, <Py_ssize_t>offsets.size()):
        longest = max(longest, offsets[k] - offsets[k - 1])
    return longest


cdef int _gather(_Workspace work, out_tokens, out_token_offsets, out_candidate_offsets, out_scores) except -1:
    """The parts' entries back to back, into the (right-sized) arrays of ``encode_parts``."""
    cdef id_t[::1] tokens = out_tokens
    cdef int64_t[::1] token_offsets = out_token_offsets
    cdef int64_t[::1] candidate_offsets = out_candidate_offsets
    cdef double[::1] scores = out_scores
    cdef Py_ssize_t k, t = 0, j = 0
    cdef int64_t entry, c, i
    token_offsets[0] = 0
    candidate_offsets[0] = 0
    for k in range(<Py_ssize_t>work.part_entry.size()):
        entry = work.part_entry[k]
        for c in range(work.out_candidate_offsets[entry], work.out_candidate_offsets[entry + 1]):
            for i in range(work.out_token_offsets[c], work.out_token_offsets[c + 1]):
                tokens[t] = work.out_tokens[i]
                t += 1
            scores[j] = work.out_scores[c]
            j += 1
            token_offsets[j] = t
        candidate_offsets[k + 1] = j
    return 0
