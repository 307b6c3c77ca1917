# distutils: language = c++
"""The fit stage: batched pair merging with incremental pair statistics.

The corpus is a set of *parts* (runs of ids that pairs never cross), each belonging to a
document. Every round does what ubpe 0.3.0 does with a full recount, but from statistics
kept up to date merge by merge:

* ``occurrences[pair]`` - adjacent occurrences of the pair over all parts;
* ``positions[pair]``   - where the pair may occur (left node), validated when used.

The reference ranks candidates by ``(occurrences, -documents, pair)``. The number of
documents holding a pair is needed only to break ties in occurrences and for the weights of
the pairs taken, so it is computed on demand from the pair's positions (and cached until the
pair changes) instead of being maintained for every pair on every merge.

A max-heap ordered by occurrences yields the candidates: all pairs with at least the
occurrences of the ``n_candidates``-th are popped, ties are ordered by the full key, and the
rest go back. Entries are lazily invalidated (an entry whose count differs from the current
one is stale); every pair touched in a round is pushed again when the round ends.

Merging an occurrence ``.. x a b y ..`` into ``.. x X y ..`` changes only the pairs
``(x, a) (a, b) (b, y)`` -> ``(x, X) (X, y)``: a round costs time proportional to the
occurrences it merges, not to the corpus.

Identical parts are stored once, with their multiplicity and the documents holding them:
merging is deterministic within a part, so all copies of a part stay identical, and a pair's
occurrences are its occurrences in each distinct part times that part's multiplicity. Text
split into words repeats words heavily (Zipf), so the linked lists hold a fraction of the
corpus.

(The module is over 500 lines: it is one structure, ``PairMerger``, whose merge loop and
statistics keep each other's invariants; its heap, keys and checks are the shared ones. The
last ~80 lines let a cluster fit drive one merger per partition - ``ubpe.dask_rounds`` - with
the same merge code, and the documents of big rounds are counted on worker threads
(``use_threads``, ``worker_pool.h``) over the same per-part lists, so they stay inside the
class too.)

>>> import numpy as np
>>> merger = PairMerger(np.array([0, 1, 0, 1], np.int32), np.array([0, 4]), np.array([0], np.int32), 1, 2)
>>> merger.step(50)                        # (0, 1) occurs twice: it becomes token 2
1
>>> merger.merges()[0].tolist(), merger.merges()[1].tolist()
([0], [1])
"""

from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.string cimport memset
from libcpp.algorithm cimport sort
from libcpp.utility cimport pair as cpp_pair
from libcpp.vector cimport vector

from ubpe_native._numpy import np

from ubpe_native._buffers cimport new_array
from ubpe_native._checks cimport build_once, check_ids, check_offsets, claim
from ubpe_native._distinct cimport run_hash, run_slot
from ubpe_native._flat_map cimport FlatMap, pack_key
from ubpe_native._heap cimport heap_pop, heap_push
from ubpe_native._typedefs cimport count_t, id_t


cdef extern from *:
    """
    static inline int ubpe_popcount64(uint64_t x) {
    #if defined(__GNUC__) || defined(__clang__)
      return __builtin_popcountll(x);
    #else
      int n = 0;
      for (; x; x &= x - 1) ++n;
      return n;
    #endif
    }
    """
    int popcount64 "ubpe_popcount64"(uint64_t x) noexcept nogil


cdef extern from "worker_pool.h" namespace "ubpe" nogil:
    cdef cppclass WorkerPool:
        WorkerPool(int n_threads) except +
        int size()
        Py_ssize_t claim()
        void run(void (*task)(void*, int) noexcept nogil, void* context, bint workers_only)


ctypedef cpp_pair[int64_t, Py_ssize_t] pair_size


cdef struct HeapEntry:
    count_t occurrences
    int32_t pair


cdef struct Candidate:
    count_t occurrences
    count_t documents
    id_t left
    id_t right
    int32_t pair


# the candidate heap is binary, a max-heap by occurrences
cdef enum:
    HEAP_ARITY = 2

# use_threads refuses more threads than this: each takes marks of the corpus's size, and a
# count of 2**31 would be a request for terabytes, not a machine
MAX_THREADS = 1024


cdef inline bint heap_above(const HeapEntry& a, const HeapEntry& b) noexcept nogil:
    return a.occurrences > b.occurrences


cdef inline bint ranks_before(const Candidate& a, const Candidate& b) noexcept nogil:
    """The reference's candidate order: more occurrences, then fewer documents, then the
    larger pair ``(left, right)``."""
    if a.occurrences != b.occurrences:
        return a.occurrences > b.occurrences
    if a.documents != b.documents:
        return a.documents < b.documents
    if a.left != b.left:
        return a.left > b.left
    return a.right > b.right





cdef struct DocumentScan:
    # what counting a pair's documents reads (and the pair's positions and cached count, which
    # it writes): pointers into a merger's vectors, none of which grows while a scan runs
    id_t* symbol
    int32_t* next
    int32_t* part_of
    int64_t* doc_start  # the documents of part k: doc_list[doc_start[k]:doc_start[k + 1]]
    int32_t* doc_list
    vector[int32_t]* positions
    id_t* pair_left
    id_t* pair_right
    count_t* documents
    count_t n_docs
    # parts held by many documents also have them as a bit set: dense_of[part] is its row in
    # dense_bits (n_words words a row), or -1
    int32_t* dense_of
    uint64_t* dense_bits
    Py_ssize_t n_words


cdef count_t scan_documents(DocumentScan* view, int32_t pair, int64_t* part_mark, int64_t* doc_mark,
                            uint64_t* bits, int64_t scan) noexcept nogil:
    """Documents holding the pair: those of the distinct parts at its valid positions (stale
    positions are dropped from the list on the way). ``part_mark``, ``doc_mark`` and ``bits``
    (a bit per document) are the scanning thread's own scratch, none of whose marks equals
    the new ``scan`` number yet.

    A pair with at least a word of bits per position goes by bit set (a dense part's documents
    are OR-ed a word at a time, the others' set one by one, then counted); a rarer pair marks
    each document (as many steps as documents listed, but no pass over all documents)."""
    cdef vector[int32_t]* where = &view.positions[pair]
    cdef id_t a = view.pair_left[pair], b = view.pair_right[pair]
    cdef Py_ssize_t k, j, kept = 0
    cdef int32_t p, q, part, d
    cdef count_t count = 0
    cdef bint by_bits = <Py_ssize_t>where.size() >= view.n_words
    cdef uint64_t* row
    if by_bits:
        memset(bits, 0, view.n_words * sizeof(uint64_t))
    for k in range(where.size()):
        p = where[0][k]
        q = view.next[p]
        if view.symbol[p] != a or q < 0 or view.symbol[q] != b:
            continue
        where[0][kept] = p
        kept += 1
        part = view.part_of[p]
        if count == view.n_docs or part_mark[part] == scan:
            continue  # (every document holds the pair: only the positions are checked on)
        part_mark[part] = scan
        if by_bits:
            if view.dense_of[part] >= 0:
                row = view.dense_bits + <Py_ssize_t>view.dense_of[part] * view.n_words
                for j in range(view.n_words):
                    bits[j] |= row[j]
            else:
                for j in range(view.doc_start[part], view.doc_start[part + 1]):
                    d = view.doc_list[j]
                    bits[d >> 6] |= (<uint64_t>1) << (d & 63)
            continue
        for j in range(view.doc_start[part], view.doc_start[part + 1]):
            d = view.doc_list[j]
            if doc_mark[d] != scan:
                doc_mark[d] = scan
                count += 1
    if by_bits:
        for j in range(view.n_words):
            count += popcount64(bits[j])
    where.resize(kept)  # (smaller: never allocates)
    view.documents[pair] = count
    return count


cdef struct DocumentsJob:
    # the pairs whose documents a round needs, counted on a pool's workers (each claims the
    # next pair and counts it with its own marks)
    DocumentScan view
    WorkerPool* pool
    int32_t* pairs
    Py_ssize_t n
    vector[int64_t]* part_marks
    vector[int64_t]* doc_marks
    vector[uint64_t]* doc_bits
    int64_t* scans
    int64_t* items  # pairs counted, per worker


cdef void documents_task(void* context, int worker) noexcept nogil:
    cdef DocumentsJob* job = <DocumentsJob*>context
    cdef Py_ssize_t i = job.pool.claim()
    while i < job.n:
        job.items[worker] += 1
        job.scans[worker] += 1
        scan_documents(&job.view, job.pairs[i], job.part_marks[worker].data(),
                       job.doc_marks[worker].data(), job.doc_bits[worker].data(), job.scans[worker])
        i = job.pool.claim()


cdef class PairMerger:
    """Fit state: the corpus as linked lists plus the pair statistics.

    ``PairMerger(tokens, offsets, doc_of_part, n_docs, next_token)``: part ``k`` is
    ``tokens[offsets[k]:offsets[k + 1]]`` in document ``doc_of_part[k]``; new tokens get ids
    from ``next_token`` on. Call :meth:`step` until it returns 0 or enough tokens exist.
    Given ``weights`` and ``doc_offsets``, part ``k`` occurs ``weights[k]`` times, in the
    documents ``doc_of_part[doc_offsets[k]:doc_offsets[k + 1]]`` (counted parts, see
    ``_parts.pyx``).

    With ``unique_pieces=True`` (byte-level vocabularies, where a token *is* its byte
    string) a merge whose piece - the base ids it spans - equals an existing token's reuses
    that token instead of creating a second one with the same piece.
    """

    # the distinct parts: node i holds symbol[i]; prev/next link nodes of one part (-1 at its
    # ends); part_of[i] is the node's distinct part, which occurs part_weight times in all,
    # in the documents doc_list[doc_start[part]:doc_start[part + 1]] (ascending)
    cdef vector[id_t] symbol
    cdef vector[int32_t] prev
    cdef vector[int32_t] next
    cdef vector[int32_t] part_of
    cdef vector[count_t] part_weight
    cdef vector[int64_t] doc_start
    cdef vector[int32_t] doc_list
    cdef vector[int64_t] part_mark  # per distinct part: the last scan that counted it
    cdef vector[int64_t] part_lengths  # at build time
    # pair statistics, indexed by pair number
    cdef FlatMap pair_numbers
    cdef vector[id_t] pair_left
    cdef vector[id_t] pair_right
    cdef vector[count_t] occurrences
    cdef vector[count_t] documents  # cached count of documents; -1: to be counted again
    cdef vector[vector[int32_t]] positions
    cdef vector[int32_t] touched_in_round  # (rounds create tokens: fewer than 2**31)
    cdef vector[int32_t] seen_in_round
    cdef vector[int64_t] doc_mark  # per document: the last scan that counted it
    cdef int64_t scan_number
    cdef vector[uint64_t] doc_bits  # a bit per document (scans of frequent pairs)
    cdef vector[int32_t] dense_of  # per part: its row of dense_bits, or -1 (see DocumentScan)
    cdef vector[uint64_t] dense_bits
    cdef vector[HeapEntry] heap
    cdef Py_ssize_t heap_limit  # past this size the heap drops its stale entries (_compact)
    cdef vector[int32_t] touched
    cdef int64_t round_number
    # the result, in creation order
    cdef vector[id_t] merged_left
    cdef vector[id_t] merged_right
    cdef vector[count_t] merged_documents
    cdef vector[count_t] merged_occurrences
    # unique pieces: the piece of every created token, and piece hash -> token + 1
    cdef bint unique_pieces
    cdef id_t first_token
    cdef vector[vector[id_t]] pieces
    cdef FlatMap piece_tokens
    cdef readonly id_t next_token
    cdef readonly int32_t n_docs
    # threads (use_threads): the pool, each worker's marks (worker 0's are part_mark and
    # doc_mark), and the work a round must have before it goes to the workers
    cdef WorkerPool* pool
    cdef vector[vector[int64_t]] part_marks
    cdef vector[vector[int64_t]] doc_marks
    cdef vector[vector[uint64_t]] doc_bits_of
    cdef vector[int64_t] scans
    cdef Py_ssize_t thread_positions
    cdef bint workers_only  # (tests) the calling thread leaves every pair to the workers
    cdef readonly int64_t parallel_sections  # how many times the workers ran (tests)
    cdef readonly int64_t worker_pairs  # how many pairs the workers other than this thread counted
    # set (with the GIL) while a call runs: a call from another thread meanwhile - a step, or
    # use_threads deleting the pool a step is using - raises BusyError (_checks.claim)
    cdef bint busy
    cdef bint built  # __init__ ran: a second __init__ would append a corpus to this one

    def __init__(self, const id_t[::1] tokens not None, const int64_t[::1] offsets not None,
                 const int32_t[::1] doc_of_part not None, int32_t n_docs, id_t next_token,
                 bint unique_pieces=False, const count_t[::1] weights=None,
                 const int64_t[::1] doc_offsets=None):
        cdef Py_ssize_t n_parts, k, j
        claim(&self.busy, self)
        try:
            build_once(&self.built, self)
            check_offsets(offsets, tokens.shape[0], "offsets")
            n_parts = offsets.shape[0] - 1
            if (weights is None) != (doc_offsets is None):
                raise ValueError("weights and doc_offsets go together")
            if weights is None and doc_of_part.shape[0] != n_parts:
                raise ValueError("doc_of_part must have one entry per part")
            if weights is not None:
                if weights.shape[0] != n_parts:
                    raise ValueError("weights must have one entry per part")
                # every counted part is in at least one document
                check_offsets(doc_offsets, doc_of_part.shape[0], "doc_offsets", 1)
                if doc_offsets.shape[0] != n_parts + 1:
                    raise ValueError("doc_offsets must have one entry per part, plus one")
            if n_docs < 0 or next_token < 0:
                raise ValueError("n_docs and next_token must be non-negative")
            for k in range(doc_of_part.shape[0]):
                if not 0 <= doc_of_part[k] < n_docs:
                    raise ValueError(f"doc_of_part may hold documents 0..{n_docs - 1} only")
            for k in range(n_parts if weights is not None else 0):
                if weights[k] < 1:
                    raise ValueError("a counted part needs a positive weight")
                for j in range(doc_offsets[k] + 1, doc_offsets[k + 1]):
                    if doc_of_part[j] <= doc_of_part[j - 1]:
                        raise ValueError("the documents of a counted part must be ascending")
            check_ids(tokens, next_token, "tokens")
            if tokens.shape[0] >= 2 ** 31 - 1:
                raise ValueError("the corpus is too large: at most 2**31 - 2 symbols per fit")
            self.n_docs = n_docs
            self.next_token = next_token
            self.first_token = next_token
            self.unique_pieces = unique_pieces
            self.round_number = 0
            self.scan_number = 0
            self.doc_mark.resize(n_docs, -1)  # resize raises MemoryError; assign(n, v) would abort
            with nogil:
                self._build(tokens, offsets, doc_of_part, weights, doc_offsets, weights is not None)
        finally:
            self.busy = False

    cdef int _build(self, const id_t[::1] tokens, const int64_t[::1] offsets,
                    const int32_t[::1] doc_of_part, const count_t[::1] weights,
                    const int64_t[::1] doc_offsets, bint counted) except -1 nogil:
        """Part ``k`` occurs once in document ``doc_of_part[k]``; or, when ``counted``,
        ``weights[k]`` times in the documents ``doc_of_part[doc_offsets[k]:doc_offsets[k+1]]``
        (ascending) - the distinct parts of :class:`ubpe_native._parts.PartCounter`.

        Here and below, every method that grows a vector or a map is ``except``: running out
        of memory raises MemoryError from ``__init__``/``step`` (never "Exception ignored" and
        a half-merged corpus)."""
        cdef Py_ssize_t k, i, j, length
        cdef int32_t pair, part
        cdef FlatMap distinct  # content hash -> distinct part + 1
        cdef vector[int64_t] part_start, part_end  # where each distinct part is in ``tokens``
        cdef const id_t* data = &tokens[0] if tokens.shape[0] else NULL
        cdef int64_t* slot
        cdef vector[int32_t] part_at, last_doc  # each input part's distinct part; its last document
        cdef vector[int64_t] listed  # documents listed per distinct part
        part_at.reserve(offsets.shape[0] - 1)
        if counted:  # distinct parts already: every vector's final size is known
            self.symbol.reserve(tokens.shape[0])
            self.prev.reserve(tokens.shape[0])
            self.next.reserve(tokens.shape[0])
            self.part_of.reserve(tokens.shape[0])
            self.part_weight.reserve(offsets.shape[0] - 1)
            self.part_mark.reserve(offsets.shape[0] - 1)
            self.part_lengths.reserve(offsets.shape[0] - 1)
        for k in range(offsets.shape[0] - 1):
            length = offsets[k + 1] - offsets[k]
            slot = run_slot(distinct, data + offsets[k], length, data, part_start.data(),
                            part_end.data())
            if slot[0] == 0:
                part = self._new_part(tokens, offsets[k], length)  # leaves ``distinct`` as it is
                part_start.push_back(offsets[k])
                part_end.push_back(offsets[k + 1])
                slot[0] = part + 1
                last_doc.push_back(-1)
                listed.push_back(0)
            else:
                part = <int32_t>(slot[0] - 1)
            self.part_weight[part] += weights[k] if counted else 1
            part_at.push_back(part)
            for j in range(doc_offsets[k] if counted else k, doc_offsets[k + 1] if counted else k + 1):
                if last_doc[part] != doc_of_part[j]:
                    last_doc[part] = doc_of_part[j]
                    listed[part] += 1
        # the documents of each distinct part, in one array (a second pass: a part that is
        # repeated gets documents from each of its copies)
        self.doc_start.resize(listed.size() + 1, 0)
        for part in range(<int32_t>listed.size()):
            self.doc_start[part + 1] = self.doc_start[part] + listed[part]
            listed[part] = self.doc_start[part]  # from here: where the part's next document goes
            last_doc[part] = -1
        self.doc_list.resize(self.doc_start.back(), 0)
        for k in range(offsets.shape[0] - 1):
            part = part_at[k]
            for j in range(doc_offsets[k] if counted else k, doc_offsets[k + 1] if counted else k + 1):
                if last_doc[part] != doc_of_part[j]:
                    last_doc[part] = doc_of_part[j]
                    self.doc_list[listed[part]] = doc_of_part[j]
                    listed[part] += 1
        self._dense_rows()
        for i in range(self.symbol.size()):
            if self.next[i] >= 0:
                self._add(self.symbol[i], self.symbol[i + 1], i)
        for pair in range(<int32_t>self.pair_left.size()):
            self._push(pair)
        self.heap_limit = max(2 * <Py_ssize_t>self.heap.size(), 4096)
        self.touched.clear()
        return 0

    cdef int _dense_rows(self) except -1 nogil:
        """A bit set of the documents of every part listed in at least two words' worth of
        them (so the rows take at most the lists' memory)."""
        cdef Py_ssize_t n_words = (self.n_docs + 63) // 64, part, j, rows = 0
        cdef Py_ssize_t n_parts = self.part_weight.size()
        cdef int32_t d
        cdef uint64_t* row
        self.doc_bits.resize(n_words, 0)
        self.dense_of.resize(n_parts, -1)
        for part in range(n_parts):
            if self.doc_start[part + 1] - self.doc_start[part] >= 2 * n_words:
                self.dense_of[part] = <int32_t>rows
                rows += 1
        self.dense_bits.resize(rows * n_words, 0)
        for part in range(n_parts):
            if self.dense_of[part] >= 0:
                row = self.dense_bits.data() + <Py_ssize_t>self.dense_of[part] * n_words
                for j in range(self.doc_start[part], self.doc_start[part + 1]):
                    d = self.doc_list[j]
                    row[d >> 6] |= (<uint64_t>1) << (d & 63)
        return 0

    cdef int32_t _new_part(self, const id_t[::1] tokens, Py_ssize_t start, Py_ssize_t length) except -1 nogil:
        cdef int32_t part = <int32_t>self.part_weight.size()
        cdef Py_ssize_t first = self.symbol.size(), i
        for i in range(length):
            self.symbol.push_back(tokens[start + i])
            self.prev.push_back(first + i - 1 if i > 0 else -1)
            self.next.push_back(first + i + 1 if i + 1 < length else -1)
            self.part_of.push_back(part)
        self.part_weight.push_back(0)
        self.part_mark.push_back(-1)
        self.part_lengths.push_back(length)
        return part

    cdef inline Py_ssize_t _part_length(self, int32_t part) noexcept nogil:
        return self.part_lengths[part]

    # -- statistics ---------------------------------------------------------------------------

    cdef int32_t _pair_number(self, id_t left, id_t right) except -1 nogil:
        cdef int64_t* slot = self.pair_numbers.slot(pack_key(left, right))
        if slot[0] == 0:  # new pair: numbers are stored plus one, so 0 means absent
            slot[0] = <int64_t>self.pair_left.size() + 1
            self.pair_left.push_back(left)
            self.pair_right.push_back(right)
            self.occurrences.push_back(0)
            self.documents.push_back(-1)
            self.positions.push_back(vector[int32_t]())
            self.touched_in_round.push_back(-1)
            self.seen_in_round.push_back(-1)
        return <int32_t>(slot[0] - 1)

    cdef count_t _occurrences_of(self, id_t left, id_t right) noexcept nogil:
        cdef int64_t number = self.pair_numbers.get(pack_key(left, right), 0)
        return self.occurrences[number - 1] if number > 0 else 0

    cdef inline int _touch(self, int32_t pair) except -1 nogil:
        if self.touched_in_round[pair] != <int32_t>self.round_number:
            self.touched_in_round[pair] = <int32_t>self.round_number
            self.touched.push_back(pair)
        return 0

    cdef int _add(self, id_t left, id_t right, int32_t position) except -1 nogil:
        cdef int32_t pair = self._pair_number(left, right)
        self.occurrences[pair] += self.part_weight[self.part_of[position]]
        self.documents[pair] = -1
        self.positions[pair].push_back(position)
        self._touch(pair)
        return 0

    cdef int _remove(self, int32_t pair, count_t weight) except -1 nogil:
        self.occurrences[pair] -= weight
        self.documents[pair] = -1
        self._touch(pair)
        return 0

    cdef count_t _documents_of(self, int32_t pair) noexcept nogil:
        """Documents holding the pair (cached until the pair changes), see scan_documents."""
        if self.documents[pair] >= 0:
            return self.documents[pair]
        cdef DocumentScan view = self._scan_view()
        self.scan_number += 1
        return scan_documents(&view, pair, self.part_mark.data(), self.doc_mark.data(), self.doc_bits.data(),
                              self.scan_number)

    cdef DocumentScan _scan_view(self) noexcept nogil:
        cdef DocumentScan view
        view.symbol = self.symbol.data()
        view.next = self.next.data()
        view.part_of = self.part_of.data()
        view.doc_start = self.doc_start.data()
        view.doc_list = self.doc_list.data()
        view.positions = self.positions.data()
        view.pair_left = self.pair_left.data()
        view.pair_right = self.pair_right.data()
        view.documents = self.documents.data()
        view.n_docs = self.n_docs
        view.dense_of = self.dense_of.data()
        view.dense_bits = self.dense_bits.data()
        view.n_words = self.doc_bits.size()
        return view

    cdef int _count_documents(self, const vector[int32_t]& pairs) except -1 nogil:
        """Count (and cache) the documents of ``pairs``: on the pool's workers when they need
        at least ``thread_positions`` positions in all, else here. Each pair's count depends
        on the pair alone, so it is the same whichever worker counts it, and this thread
        counts whatever no worker has claimed (see worker_pool.h)."""
        cdef vector[int32_t] needed, ordered
        cdef vector[int64_t] items
        cdef vector[pair_size] order
        cdef pair_size item
        cdef Py_ssize_t i, total = 0
        cdef DocumentsJob job
        for i in range(pairs.size()):
            if self.documents[pairs[i]] < 0:
                needed.push_back(pairs[i])
                total += self.positions[pairs[i]].size()
        if self.pool == NULL or needed.size() < 2 or total < self.thread_positions:
            for i in range(needed.size()):
                self._documents_of(needed[i])
            return 0
        # the largest first (the workers claim them in this order)
        for i in range(needed.size()):
            item.first = -<int64_t>self.positions[needed[i]].size()
            item.second = i
            order.push_back(item)
        sort(order.begin(), order.end())
        for i in range(order.size()):
            ordered.push_back(needed[order[i].second])
        self.scans[0] = self.scan_number
        job.view = self._scan_view()
        job.pool = self.pool
        job.pairs = ordered.data()
        job.n = ordered.size()
        job.part_marks = self.part_marks.data()
        job.doc_marks = self.doc_marks.data()
        job.doc_bits = self.doc_bits_of.data()
        job.scans = self.scans.data()
        items.resize(self.pool.size(), 0)
        job.items = items.data()
        self.part_marks[0].swap(self.part_mark)  # worker 0 is this thread, with its own marks
        self.doc_marks[0].swap(self.doc_mark)
        self.doc_bits_of[0].swap(self.doc_bits)
        self.pool.run(documents_task, &job, self.workers_only)
        self.parallel_sections += 1
        for i in range(1, <Py_ssize_t>items.size()):
            self.worker_pairs += items[i]
        self.part_marks[0].swap(self.part_mark)
        self.doc_marks[0].swap(self.doc_mark)
        self.doc_bits_of[0].swap(self.doc_bits)
        self.scan_number = self.scans[0]
        return 0

    # -- the candidate heap -------------------------------------------------------------------

    cdef int _push(self, int32_t pair) except -1 nogil:
        cdef HeapEntry entry
        entry.occurrences = self.occurrences[pair]
        entry.pair = pair
        heap_push(self.heap, entry, HEAP_ARITY, heap_above)
        return 0

    cdef HeapEntry _pop(self) noexcept nogil:
        return heap_pop(self.heap, HEAP_ARITY, heap_above)

    cdef bint _is_current(self, const HeapEntry& entry) noexcept nogil:
        return entry.occurrences > 0 and entry.occurrences == self.occurrences[entry.pair]

    # -- threads ------------------------------------------------------------------------------

    def use_threads(self, int n_threads, Py_ssize_t min_positions=0, bint workers_only=False):
        """Count documents in later rounds on ``n_threads`` threads (1: on the calling one)
        when a round needs at least ``min_positions`` positions scanned; returns the threads
        in use (1 if no thread could be started). The merges are the same on any number.
        ``workers_only`` (tests): the calling thread waits while the others count.

        >>> import numpy as np
        >>> merger = PairMerger(np.array([0, 1, 0, 1], np.int32), np.array([0, 4]), np.array([0], np.int32), 1, 2)
        >>> merger.use_threads(2)
        2
        """
        cdef int w
        claim(&self.busy, self)
        try:
            if not 1 <= n_threads <= MAX_THREADS or min_positions < 0:
                raise ValueError(f"n_threads must be in 1..{MAX_THREADS} and min_positions non-negative")
            del self.pool
            self.pool = NULL
            self.part_marks.clear()
            self.doc_marks.clear()
            self.doc_bits_of.clear()
            if n_threads == 1:
                return 1
            self.part_marks.resize(n_threads)
            self.doc_marks.resize(n_threads)
            self.doc_bits_of.resize(n_threads)
            self.scans.clear()  # then resize: assign(n, v) is not ``except +`` (it would abort)
            self.scans.resize(n_threads, 0)
            for w in range(1, n_threads):
                self.part_marks[w].resize(self.part_weight.size(), -1)
                self.doc_marks[w].resize(self.n_docs, -1)
                self.doc_bits_of[w].resize(self.doc_bits.size(), 0)
            self.thread_positions = min_positions
            self.workers_only = workers_only
            try:
                self.pool = new WorkerPool(n_threads)
            except RuntimeError:  # no thread could be started: the calling thread counts alone
                return 1
            return n_threads
        finally:
            self.busy = False

    def __dealloc__(self):
        del self.pool

    # -- one round ----------------------------------------------------------------------------

    @property
    def n_pairs(self):
        """Distinct pairs seen so far (occurring or not)."""
        return <Py_ssize_t>self.pair_left.size()

    def step(self, int n_candidates):
        """Run one round; returns how many pairs it merged (0: no pair is left).

        Each merged pair creates a token, except with ``unique_pieces`` where it may reuse
        one: ``next_token`` tells how many ids exist."""
        cdef int created
        claim(&self.busy, self)
        try:
            if n_candidates < 1:
                raise ValueError("n_candidates must be at least 1")
            if <int64_t>self.next_token + n_candidates > 2 ** 31 - 1:  # ids are int32
                raise ValueError(f"a round may create {n_candidates} tokens from id {self.next_token} "
                                 "on: ids must stay below 2**31 - 1")
            with nogil:
                created = self._round(n_candidates)
            return created
        finally:
            self.busy = False

    cdef int _round(self, int n_candidates) except -1 nogil:
        cdef vector[Candidate] popped
        cdef vector[int32_t] candidates
        cdef vector[int32_t] taken
        cdef vector[id_t] taken_symbols
        cdef HeapEntry entry
        cdef Candidate candidate
        cdef int32_t pair, other
        cdef Py_ssize_t i, j, group_end
        cdef count_t count
        cdef bint good
        cdef id_t l1, r1, l2, r2

        self.round_number += 1
        self.touched.clear()
        # 1. every pair with at least the occurrences of the n_candidates-th best (the heap
        #    yields them by occurrences), so that ties at the boundary are all seen
        while not self.heap.empty():
            entry = self.heap[0]
            if not self._is_current(entry) or self.seen_in_round[entry.pair] == <int32_t>self.round_number:
                self._pop()
                continue
            if <int>popped.size() >= n_candidates and entry.occurrences < popped.back().occurrences:
                break
            self._pop()
            self.seen_in_round[entry.pair] = <int32_t>self.round_number
            candidate.occurrences = entry.occurrences
            candidate.documents = 0
            candidate.left = self.pair_left[entry.pair]
            candidate.right = self.pair_right[entry.pair]
            candidate.pair = entry.pair
            popped.push_back(candidate)
        if popped.empty():
            return 0
        # documents matter only between pairs with equal occurrences (popped in descending
        # order): all of them counted first, together, then each group is sorted
        for i in range(popped.size()):
            if ((i > 0 and popped[i - 1].occurrences == popped[i].occurrences)
                    or (i + 1 < <Py_ssize_t>popped.size() and popped[i + 1].occurrences == popped[i].occurrences)):
                candidates.push_back(popped[i].pair)
        self._count_documents(candidates)
        candidates.clear()
        i = 0
        while i < <Py_ssize_t>popped.size():
            group_end = i + 1
            while group_end < <Py_ssize_t>popped.size() and popped[group_end].occurrences == popped[i].occurrences:
                group_end += 1
            if group_end - i > 1:
                for j in range(i, group_end):
                    popped[j].documents = self._documents_of(popped[j].pair)  # (counted above)
                sort(popped.begin() + i, popped.begin() + group_end, ranks_before)
            i = group_end
        for i in range(popped.size()):
            if i < n_candidates:
                candidates.push_back(popped[i].pair)
            else:
                self._push(popped[i].pair)  # below the n_candidates best: back to the heap

        # 2. the batch: the first candidate, then every later one that shares no token with
        #    the batch and beats both its border pairs with every pair already taken
        taken.push_back(candidates[0])
        taken_symbols.push_back(self.pair_left[candidates[0]])
        taken_symbols.push_back(self.pair_right[candidates[0]])
        for i in range(1, candidates.size()):
            pair = candidates[i]
            l2 = self.pair_left[pair]
            r2 = self.pair_right[pair]
            good = True
            for j in range(taken_symbols.size()):
                if taken_symbols[j] == l2 or taken_symbols[j] == r2:
                    good = False
                    break
            if not good:
                self._push(pair)  # back to the heap: it stays a candidate for later rounds
                continue
            count = self.occurrences[pair]
            for j in range(taken.size()):
                other = taken[j]
                l1 = self.pair_left[other]
                r1 = self.pair_right[other]
                good = self._occurrences_of(r2, l1) < count and self._occurrences_of(r1, l2) < count
                if not good:
                    break
            if good:
                taken.push_back(pair)
                taken_symbols.push_back(l2)
                taken_symbols.push_back(r2)
            else:
                self._push(pair)

        # 3. new tokens, in batch order, with the statistics seen at selection (the batch's
        #    documents counted first, together: a merge changes no other taken pair's statistics,
        #    and where it does - a reused piece - the pair's count is dropped and counted again)
        self._count_documents(taken)
        for i in range(taken.size()):
            self._merge(taken[i], self._target_of(taken[i]))

        # 4. every pair whose statistics changed goes back to the heap; a pair left with no
        #    occurrence has only stale positions: free them
        for i in range(self.touched.size()):
            if self.occurrences[self.touched[i]] > 0:
                self._push(self.touched[i])
            else:
                self._forget_positions(self.touched[i])
        if <Py_ssize_t>self.heap.size() > self.heap_limit:
            self._compact()
        return <int>taken.size()

    cdef int _compact(self) except -1 nogil:
        """Rebuild the heap with one entry per pair that occurs: stale entries (every round
        pushes the pairs it touched again) would otherwise make it grow with the merges, not
        with the pairs. Candidates are chosen by their keys alone, never by the heap's layout,
        so the fit is unchanged."""
        cdef vector[HeapEntry] fresh
        cdef int32_t pair
        self.heap.swap(fresh)  # frees the old entries' memory when ``fresh`` goes
        fresh.clear()
        fresh.shrink_to_fit()
        for pair in range(<int32_t>self.occurrences.size()):
            if self.occurrences[pair] > 0:
                self._push(pair)
        self.heap_limit = max(2 * <Py_ssize_t>self.heap.size(), 4096)
        return 0

    cdef id_t _target_of(self, int32_t pair) except -1 nogil:
        """The token ``pair`` becomes: a new one, or with unique pieces maybe an old one."""
        cdef id_t token
        if self.unique_pieces:
            token = self._existing_piece(pair)
            if token >= 0:
                return token
        token = self.next_token
        self.next_token += 1
        self.merged_left.push_back(self.pair_left[pair])
        self.merged_right.push_back(self.pair_right[pair])
        self.merged_documents.push_back(self._documents_of(pair))
        self.merged_occurrences.push_back(self.occurrences[pair])
        return token

    cdef int _append_piece(self, vector[id_t]& out, id_t token) except -1 nogil:
        cdef Py_ssize_t k
        if token < self.first_token:
            out.push_back(token)
        else:
            for k in range(self.pieces[token - self.first_token].size()):
                out.push_back(self.pieces[token - self.first_token][k])
        return 0

    cdef id_t _existing_piece(self, int32_t pair) except -2 nogil:
        """The token whose piece is the pair's, or -1 after registering the coming token.

        Pieces are found by a 64-bit hash; equal hashes of different pieces probe on to the
        next hash value, so a collision can never merge two different pieces."""
        cdef vector[id_t] piece
        self._append_piece(piece, self.pair_left[pair])
        self._append_piece(piece, self.pair_right[pair])
        cdef uint64_t key = run_hash(piece.data(), piece.size())
        cdef int64_t* slot
        cdef id_t found
        while True:
            if key == ~(<uint64_t>0):  # the map's empty marker
                key = 0
            slot = self.piece_tokens.slot(key)
            if slot[0] == 0:
                slot[0] = <int64_t>self.next_token + 1
                self.pieces.push_back(piece)
                return -1
            found = <id_t>(slot[0] - 1)
            if found >= self.first_token and self.pieces[found - self.first_token] == piece:
                return found
            key += 1

    cdef int _merge(self, int32_t pair, id_t token) except -1 nogil:
        """Replace every occurrence of ``pair`` by ``token``, left to right."""
        cdef id_t a = self.pair_left[pair], b = self.pair_right[pair]
        cdef vector[int32_t] where
        where.swap(self.positions[pair])
        if a == b:
            # (a, a) occurrences overlap in runs: "a a a" must become "X a", so go left to right
            sort(where.begin(), where.end())
        cdef Py_ssize_t k
        cdef int32_t p, q, before, after
        cdef count_t weight
        for k in range(where.size()):
            p = where[k]
            if self.symbol[p] != a:
                continue
            q = self.next[p]
            if q < 0 or self.symbol[q] != b:
                continue
            before = self.prev[p]
            after = self.next[q]
            weight = self.part_weight[self.part_of[p]]
            if before >= 0:
                self._remove(self._pair_number(self.symbol[before], a), weight)
            self._remove(pair, weight)
            if after >= 0:
                self._remove(self._pair_number(b, self.symbol[after]), weight)
            self.symbol[p] = token
            self.symbol[q] = -1
            self.next[p] = after
            if after >= 0:
                self.prev[after] = p
            if before >= 0:
                self._add(self.symbol[before], token, before)
            if after >= 0:
                self._add(token, self.symbol[after], p)
        # no occurrence of the pair can form again: its positions are no longer needed
        self._forget_positions(pair)
        return 0

    cdef inline void _forget_positions(self, int32_t pair) noexcept nogil:
        cdef vector[int32_t] empty
        self.positions[pair].swap(empty)  # (shrink_to_fit may keep the memory)

    # -- results ------------------------------------------------------------------------------

    def merges(self):
        """``(left, right, documents, occurrences)`` of every token created, in order
        (``array.array``: int32, int32, int64, int64)."""
        cdef Py_ssize_t n
        cdef id_t[::1] left_view, right_view
        cdef int64_t[::1] documents_view, occurrences_view
        cdef Py_ssize_t i
        claim(&self.busy, self)
        try:
            n = self.merged_left.size()
            left = new_array("i", n)
            right = new_array("i", n)
            documents = new_array("q", n)
            occurrences = new_array("q", n)
            left_view = left
            right_view = right
            documents_view = documents
            occurrences_view = occurrences
            for i in range(n):
                left_view[i] = self.merged_left[i]
                right_view[i] = self.merged_right[i]
                documents_view[i] = self.merged_documents[i]
                occurrences_view[i] = self.merged_occurrences[i]
            return left, right, documents, occurrences
        finally:
            self.busy = False

    def current_tokens(self):
        """The distinct parts as they are now: ``(tokens, offsets, multiplicities)`` (tests)."""
        cdef Py_ssize_t i, n
        cdef int32_t p
        claim(&self.busy, self)
        try:
            out, offsets, weights = [], [0], []
            n = self.symbol.size()
            for i in range(n):
                if self.symbol[i] >= 0 and self.prev[i] < 0:
                    p = i
                    while p >= 0:
                        out.append(self.symbol[p])
                        p = self.next[p]
                    offsets.append(len(out))
                    weights.append(self.part_weight[self.part_of[i]])
            return (np.asarray(out, dtype=np.int32), np.asarray(offsets, dtype=np.int64),
                    np.asarray(weights, dtype=np.int64))
        finally:
            self.busy = False

    # -- one partition of a fit on a cluster (ubpe.dask_rounds) -------------------------------
    # A cluster fit keeps one merger per partition on the workers; the client chooses each
    # round's merges from the summed statistics, exactly as _round chooses them, and every
    # partition applies them as _round's step 3 does.

    def pair_counts(self):
        """``(left, right, occurrences)`` of every pair that occurs, by pair number."""
        cdef Py_ssize_t n, pair, i
        cdef id_t[::1] left_view, right_view
        cdef int64_t[::1] occurrences_view
        claim(&self.busy, self)
        try:
            n = 0
            i = 0
            for pair in range(<Py_ssize_t>self.pair_left.size()):
                n += self.occurrences[pair] > 0
            left = np.empty(n, dtype=np.int32)
            right = np.empty(n, dtype=np.int32)
            occurrences = np.empty(n, dtype=np.int64)
            left_view = left
            right_view = right
            occurrences_view = occurrences
            for pair in range(<Py_ssize_t>self.pair_left.size()):
                if self.occurrences[pair] > 0:
                    left_view[i] = self.pair_left[pair]
                    right_view[i] = self.pair_right[pair]
                    occurrences_view[i] = self.occurrences[pair]
                    i += 1
            return left, right, occurrences
        finally:
            self.busy = False

    def documents_of(self, const id_t[::1] left not None, const id_t[::1] right not None):
        """How many documents hold each pair ``(left[i], right[i])`` (0: the pair does not occur)."""
        cdef int64_t[::1] out
        cdef Py_ssize_t i
        cdef int64_t number
        claim(&self.busy, self)
        try:
            if left.shape[0] != right.shape[0]:
                raise ValueError("left and right must have the same length")
            documents = np.zeros(left.shape[0], dtype=np.int64)
            out = documents
            with nogil:
                for i in range(left.shape[0]):
                    number = self.pair_numbers.get(pack_key(left[i], right[i]), 0)
                    if number > 0 and self.occurrences[number - 1] > 0:
                        out[i] = self._documents_of(<int32_t>(number - 1))
            return documents
        finally:
            self.busy = False

    def apply_merges(self, const id_t[::1] left not None, const id_t[::1] right not None):
        """Merge the pairs ``(left[i], right[i])`` in order, each into the next new token, as
        :meth:`step` merges the pairs it takes (a pair that does not occur still gets its token).

        Returns ``(documents, occurrences, changed_left, changed_right, changes)``: the
        statistics of each pair just before its merge, and how the occurrences of every pair
        whose occurrences changed did change."""
        cdef Py_ssize_t n, i
        cdef vector[count_t] before
        cdef Py_ssize_t first
        cdef int32_t pair
        cdef count_t change
        claim(&self.busy, self)
        try:
            if self.unique_pieces:
                raise ValueError("apply_merges does not reuse pieces: build the merger without unique_pieces")
            if left.shape[0] != right.shape[0]:
                raise ValueError("left and right must have the same length")
            n = left.shape[0]
            if <int64_t>self.next_token + n > 2 ** 31 - 1:  # ids are int32, as in step
                raise ValueError(f"{n} merges would create tokens from id {self.next_token} on: "
                                 "ids must stay below 2**31 - 1")
            for i in range(n):
                if not (0 <= left[i] < self.next_token + i and 0 <= right[i] < self.next_token + i):
                    raise ValueError(f"merge {i} names an id that does not exist yet")
            before.assign(self.occurrences.begin(), self.occurrences.end())  # (a copy that raises MemoryError)
            first = self.merged_left.size()
            with nogil:
                self.round_number += 1
                self.touched.clear()
                for i in range(n):
                    pair = self._pair_number(left[i], right[i])
                    self._merge(pair, self._target_of(pair))
            documents = np.empty(n, dtype=np.int64)
            occurrences = np.empty(n, dtype=np.int64)
            for i in range(n):
                documents[i] = self.merged_documents[first + i]
                occurrences[i] = self.merged_occurrences[first + i]
            changed_left, changed_right, changes = [], [], []
            for i in range(self.touched.size()):
                pair = self.touched[i]
                change = self.occurrences[pair] - (before[pair] if pair < <int32_t>before.size() else 0)
                if change != 0:
                    changed_left.append(self.pair_left[pair])
                    changed_right.append(self.pair_right[pair])
                    changes.append(change)
                if self.occurrences[pair] > 0:
                    self._push(pair)  # step() stays valid after merges applied from outside
            return (documents, occurrences, np.asarray(changed_left, dtype=np.int32),
                    np.asarray(changed_right, dtype=np.int32), np.asarray(changes, dtype=np.int64))
        finally:
            self.busy = False
