# distutils: language = c++
"""Pair-ranked BPE inference: the merge loop of llama.cpp's BPE and SPM tokenizers.

A word (bytes) starts as a list of *units*: its single bytes (byte-level BPE) or its UTF-8
characters (sentencepiece-style BPE), each mapped to an id by ``unit_ids``. The merge rules are
explicit pairs: ``(left, right) -> (rank, result)``. Of all adjacent pairs that have a rule, the
one of lowest rank merges first, the leftmost on ties (llama.cpp's ``llm_bigram_bpe`` and
``llm_bigram_spm`` orders); the word is done when no adjacent pair has a rule. Unlike
`_ranked.MergeTable`, a rule is a pair, not a piece: ``a bc`` and ``ab c`` may have different
ranks or no rule at all, exactly as a merges list says.

The merge loop and the rule table are `_merge_core`'s; this module adds the unit cutter in
front and the writing out behind. Ids ``>= n_ids`` are *intermediate* symbols (a merge result
or a unit that is no token): they merge like tokens but are written out as their expansion (a
list of token ids, maybe empty). A unit missing from ``unit_ids`` never merges and is written
as the byte-fallback ids of its bytes. HF ``tokenizers``' ``BPE::merge_word`` treats a unit that
is no token otherwise, before merging: without an unknown token it drops it (its neighbours
become adjacent and may merge), with one the unit *is* the unknown token (which merges as any
token does), with ``fuse_unk`` a run of such units is one unknown token: `DROPPED` and `FUSED`
units say so. Results of whole words are cached (``word bytes ->
ids``), so a repeated word costs one hash lookup: the cache is `_merge_core`'s, one per
scratch, and a call takes an idle scratch from the table's pool (no lock: threads never share
a scratch).

``PairMerges.encode_texts`` splits (the scanner of `_pretokenize`) and encodes many documents in
one call without the GIL, for ``encode_batch``; ``id_lists`` cuts its flat ids into lists.

>>> import numpy as np
>>> i32 = lambda *v: np.array(v, np.int32)
>>> # units: byte 'a' -> 0, 'b' -> 1; rules: (0 1) -> 2 rank 0, (2 2) -> 3 rank 1
>>> table = PairMerges(4, i32(0, 2), i32(1, 2), i32(2, 3), np.array([0, 1]),
...                    np.array([0], np.int64), i32(), pack_units([b"a", b"b"]), i32(0, 1),
...                    np.full(256, -1, np.int32), False, b"", np.array([0], np.int64), i32())
>>> table.encode(np.frombuffer(b"ababa", np.uint8), np.array([0, 5])).tolist()
[3, 0]
"""

from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcpy
from libcpp.vector cimport vector
from cpython cimport array as carray
from cpython.list cimport PyList_New, PyList_SET_ITEM
from cpython.ref cimport Py_INCREF
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.unicode cimport PyUnicode_AsUTF8AndSize, PyUnicode_AsUTF8String, PyUnicode_GET_LENGTH

from ubpe_native._numpy import np

from ubpe_native._combine cimport id_list, id_table_for
from ubpe_native._checks cimport as_array, build_once, check_ids, check_offsets
from ubpe_native._flat_map cimport FlatMap
from ubpe_native._merge_core cimport (MAX_RANK, MergeHooks, MergeScratch, MergeWord, ScratchPool, WordCache,
                                      cache_find, cache_store, check_rules, merge_word, rule_add)
from ubpe_native._hf_pretok cimport HFPreTokenizer, PretokBuffers
from ubpe_native._pretokenize cimport (check_split_arguments, class_t, document_flags, document_starts, flag_table,
                                       holds_flagged, split_document, utf8_documents)
from ubpe_native._typedefs cimport id_t
from ubpe_native._shared cimport id_array, utf8_length

# a unit that is no token (never merges; written as byte fallback)
cdef id_t UNKNOWN_UNIT = -2
# what `PairMerges` takes in ``unit_id_values`` for HF's units that are no token: dropped before
# merging, or one unknown token (``fuse_id``) for a run of them
DROPPED = -1
FUSED = -2
# ... and how they are stored in the unit table (an id is stored as id + 1, no unit as 0)
cdef int64_t DROPPED_SLOT = -10
cdef int64_t FUSED_SLOT = -20
# FlatMap reserves the all-ones key for empty slots; unit keys never reach it (see unit_key).
# Whole-word results are cached up to this many words per scratch, then the cache starts over.
cdef size_t CACHE_LIMIT = 1 << 18
# Longer words (a whole sentencepiece-style text, say) are not cached.
cdef Py_ssize_t CACHE_MAX_WORD = 256
# id lists take the int objects of ids below this from one table shared by the kernels
# (_combine.id_table_for: up to 65,536 ints, ~2 MB, grown as ids are handed out); a larger id
# gets a new int.
cdef Py_ssize_t ID_TABLE = 1 << 16
# code points, the size of a ``flagged`` table (as in _pretokenize)
cdef Py_ssize_t N_CODE_POINTS = 0x110000


# encode_texts: what became of each document
cdef enum:
    DOC_ENCODED = 0
    DOC_SKIPPED = 1  # the caller asked for it (``skip``)
    DOC_FLAGGED = 2  # it holds a code point of the ``flagged`` table
cdef uint8_t BLANK = 0x20


cdef inline uint64_t unit_key(const uint8_t* s, Py_ssize_t n) noexcept nogil:
    """A unit (1 to 4 bytes) as one key: its bytes, little end first, and its length."""
    cdef uint64_t key = <uint64_t>n << 32
    cdef Py_ssize_t k
    for k in range(n):
        key |= <uint64_t>s[k] << (8 * k)
    return key


def id_lists(ids, offsets):
    """The flat ``ids`` of a batch call as one list per document (document ``d``'s are
    ``ids[offsets[d]:offsets[d + 1]]``), built at once: what ``tolist`` and slices give.

    >>> id_lists(np.array([7, 8, 9], np.int32), np.array([0, 2, 2, 3]))
    [[7, 8], [], [9]]
    """
    cdef const id_t[::1] flat = as_array(ids, np.int32, "ids")
    cdef const int64_t[::1] cuts = as_array(offsets, np.int64, "offsets")
    check_offsets(cuts, flat.shape[0], "offsets")
    cdef Py_ssize_t n_docs = cuts.shape[0] - 1, d
    cdef list ints = id_table_for(ID_TABLE, flat.shape[0])
    cdef const id_t* data = &flat[0] if flat.shape[0] else NULL
    out = PyList_New(n_docs)
    for d in range(n_docs):
        doc = id_list(ints, data + cuts[d], cuts[d + 1] - cuts[d])
        Py_INCREF(doc)  # SET_ITEM takes the reference that ``doc`` gives back
        PyList_SET_ITEM(out, d, doc)
    return out


cdef carray.array UINT64_TEMPLATE = carray.array("Q")


def pack_units(units):
    """The keys of units (``bytes`` of 1 to 4 bytes each), as `PairMerges` takes them: an
    ``array.array`` of typecode ``Q`` (no numpy needed to load a model)."""
    cdef Py_ssize_t k, n = len(units)
    cdef carray.array keys = carray.clone(UINT64_TEMPLATE, n, False)
    cdef uint64_t[::1] view = keys
    cdef bytes unit
    for k in range(n):
        unit = units[k]
        if not 1 <= len(unit) <= 4:
            raise ValueError(f"unit {unit!r} does not hold 1 to 4 bytes")
        view[k] = unit_key(<const uint8_t*><const char*>unit, len(unit))
    return keys




cdef enum:
    SHORT_TEXT = 256  # a text of at most this many UTF-8 bytes is encoded without releasing the GIL

# a TextScratch's buffers grown past this many bytes by a long document are given back when its
# call ends (one scratch per thread stays in the pool)
cdef size_t KEPT_BUFFER_BYTES = 1 << 20


# free a buffer's memory if it holds more than KEPT_BUFFER_BYTES (it is emptied)
cdef inline void give_back_bytes(vector[uint8_t]& buffer) noexcept nogil:
    cdef vector[uint8_t] empty
    if buffer.capacity() > KEPT_BUFFER_BYTES:
        buffer.swap(empty)


cdef inline void give_back_offsets(vector[int64_t]& buffer) noexcept nogil:
    cdef vector[int64_t] empty
    if buffer.capacity() * sizeof(int64_t) > KEPT_BUFFER_BYTES:
        buffer.swap(empty)


cdef inline void give_back_ids(vector[id_t]& buffer) noexcept nogil:
    cdef vector[id_t] empty
    if buffer.capacity() * sizeof(id_t) > KEPT_BUFFER_BYTES:
        buffer.swap(empty)


cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object) nogil


cdef class TextScratch(MergeScratch):
    """A `MergeScratch` with `PairMerges._encode_texts`' text working space: the
    pre-tokenizer program's buffers, the scanner's word bounds, a document with a blank put in
    front, one text's ids. Kept from call to call, so that a short text's ``encode`` allocates
    none of them (fresh ones were a sixth of ``encode("the cat")`` on Falcon's program: malloc,
    realloc and free)."""

    cdef PretokBuffers words
    cdef vector[int64_t] bounds, split_scratch
    cdef vector[uint8_t] spaced
    cdef vector[id_t] out

    cdef void release_large(self) noexcept nogil:
        """Give back the buffers a long document grew past `KEPT_BUFFER_BYTES`."""
        give_back_bytes(self.words.text)
        give_back_bytes(self.words.next_text)
        give_back_offsets(self.words.words)
        give_back_offsets(self.words.next_words)
        give_back_offsets(self.words.spans)
        give_back_offsets(self.bounds)
        give_back_offsets(self.split_scratch)
        give_back_bytes(self.spaced)
        give_back_ids(self.out)


cdef class PairMerges:
    """Explicit merge rules, ready for llama.cpp-style encoding (see the module docstring).

    ``PairMerges(n_ids, left, right, result, rank, expand_offsets, expand_ids, unit_keys,
    unit_id_values, byte_fallback, utf8_units, whole_blob, whole_offsets, whole_ids)``:

    * rule ``k`` merges ``left[k] right[k]`` into ``result[k]`` with ``rank[k]``; of two rules
      for one pair the first is kept (llama.cpp keeps the first merge line);
    * intermediate id ``n_ids + j`` expands to ``expand_ids[expand_offsets[j]:expand_offsets[j+1]]``;
    * ``unit_keys[k]`` (a unit's bytes packed by `unit_key`) has id ``unit_id_values[k]``, or is
      `DROPPED` before merging, or `FUSED`: with the `FUSED` units next to it, the one token
      ``fuse_id`` (HF's unknown token with ``fuse_unk``); then without byte fallback (a
      unit written as fallback would have no span of its own);
    * ``byte_fallback[b]``: the id written for byte ``b`` of an unknown unit, -1 for none;
    * ``utf8_units``: units are UTF-8 characters, else single bytes;
    * ``whole_*``: words that become one token without merging (llama.cpp's ``ignore_merges``):
      word ``k`` is ``whole_blob[whole_offsets[k]:whole_offsets[k+1]]`` with id ``whole_ids[k]``.
    """

    cdef readonly id_t n_ids
    cdef readonly bint utf8_units
    cdef id_t fuse_id  # the token of a run of FUSED units
    cdef FlatMap pairs  # pair_key -> (rank << 32 | result) + 1
    cdef FlatMap units  # unit_key -> id + 1
    cdef vector[int64_t] expand_offsets
    cdef vector[id_t] expand_ids
    cdef id_t byte_fallback[256]
    cdef WordCache whole  # filled once in __init__, then only read (`lookup`): no lock
    # encode may run in several threads at once (it releases the GIL): each call takes an idle
    # scratch (and its word cache) from here
    cdef ScratchPool scratches

    def __cinit__(self, *args, **kwargs):
        # here, not in __init__: even an object __init__ never ran on has its pool
        self.scratches = ScratchPool(TextScratch)

    cdef bint built  # __init__ ran (build_once)

    def __init__(self, id_t n_ids, const id_t[::1] left not None, const id_t[::1] right not None,
                 const id_t[::1] result not None, const int64_t[::1] rank not None,
                 const int64_t[::1] expand_offsets not None, const id_t[::1] expand_ids not None,
                 const uint64_t[::1] unit_keys not None, const id_t[::1] unit_id_values not None,
                 const id_t[::1] byte_fallback not None, bint utf8_units,
                 const uint8_t[::1] whole_blob not None, const int64_t[::1] whole_offsets not None,
                 const id_t[::1] whole_ids not None, *, id_t fuse_id=-1):
        build_once(&self.built, self)
        cdef Py_ssize_t n_rules = left.shape[0], k, n_extra = expand_offsets.shape[0] - 1
        cdef bint hf_units = False
        cdef id_t id_limit
        cdef int64_t* slot
        if n_ids < 0 or n_extra < 0:
            raise ValueError("n_ids must be >= 0 and expand_offsets must hold at least one offset")
        if <int64_t>n_ids + n_extra >= MAX_RANK:
            raise ValueError("too many ids for 31 bits")
        id_limit = n_ids + <id_t>n_extra
        check_rules(left, right, result, rank, id_limit, id_limit)
        check_offsets(expand_offsets, expand_ids.shape[0], "expand_offsets")
        check_ids(expand_ids, n_ids, "expand_ids")
        if unit_keys.shape[0] != unit_id_values.shape[0]:
            raise ValueError("unit_keys and unit_id_values must have one length")
        for k in range(unit_keys.shape[0]):
            if unit_id_values[k] == DROPPED or unit_id_values[k] == FUSED:
                hf_units = True
                if unit_id_values[k] == FUSED and not 0 <= fuse_id < n_ids:
                    raise ValueError("a FUSED unit needs fuse_id, a token")
            elif not 0 <= unit_id_values[k] < id_limit:
                raise ValueError(f"unit {k} has an id outside 0..{id_limit - 1}")
            if not 1 <= (unit_keys[k] >> 32) <= 4:
                raise ValueError(f"unit key {k} does not hold 1 to 4 bytes")
        if byte_fallback.shape[0] != 256:
            raise ValueError("byte_fallback must hold 256 ids")
        for k in range(256):
            if not -1 <= byte_fallback[k] < n_ids:
                raise ValueError("byte_fallback holds an id that is no token")
            self.byte_fallback[k] = byte_fallback[k]
        cdef Py_ssize_t n_whole = whole_ids.shape[0]
        if whole_offsets.shape[0] != n_whole + 1:
            raise ValueError("whole_offsets must hold one offset more than whole_ids")
        check_offsets(whole_offsets, whole_blob.shape[0], "whole_offsets")
        check_ids(whole_ids, n_ids, "whole_ids")
        if whole_blob.shape[0] >= 0x7FFFFFFF or whole_blob.shape[0] // 4 + 4 * n_whole >= 0x7FFFFFFF:
            raise ValueError("whole words: fewer than 2**31 - 1 bytes, and of words")  # (the table's one arena)
        if hf_units and max(self.byte_fallback) >= 0:
            raise ValueError("DROPPED and FUSED units go without byte fallback")
        self.n_ids = n_ids
        self.utf8_units = utf8_units
        self.fuse_id = fuse_id
        for k in range(n_rules):
            rule_add(self.pairs, left[k], right[k], rank[k], result[k])
        for k in range(unit_keys.shape[0]):
            self.units.slot(unit_keys[k])[0] = (DROPPED_SLOT if unit_id_values[k] == DROPPED else
                                                FUSED_SLOT if unit_id_values[k] == FUSED else unit_id_values[k] + 1)
        self.expand_offsets.assign(&expand_offsets[0], &expand_offsets[0] + n_extra + 1)
        if expand_ids.shape[0]:
            self.expand_ids.assign(&expand_ids[0], &expand_ids[0] + expand_ids.shape[0])
        cdef const uint8_t* blob = &whole_blob[0] if whole_blob.shape[0] else NULL
        cdef vector[id_t] one
        for k in range(n_whole - 1, -1, -1):  # from the end: the last id of a repeated word wins
            one.clear()
            if not self.whole.find(blob + whole_offsets[k], whole_offsets[k + 1] - whole_offsets[k], one):
                one.push_back(whole_ids[k])
                self.whole.store(one, <size_t>-1)

    def encode(self, const uint8_t[::1] data not None, const int64_t[::1] bounds not None, *, bint as_list=False):
        """Ids of every word ``data[bounds[w]:bounds[w + 1]]``, concatenated (GIL released): an
        int32 array, or with ``as_list`` a list (no numpy needed: a model's first texts)."""
        cdef Py_ssize_t n_words = bounds.shape[0] - 1, w
        if n_words < 0:
            raise ValueError("bounds must hold at least one offset")
        for w in range(n_words):
            if bounds[w] > bounds[w + 1]:
                raise ValueError("bounds must be non-decreasing")
        if n_words and (bounds[0] < 0 or bounds[n_words] > data.shape[0]):
            raise ValueError("bounds reach outside data")
        cdef vector[id_t] out
        cdef MergeScratch scratch
        if n_words > 0 and data.shape[0] > 0:
            scratch = self.scratches.take()
            try:
                with nogil:
                    self._encode_words(&data[0], &bounds[0], n_words, out, scratch)
            finally:
                self.scratches.give(scratch)
        if as_list:
            return [token for token in out]
        return id_array(out)

    def encode_texts(self, const uint8_t[::1] data not None, char_lengths,
                     const class_t[::1] classes not None, int pattern, *, bint single_digits=False,
                     bint prefix_space=False, flagged=None, skip=None, HFPreTokenizer pretokenizer=None):
        """Split and encode many documents in one call without the GIL (``encode_batch``).

        ``data``: the documents' UTF-8 bytes back to back, ``char_lengths``: each one's length
        in code points. Each document is split by a preset ``pattern`` of `_pretokenize` (every
        number code point cut out on its own with ``single_digits``; a blank put in front of a
        non-empty one that has none with ``prefix_space``, as HF's ``ByteLevel`` does) and its
        pieces encoded as by `encode`. A document is left out (no ids; its status says why) if
        ``skip[d]`` is non-zero, or if it holds a code point ``cp`` with ``flagged[cp]``
        non-zero (a table of 0x110000 entries that flags no ASCII code point): the caller
        encodes those another way. With ``pretokenizer`` (an `_hf_pretok.HFPreTokenizer`)
        its program gives each document's words instead of ``pattern`` (which is then not
        read; ``single_digits`` and ``prefix_space`` must be off: the program's steps say that).

        Returns ``(ids, offsets, status)``: document ``d``'s ids are
        ``ids[offsets[d]:offsets[d + 1]]``; ``status[d]`` is 0 (encoded), 1 (skipped) or 2
        (flagged).
        """
        cdef const int64_t[::1] starts
        if pretokenizer is None:
            starts = document_starts(data, char_lengths, classes.shape[0], pattern)
        else:
            if single_digits or prefix_space:
                raise ValueError("single_digits and prefix_space are the pretokenizer's steps, not options")
            starts = utf8_documents(data, char_lengths)
        cdef Py_ssize_t n_docs = starts.shape[0] - 1
        cdef const uint8_t[::1] skip_view = document_flags(skip, n_docs, "skip")
        flagged = flag_table(flagged)
        cdef const uint8_t[::1] flagged_view
        cdef const uint8_t* flagged_table = NULL
        if flagged is not None:
            flagged_view = flagged
            flagged_table = &flagged_view[0]
        offsets = np.zeros(n_docs + 1, dtype=np.int64)
        status = np.zeros(n_docs, dtype=np.uint8)
        cdef int64_t[::1] offset_view = offsets
        cdef uint8_t[::1] status_view = status
        cdef vector[id_t] out
        cdef TextScratch scratch
        if n_docs:
            scratch = <TextScratch>self.scratches.take()
            try:
                with nogil:
                    self._encode_texts(&data[0] if data.shape[0] else NULL, &starts[0], n_docs, &classes[0],
                                       pattern, single_digits, prefix_space, flagged_table, &skip_view[0],
                                       out, &offset_view[0], &status_view[0], scratch, pretokenizer)
            finally:
                scratch.release_large()
                self.scratches.give(scratch)
        return id_array(out), offsets, status

    def encode_one_text(self, str text not None, const class_t[::1] classes not None, int pattern, *,
                        bint single_digits=False, bint prefix_space=False, flagged=None,
                        HFPreTokenizer pretokenizer=None):
        """:meth:`encode_texts` of one str, its ids as a list, in one call (what ``encode`` of a
        short text pays is the call: no arrays in between). None if it holds a code point of
        ``flagged`` (the caller encodes it another way); UnicodeEncodeError for a lone
        surrogate, as ``text.encode("utf-8")``. ``flagged`` is a table of 0x110000 uint8 that
        flags no ASCII code point (checked in C: a constant table costs no numpy call)."""
        if pretokenizer is None:
            check_split_arguments(classes.shape[0], pattern)
        elif single_digits or prefix_space:
            raise ValueError("single_digits and prefix_space are the pretokenizer's steps, not options")
        cdef const uint8_t[::1] flagged_view
        cdef const uint8_t* flagged_table = NULL
        cdef Py_ssize_t k
        if flagged is not None:
            flagged_view = flagged
            if flagged_view.shape[0] != N_CODE_POINTS:
                raise ValueError("flagged must hold one entry per code point (0x110000)")
            for k in range(0x80):
                if flagged_view[k]:
                    raise ValueError("flagged may not flag ASCII code points")
            flagged_table = &flagged_view[0]
        return self._one_text(text, &classes[0], pattern, single_digits, prefix_space, flagged_table, pretokenizer)

    def text_ids(self, const class_t[::1] classes not None, int pattern, *, bint single_digits=False,
                 bint prefix_space=False, flagged=None, HFPreTokenizer pretokenizer=None):
        """:meth:`encode_one_text` with these arguments checked once and bound: a
        :class:`TextIds` to call with each text (a short text's ``encode`` pays one call of it)."""
        if pretokenizer is None:
            check_split_arguments(classes.shape[0], pattern)
        elif single_digits or prefix_space:
            raise ValueError("single_digits and prefix_space are the pretokenizer's steps, not options")
        cdef TextIds bound = TextIds()
        cdef Py_ssize_t k
        if flagged is not None:
            bound.flagged = flagged
            bound.has_flagged = True
            if bound.flagged.shape[0] != N_CODE_POINTS:
                raise ValueError("flagged must hold one entry per code point (0x110000)")
            for k in range(0x80):
                if bound.flagged[k]:
                    raise ValueError("flagged may not flag ASCII code points")
        bound.merges, bound.classes, bound.pattern = self, classes, pattern
        bound.single_digits, bound.prefix_space, bound.pretokenizer = single_digits, prefix_space, pretokenizer
        return bound

    cdef object _one_text(self, str text, const class_t* classes, int pattern, bint single_digits,
                          bint prefix_space, const uint8_t* flagged_table, HFPreTokenizer pretokenizer):
        """`encode_one_text`'s work, its arguments checked: the ids of ``text`` as a list (None:
        flagged); a short text's encode holds the GIL (releasing it costs more than the work)."""
        cdef const uint8_t* s
        cdef Py_ssize_t n
        data = None
        if PyUnicode_IS_ASCII(text) or PyUnicode_GET_LENGTH(text) <= SHORT_TEXT:
            # the str's own UTF-8 (an ASCII str's code points; else made once and kept by the str)
            s = <const uint8_t*>PyUnicode_AsUTF8AndSize(text, &n)
        else:  # a long text's copy is this call's
            data = PyUnicode_AsUTF8String(text)
            s = <const uint8_t*>PyBytes_AS_STRING(data)
            n = PyBytes_GET_SIZE(data)
        cdef int64_t starts[2]
        cdef int64_t offsets[2]
        cdef uint8_t skip = 0, status = 0
        starts[0] = 0
        starts[1] = n
        offsets[0] = offsets[1] = 0
        cdef TextScratch scratch = <TextScratch>self.scratches.take()
        scratch.out.clear()
        try:
            if n <= SHORT_TEXT:
                self._encode_texts(s, starts, 1, classes, pattern, single_digits, prefix_space, flagged_table,
                                   &skip, scratch.out, offsets, &status, scratch, pretokenizer)
            else:
                with nogil:
                    self._encode_texts(s, starts, 1, classes, pattern, single_digits, prefix_space, flagged_table,
                                       &skip, scratch.out, offsets, &status, scratch, pretokenizer)
            if status == DOC_FLAGGED:
                ids = None
            else:
                ids = id_list(id_table_for(ID_TABLE, scratch.out.size()), scratch.out.data(), scratch.out.size())
        finally:
            scratch.release_large()
            self.scratches.give(scratch)
        return ids

    cdef int _encode_texts(self, const uint8_t* data, const int64_t* starts, Py_ssize_t n_docs,
                           const class_t* classes, int pattern, bint single_digits,
                           bint prefix_space, const uint8_t* flagged, const uint8_t* skip,
                           vector[id_t]& out, int64_t* offsets, uint8_t* status,
                           TextScratch scratch, HFPreTokenizer pretokenizer) except -1 nogil:
        # growing containers raise MemoryError (``except -1``); the working space is the
        # scratch's: the program's buffers (None: the scanner's bounds), a document with the
        # blank put in front
        cdef bint programmed = pretokenizer is not None
        cdef Py_ssize_t w
        cdef Py_ssize_t d, n
        cdef const uint8_t* s
        for d in range(n_docs):
            s = data + starts[d]
            n = starts[d + 1] - starts[d]
            if skip[d]:
                status[d] = DOC_SKIPPED
            elif flagged != NULL and holds_flagged(s, n, flagged):
                status[d] = DOC_FLAGGED
            elif n and programmed:
                pretokenizer.run(s, n, scratch.words)
                for w in range(0, <Py_ssize_t>scratch.words.words.size(), 2):  # a word: its (start, end) as bounds
                    self._encode_words(scratch.words.text.data(), &scratch.words.words[w], 1, out, scratch)
            elif n:
                if prefix_space and s[0] != BLANK:
                    scratch.spaced.resize(n + 1)
                    scratch.spaced[0] = BLANK
                    memcpy(&scratch.spaced[1], s, n)
                    s = scratch.spaced.data()
                    n += 1
                split_document(s, n, classes, pattern, single_digits, scratch.bounds, scratch.split_scratch)
                self._encode_words(s, scratch.bounds.data(), <Py_ssize_t>scratch.bounds.size() - 1, out, scratch)
            offsets[d + 1] = out.size()
        return 0

    def clear_cache(self):
        """Forget the cached words."""
        self.scratches.clear()

    def cache_size(self):
        """How many words are cached (by the scratches no call is using: a scratch in use is
        not read, another thread may be writing it)."""
        return self.scratches.cached_words()

    cdef int _encode_words(self, const uint8_t* data, const int64_t* bounds, Py_ssize_t n_words,
                           vector[id_t]& out, MergeScratch scratch) except -1 nogil:
        """Append the ids of every word to ``out``, through the scratch's cache of whole words
        (the scratch is this call's alone: no lock). Growing containers raise MemoryError
        (``except -1``)."""
        cdef Py_ssize_t w, length
        cdef const uint8_t* word
        for w in range(n_words):
            length = bounds[w + 1] - bounds[w]
            word = data + bounds[w]
            if length == 0:
                continue
            if length > CACHE_MAX_WORD:
                self._merge_word(word, length, out, scratch)
            elif not cache_find(scratch.cache, word, length, out):
                scratch.word_out.clear()
                self._merge_word(word, length, scratch.word_out, scratch)
                out.insert(out.end(), scratch.word_out.begin(), scratch.word_out.end())
                cache_store(scratch.cache, scratch.word_out, CACHE_LIMIT)
        return 0

    cdef int _merge_word(self, const uint8_t* word, Py_ssize_t length, vector[id_t]& out,
                         MergeScratch scratch) except -1 nogil:
        """Cut ``word`` into units, merge them (`_merge_core.merge_word`) and append the ids."""
        cdef Py_ssize_t pos = 0, n, i
        cdef int32_t node
        cdef id_t token
        cdef MergeHooks hooks  # none: the plain loop
        cdef MergeWord* nodes = &scratch.word
        hooks.frozen = False
        hooks.unused = NULL
        hooks.dropout = 0.0
        hooks.rng = NULL
        if self.whole.size() and self.whole.lookup(word, length, out):
            return 0
        cdef int64_t slot
        cdef Py_ssize_t fused_end = -1  # where the last FUSED unit ends
        nodes.token_at.clear()
        scratch.node_start.clear()
        while pos < length:
            n = utf8_length(word[pos]) if self.utf8_units else 1
            if n > length - pos:
                n = length - pos
            slot = self.units.get(unit_key(word + pos, n), 0)
            if slot > 0:
                token = <id_t>(slot - 1)
            elif slot == 0:
                token = UNKNOWN_UNIT
            elif slot == DROPPED_SLOT:  # HF's merge_word: no token and no unknown token
                pos += n
                continue
            elif fused_end == pos:  # FUSED right after FUSED: the same unknown token
                pos += n
                fused_end = pos
                continue
            else:  # the first FUSED unit of a run
                token = self.fuse_id
                fused_end = pos + n
            nodes.token_at.push_back(token)
            scratch.node_start.push_back(pos)
            pos += n
        if nodes.token_at.empty():  # every unit dropped
            return 0
        scratch.node_start.push_back(length)
        merge_word(self.pairs, nodes[0], nodes.token_at.size(), hooks)
        node = 0
        while node >= 0:
            token = nodes.token_at[node]
            if token == UNKNOWN_UNIT:
                for i in range(scratch.node_start[node], scratch.node_start[node + 1]):
                    if self.byte_fallback[word[i]] >= 0:
                        out.push_back(self.byte_fallback[word[i]])
            elif token >= self.n_ids:
                i = token - self.n_ids
                out.insert(out.end(), self.expand_ids.begin() + self.expand_offsets[i],
                           self.expand_ids.begin() + self.expand_offsets[i + 1])
            else:
                out.push_back(token)
            node = nodes.next_node[node]
        return 0


cdef class TextIds:
    """`PairMerges.encode_one_text` with its arguments bound (`PairMerges.text_ids`): calling it
    with a str gives the text's ids as a list (None: it holds a flagged code point); a lone
    surrogate raises UnicodeEncodeError."""

    cdef PairMerges merges
    cdef const class_t[::1] classes
    cdef const uint8_t[::1] flagged  # set only with has_flagged (an unset view is not read)
    cdef bint has_flagged
    cdef int pattern
    cdef bint single_digits, prefix_space
    cdef HFPreTokenizer pretokenizer

    def __call__(self, str text not None):
        """The ids of ``text`` as a list; None if it holds a flagged code point."""
        cdef const uint8_t* flagged = NULL
        if self.merges is None:
            raise ValueError("TextIds is made by PairMerges.text_ids")
        if self.has_flagged:
            flagged = &self.flagged[0]
        return self.merges._one_text(text, &self.classes[0], self.pattern, self.single_digits, self.prefix_space,
                                     flagged, self.pretokenizer)
