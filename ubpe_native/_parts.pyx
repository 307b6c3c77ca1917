# distutils: language = c++
"""Counting distinct parts incrementally: what a fit needs of a corpus, chunk by chunk.

A fit sees a corpus only through its distinct parts, how often each occurs and which
documents hold it (see ``_fit.pyx``). :class:`PartCounter` builds exactly that from chunks
of documents, or from the counts of other chunks, so that a corpus never has to be held
whole: memory grows with the distinct parts and the distinct (part, document) pairs.

Parts keep the order of their first occurrence and every part's documents stay ascending,
provided chunks are added in document order (document ids of each chunk are shifted by the
documents already counted).

>>> import numpy as np
>>> counter = PartCounter()
>>> counter.add(np.array([0, 1, 0, 1, 1, 0], np.int32), np.array([0, 2, 4, 6]),
...             np.array([0, 0, 1], np.int32), 2)
>>> counter.add(np.array([1, 0], np.int32), np.array([0, 2]), np.array([0], np.int32), 1)
>>> tokens, offsets, weights, doc_offsets, docs = counter.export()
>>> tokens.tolist(), offsets.tolist(), weights.tolist(), doc_offsets.tolist(), docs.tolist()
([0, 1, 1, 0], [0, 2, 4], [2, 2], [0, 1, 3], [0, 1, 2])
>>> counter.n_docs, counter.n_parts
(3, 2)
"""

from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libcpp.vector cimport vector

from ubpe_native._buffers cimport copy_array, new_array
from ubpe_native._checks cimport check_offsets, claim
from ubpe_native._distinct cimport run_slot
from ubpe_native._flat_map cimport FlatMap
from ubpe_native._pretokenize cimport check_split_arguments, check_utf8, class_t, decode_utf8, piece_end
from ubpe_native._typedefs cimport count_t, id_t

#: :meth:`PartCounter.add_text`'s pattern id for text nothing splits: each document is a part
WHOLE_DOCUMENTS = -1
cdef int WHOLE = -1


cdef class PartCounter:
    """Distinct parts with their multiplicities and documents, filled by :meth:`add`."""

    # distinct part k is symbols[starts[k]:starts[k + 1]], seen weights[k] times. The
    # (part, document) pairs are kept in document order, 4 bytes each: document d holds the
    # parts entry_part[doc_start[d]:doc_start[d + 1]]; last_doc[k] drops repeats in a document
    cdef vector[id_t] symbols
    cdef vector[int64_t] starts
    cdef vector[count_t] weights
    cdef vector[int32_t] last_doc
    cdef vector[int32_t] entry_part
    cdef vector[int64_t] doc_start
    cdef FlatMap index  # content hash -> part + 1
    # set while an add() runs: an add cut short (MemoryError) leaves the counts incomplete
    cdef bint unfinished
    cdef bint released  # absorbed, or exported with release=True: the counts are gone
    # set (with the GIL) while a call runs: a call from another thread meanwhile raises
    # BusyError instead of growing the same vectors (_checks.claim)
    cdef bint busy

    def __cinit__(self):
        # (__cinit__, not __init__: it runs once, so calling __init__ again cannot corrupt the counts)
        self.starts.push_back(0)
        self.doc_start.push_back(0)

    @property
    def n_parts(self):
        return <Py_ssize_t>self.weights.size()

    @property
    def n_docs(self):
        return <Py_ssize_t>self.doc_start.size() - 1

    def add(self, const id_t[::1] tokens not None, const int64_t[::1] offsets not None,
            const int32_t[::1] docs not None, int64_t n_docs,
            const count_t[::1] weights=None, const int64_t[::1] doc_offsets=None):
        """Count ``n_docs`` more documents, whose parts are ``tokens[offsets[k]:offsets[k+1]]``.

        Part ``k`` lies in document ``docs[k]`` (ids ``0..n_docs-1`` of this chunk,
        ascending) and occurs once; or, given ``weights`` and ``doc_offsets`` (the counts of
        another counter), ``weights[k]`` times in the documents
        ``docs[doc_offsets[k]:doc_offsets[k+1]]``.
        """
        cdef Py_ssize_t n_parts
        cdef Py_ssize_t k
        cdef bint counted
        claim(&self.busy, self)
        try:
            n_parts = offsets.shape[0] - 1
            counted = weights is not None
            check_offsets(offsets, tokens.shape[0], "offsets")
            if (weights is None) != (doc_offsets is None):
                raise ValueError("weights and doc_offsets go together")
            if n_docs < 0 or self.n_docs + n_docs >= 2 ** 31:
                raise ValueError("n_docs must be in 0..2**31 - 1 documents in all")
            if counted:
                if weights.shape[0] != n_parts or doc_offsets.shape[0] != n_parts + 1:
                    raise ValueError("weights and doc_offsets must have one entry per part (plus one)")
                check_offsets(doc_offsets, docs.shape[0], "doc_offsets")
                for k in range(n_parts):
                    if weights[k] < 1:
                        raise ValueError("weights must be positive")
            elif docs.shape[0] != n_parts:
                raise ValueError("docs must have one entry per part")
            for k in range(docs.shape[0]):
                if not 0 <= docs[k] < n_docs or (not counted and k > 0 and docs[k] < docs[k - 1]):
                    raise ValueError(f"document {docs[k]} is outside 0..{n_docs - 1} or out of order")
            if self.starts.back() + tokens.shape[0] >= 2 ** 31 - 1:
                raise ValueError("too many distinct symbols: at most 2**31 - 2 per fit")
            self._check_finished()
            self.unfinished = True
            with nogil:
                if counted:
                    self._add_counted(tokens, offsets, docs, n_docs, weights, doc_offsets)
                else:
                    self._add_parts(tokens, offsets, docs, n_docs)
            self.unfinished = False
        finally:
            self.busy = False

    def add_text(self, const uint8_t[::1] data not None, const int64_t[::1] doc_chars not None,
                 const class_t[::1] classes not None, int pattern, const id_t[::1] table not None):
        """Count the documents of UTF-8 ``data`` as a fit sees them, split by a native pattern
        (``_pretokenize``) without the GIL: every piece of two characters or more is a part,
        the ids of its characters ``table[code point]``. Document ``d`` is the characters
        ``doc_chars[d]:doc_chars[d + 1]`` of ``data``.

        Returns -1, or (nothing counted) the index in ``data``'s characters of the first
        character whose id is unknown (beyond ``table`` or negative there).

        >>> import numpy as np
        >>> from ubpe.splitting import split_classes
        >>> counter = PartCounter()
        >>> table = np.array([-1] * 97 + [0, 1, -1], np.int32)   # a -> 0, b -> 1
        >>> chars = np.array([0, 2, 5, 7])                     # "ab", "bab", "ab"
        >>> counter.add_text(np.frombuffer(b"abbabab", np.uint8), chars, split_classes(), 5, table)
        -1
        >>> tokens, offsets, weights, _, _ = counter.export()
        >>> tokens.tolist(), offsets.tolist(), weights.tolist(), counter.n_docs
        ([0, 1, 1, 0, 1], [0, 2, 5], [2, 1], 3)
        >>> counter.add_text(np.frombuffer(b"abc", np.uint8), np.array([0, 3]), split_classes(), 5, table)
        2

        With the pattern :data:`WHOLE_DOCUMENTS` (``classes`` may then be empty) every
        document of two characters or more is one part:

        >>> counter.add_text(b"abba", np.array([0, 4]), np.zeros(0, np.uint16), WHOLE_DOCUMENTS, table)
        -1
        >>> counter.export()[0].tolist()[-4:]
        [0, 1, 1, 0]
        """
        cdef Py_ssize_t n_docs, d, i, chars, width, unknown
        cdef Py_ssize_t n, n_table
        cdef uint32_t cp
        cdef vector[int64_t] doc_bytes
        claim(&self.busy, self)
        try:
            if pattern != WHOLE:
                check_split_arguments(classes.shape[0], pattern)
            check_utf8(data)
            n_docs = doc_chars.shape[0] - 1
            i = 0
            chars = 0
            unknown = -1
            n = data.shape[0]
            n_table = table.shape[0]
            if n_docs < 0 or doc_chars[0] != 0:
                raise ValueError("doc_chars must start at 0")
            for d in range(n_docs):
                if doc_chars[d + 1] < doc_chars[d]:
                    raise ValueError("doc_chars must be ascending")
            if self.n_docs + n_docs >= 2 ** 31:
                raise ValueError("n_docs must be in 0..2**31 - 1 documents in all")
            self._check_finished()
            doc_bytes.resize(n_docs + 1)
            with nogil:  # documents' byte offsets, and every character known
                d = 0
                while i < n:
                    while d <= n_docs and doc_chars[d] == chars:
                        doc_bytes[d] = i
                        d += 1
                    cp = decode_utf8(&data[0], i, &width)
                    if unknown < 0 and (cp >= <uint32_t>n_table or table[cp] < 0):
                        unknown = chars
                    i += width
                    chars += 1
                while d <= n_docs and doc_chars[d] == chars:
                    doc_bytes[d] = i
                    d += 1
            if d != n_docs + 1 or doc_chars[n_docs] != chars:
                raise ValueError(f"doc_chars must end at the {chars} characters of data")
            if unknown >= 0:
                return unknown
            self.unfinished = True
            with nogil:
                self._add_text(&data[0] if n else NULL, doc_bytes, &classes[0] if classes.shape[0] else NULL,
                               pattern, &table[0])
            self.unfinished = False
            return -1
        finally:
            self.busy = False

    def add_values(self, const int64_t[::1] values not None, const int64_t[::1] doc_offsets not None,
                   const id_t[::1] table not None, int64_t low):
        """Count documents of integer symbols that nothing splits, as a fit sees them: every
        document of two symbols or more is one part, the id of a value ``table[value - low]``.
        Document ``d`` is ``values[doc_offsets[d]:doc_offsets[d + 1]]``.

        Returns -1, or (nothing counted) the index in ``values`` of the first value whose id
        is unknown (outside ``table`` or negative there).

        >>> from array import array
        >>> counter = PartCounter()
        >>> table = array("i", [0, 1, -1])                  # 5 -> 0, 6 -> 1
        >>> counter.add_values(array("q", [5, 6, 5, 6, 6]), array("q", [0, 2, 4, 5]), table, 5)
        -1
        >>> counter.export()[2].tolist(), counter.n_docs    # (0, 1) twice; a lone 6 is no part
        ([2], 3)
        >>> counter.add_values(array("q", [5, 7]), array("q", [0, 2]), table, 5)
        1
        """
        cdef Py_ssize_t n_docs, n, k, unknown
        cdef uint64_t n_table, at
        cdef vector[id_t] ids
        claim(&self.busy, self)
        try:
            check_offsets(doc_offsets, values.shape[0], "doc_offsets")
            n_docs = doc_offsets.shape[0] - 1
            n = values.shape[0]
            unknown = -1
            n_table = table.shape[0]
            if self.n_docs + n_docs >= 2 ** 31:
                raise ValueError("n_docs must be in 0..2**31 - 1 documents in all")
            if self.starts.back() + n >= 2 ** 31 - 1:
                raise ValueError("too many distinct symbols: at most 2**31 - 2 per fit")
            self._check_finished()
            ids.resize(n)
            with nogil:
                for k in range(n):
                    at = <uint64_t>values[k] - <uint64_t>low  # (the distance, when values[k] >= low)
                    if values[k] < low or at >= n_table or table[at] < 0:
                        unknown = k
                        break
                    ids[k] = table[at]
            if unknown >= 0:
                return unknown
            self.unfinished = True
            with nogil:
                for k in range(n_docs):
                    if doc_offsets[k + 1] - doc_offsets[k] >= 2:  # one symbol holds no pair
                        self._add_entry(self._count_run(ids.data() + doc_offsets[k], doc_offsets[k + 1] - doc_offsets[k]),
                                        <int32_t>self.doc_start.size() - 1)
                    self.doc_start.push_back(self.entry_part.size())
            self.unfinished = False
            return -1
        finally:
            self.busy = False

    cdef int _add_text(self, const uint8_t* data, vector[int64_t]& doc_bytes, const class_t* classes,
                       int pattern, const id_t* table) except -1 nogil:
        cdef Py_ssize_t d, i, j, end, n, width
        cdef const uint8_t* s
        cdef vector[id_t] run
        cdef int32_t doc
        for d in range(<Py_ssize_t>doc_bytes.size() - 1):
            doc = <int32_t>self.doc_start.size() - 1
            s = data + doc_bytes[d]
            n = doc_bytes[d + 1] - doc_bytes[d]
            i = 0
            while i < n:
                end = n if pattern == WHOLE else piece_end(s, n, i, classes, pattern)
                run.clear()
                j = i
                while j < end:
                    run.push_back(table[decode_utf8(s, j, &width)])
                    j += width
                if run.size() >= 2:  # one-character pieces hold no pair (and gaps are one)
                    self._add_entry(self._count_run(run.data(), run.size()), doc)
                i = end
            self.doc_start.push_back(self.entry_part.size())
        return 0

    cdef int _check_finished(self) except -1:
        if self.released:
            raise ValueError("this counter was absorbed or exported with release=True: its counts are gone")
        if self.unfinished:
            raise MemoryError("an earlier add() ran out of memory: this counter's counts are "
                              "incomplete; start a new PartCounter")
        return 0

    cdef int _add_parts(self, const id_t[::1] tokens, const int64_t[::1] offsets,
                         const int32_t[::1] docs, int64_t n_docs) except -1 nogil:
        cdef Py_ssize_t k
        cdef int32_t part, doc, first = <int32_t>self.doc_start.size() - 1, current = first
        for k in range(offsets.shape[0] - 1):
            part = self._find(tokens, offsets[k], offsets[k + 1] - offsets[k])
            self.weights[part] += 1
            doc = first + docs[k]
            while current < doc:  # documents up to this one are complete
                self.doc_start.push_back(self.entry_part.size())
                current += 1
            self._add_entry(part, doc)
        while current < first + n_docs:
            self.doc_start.push_back(self.entry_part.size())
            current += 1
        return 0

    cdef int _add_counted(self, const id_t[::1] tokens, const int64_t[::1] offsets,
                           const int32_t[::1] docs, int64_t n_docs, const count_t[::1] weights,
                           const int64_t[::1] doc_offsets) except -1 nogil:
        """Another counter's parts: its (part, document) pairs are regrouped by document
        (a counting sort) to be stored in document order."""
        cdef Py_ssize_t k, j
        cdef int32_t first = <int32_t>self.doc_start.size() - 1
        cdef vector[int32_t] parts  # this counter's part of each of the other's parts
        cdef vector[int64_t] fill
        cdef vector[int32_t] by_doc
        fill.resize(n_docs + 1, 0)  # (resize raises MemoryError; assign(n, v) would abort)
        for k in range(offsets.shape[0] - 1):
            parts.push_back(self._find(tokens, offsets[k], offsets[k + 1] - offsets[k]))
            self.weights[parts.back()] += weights[k]
            for j in range(doc_offsets[k], doc_offsets[k + 1]):
                fill[docs[j] + 1] += 1
        for j in range(n_docs):
            fill[j + 1] += fill[j]
        by_doc.resize(docs.shape[0])
        for k in range(offsets.shape[0] - 1):
            for j in range(doc_offsets[k], doc_offsets[k + 1]):
                by_doc[fill[docs[j]]] = parts[k]
                fill[docs[j]] += 1
        j = 0
        for k in range(n_docs):  # fill[k] is now where document k + 1's pairs begin
            while j < fill[k]:
                self._add_entry(by_doc[j], first + <int32_t>k)
                j += 1
            self.doc_start.push_back(self.entry_part.size())
        return 0

    def absorb(self, PartCounter other not None):
        """Add the counts of ``other``, which counted the documents after this counter's,
        without the GIL and without exporting them, and free ``other`` (it can no longer be
        used). Counters of consecutive runs of documents, counted apart, absorbed in order,
        count what one counter of all the documents counts:

        >>> import numpy as np
        >>> first, second = PartCounter(), PartCounter()
        >>> first.add(np.array([0, 1, 1, 0], np.int32), np.array([0, 2, 4]), np.array([0, 1], np.int32), 2)
        >>> second.add(np.array([1, 1, 0, 1], np.int32), np.array([0, 2, 4]), np.array([0, 0], np.int32), 1)
        >>> first.absorb(second)
        >>> whole = PartCounter()
        >>> whole.add(np.array([0, 1, 1, 0, 1, 1, 0, 1], np.int32), np.array([0, 2, 4, 6, 8]),
        ...           np.array([0, 1, 2, 2], np.int32), 3)
        >>> first.export() == whole.export(), first.n_docs
        (True, 3)
        >>> second.export()
        Traceback (most recent call last):
        ...
        ValueError: this counter was absorbed or exported with release=True: its counts are gone
        """
        if other is self:
            raise ValueError("a counter cannot absorb itself")
        claim(&self.busy, self)
        try:
            claim(&other.busy, other)  # both are read or written without the GIL below
            try:
                self._check_finished()
                other._check_finished()
                if self.n_docs + other.n_docs >= 2 ** 31:
                    raise ValueError("n_docs must be in 0..2**31 - 1 documents in all")
                if self.starts.back() + other.starts.back() >= 2 ** 31 - 1:
                    raise ValueError("too many distinct symbols: at most 2**31 - 2 per fit")
                self.unfinished = True
                other.released = True
                other.index = FlatMap()  # (other's lookups are over: its memory goes first)
                other.last_doc.clear()
                other.last_doc.shrink_to_fit()
                with nogil:
                    self._absorb(other)
                other.starts.push_back(0)  # (what is left says: no parts, no documents)
                other.doc_start.push_back(0)
                self.unfinished = False
            finally:
                other.busy = False
        finally:
            self.busy = False

    cdef int _absorb(self, PartCounter other) except -1 nogil:
        """:meth:`absorb`'s body. ``other``'s documents come after all of this counter's, so
        its (part, document) pairs are already distinct and in document order here too: they
        are appended with their parts renumbered, with no regrouping. ``other``'s arrays are
        freed as soon as they are read, so the two counters are never held whole together."""
        cdef Py_ssize_t k, n = other.weights.size(), n_entries = other.entry_part.size()
        cdef int64_t shift = self.entry_part.size()
        cdef vector[int32_t] parts  # this counter's part of each of other's parts
        parts.resize(n)
        # room for other's parts, were they all new: no reallocation among the insertions
        # (at 5 MB, 23 K parts absorbed: 1.5 -> 1.2 ms)
        self.symbols.reserve(self.symbols.size() + other.symbols.size())
        self.starts.reserve(self.starts.size() + n)
        self.weights.reserve(self.weights.size() + n)
        self.last_doc.reserve(self.last_doc.size() + n)
        for k in range(n):
            parts[k] = self._find_run(other.symbols.data() + other.starts[k], other.starts[k + 1] - other.starts[k])
            self.weights[parts[k]] += other.weights[k]
        other.symbols.clear()
        other.symbols.shrink_to_fit()
        other.starts.clear()
        other.starts.shrink_to_fit()
        other.weights.clear()
        other.weights.shrink_to_fit()
        self.entry_part.reserve(self.entry_part.size() + n_entries)
        for k in range(n_entries):
            self.entry_part.push_back(parts[other.entry_part[k]])
        other.entry_part.clear()
        other.entry_part.shrink_to_fit()
        self.doc_start.reserve(self.doc_start.size() + other.doc_start.size() - 1)
        for k in range(1, <Py_ssize_t>other.doc_start.size()):
            self.doc_start.push_back(shift + other.doc_start[k])
        other.doc_start.clear()
        other.doc_start.shrink_to_fit()
        return 0

    cdef int32_t _find(self, const id_t[::1] tokens, Py_ssize_t start, Py_ssize_t length) except -1 nogil:
        """The distinct part equal to ``tokens[start:start + length]`` (created if new)."""
        return self._find_run(&tokens[0] + start if tokens.shape[0] else NULL, length)

    cdef int32_t _count_run(self, const id_t* run, Py_ssize_t length) except -1 nogil:
        """One more occurrence of the part ``run[:length]``: its distinct part."""
        cdef int32_t part = self._find_run(run, length)
        self.weights[part] += 1
        return part

    cdef int32_t _find_run(self, const id_t* run, Py_ssize_t length) except -1 nogil:
        """The distinct part equal to ``run[:length]`` (created if new)."""
        cdef int64_t* slot = run_slot(self.index, run, length, self.symbols.data(),
                                      self.starts.data(), self.starts.data() + 1)
        cdef int32_t part
        if slot[0] == 0:
            part = <int32_t>self.weights.size()
            self.symbols.insert(self.symbols.end(), run, run + length)
            self.starts.push_back(self.symbols.size())
            self.weights.push_back(0)
            self.last_doc.push_back(-1)
            slot[0] = part + 1
            return part
        return <int32_t>(slot[0] - 1)

    cdef inline int _add_entry(self, int32_t part, int32_t doc) except -1 nogil:
        if self.last_doc[part] != doc:
            self.last_doc[part] = doc
            self.entry_part.push_back(part)
        return 0

    def export(self, bint release=False):
        """``(tokens, offsets, weights, doc_offsets, docs)`` of the distinct parts, in order
        of first occurrence; part ``k``'s documents are ``docs[doc_offsets[k]:doc_offsets[k+1]]``
        (``array.array``: int32, int64, int64, int64, int32).

        With ``release`` the counter frees each of its own arrays once copied (so the counts
        and the counter are never held whole together) and can no longer be used.

        >>> import numpy as np
        >>> counter = PartCounter()
        >>> counter.add(np.array([0, 1], np.int32), np.array([0, 2]), np.array([0], np.int32), 1)
        >>> counter.export(release=True)[2].tolist()
        [1]
        >>> counter.export()
        Traceback (most recent call last):
        ...
        ValueError: this counter was absorbed or exported with release=True: its counts are gone
        """
        cdef Py_ssize_t n, k, e
        cdef int32_t d
        cdef int64_t[::1] doc_offsets_view
        cdef int32_t[::1] docs_view
        cdef vector[int64_t] fill
        claim(&self.busy, self)
        try:
            self._check_finished()
            n = self.weights.size()
            if release:
                self.released = True
                self.index = FlatMap()
                self.last_doc.clear()
                self.last_doc.shrink_to_fit()  # (libstdc++ frees an emptied vector's memory here)
            tokens = copy_array("i", self.symbols.data(), self.symbols.size())
            if release:
                self.symbols.clear()
                self.symbols.shrink_to_fit()
            offsets = copy_array("q", self.starts.data(), n + 1)
            weights = copy_array("q", self.weights.data(), n)
            if release:
                self.starts.clear()
                self.starts.shrink_to_fit()
                self.weights.clear()
                self.weights.shrink_to_fit()
            doc_offsets = new_array("q", n + 1, True)
            docs = new_array("i", self.entry_part.size())
            doc_offsets_view = doc_offsets
            docs_view = docs
            with nogil:  # a counting sort of the pairs by part; documents stay ascending
                for e in range(<Py_ssize_t>self.entry_part.size()):
                    doc_offsets_view[self.entry_part[e] + 1] += 1
                for k in range(n):
                    doc_offsets_view[k + 1] += doc_offsets_view[k]
                fill.assign(&doc_offsets_view[0], &doc_offsets_view[0] + n)
                for d in range(<int32_t>self.doc_start.size() - 1):
                    for e in range(self.doc_start[d], self.doc_start[d + 1]):
                        docs_view[fill[self.entry_part[e]]] = d
                        fill[self.entry_part[e]] += 1
            if release:
                self.entry_part.clear()
                self.entry_part.shrink_to_fit()
            return tokens, offsets, weights, doc_offsets, docs
        finally:
            self.busy = False

