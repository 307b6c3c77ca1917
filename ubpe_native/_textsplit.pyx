# distutils: language = c++
"""Splitting str documents for encoding in one native call: alphabet ids, the preset
scanner's pieces (``_pretokenize``), part and document offsets.

What :class:`ubpe.splitting.SplitPipeline` computes for str documents without known words,
when its regex (if any) is one the scanner knows: each character becomes its alphabet id;
each break symbol is a one-symbol separator part, the scanner cuts each run between them
into pieces (no pattern: the run is one part), and each stop symbol inside a piece is cut out
as a one-symbol separator part. The characters are read from the str objects directly and
the work runs without the GIL. A document holding a symbol outside the
alphabet, or a lone surrogate, makes the call return None: the caller's Python path then
raises its error.

>>> import numpy as np
>>> from ubpe.splitting import WORDS, split_classes
>>> from ubpe.alphabet import Alphabet
>>> alphabet = Alphabet.from_spec("ab _")
>>> splitter = TextSplitter(alphabet._table, split_classes(alphabet.symbols), 5)
>>> ids, part_offsets, separator, doc_part_offsets = splitter.split(["ab a_b", "", "ba"])
>>> ids.tolist(), part_offsets.tolist(), separator.tolist(), doc_part_offsets.tolist()
([0, 1, 2, 0, 3, 1, 1, 0], [0, 2, 4, 5, 6, 8], [False, False, True, False, False], [0, 4, 4, 5])
>>> splitter.split(["abc"]) is None   # "c" is not in the alphabet
True
>>> kinds = np.array([0, 0, BREAK_SYMBOL, 0], dtype=np.uint8)   # " " (id 2) breaks
>>> breaking = TextSplitter(alphabet._table, np.zeros(0, np.uint16), NO_PATTERN, kinds)
>>> ids, part_offsets, separator, _ = breaking.split(["ab  ba"])
>>> ids.tolist(), part_offsets.tolist(), separator.tolist()
([0, 1, 2, 2, 1, 0], [0, 2, 3, 4, 6], [False, True, True, False])
"""

from cpython.unicode cimport PyUnicode_Check
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t
from libcpp.vector cimport vector

from array import array

from ubpe_native._numpy import np

from ubpe_native._checks cimport as_array, as_buffer, build_once
from ubpe_native._pretokenize cimport class_t, check_split_arguments, split_pieces
from ubpe_native._typedefs cimport id_t


from ubpe_native._shared cimport (PyUnicode_DATA, PyUnicode_GET_LENGTH, PyUnicode_KIND, PyUnicode_READ,
                                  PyUnicode_READY, push_code_point)

# Pattern ids, as in _pretokenize.pxd
cdef int PATTERN_WORDS = 5
cdef uint8_t UNDERSCORE = 0x5F
cdef enum:
    NO_PATTERN_ID = -1
    BREAK_BIT = 1
    STOP_BIT = 2
#: ``pattern`` of a splitter without a regex step (its runs between break symbols are parts)
NO_PATTERN = NO_PATTERN_ID
#: bits of ``kinds``: a break symbol (cut out before the regex), a stop symbol (after it)
BREAK_SYMBOL = BREAK_BIT
STOP_SYMBOL = STOP_BIT


cdef class TextSplitter:
    """The tables of one split: ``table[c]`` the alphabet id of code point ``c`` (-1: none;
    code points past the table have none), ``classes`` the scanner's class of every code
    point, ``pattern`` the scanner's pattern id (:data:`NO_PATTERN`: no regex step, then
    ``classes`` is not read), ``kinds`` (optional) per alphabet id its
    :data:`BREAK_SYMBOL` / :data:`STOP_SYMBOL` bits. Reusable, by several threads at once."""

    def __init__(self, table, classes, int pattern, kinds=None):
        build_once(&self.built, self)
        self.table_view = as_buffer(table, "i", "int32", "table")  # (a load's array.array: no numpy)
        if self.table_view.shape[0] == 0:
            raise ValueError("table must not be empty")
        self.table = table
        self.classes = as_buffer(classes, "H", "uint16", "classes")
        if pattern != NO_PATTERN_ID:
            check_split_arguments(self.classes.shape[0], pattern)
        self.pattern = pattern
        cdef Py_ssize_t k
        self.max_id = -1
        for k in range(self.table_view.shape[0]):
            self.max_id = max(self.max_id, self.table_view[k])
        self.kinds = as_buffer(array("B") if kinds is None else kinds, "B", "uint8", "kinds")
        if self.kinds.shape[0] and self.kinds.shape[0] <= self.max_id:
            raise ValueError(f"kinds must hold one entry per alphabet id (up to {self.max_id})")
        for k in range(self.kinds.shape[0]):
            if self.kinds[k] > (BREAK_BIT | STOP_BIT):
                raise ValueError(f"kinds[{k}] is {self.kinds[k]}, not a sum of BREAK_SYMBOL and STOP_SYMBOL")
        self.plain = self.kinds.shape[0] == 0 and pattern != NO_PATTERN_ID

    def split(self, docs):
        """``(ids, part_offsets, part_is_separator, doc_part_offsets)`` of the str documents
        ``docs`` (a list or tuple), as ``SplitBatch`` holds them; None if a document is no
        str, has a symbol outside the alphabet or a lone surrogate."""
        cdef vector[id_t] ids
        cdef vector[int64_t] part_offsets, doc_part_offsets, bounds
        cdef vector[uint8_t] separator, utf8
        if not isinstance(docs, (list, tuple)):
            raise TypeError("docs must be a list or tuple of str")
        if not self.split_into(tuple(docs), ids, part_offsets, separator, doc_part_offsets, utf8, bounds):
            return None
        out_ids = np.empty(ids.size(), dtype=np.int32)
        out_parts = np.empty(part_offsets.size(), dtype=np.int64)
        out_separator = np.empty(separator.size(), dtype=bool)
        out_docs = np.empty(doc_part_offsets.size(), dtype=np.int64)
        cdef id_t[::1] id_view = out_ids
        cdef int64_t[::1] part_view = out_parts
        cdef uint8_t[::1] separator_view = out_separator.view(np.uint8)
        cdef int64_t[::1] doc_view = out_docs
        cdef Py_ssize_t k
        with nogil:
            for k in range(<Py_ssize_t>ids.size()):
                id_view[k] = ids[k]
            for k in range(<Py_ssize_t>part_offsets.size()):
                part_view[k] = part_offsets[k]
            for k in range(<Py_ssize_t>separator.size()):
                separator_view[k] = separator[k]
            for k in range(<Py_ssize_t>doc_part_offsets.size()):
                doc_view[k] = doc_part_offsets[k]
        return out_ids, out_parts, out_separator, out_docs

    cdef bint split_into(self, tuple docs, vector[id_t]& ids, vector[int64_t]& part_offsets,
                         vector[uint8_t]& separator, vector[int64_t]& doc_part_offsets,
                         vector[uint8_t]& utf8, vector[int64_t]& bounds) except -1:
        """:meth:`split` into vectors (cleared first; ``utf8`` and ``bounds`` are scratch
        space); False where it returns None, and for a document that is no str. ``docs`` is
        a tuple, so that the documents stay alive, in order, without the GIL."""
        cdef tuple held = docs
        cdef Py_ssize_t n_docs = len(held), d, total = 0
        cdef vector[Text] texts
        cdef Text text
        for d in range(n_docs):
            doc = held[d]
            if not PyUnicode_Check(doc):
                return False
            PyUnicode_READY(doc)  # the canonical representation read below (a no-op since Python 3.12)
            text.kind = PyUnicode_KIND(doc)
            text.data = PyUnicode_DATA(doc)
            text.length = PyUnicode_GET_LENGTH(doc)
            texts.push_back(text)
            total += text.length
        ids.clear()
        part_offsets.clear()
        separator.clear()
        doc_part_offsets.clear()
        # with the GIL (MemoryError here): nothing below allocates past these
        ids.reserve(total)
        part_offsets.reserve(total + 1)
        separator.reserve(total)
        doc_part_offsets.reserve(n_docs + 1)
        cdef Py_ssize_t longest = 0
        for d in range(n_docs):
            longest = max(longest, texts[d].length)
        utf8.reserve(4 * longest)
        bounds.reserve(4 * longest + 1)
        cdef bint ok = True
        with nogil:
            part_offsets.push_back(0)
            doc_part_offsets.push_back(0)
            for d in range(n_docs):
                if not self._split_text(texts[d], ids, part_offsets, separator, utf8, bounds):
                    ok = False
                    break
                doc_part_offsets.push_back(<int64_t>part_offsets.size() - 1)
        return ok

    cdef int _split_text(self, const Text& text, vector[id_t]& ids, vector[int64_t]& part_offsets,
                         vector[uint8_t]& separator, vector[uint8_t]& utf8, vector[int64_t]& bounds) except -1 nogil:
        """Append one document's ids and parts (room reserved by the caller); 0 (False) if it
        has a symbol outside the alphabet or a lone surrogate, 1 if not; -1 with the exception
        set when a compiled pattern's match is refused or interrupted."""
        cdef Py_ssize_t i, b, n_table = self.table_view.shape[0], start = ids.size()
        cdef Py_ssize_t k, char_at, byte_at
        cdef uint32_t c
        cdef id_t symbol
        cdef bint ascii = True, gap
        if text.length == 0:
            return True
        utf8.clear()
        for i in range(text.length):
            c = PyUnicode_READ(text.kind, <void*>text.data, i)
            symbol = self.table_view[c] if c < <uint32_t>n_table - 1 else -1
            if symbol < 0 or 0xD800 <= c < 0xE000:
                ids.resize(start)
                return False
            ids.push_back(symbol)
            ascii = ascii and c < 0x80
            push_code_point(utf8, c)
        if not self.plain:
            return self._split_run(ids.data() + start, utf8.data(), 0, text.length, utf8.size(), start,
                                   part_offsets, separator, bounds)
        split_pieces(utf8.data(), utf8.size(), &self.classes[0], self.pattern, bounds)
        # bounds: 0, then every piece's end, in bytes; parts are in characters
        char_at = 0
        byte_at = 0
        for k in range(1, <Py_ssize_t>bounds.size()):
            b = bounds[k]
            gap = self.pattern == PATTERN_WORDS and b == byte_at + 1 and utf8[byte_at] == UNDERSCORE
            separator.push_back(gap)
            if ascii:
                char_at = b
            else:
                while byte_at < b:
                    if (utf8[byte_at] & 0xC0) != 0x80:
                        char_at += 1
                    byte_at += 1
            byte_at = b
            part_offsets.push_back(start + char_at)
        return True

    cdef int _split_run(self, const id_t* ids, const uint8_t* utf8, Py_ssize_t first, Py_ssize_t last,
                        Py_ssize_t n_bytes, Py_ssize_t start, vector[int64_t]& part_offsets,
                        vector[uint8_t]& separator, vector[int64_t]& bounds) except -1 nogil:
        """Parts of one document (``ids[first:last]``, its UTF-8 ``utf8[:n_bytes]``; part ends are
        stored plus ``start``) with break and stop symbols, or without a pattern: each break
        symbol a separator part, the runs between them cut by the scanner, stop symbols cut
        out of the pieces (``SplitPipeline._split``'s order)."""
        cdef Py_ssize_t i = first, run = first, byte_at = 0, run_byte = 0, k, b, char_at, walked, piece_start
        cdef bint at_break, gap
        cdef uint8_t lead
        cdef bint has_kinds = self.kinds.shape[0] != 0
        while True:
            at_break = i < last and has_kinds and (self.kinds[ids[i]] & BREAK_BIT)
            if i == last or at_break:
                if i > run:  # the run [run, i) between breaks
                    if self.pattern == NO_PATTERN_ID:
                        self._push_piece(ids, run, i, False, start, part_offsets, separator)
                    else:
                        split_pieces(utf8 + run_byte, byte_at - run_byte, &self.classes[0], self.pattern, bounds)
                        char_at = run
                        walked = run_byte
                        for k in range(1, <Py_ssize_t>bounds.size()):
                            b = run_byte + bounds[k]
                            gap = (self.pattern == PATTERN_WORDS and b == walked + 1 and utf8[walked] == UNDERSCORE)
                            piece_start = char_at
                            while walked < b:
                                if (utf8[walked] & 0xC0) != 0x80:
                                    char_at += 1
                                walked += 1
                            self._push_piece(ids, piece_start, char_at, gap, start, part_offsets, separator)
                if i == last:
                    return True
                separator.push_back(True)  # the break symbol, a part of its own
                part_offsets.push_back(start + i + 1)
                run = i + 1
            # the next character's first byte: its lead byte says how many follow
            lead = utf8[byte_at]
            byte_at += 1 if lead < 0x80 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
            i += 1
            if run == i:
                run_byte = byte_at

    cdef void _push_piece(self, const id_t* ids, Py_ssize_t first, Py_ssize_t last, bint gap, Py_ssize_t start,
                          vector[int64_t]& part_offsets, vector[uint8_t]& separator) noexcept nogil:
        """The piece ``ids[first:last]`` as a part (``gap``: a separator), each stop symbol in
        it (not a gap) cut out as a separator part of its own."""
        cdef Py_ssize_t k, cut = first
        if not gap and self.kinds.shape[0] != 0:
            for k in range(first, last):
                if self.kinds[ids[k]] & STOP_BIT:
                    if k > cut:
                        separator.push_back(False)
                        part_offsets.push_back(start + k)
                    separator.push_back(True)
                    part_offsets.push_back(start + k + 1)
                    cut = k + 1
        if last > cut:
            separator.push_back(gap)
            part_offsets.push_back(start + last)
