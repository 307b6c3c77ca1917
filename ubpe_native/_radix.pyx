# distutils: language = c++
"""A radix tree over sequences of non-negative ids: the universal encoder's lookup.

Each node holds an edge label (a run of ids, stored once in ``label_symbols``) and the token
of the key that ends there, if any. Children are found through one hash map keyed by
``(node, first id of the child's label)``, so a step down costs the same whether a node has
two children or the 4096 of a large alphabet's root. That map is what inserting updates;
the walks read two frozen copies of it, built when the constructor has inserted every piece:
the first nodes (the root, then the base ids' nodes, then the first pieces') keep their
children in a dense row of ``n_base`` entries, as many rows as ``DENSE_ENTRIES`` holds (all
of a DNA tree's), and every node its children sorted by first id, found by binary search in
the node's own short run (a hash probe into a table of every node's children missed the
cache at almost every step). A small alphabet (DNA's four letters) gets more: the tree
unfolded into an automaton of one state per distinct key prefix, whose transitions sit in one
dense table (``AUTOMATON_ENTRIES`` at most) holding the next state *and* the token of the key
ending there, so a walk reads one 8-byte entry per symbol. An ``insert`` after construction
drops the frozen copies; the walks then probe the map as before.

The universal encoder asks, at each position of a part, for every key that is a prefix of the
rest of the part: ``prefix_matches`` walks down once and reports them shortest first.

>>> import numpy as np
>>> tree = RadixTree(3, np.array([0, 2, 5]), np.array([0, 1, 0, 1, 2], np.int32))
>>> tree.get([0, 1]), tree.get([0, 1, 2]), tree.get([1, 2])   # tokens 3 and 4; no key
(3, 4, None)
>>> lengths, tokens = tree.prefix_matches(np.array([2, 0, 1, 2], np.int32), start=1)
>>> lengths.tolist(), tokens.tolist()                           # [0] -> 0, [0 1] -> 3, ...
([1, 2, 3], [0, 3, 4])
"""

from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libcpp.algorithm cimport sort, unique

from array import array

from ubpe_native._numpy import np

from ubpe_native._checks cimport as_array, as_buffer, build_once, check_ids, check_offsets
from ubpe_native._flat_map cimport pack_key
from ubpe_native._typedefs cimport id_t

# value of a node where no key ends
cdef id_t NO_TOKEN = -1
# node 0 is the root; it is nobody's child, so a child lookup returning 0 means "none"
cdef int64_t ROOT = 0
# ids are non-negative int32: any id below this passes the range check
cdef int64_t INT32_LIMIT = 2 ** 31
# entries of the dense child rows (int32 each, 4 MiB): every node of a 16k-piece DNA tree, the
# root and the first ~500 base ids of a 2048-symbol alphabet
cdef Py_ssize_t DENSE_ENTRIES = 1 << 20
# entries of the automaton's table at most (8 bytes each, 16 MiB): a 16k-piece DNA tree takes ~0.5 M
cdef Py_ssize_t AUTOMATON_ENTRIES = 1 << 21



cdef class RadixTree:
    """Keys (non-empty runs of ids) mapped to tokens.

    ``RadixTree(n_base, piece_offsets=None, piece_symbols=None, tokens=None)`` maps every
    base id ``b < n_base`` to itself (so every position of a part has a match) and the
    ``k``-th piece ``piece_symbols[piece_offsets[k]:piece_offsets[k + 1]]`` to ``tokens[k]``
    (default ``n_base + k``: a :class:`~ubpe.vocabulary.Vocabulary`'s CSR arrays).
    ``_dense_entries`` and ``_automaton_entries`` (for tests) set the dense rows' and the
    automaton's budgets (0: none; with neither, every step searches the sorted runs).
    ``max_length`` is the longest key (no position has more matches than that) and
    ``max_token`` the largest token (-1 while the tree is empty).
    Inserting a key again replaces its token: when two tokens share a piece, ubpe 0.3.0
    keeps the one that comes last in id order, and so does inserting in id order.
    """

    def __init__(self, id_t n_base, piece_offsets=None, piece_symbols=None, tokens=None, *,
                 Py_ssize_t _dense_entries=DENSE_ENTRIES, Py_ssize_t _automaton_entries=AUTOMATON_ENTRIES):
        build_once(&self.built, self)
        if n_base < 0:
            raise ValueError(f"n_base must be non-negative, got {n_base}")
        self.n_base = n_base
        self.automaton_entries = _automaton_entries
        self.n_keys = 0
        self.max_length = 0
        self.max_token = NO_TOKEN
        cdef TreeNode root
        root.label_start, root.label_length, root.value = 0, 0, NO_TOKEN
        root.first_child, root.n_children = 0, 0
        self.nodes.push_back(root)
        cdef Py_ssize_t n_given = 0 if piece_offsets is None else max(len(piece_offsets) - 1, 0)
        # rows for the nodes there can be (root, base ids, at most two per piece), within budget
        self.dense_nodes = min(1 + n_base + 2 * n_given, max(0, _dense_entries) // max(1, n_base))
        self.dense.resize(self.dense_nodes * n_base, 0)
        cdef id_t b
        with nogil:
            for b in range(n_base):
                self._insert(&b, 1, b)
        if piece_offsets is None and piece_symbols is None:
            self._freeze()
            return
        if piece_offsets is None or piece_symbols is None:
            raise ValueError("piece_offsets and piece_symbols go together")
        cdef const int64_t[::1] offsets = as_buffer(piece_offsets, "q", "int64", "piece_offsets")
        cdef const id_t[::1] symbols = as_buffer(piece_symbols, "i", "int32", "piece_symbols")
        cdef Py_ssize_t n_pieces = offsets.shape[0] - 1
        if tokens is None:
            tokens = array("i", range(n_base, n_base + max(n_pieces, 0)))
        cdef const id_t[::1] token_view = as_buffer(tokens, "i", "int32", "tokens")
        _check_pieces(offsets, symbols, token_view)
        cdef Py_ssize_t k
        with nogil:
            for k in range(n_pieces):
                self._insert(&symbols[offsets[k]], offsets[k + 1] - offsets[k], token_view[k])
        self._freeze()

    cdef int _freeze(self) except -1:
        """Every node's children as a run of ``sorted_children``, by first id (from the map,
        which holds the current child of every ``(node, first id)`` ever linked)."""
        cdef Py_ssize_t k, n = self.nodes.size()
        cdef int64_t node
        cdef ChildLink link
        sort(self.links.begin(), self.links.end())
        self.links.erase(unique(self.links.begin(), self.links.end()), self.links.end())
        self.sorted_children.clear()
        self.sorted_children.reserve(self.links.size())
        for k in range(n):
            self.nodes[k].n_children = 0
        for k in range(<Py_ssize_t>self.links.size()):
            node = <int64_t>(self.links[k] >> 32)
            link.symbol = <id_t>(<uint32_t>(self.links[k] & 0xFFFFFFFFULL))
            link.node = <int32_t>self.children.get(self.links[k], 0)
            if self.nodes[node].n_children == 0:
                self.nodes[node].first_child = <int32_t>k
            self.nodes[node].n_children += 1
            self.sorted_children.push_back(link)
        self.frozen = True
        self._unfold()
        return 0

    cdef int _unfold(self) except -1:
        """The automaton (see the module docstring), if its table fits ``AUTOMATON_ENTRIES``
        and every label holds base ids only; else none (``automaton_states = 0``)."""
        cdef Py_ssize_t k, i, n_states = 1
        cdef int64_t node, state, new_state, child, last = 0
        cdef TreeNode record
        cdef id_t symbol
        cdef Transition empty
        # (node, its state) pairs, breadth first: the states of short prefixes, which every walk
        # reads, get the first numbers, so their rows share a few cache lines
        cdef vector[int64_t] queue
        cdef Py_ssize_t head = 0
        self.automaton_states = 0
        self.automaton.clear()
        for k in range(1, <Py_ssize_t>self.nodes.size()):
            n_states += self.nodes[k].label_length
        for k in range(<Py_ssize_t>self.label_symbols.size()):
            if <uint32_t>self.label_symbols[k] >= <uint32_t>self.n_base:
                return 0
        if n_states * max(1, <Py_ssize_t>self.n_base) > self.automaton_entries:
            return 0
        empty.next_state, empty.token = 0, NO_TOKEN
        self.automaton.resize(n_states * self.n_base, empty)
        n_states = 1
        queue.push_back(ROOT)
        queue.push_back(0)
        while head < <Py_ssize_t>queue.size():
            node = queue[head]
            state = queue[head + 1]
            head += 2
            record = self.nodes[node]
            for k in range(record.first_child, record.first_child + record.n_children):
                child = self.sorted_children[k].node
                new_state = state
                for i in range(self.nodes[child].label_length):
                    symbol = self.label_symbols[self.nodes[child].label_start + i]
                    last = new_state * self.n_base + symbol
                    self.automaton[last].next_state = <int32_t>n_states
                    new_state = n_states
                    n_states += 1
                self.automaton[last].token = self.nodes[child].value  # the key ending at the child
                queue.push_back(child)
                queue.push_back(new_state)
        self.automaton_states = n_states
        return 0

    # -- Python access ----------------------------------------------------------------------

    def insert(self, key, id_t token):
        """Map ``key`` (a non-empty sequence of ids >= 0) to ``token`` (>= 0)."""
        cdef const id_t[::1] view = _key_array(key)
        if token < 0:
            raise ValueError(f"tokens must be non-negative, got {token}")
        self.frozen = False  # the frozen copies miss this key (or its new token): the map alone now
        with nogil:
            self._insert(&view[0], view.shape[0], token)

    def get(self, key, default=None):
        """The token of ``key``, or ``default`` if ``key`` is not in the tree."""
        cdef const id_t[::1] view = _key_array(key)
        cdef id_t token
        with nogil:
            token = self._get(&view[0], view.shape[0])
        return default if token == NO_TOKEN else token

    def __contains__(self, key):
        return self.get(key) is not None

    def __len__(self):
        return self.n_keys

    def prefix_matches(self, sequence, Py_ssize_t start=0):
        """Every key that ``sequence[start:]`` starts with: ``(lengths, tokens)``, shortest
        first, as int32 arrays."""
        cdef const id_t[::1] view = as_array(sequence, np.int32, "sequence")
        cdef Py_ssize_t n = view.shape[0]
        if not 0 <= start <= n:
            raise IndexError(f"start {start} is outside a sequence of length {n}")
        lengths = np.empty(self.max_length, dtype=np.int32)
        tokens = np.empty(self.max_length, dtype=np.int32)
        cdef int32_t[::1] length_view = lengths
        cdef id_t[::1] token_view = tokens
        cdef Py_ssize_t count = 0
        if start < n and self.max_length > 0:
            with nogil:
                count = self._prefix_matches(&view[start], n - start, &length_view[0], &token_view[0])
        return lengths[:count].copy(), tokens[:count].copy()

    # -- kernels ------------------------------------------------------------------------------

    # Inserting may run out of memory: the growing methods are ``except -1`` (MemoryError),
    # and every allocation comes before the change that links its result into the tree, so
    # a failed insert leaves the tree as it was, give or take unreachable nodes.

    cdef int _insert(self, const id_t* key, Py_ssize_t length, id_t token) except -1 nogil:
        cdef int64_t node = ROOT, child, middle, start
        cdef Py_ssize_t position = 0, i, label_length
        cdef int64_t* slot
        while position < length:
            slot = self.children.slot(pack_key(node, key[position]))
            if slot[0] == 0:  # slots start at 0 and the root is nobody's child: 0 means none
                slot[0] = self._new_node(key + position, length - position, token)
                self._linked(node, key[position], slot[0])
                self._count_key(length)
                if token > self.max_token:
                    self.max_token = token
                return 0
            child = slot[0]
            start = self.nodes[child].label_start
            label_length = self.nodes[child].label_length
            i = 1  # the first id matched through the hash map
            while (i < label_length and position + i < length
                   and self.label_symbols[start + i] == key[position + i]):
                i += 1
            if i < label_length:
                # The key leaves (or ends inside) the child's label: split the label at i.
                # Allocations first (the new node, its one child entry), then relink.
                middle = self._new_label_node(start, i)
                slot = self.children.slot(pack_key(middle, self.label_symbols[start + i]))
                slot[0] = child
                self._linked(middle, self.label_symbols[start + i], child)
                self.nodes[child].label_start = start + i
                self.nodes[child].label_length = <int32_t>(label_length - i)
                slot = self.children.slot(pack_key(node, key[position]))  # present: no growth
                slot[0] = middle
                self._linked(node, key[position], middle)
                child = middle
            node = child
            position += i
        if self.nodes[node].value == NO_TOKEN:
            self._count_key(length)
        self.nodes[node].value = token
        if token > self.max_token:
            self.max_token = token
        return 0

    cdef int _linked(self, int64_t node, id_t symbol, int64_t child) except -1 nogil:
        """The map now has ``(node, symbol) -> child``: the same in ``node``'s dense row, if it
        has one; the sorted runs are stale until the next ``_freeze``."""
        if node < self.dense_nodes and <uint32_t>symbol < <uint32_t>self.n_base:
            self.dense[node * self.n_base + symbol] = <int32_t>child
        self.frozen = False
        self.links.push_back(pack_key(node, symbol))  # (may raise MemoryError: all else is done)
        return 0

    cdef void _count_key(self, Py_ssize_t length) noexcept nogil:
        self.n_keys += 1
        if length > self.max_length:
            self.max_length = length

    cdef int64_t _new_node(self, const id_t* label, Py_ssize_t length, id_t token) except -1 nogil:
        cdef int64_t start = self.label_symbols.size()
        # the label first: if it cannot be stored no node is made (a partly stored label is
        # unreferenced and overwritten by nothing: labels only ever get appended)
        self.label_symbols.insert(self.label_symbols.end(), label, label + length)
        cdef int64_t node = self._new_label_node(start, length)
        self.nodes[node].value = token
        return node

    cdef int64_t _new_label_node(self, int64_t start, Py_ssize_t length) except -1 nogil:
        """A new node (one record: it is added whole or not at all)."""
        cdef TreeNode record
        record.label_start, record.label_length, record.value = start, <int32_t>length, NO_TOKEN
        record.first_child, record.n_children = 0, 0
        self.nodes.push_back(record)
        return <int64_t>self.nodes.size() - 1

    cdef id_t _get(self, const id_t* key, Py_ssize_t length) noexcept nogil:
        cdef int64_t node = ROOT, child, start
        cdef Py_ssize_t position = 0, i, label_length
        while position < length:
            child = self.children.get(pack_key(node, key[position]), 0)
            if child == 0:
                return NO_TOKEN
            start = self.nodes[child].label_start
            label_length = self.nodes[child].label_length
            if position + label_length > length:
                return NO_TOKEN
            for i in range(1, label_length):
                if self.label_symbols[start + i] != key[position + i]:
                    return NO_TOKEN
            position += label_length
            node = child
        return self.nodes[node].value

    cdef Py_ssize_t _prefix_matches(self, const id_t* sequence, Py_ssize_t length,
                                   int32_t* match_lengths, id_t* match_tokens) noexcept nogil:
        """Keys that ``sequence[:length]`` starts with, shortest first, written to the two
        buffers (room for ``max_length`` entries is enough); returns how many."""
        cdef int64_t node = ROOT, child, start
        cdef Py_ssize_t position = 0, i, label_length, count = 0
        cdef id_t symbol, n_base = self.n_base
        cdef Py_ssize_t dense_nodes = self.dense_nodes
        cdef const int32_t* dense = self.dense.data()
        cdef const ChildLink* sorted_children = self.sorted_children.data()
        cdef bint frozen = self.frozen
        cdef const Transition* automaton = self.automaton.data()
        cdef Transition step
        if frozen and self.automaton_states:
            node = 0  # a state of the automaton, from here on
            for position in range(length):
                symbol = sequence[position]
                if <uint32_t>symbol >= <uint32_t>n_base:  # in no key
                    break
                step = automaton[node * n_base + symbol]
                if step.next_state == 0:
                    break
                node = step.next_state
                if step.token != NO_TOKEN:
                    match_lengths[count] = <int32_t>(position + 1)
                    match_tokens[count] = step.token
                    count += 1
            return count
        while position < length:
            symbol = sequence[position]
            # the dense row if the node has one (and the id is a base id), else the hash map
            if node < dense_nodes and <uint32_t>symbol < <uint32_t>n_base:
                child = dense[node * n_base + symbol]
            elif frozen:
                child = _find_child(sorted_children + self.nodes[node].first_child,
                                    self.nodes[node].n_children, symbol)
            else:
                child = self.children.get(pack_key(node, symbol), 0)
            if child == 0:
                break
            start = self.nodes[child].label_start
            label_length = self.nodes[child].label_length
            if position + label_length > length:
                break
            for i in range(1, label_length):
                if self.label_symbols[start + i] != sequence[position + i]:
                    return count
            position += label_length
            node = child
            if self.nodes[node].value != NO_TOKEN:
                match_lengths[count] = <int32_t>position
                match_tokens[count] = self.nodes[node].value
                count += 1
        return count


cdef inline int64_t _find_child(const ChildLink* run, int32_t n, id_t symbol) noexcept nogil:
    """The node of the link to ``symbol`` in a run sorted by symbol; 0 (the root) if none."""
    cdef int32_t low = 0, high = n, middle
    while low < high:
        middle = (low + high) >> 1
        if run[middle].symbol < symbol:
            low = middle + 1
        else:
            high = middle
    if low < n and run[low].symbol == symbol:
        return run[low].node
    return 0


cdef const id_t[::1] _key_array(key):
    array = as_array(key, np.int32, "key")
    if array.ndim != 1 or array.shape[0] == 0:
        raise ValueError("a key is a non-empty 1-d sequence of ids")
    if array.min() < 0:
        raise ValueError("ids in a key must be non-negative")
    return array


cdef _check_pieces(const int64_t[::1] offsets, const id_t[::1] symbols, const id_t[::1] tokens):
    check_offsets(offsets, symbols.shape[0], "piece_offsets", 1)
    if tokens.shape[0] != offsets.shape[0] - 1:
        raise ValueError(f"{offsets.shape[0] - 1} pieces but {tokens.shape[0]} tokens")
    check_ids(symbols, INT32_LIMIT, "pieces")
    check_ids(tokens, INT32_LIMIT, "tokens")
