# distutils: language = c++
"""WordPiece (BERT) over UTF-8 text without the GIL: the pre-tokenizer and the greedy
longest-match-first, for many documents in one call.

A document is cut into words code point by code point, by a table of one class per code
point (:func:`ubpe.text.pretokenizers.bert_classes` and ``wpm_classes`` build it):

* ``WORD``: part of the current word;
* ``SPACE``: ends the current word, is dropped (whitespace);
* ``ALONE``: a word of its own (punctuation; CJK ideographs where the normalizer pads them);
* ``DROPPED``: dropped, the word goes on (the nonspacing marks ``strip_accents`` removes).

Two optional maps of one code point per code point serve llama.cpp's WPM, which normalizes
as it cuts: ``fold`` replaces a code point before it is classified (the first of its NFD),
``lower`` replaces a kept one after (Unicode's simple lowercase). HF's ``BertNormalizer``
changes characters in Python before (clean text's removals, NFD, lowercase), so it needs none.

Every word is then cut greedily, longest piece first (HF's ``WordPiece::tokenize``,
llama.cpp's ``llm_tokenizer_wpm_session``): the longest *initial* piece that starts it, then
the longest *continuation* piece from where that one ended, and so on; a word longer than
``max_chars`` code points, or that cannot be cut to its end, is the unknown token, whole.
With an ``empty_initial`` token (llama.cpp's ``▁`` alone) a word whose start no initial piece
covers begins with it and goes on with continuation pieces. Pieces are looked up in one byte
trie (``byte_trie.h``: built at once from the pieces in sorted order, the root's children a
direct table, every other node's a short sorted run) whose nodes say which initial and which
continuation piece ends there.

>>> classes = np.zeros(0x110000, np.uint8)
>>> classes[ord(" ")], classes[ord("!")] = 1, 2  # SPACE, ALONE
>>> k = WordPieceKernel([b"un", b"a", b"!"], [1, 2, 6], [b"aff", b"able", b"a"], [3, 4, 5], 0, 100, -1, classes)
>>> ids, offsets = k.encode_texts(b"unaffable aaa!x", [9, 6])
>>> ids.tolist(), offsets.tolist()  # "unaffable" | "aaa", "!", "x" (no piece: unknown)
([1, 3, 4, 2, 5, 5, 6, 0], [0, 3, 8])
"""

from cpython cimport array as carray
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_Next
from cpython.exc cimport PyErr_Clear
from cpython.long cimport PyLong_CheckExact
from cpython.object cimport PyObject
from cpython.unicode cimport PyUnicode_CheckExact
from libc.string cimport memchr, memcmp, memcpy, memset
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t
from libcpp.vector cimport vector

from ubpe_native._checks cimport as_array, as_buffer, build_once, check_length, check_range
from ubpe_native._numpy import np
from ubpe_native._pretokenize cimport check_utf8, decode_utf8, document_flags, utf8_documents
from ubpe_native._shared cimport id_array
from ubpe_native._typedefs cimport id_t

#: the code point classes (see the module docstring)
cdef enum:
    WORD = 0
    SPACE = 1
    ALONE = 2
    DROPPED = 3
    N_CLASSES = 4

#: code points a table covers: one entry for each of U+0000..U+10FFFF
CODE_POINTS = 0x110000
cdef Py_ssize_t N_CODE_POINTS = CODE_POINTS  # (C comparisons in the loops below)
cdef id_t NO_PIECE = -1
cdef int64_t INT32_LIMIT = 2**31  # ids are -INT32_LIMIT .. INT32_LIMIT - 1


#: the pieces' bytes the trie takes (its nodes are int32)
MAX_TRIE_BYTES = 2**31 - 1
# id -> the tables `class_table` made (views of bytes): immutable, checked as they were made (a kernel does not
# read 1.1 MB again to check one: a cold process pays ~3 us a page it touches first); at most
# MAX_MADE_TABLES, then the kernels check what they are given
cdef dict _made_tables = {}
cdef Py_ssize_t MAX_MADE_TABLES = 64


def class_table(layers not None):
    """A table of one class per code point, as the kernels take ``classes``: ``WORD`` (0)
    everywhere, then each ``(class, ranges)`` of ``layers`` in order, a later one winning
    (``ranges``: ``(first, last)`` pairs of code points, both ends in). A view of immutable
    bytes whose memory is the allocator's zeroed pages: a process pays for the pages a layer writes and a
    text reads, not for 1.1 MB (nor does a kernel check it again).

    >>> table = class_table([(1, [(0x20, 0x20)]), (2, [(0x21, 0x2F), (0x4E00, 0x9FFF)])])  # SPACE, ALONE
    >>> [table[cp] for cp in (0x41, 0x20, 0x2C, 0x4E2D)], len(table)
    ([0, 1, 2, 2], 1114112)
    """
    cdef bytes table = bytes(N_CODE_POINTS)  # (calloc: fresh pages are not written)
    cdef uint8_t* out = <uint8_t*>PyBytes_AS_STRING(table)
    cdef int64_t first, last
    cdef int kind
    for layer in layers:
        if len(layer) != 2:
            raise ValueError(f"a layer must be (class, ranges), not {len(layer)} items")
        kind, ranges = layer
        check_range(kind, 0, N_CLASSES - 1, "a layer's class")
        for pair in ranges:
            if len(pair) != 2:
                raise ValueError(f"a range must be (first, last), not {len(pair)} items")
            first, last = pair
            if not 0 <= first <= last < N_CODE_POINTS:
                raise ValueError(f"a range must be code points first <= last, not {first:#x}..{last:#x}")
            memset(out + first, kind, last + 1 - first)
    view = memoryview(table)
    if len(_made_tables) >= MAX_MADE_TABLES:
        _made_tables.clear()
    _made_tables[id(view)] = view
    return view


cdef extern from "byte_trie.h" namespace "ubpe" nogil:
    cdef struct TrieKey:
        const uint8_t* data
        size_t size

    cdef cppclass ByteTrie:  # a byte trie, built at once from sorted keys (see byte_trie.h)
        void build(const TrieKey* keys, size_t n, int32_t* node_of) except +
        int32_t child(int32_t node, uint8_t byte)
        size_t size()


cdef inline Py_ssize_t write_utf8(uint32_t cp, uint8_t* out) noexcept nogil:
    """``cp``'s UTF-8 bytes into ``out`` (room for 4); how many."""
    if cp < 0x80:
        out[0] = <uint8_t>cp
        return 1
    if cp < 0x800:
        out[0] = <uint8_t>(0xC0 | (cp >> 6))
        out[1] = <uint8_t>(0x80 | (cp & 0x3F))
        return 2
    if cp < 0x10000:
        out[0] = <uint8_t>(0xE0 | (cp >> 12))
        out[1] = <uint8_t>(0x80 | ((cp >> 6) & 0x3F))
        out[2] = <uint8_t>(0x80 | (cp & 0x3F))
        return 3
    out[0] = <uint8_t>(0xF0 | (cp >> 18))
    out[1] = <uint8_t>(0x80 | ((cp >> 12) & 0x3F))
    out[2] = <uint8_t>(0x80 | ((cp >> 6) & 0x3F))
    out[3] = <uint8_t>(0x80 | (cp & 0x3F))
    return 4


cdef object code_point_map(object values, str name):
    """``values`` as a map of one code point per code point (None or empty: no map), checked:
    an array of 0x110000 int32 entries, or a ``dict`` of the code points it changes (int ->
    int). A dict's table is built here up to the largest code point it changes (BERT's
    lowercase: 0x16EB8, not a 4.4 MB table): past its end a code point is itself."""
    if values is None:
        return None
    if type(values) is dict:
        return _built_map(<dict>values, name)
    table = as_buffer(values, "i", "int32", name)
    cdef const int32_t[::1] view = table
    cdef Py_ssize_t cp
    if view.shape[0] == 0:
        return None
    check_length(view.shape[0], CODE_POINTS, name, "one per code point")
    for cp in range(N_CODE_POINTS):
        if not 0 <= view[cp] < N_CODE_POINTS or (0xD800 <= view[cp] < 0xE000 and view[cp] != cp):
            raise ValueError(f"{name} must map to code points (a surrogate only to itself: UTF-8 has none)")
    return table


cdef object _built_map(dict changes, str name):
    """The table of `code_point_map`'s dict ``changes``, each entry checked as the array's."""
    for key, value in changes.items():
        if type(key) is not int or type(value) is not int:
            raise TypeError(f"{name} must map int code points to int code points")
        if not 0 <= key < CODE_POINTS or not 0 <= value < CODE_POINTS:
            raise ValueError(f"{name} must map code points to code points")
        if 0xD800 <= value < 0xE000 and value != key:
            raise ValueError(f"{name} must map to code points (a surrogate only to itself: UTF-8 has none)")
    if not changes:
        return None
    cdef Py_ssize_t cp, size = max(changes) + 1
    cdef carray.array built = carray.clone(INT32_TEMPLATE, size, False)
    cdef int32_t[::1] built_view = built
    for cp in range(size):
        built_view[cp] = <int32_t>cp
    for key, value in changes.items():
        built_view[<Py_ssize_t>key] = <int32_t>value
    return built


cdef carray.array INT32_TEMPLATE = carray.array("i")


cdef object _ids(object values):
    """A list or tuple of ids as an ``array('i')`` (a model's load needs no numpy), anything
    else as it is (`as_buffer` then reads or converts it). Plain ``int`` ids are copied in one
    loop here (BERT's 36k: 0.4 -> 0.1 ms); any other item sends the whole list to ``array``,
    which takes what it takes (``__index__``) and refuses the rest as it does."""
    if type(values) is not list and type(values) is not tuple:
        return values
    cdef Py_ssize_t k = 0
    cdef carray.array built = carray.clone(INT32_TEMPLATE, len(values), False)
    cdef int64_t value
    try:
        for item in values:
            if type(item) is not int:
                return _ids_by_array(values)
            value = item
            if value < -INT32_LIMIT or value >= INT32_LIMIT:
                return _ids_by_array(values)
            built.data.as_ints[k] = <int32_t>value
            k += 1
    except OverflowError:  # past int64
        return _ids_by_array(values)
    return built


cdef object _ids_by_array(object values):
    try:
        return carray.array("i", values)
    except OverflowError:
        raise ValueError("ids must fit in int32") from None


cdef extern from "Python.h":
    # as CPython declares them, without Cython's error check (`utf8_pieces` looks itself)
    const char* _utf8_or_null "PyUnicode_AsUTF8AndSize"(object text, Py_ssize_t* size)
    long long _int64_or_overflow "PyLong_AsLongLongAndOverflow"(object value, int* overflow)


def utf8_pieces(dict vocab not None):
    """A ``{piece: id}`` dict as `WordPieceKernel.from_vocabulary` takes it: its keys' UTF-8
    joined by NUL bytes and its ids (``array('i')``), in two passes over the dict; None where a
    key is not a ``str``, holds a NUL or a lone surrogate (whose UTF-8 is ``surrogatepass``'s),
    or an id is not an ``int`` in ``0 .. 2**31 - 1``: the caller then goes its general way,
    which names what is wrong. It does what ``"\\0".join(vocab)``, its encoding and
    ``list(vocab.values())`` did without a joined string (the join converts every piece to the
    widest kind of character of any): CPython keeps an ASCII string's UTF-8 in it, and caches
    any other's (BERT's 30k pieces, 1,900 not ASCII: 2.5 ms -> 0.8 ms).

    >>> blob, ids = utf8_pieces({"un": 3, "##aff": 0, "é": 7})
    >>> blob, ids.tolist()
    (b'un\\x00##aff\\x00\\xc3\\xa9', [3, 0, 7])
    >>> utf8_pieces({"a\\0b": 0}), utf8_pieces({"\\ud800": 0}), utf8_pieces({"a": -1}), utf8_pieces({"a": True})
    (None, None, None, None)
    """
    cdef Py_ssize_t position = 0, size, n = len(vocab), k = 0, total = 0
    cdef PyObject* key
    cdef PyObject* value
    cdef const char* utf8
    cdef int64_t id_value
    cdef int overflow
    cdef carray.array ids = carray.clone(INT32_TEMPLATE, n, False)
    # First pass: checks, ids and the blob's size. No Python code runs in either pass (exact
    # str keys, exact int values), so the dict cannot change between or under them; the C
    # API's calls are made as they are, their errors looked at here (a try block per entry
    # cost more than the rest of the loop).
    while PyDict_Next(vocab, &position, &key, &value):
        if not PyUnicode_CheckExact(<object>key) or not PyLong_CheckExact(<object>value):
            return None
        utf8 = _utf8_or_null(<object>key, &size)  # (CPython keeps it in the str: no copy next pass)
        if utf8 == NULL:  # a lone surrogate
            PyErr_Clear()
            return None
        if size and memchr(utf8, 0, size) != NULL:
            return None
        id_value = _int64_or_overflow(<object>value, &overflow)
        if overflow or id_value < 0 or id_value >= INT32_LIMIT:
            return None
        ids.data.as_ints[k] = <int32_t>id_value
        total += size + (k > 0)
        k += 1
    # Second pass: the keys' UTF-8, a NUL between two
    cdef bytes blob = PyBytes_FromStringAndSize(NULL, total)
    cdef char* out = PyBytes_AS_STRING(blob)
    cdef Py_ssize_t at = 0
    position = k = 0
    while PyDict_Next(vocab, &position, &key, &value):
        utf8 = _utf8_or_null(<object>key, &size)
        if k:
            out[at] = 0
            at += 1
        memcpy(out + at, utf8, size)
        at += size
        k += 1
    return blob, ids


cdef int _check_ids(const id_t[::1] ids, str name) except -1:
    cdef Py_ssize_t k
    for k in range(ids.shape[0]):
        if ids[k] < 0:
            raise ValueError(f"{name} must hold ids >= 0")
    return 0


cdef bytes _piece_keys(list pieces, vector[TrieKey]& keys):
    """Appends the UTF-8 ``pieces`` (each checked whole) to ``keys``, as spans of the blob
    returned (the keys point into it: keep it alive). One blob, one check: a piece is
    well-formed if the blob is and no piece starts with a continuation byte (nor the next one:
    then it ends whole). ``pieces`` is the caller's own list: nothing else changes it.

    The blob is copied here, not by ``b"".join``, which holds a 80-byte buffer view of every
    piece while it copies (BERT: 2 MB of fresh pages, ~0.8 ms of page faults)."""
    cdef Py_ssize_t k, at = 0, size, total = 0
    for piece in pieces:
        if not isinstance(piece, bytes):
            raise TypeError(f"pieces must be bytes, not {type(piece).__name__}")
        total += PyBytes_GET_SIZE(piece)
    cdef bytes joined = PyBytes_FromStringAndSize(NULL, total)
    cdef uint8_t* start = <uint8_t*>PyBytes_AS_STRING(joined)
    cdef TrieKey key
    for piece in pieces:
        size = PyBytes_GET_SIZE(piece)
        memcpy(start + at, PyBytes_AS_STRING(piece), size)
        key.data, key.size = start + at, <size_t>size
        keys.push_back(key)
        at += size
    check_utf8(joined)
    at = 0
    for k in range(len(pieces)):
        if at < total and (start[at] & 0xC0) == 0x80:
            raise ValueError(f"piece {k} is not well-formed UTF-8 (it starts inside a character)")
        at += PyBytes_GET_SIZE(pieces[k])
    return joined


cdef class WordPieceKernel:
    """The tables of one WordPiece model (see the module docstring): ``initial`` and
    ``continuation`` pieces as UTF-8 ``bytes`` with their ids (of two equal texts the last
    counts; an empty one is never matched), the ``unk`` id, ``max_chars`` (-1: no limit),
    ``empty_initial`` (-1: none), the ``classes`` table and the optional ``fold`` and
    ``lower`` maps. Read-only once built: any number of threads may encode at once."""

    cdef ByteTrie trie  # the initial and continuation pieces' bytes (the root is node 0)
    cdef vector[id_t] initial_end  # node -> the initial piece that ends there, or NO_PIECE
    cdef vector[id_t] continuation_end
    cdef readonly id_t unk
    cdef readonly int64_t max_chars
    cdef readonly id_t empty_initial
    cdef readonly object classes
    cdef readonly object fold
    cdef readonly object lower
    cdef const uint8_t* class_of
    cdef const int32_t* fold_of
    cdef const int32_t* lower_of
    cdef uint32_t fold_size  # the code points fold_of covers (0: no map); past them, cp itself
    cdef uint32_t lower_size

    cdef bint built  # __init__ ran (build_once)
    cdef bint ready  # its tables are whole (a failed __init__ leaves it False)

    def __init__(self, initial not None, initial_ids, continuation not None, continuation_ids, id_t unk,
                 int64_t max_chars, id_t empty_initial, classes not None, fold=None, lower=None):
        build_once(&self.built, self)
        cdef Py_ssize_t k
        cdef const id_t[::1] initial_view = as_buffer(_ids(initial_ids), "i", "int32", "initial_ids")
        cdef const id_t[::1] continuation_view = as_buffer(_ids(continuation_ids), "i", "int32", "continuation_ids")
        initial, continuation = list(initial), list(continuation)
        check_length(initial_view.shape[0], len(initial), "initial_ids", "one per initial piece")
        check_length(continuation_view.shape[0], len(continuation), "continuation_ids", "one per continuation piece")
        _check_ids(initial_view, "initial_ids")
        _check_ids(continuation_view, "continuation_ids")
        self._set_options(unk, max_chars, empty_initial, classes, fold, lower)
        cdef vector[TrieKey] keys
        keys.reserve(len(initial) + len(continuation))
        cdef bytes initial_blob = _piece_keys(initial, keys)
        cdef bytes continuation_blob = _piece_keys(continuation, keys)
        if len(initial_blob) + len(continuation_blob) >= MAX_TRIE_BYTES:
            raise ValueError(f"the pieces may hold {MAX_TRIE_BYTES - 1} bytes at most")
        cdef vector[id_t] ids
        ids.reserve(keys.size())
        for k in range(initial_view.shape[0]):
            ids.push_back(initial_view[k])
        for k in range(continuation_view.shape[0]):
            ids.push_back(continuation_view[k])
        self._build_trie(keys, ids, initial_view.shape[0])

    @classmethod
    def from_vocabulary(cls, const uint8_t[::1] pieces not None, ids,
                        const uint8_t[::1] initial_prefix not None, const uint8_t[::1] continuation_prefix not None,
                        id_t unk, int64_t max_chars, id_t empty_initial, classes not None, fold=None, lower=None):
        """A kernel from a whole vocabulary, split into its two tables here: ``pieces``, the
        tokens' UTF-8 joined by NUL bytes (one token per entry of ``ids``: ``len(ids) - 1``
        NULs, so no token holds one), ``ids`` their ids. A token that starts with
        ``initial_prefix`` is the initial piece of what follows it (an empty prefix: every
        token, whole), one that starts with ``continuation_prefix`` the continuation piece of
        what follows it: HF's WordPiece is ``(b"", b"##")``, llama.cpp's WPM ``("▁", b"")``. Of
        two equal pieces the last counts; an empty one is left out. The rest as ``__init__``.
        What a model's load does in Python otherwise (BERT: two dicts of 30k entries) happens
        here at the first encode.

        >>> k = WordPieceKernel.from_vocabulary(b"[UNK]\\0un\\0##aff\\0##able", [0, 1, 2, 3], b"", b"##",
        ...                                     0, 100, -1, np.zeros(0x110000, np.uint8))
        >>> k.encode_words(["unaffable", "able"]).tolist()
        [1, 2, 3, 0]
        """
        cdef WordPieceKernel self = <WordPieceKernel>cls.__new__(cls)
        build_once(&self.built, self)
        cdef const id_t[::1] id_view = as_buffer(_ids(ids), "i", "int32", "ids")
        _check_ids(id_view, "ids")
        cdef Py_ssize_t n = id_view.shape[0], size = pieces.shape[0], at = 0, end, k
        check_utf8(pieces)
        for prefix, name in ((initial_prefix, "initial_prefix"), (continuation_prefix, "continuation_prefix")):
            check_utf8(prefix)
            if b"\0" in bytes(prefix):
                raise ValueError(f"{name} must not hold a NUL byte (it separates the pieces)")
        if size >= MAX_TRIE_BYTES:
            raise ValueError(f"the pieces may hold {MAX_TRIE_BYTES - 1} bytes at most")
        cdef const uint8_t* data = &pieces[0] if size else NULL
        cdef Py_ssize_t separators = 0
        for k in range(size):
            separators += data[k] == 0
        if separators != (n - 1 if n else 0) or (n == 0 and size):
            raise ValueError(f"pieces must hold {n} tokens joined by NUL bytes (one per id), "
                             f"not {separators + 1 if size or n else 0}")
        self._set_options(unk, max_chars, empty_initial, classes, fold, lower)
        cdef vector[TrieKey] keys
        cdef vector[id_t] key_ids
        cdef TrieKey key
        cdef Py_ssize_t n_initial = 0, table, prefix_size
        cdef const uint8_t* prefix_at
        # room for a key per token in each table: pages reserved and never written cost nothing,
        # where growing (and copying) the vectors touched twice the memory of a cold process
        keys.reserve(2 * n)
        key_ids.reserve(2 * n)
        for table in range(2):  # the initial pieces, then the continuation ones
            prefix_size = initial_prefix.shape[0] if table == 0 else continuation_prefix.shape[0]
            prefix_at = NULL
            if prefix_size:
                prefix_at = &initial_prefix[0] if table == 0 else &continuation_prefix[0]
            at = 0
            for k in range(n):
                end = at
                while end < size and data[end] != 0:
                    end += 1
                if end - at > prefix_size and (prefix_size == 0 or memcmp(data + at, prefix_at, prefix_size) == 0):
                    key.data, key.size = data + at + prefix_size, <size_t>(end - at - prefix_size)
                    keys.push_back(key)
                    key_ids.push_back(id_view[k])
                at = end + 1
            if table == 0:
                n_initial = keys.size()
        self._build_trie(keys, key_ids, n_initial)
        return self

    cdef int _set_options(self, id_t unk, int64_t max_chars, id_t empty_initial, object classes, object fold,
                          object lower) except -1:
        """Checks and keeps everything but the pieces (see the class docstring)."""
        check_range(unk, 0, 2**31 - 1, "unk")
        check_range(max_chars, -1, 2**62, "max_chars")
        check_range(empty_initial, -1, 2**31 - 1, "empty_initial")
        cdef Py_ssize_t k
        table = as_buffer(classes, "B", "uint8", "classes")
        cdef const uint8_t[::1] checked = table
        check_length(checked.shape[0], CODE_POINTS, "classes", "one per code point")
        cdef uint8_t largest = 0
        if _made_tables.get(id(classes)) is not classes:  # (`class_table`'s: checked as made)
            for k in range(N_CODE_POINTS):  # (no exit in the loop: the compiler vectorizes it)
                largest = max(largest, checked[k])
        if largest >= N_CLASSES:
            raise ValueError(f"classes must hold classes 0..{N_CLASSES - 1} only")
        self.classes = table
        self.fold = code_point_map(fold, "fold")
        self.lower = code_point_map(lower, "lower")
        cdef const uint8_t[::1] class_view = self.classes
        cdef const int32_t[::1] map_view
        self.class_of = &class_view[0]
        self.fold_of = self.lower_of = NULL
        self.fold_size = self.lower_size = 0
        if self.fold is not None:
            map_view = self.fold
            self.fold_of, self.fold_size = &map_view[0], <uint32_t>map_view.shape[0]
        if self.lower is not None:
            map_view = self.lower
            self.lower_of, self.lower_size = &map_view[0], <uint32_t>map_view.shape[0]
        self.unk, self.max_chars, self.empty_initial = unk, max_chars, empty_initial
        return 0

    cdef int _build_trie(self, vector[TrieKey]& keys, vector[id_t]& ids, Py_ssize_t n_initial) except -1:
        """The trie of ``keys`` (checked UTF-8, kept alive by the caller), the first
        ``n_initial`` initial pieces and the rest continuation ones, ``ids[k]`` the id of ``keys[k]``."""
        cdef vector[int32_t] node_of
        cdef size_t k
        node_of.resize(keys.size())
        with nogil:
            self.trie.build(keys.data(), keys.size(), node_of.data())
        self.initial_end.clear()
        self.initial_end.resize(self.trie.size(), NO_PIECE)
        self.continuation_end.clear()
        self.continuation_end.resize(self.trie.size(), NO_PIECE)
        # in order: of two equal pieces the last counts; an empty one ends at the root, where
        # no match ends (a match is at least one byte)
        for k in range(keys.size()):
            if <Py_ssize_t>k < n_initial:
                self.initial_end[node_of[k]] = ids[k]
            else:
                self.continuation_end[node_of[k]] = ids[k]
        self.ready = True
        return 0

    cdef int _check_built(self) except -1:
        if not self.ready:
            raise ValueError("this WordPieceKernel was never built (WordPieceKernel(...) or from_vocabulary)")
        return 0

    def encode_texts(self, const uint8_t[::1] data not None, char_lengths, skip=None):
        """Cut and encode documents back to back in UTF-8 ``data`` (``char_lengths``: each
        one's length in code points) in one call without the GIL. A document with ``skip[d]``
        non-zero is left out (no ids): the caller encodes it another way.

        Returns ``(ids, offsets)``: document ``d``'s ids are ``ids[offsets[d]:offsets[d + 1]]``.
        """
        self._check_built()
        cdef const int64_t[::1] starts = utf8_documents(data, char_lengths)
        cdef Py_ssize_t n_docs = starts.shape[0] - 1
        cdef const uint8_t[::1] skip_view = document_flags(skip, n_docs, "skip")
        offsets = np.zeros(n_docs + 1, dtype=np.int64)
        cdef int64_t[::1] offset_view = offsets
        cdef vector[id_t] out
        if n_docs:
            with nogil:
                self._encode_texts(&data[0] if data.shape[0] else NULL, &starts[0], n_docs, &skip_view[0],
                                   out, &offset_view[0])
        return id_array(out), offsets

    def text_ids(self, const uint8_t[::1] data not None):
        """The ids of one document, UTF-8 ``data`` (checked), as a list: `encode_texts` of it
        without arrays in between (``encode`` of one text)."""
        self._check_built()
        check_utf8(data)
        cdef int64_t starts[2]
        cdef int64_t offsets[2]
        cdef uint8_t skip = 0
        cdef vector[id_t] out
        starts[0], starts[1] = 0, data.shape[0]
        offsets[0] = offsets[1] = 0
        if data.shape[0]:
            with nogil:
                self._encode_texts(&data[0], starts, 1, &skip, out, offsets)
        cdef list ids = out
        return ids

    def encode_words(self, words):
        """The ids of already cut ``words`` (``str``), each as one word (tests reach the greedy
        match alone through this)."""
        self._check_built()
        cdef vector[id_t] out
        cdef bytes text
        for word in words:
            text = word.encode("utf-8")
            self._encode_word(text, len(text), len(word), out)
        return id_array(out)

    cdef int _encode_texts(self, const uint8_t* data, const int64_t* starts, Py_ssize_t n_docs,
                           const uint8_t* skip, vector[id_t]& out, int64_t* offsets) except -1 nogil:
        # growing vectors raise MemoryError (``except -1``)
        cdef vector[uint8_t] word  # the current word's UTF-8 bytes, after fold and lower
        cdef Py_ssize_t d, i, end, width, n_chars
        cdef uint32_t cp
        cdef uint8_t cls
        cdef uint8_t alone[4]
        for d in range(n_docs):
            if not skip[d]:
                i, end = starts[d], starts[d + 1]
                word.clear()
                n_chars = 0
                while i < end:
                    cp = decode_utf8(data, i, &width)
                    i += width
                    if cp < self.fold_size:
                        cp = <uint32_t>self.fold_of[cp]
                    cls = self.class_of[cp]
                    if cls == DROPPED:
                        continue
                    if cls != WORD:  # a space or a word of its own ends the current word
                        if n_chars:
                            self._encode_word(word.data(), word.size(), n_chars, out)
                            word.clear()
                            n_chars = 0
                        if cls == SPACE:
                            continue
                    if cp < self.lower_size:
                        cp = <uint32_t>self.lower_of[cp]
                    if cls == ALONE:
                        self._encode_word(alone, write_utf8(cp, alone), 1, out)
                        continue
                    width = write_utf8(cp, alone)
                    word.insert(word.end(), alone, alone + width)
                    n_chars += 1
                if n_chars:
                    self._encode_word(word.data(), word.size(), n_chars, out)
            offsets[d + 1] = <int64_t>out.size()
        return 0

    cdef int _encode_word(self, const uint8_t* w, Py_ssize_t n, Py_ssize_t n_chars,
                          vector[id_t]& out) except -1 nogil:
        """Appends the ids of the word ``w[:n]`` (``n_chars`` code points) to ``out``."""
        cdef size_t mark = out.size()
        cdef Py_ssize_t start = 0, i, best_end
        cdef int32_t node
        cdef id_t best
        cdef bint first = True
        if self.max_chars >= 0 and n_chars > self.max_chars:
            out.push_back(self.unk)
            return 0
        while start < n:
            node, best, best_end, i = 0, NO_PIECE, start, start
            while i < n:
                node = self.trie.child(node, w[i])
                if node < 0:
                    break
                i += 1
                if first and self.initial_end[node] != NO_PIECE:
                    best, best_end = self.initial_end[node], i
                elif not first and self.continuation_end[node] != NO_PIECE:
                    best, best_end = self.continuation_end[node], i
            if best == NO_PIECE:
                if first and self.empty_initial >= 0:  # llama.cpp: "▁" alone, then continuations
                    out.push_back(self.empty_initial)
                    first = False
                    continue
                out.resize(mark)  # a word that cannot be cut is the unknown token, whole
                out.push_back(self.unk)
                return 0
            out.push_back(best)
            start = best_end
            first = False
        return 0
