# distutils: language = c++
"""The classic encoder: ubpe 0.3.0's batched pair merging, without rescanning the pair list.

The reference, on each step, scans the pairs in priority order (token id order): it takes the
first pair present in the word, keeps scanning, takes every later pair that is present, and
stops at the first pair - present or not - sharing a token with a pair already taken. All
taken pairs are then replaced at once (left to right, non-overlapping), and it starts over.

Where that scan stops depends on the pair list more than on the word: pair ``k``, once
taken, stops the scan at ``stop[k]``, the first later pair sharing one of its two tokens
(precomputed). So the scan that starts at the first present pair ``i`` takes the present
pairs ``j > i`` in order for as long as ``j < min(stop[taken])``; the present pairs come out
of a heap keyed by priority. The word is a linked list; each pair keeps the positions where
it was formed, validated when used, so a step costs time in the merges it makes.

This is not `_merge_core`'s loop, and cannot be expressed by it: the core merges one pair at
a time, and a pair a merge forms goes first if its rank is lower; here a step takes a *set*
of pairs at once and replaces only the occurrences present when it starts. ``0 1 2 3`` with
the pairs ``(0 1) -> 4``, ``(4 2) -> 5``, ``(2 3) -> 6`` in that order: a classic step takes
``(0 1)`` and ``(2 3)`` together, ``4 6``; the core merges ``(0 1)``, then the pair that formed,
``(4 2)``, before ``(2 3)``: ``5 3``. What classic shares with the core is below the loop: the
rule table (`_merge_core`: pair -> (priority, token)), the chain of nodes and its merge
(``_chain.pxd``, with the length guard of its int32 node indices) and the heap (``heap.h``).

Scores are ``sum((1 + ln(count)) * weight)`` over the final word's distinct tokens, with
CPython 3.12's compensated ``sum``, as ``_score`` computes every encoder's score: in the order
of first occurrence from the right. (The reference's classic encoder sums its
``Counter(word)``, first occurrence from the left; the compensated sum makes the order matter
only in the last bit, rarely: no document of the golden fixtures differs.)

>>> import numpy as np
>>> table = PairTable(np.array([0, 2], np.int32), np.array([1, 0], np.int32), np.array([2, 3], np.int32))
>>> out, out_offsets, scores = encode_words(table, np.array([0.0, 0.0, 0.5, 1.0]),
...                                         np.array([0, 1, 0, 0, 1], np.int32), np.array([0, 5]))
>>> out.tolist(), scores.tolist()      # (0 1) -> 2 twice, then (2 0) -> 3
([3, 2], [1.5])
"""

from libc.stdint cimport int32_t, int64_t, uint8_t
from libcpp.algorithm cimport sort, unique
from libcpp.vector cimport vector

from array import array

from ubpe_native._numpy import np

from ubpe_native._chain cimport chain_init, chain_merge
from ubpe_native._combine cimport id_table, top1_lists
from ubpe_native._checks cimport as_array, as_buffer, build_once, check_ids, check_offsets, check_per_token
from ubpe_native._flat_map cimport FlatMap
from ubpe_native._heap cimport heap_pop, heap_push
from ubpe_native._merge_core cimport MAX_RANK, rule_of, rule_put, rule_rank
from ubpe_native._score cimport part_score
from ubpe_native._textsplit cimport TextSplitter
from ubpe_native._typedefs cimport id_t

# a removed node of the word, or "no pair"
cdef id_t NONE = -1
# the present pairs' heap is binary
cdef enum:
    HEAP_ARITY = 2


cdef inline bint earlier(const int32_t& a, const int32_t& b) noexcept nogil:
    """The heap's order: the pair of highest priority (lowest index) first."""
    return a < b


# the spare work space a table keeps is one of a call over at most this many symbols: a longer
# call's vectors (sized by its words and its output) are freed with it
cdef Py_ssize_t KEEP_LIMIT = 1 << 16


cdef class _Word


cdef class PairTable:
    """The merge rules in priority order: pair ``(left[k], right[k])`` becomes ``tokens[k]``.

    A pair listed twice keeps its first place and the later token (the reference builds its
    list from a dict, where a repeated key keeps its place and takes the new value).
    """

    cdef vector[id_t] left
    cdef vector[id_t] right
    cdef vector[id_t] token
    cdef vector[int32_t] stop      # the first later pair sharing a token with pair k
    cdef FlatMap priority          # the rule table (`_merge_core`): (left, right) -> (k, token)
    cdef readonly id_t max_token
    # the work space of the last call that ended, clean, for the next (`_new_word`, `_keep_word`):
    # sized by the table, it was allocated and zeroed per call, ~2/3 of a short text's encode
    cdef _Word spare

    cdef bint built  # __init__ ran (build_once)

    def __init__(self, left, right, tokens):
        build_once(&self.built, self)
        cdef const id_t[::1] left_view = as_buffer(left, "i", "int32", "left")
        cdef const id_t[::1] right_view = as_buffer(right, "i", "int32", "right")
        cdef const id_t[::1] token_view = as_buffer(tokens, "i", "int32", "tokens")
        cdef Py_ssize_t n = left_view.shape[0], k
        if right_view.shape[0] != n or token_view.shape[0] != n:
            raise ValueError("left, right and tokens must have the same length")
        cdef id_t smallest = 0, largest = -1  # (in C: numpy's min and max cost its import)
        for k in range(n):
            smallest = min(smallest, left_view[k], right_view[k], token_view[k])
            largest = max(largest, left_view[k], right_view[k], token_view[k])
        if smallest < 0:
            raise ValueError("classic encoding needs both components of every token "
                             "(this vocabulary only knows some tokens' pieces)")
        if n >= MAX_RANK:
            raise ValueError("too many pairs: priorities are 31-bit")
        self.max_token = largest
        cdef int64_t rule, place
        cdef vector[int32_t] next_with
        with nogil:
            for k in range(n):
                rule = rule_of(self.priority, left_view[k], right_view[k])
                if rule == 0:
                    place = self.left.size()
                    self.left.push_back(left_view[k])
                    self.right.push_back(right_view[k])
                    self.token.push_back(token_view[k])
                else:
                    place = rule_rank(rule)
                    self.token[place] = token_view[k]
                rule_put(self.priority, left_view[k], right_view[k], place, token_view[k])
            # from the end, next_with[x] is the first pair after k holding token x
            # resize, not assign(n, value): only resize is declared ``except +`` (MemoryError)
            next_with.resize(self.max_token + 1, <int32_t>self.left.size())
            self.stop.resize(self.left.size())
            for k in range(<Py_ssize_t>self.left.size() - 1, -1, -1):
                self.stop[k] = min(next_with[self.left[k]], next_with[self.right[k]])
                next_with[self.left[k]] = <int32_t>k
                next_with[self.right[k]] = <int32_t>k

    def __len__(self):
        return self.left.size()

    def stops(self):
        """``stop[k]`` for every pair (for tests)."""
        return np.asarray([self.stop[k] for k in range(self.stop.size())], dtype=np.int32)

    cdef inline int32_t priority_of(self, id_t left, id_t right) noexcept nogil:
        cdef int64_t rule = rule_of(self.priority, left, right)
        return <int32_t>rule_rank(rule) if rule else -1


cdef class _Word:
    """One word being merged, plus the per-pair state of the step loop (one per call)."""

    cdef vector[id_t] symbol      # NONE once merged into its left neighbour
    cdef vector[int32_t] prev
    cdef vector[int32_t] next
    # present pairs: occurrences per priority, and a min-heap of priorities
    cdef vector[int32_t] occurrences
    cdef vector[bint] in_heap
    cdef vector[int32_t] heap
    cdef vector[int32_t] touched
    # where each pair was formed: a singly linked list of entries per priority
    cdef vector[int32_t] head
    cdef vector[int32_t] entry_position
    cdef vector[int32_t] entry_next
    cdef vector[int32_t] taken
    cdef vector[int32_t] where
    cdef vector[int64_t] where_offsets
    # the score's scratch space
    cdef vector[int32_t] counts
    cdef vector[id_t] key_order
    # outputs
    cdef vector[id_t] out_tokens
    cdef vector[int64_t] out_offsets
    cdef vector[double] out_scores

    # The methods that grow a vector are ``except -1``: running out of memory raises
    # MemoryError from ``encode_words`` (never "Exception ignored" and a wrong result).

    cdef int formed(self, PairTable table, int32_t position) except -1 nogil:
        """The pair starting at ``position`` has just appeared."""
        cdef int32_t following = self.next[position]
        if following < 0:
            return 0
        cdef int32_t k = table.priority_of(self.symbol[position], self.symbol[following])
        if k < 0:
            return 0
        if self.head[k] == -2:  # first time this word sees the pair
            self.head[k] = -1
            self.touched.push_back(k)
        self.entry_position.push_back(position)
        self.entry_next.push_back(self.head[k])
        self.head[k] = <int32_t>self.entry_position.size() - 1
        self.occurrences[k] += 1
        if not self.in_heap[k]:
            self.in_heap[k] = True
            heap_push(self.heap, k, HEAP_ARITY, earlier)
        return 0

    cdef void broken(self, PairTable table, int32_t position) noexcept nogil:
        """The pair starting at ``position`` is about to disappear."""
        cdef int32_t following = self.next[position]
        if following < 0:
            return
        cdef int32_t k = table.priority_of(self.symbol[position], self.symbol[following])
        if k >= 0:
            self.occurrences[k] -= 1

    cdef int32_t pop_first_present(self) noexcept nogil:
        """The present pair of highest priority, or -1 (absent pairs are dropped lazily)."""
        cdef int32_t k
        while not self.heap.empty():
            k = self.heap[0]
            if self.occurrences[k] > 0:
                return k
            heap_pop(self.heap, HEAP_ARITY, earlier)
            self.in_heap[k] = False
        return -1

    cdef int encode(self, PairTable table, const double* weights, const id_t* word,
                    Py_ssize_t n) except -1 nogil:
        cdef Py_ssize_t i, t, e
        cdef int32_t k, stop, position, following, before, after, entry
        cdef id_t a, b
        self.symbol.assign(word, word + n)
        chain_init(self.next, self.prev, n)  # ValueError for 2**31 units or more
        self.entry_position.clear()
        self.entry_next.clear()
        self.touched.clear()
        for i in range(n - 1):
            self.formed(table, <int32_t>i)

        while True:
            # 1. the pairs of this step
            k = self.pop_first_present()
            if k < 0:
                break
            self.taken.clear()
            stop = table.stop[k]
            while k >= 0 and k < stop:
                heap_pop(self.heap, HEAP_ARITY, earlier)
                self.in_heap[k] = False
                self.taken.push_back(k)
                stop = min(stop, table.stop[k])
                k = self.pop_first_present()
            # 2. where they occur now: merges below form new occurrences (even of a taken
            #    pair), which the reference only merges on a later step
            self.where.clear()
            self.where_offsets.clear()
            self.where_offsets.push_back(0)
            for t in range(self.taken.size()):
                k = self.taken[t]
                a = table.left[k]
                b = table.right[k]
                entry = self.head[k]
                while entry >= 0:
                    position = self.entry_position[entry]
                    following = self.next[position]
                    if self.symbol[position] == a and following >= 0 and self.symbol[following] == b:
                        self.where.push_back(position)
                    entry = self.entry_next[entry]
                self.head[k] = -1
                # left to right, once each: in a run "a a a" only the first (a, a) merges
                sort(self.where.begin() + self.where_offsets[t], self.where.end())
                self.where.erase(unique(self.where.begin() + self.where_offsets[t], self.where.end()),
                                 self.where.end())
                self.where_offsets.push_back(self.where.size())
            # 3. merge
            for t in range(self.taken.size()):
                k = self.taken[t]
                a = table.left[k]
                b = table.right[k]
                for e in range(self.where_offsets[t], self.where_offsets[t + 1]):
                    position = self.where[e]
                    following = self.next[position]
                    if self.symbol[position] != a or following < 0 or self.symbol[following] != b:
                        continue  # the previous merge of a run took it
                    before = self.prev[position]
                    after = self.next[following]
                    if before >= 0:
                        self.broken(table, before)
                    self.broken(table, position)
                    self.broken(table, following)
                    chain_merge(self.symbol, self.next, self.prev, position, following, table.token[k], NONE)
                    if before >= 0:
                        self.formed(table, before)
                    self.formed(table, position)
            for t in range(self.taken.size()):
                k = self.taken[t]
                if self.occurrences[k] > 0 and not self.in_heap[k]:
                    self.in_heap[k] = True
                    heap_push(self.heap, k, HEAP_ARITY, earlier)

        self.write_result(weights)
        # leave the per-pair state clean for the next word
        for t in range(self.touched.size()):
            k = self.touched[t]
            self.head[k] = -2
            self.occurrences[k] = 0
            self.in_heap[k] = False
        self.heap.clear()
        return 0

    cdef int write_result(self, const double* weights) except -1 nogil:
        """Append the word and its score (``_score``'s per-part sum: the reference sums over
        ``Counter(word)``, first occurrence from the *left*; see ``encode_words``)."""
        cdef int32_t position = 0 if self.symbol.size() else -1
        cdef Py_ssize_t first = self.out_tokens.size()
        while position >= 0:
            self.out_tokens.push_back(self.symbol[position])
            position = self.next[position]
        self.out_scores.push_back(part_score(self.out_tokens.data() + first,
                                             self.out_tokens.size() - first, weights,
                                             self.counts.data(), self.key_order))
        self.out_offsets.push_back(self.out_tokens.size())
        return 0


def encode_words(PairTable table not None, weights, tokens, offsets):
    """Encode every word ``tokens[offsets[k]:offsets[k + 1]]`` with the classic rules.

    ``weights[t]`` is token ``t``'s weight (0 for base ids) for every id in the words and the
    table. Returns ``(tokens, offsets, scores)``: word ``k`` becomes
    ``tokens[offsets[k]:offsets[k + 1]]`` with score ``scores[k]``.
    """
    cdef const double[::1] weight_view = as_buffer(weights, "d", "float64", "weights")
    cdef const id_t[::1] token_view = as_buffer(tokens, "i", "int32", "tokens")
    cdef const int64_t[::1] offset_view = as_array(offsets, np.int64, "offsets")
    check_offsets(offset_view, token_view.shape[0], "offsets")
    cdef Py_ssize_t n_words = offset_view.shape[0] - 1, k
    check_per_token(table.max_token, weight_view.shape[0], "weights")
    check_ids(token_view, weight_view.shape[0], "words")

    # empty inputs have no element 0 to point at: nothing is read through these then
    cdef const double* weight_data = &weight_view[0] if weight_view.shape[0] else NULL
    cdef const id_t* token_data = &token_view[0] if token_view.shape[0] else NULL
    cdef _Word work = _new_word(table, weight_view.shape[0], &offset_view[0], n_words)
    with nogil:
        for k in range(n_words):
            work.encode(table, weight_data, token_data + offset_view[k],
                        offset_view[k + 1] - offset_view[k])
    found = (
        np.asarray(<id_t[:work.out_tokens.size()]>work.out_tokens.data()).copy()
        if work.out_tokens.size() else np.zeros(0, dtype=np.int32),
        np.asarray(<int64_t[:work.out_offsets.size()]>work.out_offsets.data()).copy(),
        np.asarray(<double[:work.out_scores.size()]>work.out_scores.data()).copy()
        if work.out_scores.size() else np.zeros(0, dtype=np.float64),
    )
    _keep_word(table, work, token_view.shape[0])
    return found


cdef _Word _new_word(PairTable table, Py_ssize_t n_weights, const int64_t* offsets, Py_ssize_t n_words):
    """The work space of one call over ``n_words`` words (word ``k``: ``offsets[k]:offsets[k + 1]``):
    the table's spare one if it has one of ``n_weights`` counts (taken, with the GIL held: a
    thread calling at the same time makes its own), else a new one."""
    cdef _Word work = table.spare
    cdef Py_ssize_t n_pairs = len(table), longest = 0, k
    for k in range(n_words):
        longest = max(longest, offsets[k + 1] - offsets[k])
    if work is not None and <Py_ssize_t>work.counts.size() == n_weights:
        table.spare = None
        work.out_tokens.clear()
        work.out_offsets.clear()
        work.out_scores.clear()
    else:
        work = _Word()
        # (resize, not assign(n, value): only resize raises MemoryError instead of aborting)
        work.occurrences.resize(n_pairs, 0)
        work.in_heap.resize(n_pairs, False)
        work.head.resize(n_pairs, -2)
        work.counts.resize(n_weights, 0)
    work.key_order.reserve(longest)  # part_score must not allocate
    work.out_offsets.push_back(0)
    return work


cdef inline int _keep_word(PairTable table, _Word work, Py_ssize_t n_symbols) except -1:
    """Give ``work`` back to ``table`` after a call over ``n_symbols`` symbols that ran to its
    end (each word leaves the per-pair state - ``head``, ``occurrences``, ``in_heap``, the heap -
    and the score's ``counts`` as it found them), unless the call was longer than
    ``KEEP_LIMIT``. A call that raised does not give its work space back."""
    if n_symbols <= KEEP_LIMIT:
        table.spare = work
    return 0


def encode_texts(PairTable table not None, weights, TextSplitter splitter not None, docs):
    """Every str document of ``docs`` (a list or tuple) split by ``splitter`` and encoded
    with the classic rules, in one call: ``[[(tokens, score)]]`` per document, its parts'
    tokens back to back and their scores added left to right - what ``encode_words`` and
    ``_combine.top1_documents`` give for the split (``UBPEClassic.encode`` of text). None if a
    document is no str, has a symbol outside the splitter's alphabet or a lone surrogate
    (the caller's general path raises the error)."""
    cdef const double[::1] weight_view = as_buffer(weights, "d", "float64", "weights")
    check_per_token(table.max_token, weight_view.shape[0], "weights")
    if splitter.max_id >= weight_view.shape[0]:
        raise ValueError(f"the splitter gives ids up to {splitter.max_id}, weights has {weight_view.shape[0]}")
    if not isinstance(docs, (list, tuple)):
        raise TypeError("docs must be a list or tuple of str")
    cdef tuple held = docs if type(docs) is tuple else tuple(docs)
    cdef vector[id_t] symbols
    cdef vector[int64_t] part_offsets, doc_part_offsets, bounds
    cdef vector[uint8_t] separator, utf8
    if not splitter.split_into(held, symbols, part_offsets, separator, doc_part_offsets, utf8, bounds):
        return None
    cdef Py_ssize_t n_words = part_offsets.size() - 1, k
    cdef const double* weight_data = &weight_view[0] if weight_view.shape[0] else NULL
    cdef _Word work = _new_word(table, weight_view.shape[0], part_offsets.data(), n_words)
    with nogil:
        for k in range(n_words):
            work.encode(table, weight_data, symbols.data() + part_offsets[k], part_offsets[k + 1] - part_offsets[k])
    found = top1_lists(id_table(weight_view.shape[0]), work.out_tokens.data(), work.out_offsets.data(),
                       work.out_scores.data(), NULL, NULL, doc_part_offsets.data(), doc_part_offsets.size() - 1)
    _keep_word(table, work, symbols.size())
    return found
