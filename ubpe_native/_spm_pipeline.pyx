# distutils: language = c++
"""Whole texts, many at once: normalize and encode a batch of texts without the GIL.

`SpmPipeline` runs `_spm.SpmNormalizer` and then the model - `_spm.SpmBPE` or
`_unigram.UnigramLattice` - on every text of a list in one call that releases the GIL once,
and builds the lists of ids at the end (`encode_flat`: flat arrays instead). It serves sentencepiece ``.model`` files and the HF
``tokenizer.json`` BPE models over characters whose pipeline it can run (`Metaspace`, the
legacy ``Prepend("▁") + Replace(" ", "▁")`` normalizer): for these a space is prepended
unless the text starts with one (``prefix_unless_space``), and a text holding one of the
*triggers* (added tokens, say) is given back as ``None`` for the caller to encode on its
slower, general path.
"""

from cpython.list cimport PyList_New, PyList_SET_ITEM
from cpython.ref cimport Py_INCREF
from cpython.unicode cimport PyUnicode_AsUTF8AndSize
from libc.stdint cimport int64_t, uint8_t, uint64_t
from libcpp.string cimport string
from libcpp.vector cimport vector

from ubpe_native._checks cimport build_once, check_offsets
from ubpe_native._combine cimport id_list, id_table
from ubpe_native._flat_map cimport FlatMap
from ubpe_native._merge_core cimport ScratchPool
from ubpe_native._numpy import np
from ubpe_native._shared cimport id_array, utf8_length
from ubpe_native._spm cimport BpeScratch, SpmBPE, SpmNormalizer
from ubpe_native._typedefs cimport id_t
from ubpe_native._unigram cimport UnigramLattice

cdef const char* ESCAPED_SPACE = b"\xe2\x96\x81"  # U+2581
cdef id_t NO_TRIGGER = -2
cdef id_t HAND_BACK = -1
# the ids below this take shared int objects in the lists (the rest: new ints)
cdef Py_ssize_t ID_TABLE = 1 << 16


cdef class SpmPipeline:
    """``SpmPipeline(normalizer, model, prefix_unless_space=False, trigger_blob=b"",
    trigger_offsets=[0], trigger_ids=None, prefix_after_cut=False)``: normalize and encode texts without the GIL; ``model`` is an
    `SpmBPE` or a `_unigram.UnigramLattice` (which scores the normalizer's protected,
    user-defined pieces in its lattice, as sentencepiece does). ``prefix_unless_space``: ``▁`` goes in front
    of a text that starts with neither a space nor ``▁`` (HF's ``Metaspace``). Trigger ``k``
    is ``trigger_blob[trigger_offsets[k]:trigger_offsets[k+1]]`` with id ``trigger_ids[k]``
    (-1, the default: hand the text back; the first of equal triggers counts).

    >>> import numpy as np
    >>> from ubpe_native._spm import SpmNormalizer
    >>> from ubpe_native._unigram import UnigramLattice
    >>> norm = SpmNormalizer(np.zeros(0, np.uint32), b"", True, True, True, False, b"", np.array([0]),
    ...                      np.zeros(0, np.int32))
    >>> lattice = UnigramLattice("▁ab".encode(), np.array([0, 3, 4, 5]), np.array([1, 2, 3], np.int32),
    ...                          np.array([-1, -1, -1], np.float32), np.zeros(3, np.uint8), 0, -11.0,
    ...                          np.full(256, -1, np.int32))
    >>> SpmPipeline(norm, lattice).encode_batch(["ab  ba", "", "a"])
    [[1, 2, 3, 1, 3, 2], [], [1, 2]]
    >>> SpmPipeline(norm, lattice, False, b"ba", np.array([0, 2])).encode_batch(["ab  ba", None, "a"])
    [None, None, [1, 2]]
    """

    cdef readonly SpmNormalizer normalizer
    cdef readonly object model
    cdef SpmBPE bpe
    cdef UnigramLattice unigram
    cdef readonly bint prefix_unless_space
    cdef readonly bint prefix_after_cut
    cdef FlatMap triggers  # node << 8 | byte -> child node
    cdef vector[id_t] trigger_ends  # node -> id of the trigger ending there, HAND_BACK, or NO_TRIGGER
    cdef bint has_hand_back
    cdef ScratchPool scratches  # idle BpeScratch objects: each call takes one (its word cache lives on)
    cdef list ints  # ints[i] is i (_combine.id_table), for the ids below ID_TABLE, once `made` reached it
    cdef Py_ssize_t made  # ids `encode_batch` has made into ints so far
    cdef bint trigger_first[256]  # bytes a trigger starts with

    def __cinit__(self, *args, **kwargs):
        # here, not in __init__: even an object __init__ never ran on has its pool
        self.scratches = ScratchPool(BpeScratch)

    cdef bint built  # __init__ ran (build_once)

    def __init__(self, SpmNormalizer normalizer not None, model, bint prefix_unless_space=False,
                 const uint8_t[::1] trigger_blob not None = b"",
                 const int64_t[::1] trigger_offsets = None, const id_t[::1] trigger_ids = None,
                 bint prefix_after_cut=False):
        build_once(&self.built, self)
        cdef Py_ssize_t k, j
        cdef int64_t node
        cdef int64_t* slot
        self.normalizer = normalizer
        self.model = model
        self.prefix_unless_space = prefix_unless_space
        if isinstance(model, SpmBPE):
            self.bpe = model
        elif isinstance(model, UnigramLattice):
            self.unigram = model
        else:
            raise TypeError(f"model must be an SpmBPE or a UnigramLattice, not {type(model).__name__}")
        for k in range(256):
            self.trigger_first[k] = False
        self.prefix_after_cut = prefix_after_cut
        self.ints = id_table(0)  # (the process's table as it is: a load builds none, 1-2 ms for 32k ids)
        self.has_hand_back = False
        self.trigger_ends.push_back(NO_TRIGGER)
        if trigger_offsets is None:
            if trigger_blob.shape[0] or trigger_ids is not None:
                raise ValueError("trigger_blob and trigger_ids need trigger_offsets")
            return
        check_offsets(trigger_offsets, trigger_blob.shape[0], "trigger_offsets", 1)
        if trigger_ids is not None:
            if trigger_ids.shape[0] != trigger_offsets.shape[0] - 1:
                raise ValueError("trigger_ids needs one id per trigger")
            for k in range(trigger_ids.shape[0]):
                if trigger_ids[k] < -1:
                    raise ValueError(f"trigger_ids may hold ids or -1, not {trigger_ids[k]}")
                if trigger_ids[k] >= 0 and (self.bpe is None or trigger_ids[k] >= self.bpe.n_ids):
                    raise ValueError(f"trigger id {trigger_ids[k]} is not an id of the model (an SpmBPE)")
        for k in range(trigger_offsets.shape[0] - 1):
            node = 0
            self.trigger_first[trigger_blob[trigger_offsets[k]]] = True
            for j in range(trigger_offsets[k], trigger_offsets[k + 1]):
                slot = self.triggers.slot((<uint64_t>node << 8) | trigger_blob[j])
                if slot[0] == 0:
                    self.trigger_ends.push_back(NO_TRIGGER)
                    slot[0] = self.trigger_ends.size() - 1
                node = slot[0]
            if self.trigger_ends[node] == NO_TRIGGER:
                self.trigger_ends[node] = HAND_BACK if trigger_ids is None else trigger_ids[k]
                self.has_hand_back |= self.trigger_ends[node] == HAND_BACK

    def encode_batch(self, docs not None):
        """The ids of every text of ``docs`` (a sequence of str or None), as lists; ``None``
        for a None and for a text that holds a hand-back trigger."""
        cdef vector[id_t] out
        cdef vector[size_t] bounds
        cdef vector[uint8_t] skipped
        cdef Py_ssize_t n = self._encode_texts(docs, out, bounds, skipped), k
        cdef list result = PyList_New(n)
        cdef Py_ssize_t wanted = min(self.bpe.n_ids if self.bpe is not None else self.unigram.n_ids, ID_TABLE)
        if len(self.ints) < wanted:  # the table, once it saves as many ints as it makes
            self.made += out.size()
            if self.made >= wanted:
                self.ints = id_table(wanted)
        for k in range(n):
            item = None if skipped[k] else id_list(self.ints, out.data() + bounds[k], bounds[k + 1] - bounds[k])
            Py_INCREF(item)
            PyList_SET_ITEM(result, k, item)
        return result

    def encode_flat(self, docs not None):
        """:meth:`encode_batch` as arrays, no list per text: ``(ids, offsets, skipped)``, text
        ``k``'s ids ``ids[offsets[k]:offsets[k + 1]]`` (int32, int64), ``skipped[k]`` 1 (uint8)
        where :meth:`encode_batch` gives ``None`` (its ids then empty)."""
        cdef vector[id_t] out
        cdef vector[size_t] bounds
        cdef vector[uint8_t] skipped
        cdef Py_ssize_t n = self._encode_texts(docs, out, bounds, skipped), k
        offsets = np.empty(n + 1, dtype=np.int64)
        flags = np.empty(n, dtype=np.uint8)
        cdef int64_t[::1] offset_view = offsets
        cdef uint8_t[::1] flag_view = flags
        for k in range(n):
            offset_view[k] = bounds[k]
            flag_view[k] = skipped[k]
        offset_view[n] = bounds[n]
        return id_array(out), offsets, flags

    cdef Py_ssize_t _encode_texts(self, docs, vector[id_t]& out, vector[size_t]& bounds,
                                  vector[uint8_t]& skipped) except -1:
        """Encodes ``docs`` into ``out`` (text ``k``'s ids from ``bounds[k]`` to ``bounds[k + 1]``,
        ``skipped[k]`` set for a None or a hand-back); returns how many texts."""
        cdef tuple texts = tuple(docs)  # holds the strs (whose UTF-8 we read) while the GIL is out
        cdef Py_ssize_t n = len(texts), k, size
        cdef vector[const uint8_t*] data
        cdef vector[Py_ssize_t] sizes
        cdef const char* utf8
        data.resize(n)
        sizes.resize(n)
        skipped.resize(n)
        for k in range(n):
            doc = texts[k]
            if doc is None:
                skipped[k] = 1
                continue
            if not isinstance(doc, str):
                raise TypeError(f"docs[{k}] must be a str, not {type(doc).__name__}")
            utf8 = PyUnicode_AsUTF8AndSize(doc, &size)  # UnicodeEncodeError: a lone surrogate
            data[k] = <const uint8_t*>utf8
            sizes[k] = size
        bounds.push_back(0)
        # taken and given back under the GIL: threads never share a scratch
        cdef BpeScratch scratch = <BpeScratch>self.scratches.take()
        try:
            with nogil:
                self._encode_all(data, sizes, skipped, out, bounds, scratch)
        finally:
            self.scratches.give(scratch)
        return n

    cdef id_t _longest_trigger(self, const uint8_t* data, Py_ssize_t size, Py_ssize_t* length,
                               bint hand_back) noexcept nogil:
        """The id of the longest trigger at ``data`` (a cut one, or with ``hand_back`` a hand-back
        one), its bytes in ``length``; NO_TRIGGER: none."""
        cdef Py_ssize_t k
        cdef int64_t node = 0
        cdef id_t found = NO_TRIGGER, end
        for k in range(size):
            node = self.triggers.get((<uint64_t>node << 8) | data[k], 0)
            if node == 0:
                break
            end = self.trigger_ends[node]
            if end == NO_TRIGGER or (end == HAND_BACK) != hand_back:
                continue
            found = end
            length[0] = k + 1
        return found

    cdef int _cuts(self, const uint8_t* data, Py_ssize_t size, vector[int64_t]& cuts) except -1 nogil:
        """``cuts`` (start, stop, id triples): the cut triggers of ``data[:size]``,
        leftmost-longest; returns 1 when a hand-back trigger occurs anywhere (cuts then unset)."""
        cdef Py_ssize_t pos, length = 0
        cdef id_t token
        cuts.clear()
        if self.trigger_ends.size() == 1:
            return 0
        if self.has_hand_back:
            for pos in range(size):
                if self.trigger_first[data[pos]] and \
                        self._longest_trigger(data + pos, size - pos, &length, True) != NO_TRIGGER:
                    return 1
        pos = 0
        while pos < size:
            if self.trigger_first[data[pos]]:
                token = self._longest_trigger(data + pos, size - pos, &length, False)
                if token != NO_TRIGGER:
                    cuts.push_back(pos)
                    cuts.push_back(pos + length)
                    cuts.push_back(token)
                    pos += length
                    continue
            pos += 1
        return 0

    cdef int _encode_all(self, const vector[const uint8_t*]& data, const vector[Py_ssize_t]& sizes,
                         vector[uint8_t]& skipped, vector[id_t]& out, vector[size_t]& bounds,
                         BpeScratch scratch) except -1 nogil:
        cdef string normalized
        cdef size_t k, c
        cdef const uint8_t* text
        cdef Py_ssize_t size, start
        cdef vector[int64_t] cuts
        cdef vector[double] best_score  # the lattice's scratch, reused from text to text
        cdef vector[int64_t] best_start, path
        cdef vector[id_t] best_id
        for k in range(data.size()):
            text = data[k]
            size = sizes[k]
            if not skipped[k] and self._cuts(text, size, cuts):
                skipped[k] = 1
            if skipped[k]:
                bounds.push_back(out.size())
                continue
            start = 0
            for c in range(0, cuts.size(), 3):
                self._encode_one(text, start, cuts[c], out, normalized, scratch, best_score, best_start,
                                 best_id, path)
                out.push_back(<id_t>cuts[c + 2])
                start = cuts[c + 1]
            self._encode_one(text, start, size, out, normalized, scratch, best_score, best_start, best_id, path)
            bounds.push_back(out.size())
        return 0

    cdef int _encode_one(self, const uint8_t* text, Py_ssize_t start, Py_ssize_t stop, vector[id_t]& out,
                         string& normalized, BpeScratch scratch, vector[double]& best_score,
                         vector[int64_t]& best_start, vector[id_t]& best_id,
                         vector[int64_t]& path) except -1 nogil:
        """Appends the ids of the stretch ``text[start:stop]``."""
        cdef const uint8_t* data = text + start
        cdef Py_ssize_t size = stop - start
        if size <= 0:
            return 0
        normalized.clear()
        if (self.prefix_unless_space if start == 0 else self.prefix_after_cut) and data[0] != b" " and not (
                size >= 3 and data[0] == 0xE2 and data[1] == 0x96 and data[2] == 0x81):
            normalized.append(ESCAPED_SPACE, 3)
        self.normalizer.normalize_into(data, size, normalized)
        if normalized.size():
            if self.bpe is not None:
                self.bpe.encode_into(<const uint8_t*>normalized.data(), normalized.size(), out, scratch)
            else:
                # the whole text: the lattice scores the user-defined pieces, as sentencepiece does
                self.unigram._encode_with(<const uint8_t*>normalized.data(), normalized.size(), out,
                                          best_score, best_start, best_id, path)
        return 0

