# The one BPE merge core under every BPE family (_ranked, _merges, _spm; _classic shares its
# rule table, chain and heap): the rule table, the chain/heap merge loop with its hooks, the
# word cache and the per-thread scratch that holds it. `_merge_core.pyx` documents the loop
# with a worked example and holds the scratch classes' bodies.
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libcpp.unordered_map cimport unordered_map
from libcpp.utility cimport pair
from libcpp.vector cimport vector
from cython.operator cimport dereference as deref

from ubpe_native._chain cimport chain_init, chain_merge
from ubpe_native._flat_map cimport FlatMap, pack_key
from ubpe_native._heap cimport heap_pop, heap_push
from ubpe_native._typedefs cimport id_t

cdef enum:
    # A 4-ary heap: half the depth of a binary one, and the four children share a cache line or two.
    MERGE_HEAP_ARITY = 4
    # Ranks share a 64-bit heap key with a node index (and a rule value with a result id): 31 bits.
    MAX_RANK = 0x7FFFFFFF
    # The id a node takes when it is merged into its left neighbour.
    MERGED_AWAY = -1


# -- the rule table: pair -> (rank, result) ---------------------------------------------------
# A FlatMap from ``pack_key(left, right)`` to ``(rank << 32 | result) + 1``: 0 is the map's
# "absent", so a stored rule is never 0. Ranks and results are below 2**31 (checked by the
# families' constructors), so the value packs without loss.

cdef inline int64_t rule_value(int64_t rank, id_t result) noexcept nogil:
    return ((rank << 32) | <int64_t>result) + 1


cdef inline bint rule_add(FlatMap& rules, id_t left, id_t right, int64_t rank,
                          id_t result) except -1 nogil:
    """Add the rule ``left right -> result`` of ``rank`` unless the pair has one: the first
    rule of a pair is kept (llama.cpp and sentencepiece keep the first merge line). True if
    it was added. MemoryError if the table cannot grow."""
    cdef int64_t* slot = rules.slot(pack_key(left, right))
    if slot[0] != 0:
        return False
    slot[0] = rule_value(rank, result)
    return True


cdef int check_rules(const id_t[::1] left, const id_t[::1] right, const id_t[::1] result,
                     const int64_t[::1] rank, id_t parts_limit, id_t result_limit) except -1
# ValueError unless the four rule arrays have one length, every part is an id below
# ``parts_limit``, every result below ``result_limit`` and every rank in 0..MAX_RANK - 1 (the
# one check of every family's rules, at its ``def`` boundary).


cdef inline int rule_put(FlatMap& rules, id_t left, id_t right, int64_t rank,
                         id_t result) except -1 nogil:
    """Set the rule of the pair ``left right``, replacing any it had."""
    rules.slot(pack_key(left, right))[0] = rule_value(rank, result)
    return 0


cdef inline int64_t rule_of(FlatMap& rules, id_t left, id_t right) noexcept nogil:
    """The rule of the pair ``left right`` (0: none); `rule_rank` and `rule_result` read it."""
    return rules.get(pack_key(left, right), 0)


cdef inline int64_t rule_rank(int64_t rule) noexcept nogil:
    return (rule - 1) >> 32


cdef inline id_t rule_result(int64_t rule) noexcept nogil:
    return <id_t>((rule - 1) & 0xFFFFFFFFLL)


# -- BPE-dropout's coins ----------------------------------------------------------------------

cdef inline uint64_t splitmix64(uint64_t* state) noexcept nogil:
    state[0] += 0x9E3779B97F4A7C15ULL
    cdef uint64_t z = state[0]
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline double uniform(uint64_t* state) noexcept nogil:
    """53 random bits as a double in [0, 1)."""
    return <double>(splitmix64(state) >> 11) * (1.0 / 9007199254740992.0)


# -- the merge loop ---------------------------------------------------------------------------

cdef struct MergeEntry:
    uint64_t key  # rank << 32 | left node: lowest rank first, then leftmost (unique per node)
    id_t left_token  # the pair it was pushed for: current while both nodes still hold these
    id_t right_token
    id_t token  # what the pair becomes


cdef struct MergeWord:
    # One word being merged: the chain of nodes and the heap of candidate merges, reused
    # from word to word (the vectors keep their capacity).
    vector[id_t] token_at  # filled by the caller; MERGED_AWAY once merged into the left node
    vector[uint8_t] frozen  # with MergeHooks.frozen: a node that never merges (filled by the caller)
    vector[int32_t] next_node
    vector[int32_t] prev_node
    vector[MergeEntry] heap
    vector[MergeEntry] skipped  # dropout: candidates dropped at this step
    # with MergeHooks.unused: unused piece -> the last pair proposed for it (pack_key), which
    # the caller reads when it writes the piece out; the caller clears it when it sees fit
    unordered_map[id_t, uint64_t] proposed


cdef struct MergeHooks:
    # What a family adds to the plain loop; the zero value adds nothing.
    bint frozen  # honour MergeWord.frozen (sentencepiece's user-defined symbols)
    const uint8_t* unused  # per id, or NULL: record proposals for these pieces (sentencepiece's rev_merge)
    double dropout  # BPE-dropout probability (0: no coin is flipped)
    uint64_t* rng  # splitmix64 state of the dropout coins


cdef int refuse_unused_cycles(id_t n_ids, const uint8_t* unused, const id_t[::1] left,
                              const id_t[::1] right, const id_t[::1] result,
                              const vector[uint8_t]& kept) except -1
# A family that uses the unused hook writes an unused piece out as the pair last proposed for
# it, and an unused part of that likewise: if an unused piece can be reached again from itself
# through the rules (a self-referencing rule ``p x -> p``, or a longer cycle), that never ends.
# This refuses such rules (ValueError naming one), given the rules, ``kept[k]`` (rule k is its
# pair's rule, not a later duplicate) and the ``unused`` flags of ids ``0..n_ids - 1``; results
# must be ids below ``n_ids``. Pieces are strings and a rule's result is longer than both its
# parts, so no real model is refused.


cdef inline bint lower_entry(const MergeEntry& a, const MergeEntry& b) noexcept nogil:
    """The heap's order: lowest rank first, then leftmost (keys are unique per node)."""
    return a.key < b.key


cdef inline int merge_propose(FlatMap& rules, MergeWord& word, const MergeHooks& hooks,
                              int32_t left, int32_t right) except -1 nogil:
    """Push the pair of nodes ``left right`` if it has a rule (and neither node is frozen)."""
    cdef id_t a = word.token_at[left], b = word.token_at[right]
    cdef MergeEntry entry
    if a < 0 or b < 0:  # a unit that is no token never merges
        return 0
    if hooks.frozen and (word.frozen[left] or word.frozen[right]):
        return 0
    cdef int64_t rule = rule_of(rules, a, b)
    if rule == 0:
        return 0
    entry.key = (<uint64_t>rule_rank(rule) << 32) | <uint32_t>left
    entry.left_token = a
    entry.right_token = b
    entry.token = rule_result(rule)
    if hooks.unused != NULL and hooks.unused[entry.token]:
        # the last pair proposed for an unused piece wins (not proposed[...] =: operator[] is
        # not ``except +``)
        found = word.proposed.find(entry.token)
        if found != word.proposed.end():
            deref(found).second = pack_key(a, b)
        else:
            word.proposed.insert(pair[id_t, uint64_t](entry.token, pack_key(a, b)))
    heap_push(word.heap, entry, MERGE_HEAP_ARITY, lower_entry)
    return 0


cdef inline int merge_word(FlatMap& rules, MergeWord& word, Py_ssize_t n,
                           const MergeHooks& hooks) except -1 nogil:
    """Merge the ``n`` nodes of ``word.token_at``: of all adjacent pairs with a rule, the one
    of lowest rank merges first, the leftmost on ties, until no pair has a rule. The result is
    the chain from node 0 (``word.next_node``; nothing when ``n == 0``).

    A merge changes only the two pairs around it, so the loop is O(n log n). Heap entries are
    invalidated lazily: an entry is taken only if both nodes still hold the tokens it was
    pushed with. Such an entry is the current pair's, or one pushed for the very same tokens
    (same rule, same key), so taking it is taking the current one. (Over pieces, as in
    `_ranked`, the pair at a node only grows in span, so its tokens never come back at all.)

    BPE-dropout (Provilkov et al. 2020, as YouTokenToMe implements it): at every step each
    current candidate is dropped with probability ``hooks.dropout`` (coins flipped lazily, best
    candidate first, so the first survivor is the best surviving merge); dropped candidates
    come back after the next merge, and the word is done when a step drops them all.
    ValueError for a word of 2**31 units or more, MemoryError if a vector cannot grow.
    """
    cdef Py_ssize_t i
    cdef int32_t left, right, after
    cdef MergeEntry entry
    chain_init(word.next_node, word.prev_node, n)
    word.heap.clear()
    word.skipped.clear()
    for i in range(n - 1):
        merge_propose(rules, word, hooks, <int32_t>i, <int32_t>(i + 1))
    while word.heap.size():
        entry = heap_pop(word.heap, MERGE_HEAP_ARITY, lower_entry)
        left = <int32_t>(entry.key & 0xFFFFFFFFULL)
        right = word.next_node[left]
        # stale: the left node merged (its token grew or it was merged away) or the right one did
        if word.token_at[left] != entry.left_token or right < 0 or word.token_at[right] != entry.right_token:
            continue
        if hooks.dropout > 0.0 and uniform(hooks.rng) < hooks.dropout:
            word.skipped.push_back(entry)
            continue
        after = chain_merge(word.token_at, word.next_node, word.prev_node, left, right, entry.token,
                            MERGED_AWAY)
        if word.prev_node[left] >= 0:
            merge_propose(rules, word, hooks, word.prev_node[left], left)
        if after >= 0:
            merge_propose(rules, word, hooks, left, after)
        for i in range(<Py_ssize_t>word.skipped.size()):
            heap_push[MergeEntry](word.heap, word.skipped[i], MERGE_HEAP_ARITY, lower_entry)
        word.skipped.clear()
    return 0


# -- the word cache and the per-thread scratch ------------------------------------------------
# One policy for every family that caches words: a cache belongs to a `MergeScratch`, a
# scratch to one call at a time (a `ScratchPool` hands an idle one out under the GIL and takes
# it back), so no lock is ever taken and no cache is read while another thread writes it.

cdef extern from "word_cache.h" namespace "ubpe" nogil:
    cdef cppclass WordCache:  # word bytes -> ids, flat (see word_cache.h)
        bint find(const uint8_t* word, size_t length, vector[id_t]& out) except +
        bint lookup(const uint8_t* word, size_t length, vector[id_t]& out) except +  # const: no miss recorded
        void store(const vector[id_t]& ids, size_t limit) except +
        void clear()
        size_t size()


cdef inline bint cache_find(WordCache& cache, const uint8_t* word, Py_ssize_t length,
                            vector[id_t]& out) except -1 nogil:
    """Append the cached ids of ``word`` to ``out`` and return True; False if it is not cached
    (then `cache_store` stores its ids)."""
    return cache.find(word, <size_t>length, out)


cdef inline int cache_store(WordCache& cache, const vector[id_t]& ids, size_t limit) except -1 nogil:
    """Cache ``ids`` for the word of the last `cache_find` that missed; at ``limit`` words the
    cache starts over (a bound on memory that keeps the common words of a text hot)."""
    cache.store(ids, limit)
    return 0


cdef class MergeScratch:
    # Working memory of one call of a merge kernel, kept from call to call by a ScratchPool.
    cdef MergeWord word
    cdef WordCache cache
    cdef vector[int64_t] node_start  # the unit cutter's output: where each node's bytes start (and the end)
    cdef vector[id_t] word_out  # one word's ids, on their way into the cache
    cdef uint64_t generation  # the pool's generation when this scratch was last cleared


cdef class ScratchPool:
    cdef bint built  # __init__ ran (_checks.build_once)
    cdef list idle  # scratches no call is using (list.pop and append are atomic under the GIL)
    cdef readonly object kind
    cdef uint64_t generation  # clear() moves it on: a scratch of an older one is emptied when taken

    cdef MergeScratch take(self)
    cdef int give(self, MergeScratch scratch) except -1
