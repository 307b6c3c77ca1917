# distutils: language = c++
"""Whole texts, many at once: normalize and encode a batch of texts without the GIL.

`SpmPipeline` runs `_spm.SpmNormalizer` and then the model - `_spm.SpmBPE` or
`_unigram.UnigramLattice` - on every text of a list in one call that releases the GIL once,
and builds the lists of ids at the end. It serves sentencepiece ``.model`` files and the HF
``tokenizer.json`` BPE models over characters whose pipeline it can run (`Metaspace`, the
legacy ``Prepend("▁") + Replace(" ", "▁")`` normalizer): for these a space is prepended
unless the text starts with one (``prefix_unless_space``), and a text holding one of the
*triggers* (added tokens, say) is given back as ``None`` for the caller to encode on its
slower, general path.
"""

from cpython.list cimport PyList_New, PyList_SET_ITEM
from cpython.long cimport PyLong_FromLong
from cpython.ref cimport Py_INCREF
from cpython.unicode cimport PyUnicode_AsUTF8AndSize
from libc.stdint cimport int64_t, uint8_t, uint64_t
from libcpp.string cimport string
from libcpp.vector cimport vector

from ubpe_native._checks cimport check_offsets
from ubpe_native._flat_map cimport FlatMap
from ubpe_native._shared cimport utf8_length
from ubpe_native._spm cimport BpeScratch, SpmBPE, SpmNormalizer
from ubpe_native._typedefs cimport id_t
from ubpe_native._unigram cimport UnigramLattice

cdef const char* ESCAPED_SPACE = b"\xe2\x96\x81"  # U+2581


cdef list id_list(const id_t* values, Py_ssize_t n):
    """``values[:n]`` as a new list of ints."""
    cdef list result = PyList_New(n)
    cdef Py_ssize_t j
    for j in range(n):
        item = PyLong_FromLong(values[j])
        Py_INCREF(item)  # PyList_SET_ITEM steals the reference the local variable gives back
        PyList_SET_ITEM(result, j, item)
    return result


cdef class SpmPipeline:
    """``SpmPipeline(normalizer, model, prefix_unless_space=False, trigger_blob=b"",
    trigger_offsets=[0])``: normalize and encode texts without the GIL; ``model`` is an
    `SpmBPE` or a `_unigram.UnigramLattice` (whose texts are cut at the protected pieces of
    the normalizer first, each piece its own id). ``prefix_unless_space``: ``▁`` goes in front
    of a text that starts with neither a space nor ``▁`` (HF's ``Metaspace``). Trigger ``k``
    is ``trigger_blob[trigger_offsets[k]:trigger_offsets[k+1]]``.

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
    cdef FlatMap triggers  # node << 8 | byte -> child node
    cdef vector[uint8_t] trigger_ends  # node -> 1 where a trigger ends
    cdef bint trigger_first[256]  # bytes a trigger starts with

    def __init__(self, SpmNormalizer normalizer not None, model, bint prefix_unless_space=False,
                 const uint8_t[::1] trigger_blob not None = b"",
                 const int64_t[::1] trigger_offsets = None):
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
        self.trigger_ends.push_back(0)
        if trigger_offsets is None:
            if trigger_blob.shape[0]:
                raise ValueError("trigger_blob needs trigger_offsets")
            return
        check_offsets(trigger_offsets, trigger_blob.shape[0], "trigger_offsets", 1)
        for k in range(trigger_offsets.shape[0] - 1):
            node = 0
            self.trigger_first[trigger_blob[trigger_offsets[k]]] = True
            for j in range(trigger_offsets[k], trigger_offsets[k + 1]):
                slot = self.triggers.slot((<uint64_t>node << 8) | trigger_blob[j])
                if slot[0] == 0:
                    self.trigger_ends.push_back(0)
                    slot[0] = self.trigger_ends.size() - 1
                node = slot[0]
            self.trigger_ends[node] = 1

    def encode_batch(self, docs not None):
        """The ids of every text of ``docs`` (a sequence of str or None), as lists; ``None``
        for a None and for a text that holds a trigger."""
        cdef tuple texts = tuple(docs)  # holds the strs (whose UTF-8 we read) while the GIL is out
        cdef Py_ssize_t n = len(texts), k, size
        cdef vector[const uint8_t*] data
        cdef vector[Py_ssize_t] sizes
        cdef vector[size_t] bounds
        cdef vector[uint8_t] skipped
        cdef vector[id_t] out
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
        cdef BpeScratch scratch = BpeScratch()
        with nogil:
            self._encode_all(data, sizes, skipped, out, bounds, scratch)
        cdef list result = PyList_New(n)
        for k in range(n):
            item = None if skipped[k] else id_list(out.data() + bounds[k], bounds[k + 1] - bounds[k])
            Py_INCREF(item)
            PyList_SET_ITEM(result, k, item)
        return result

    cdef bint _triggered(self, const uint8_t* data, Py_ssize_t size) noexcept nogil:
        """Whether a trigger occurs in ``data[:size]``."""
        cdef Py_ssize_t pos, k
        cdef int64_t node
        if self.trigger_ends.size() == 1:
            return False
        for pos in range(size):
            if not self.trigger_first[data[pos]]:
                continue
            node = 0
            for k in range(pos, size):
                node = self.triggers.get((<uint64_t>node << 8) | data[k], 0)
                if node == 0:
                    break
                if self.trigger_ends[node]:
                    return True
        return False

    cdef int _encode_all(self, const vector[const uint8_t*]& data, const vector[Py_ssize_t]& sizes,
                         vector[uint8_t]& skipped, vector[id_t]& out, vector[size_t]& bounds,
                         BpeScratch scratch) except -1 nogil:
        cdef string normalized
        cdef size_t k
        cdef const uint8_t* text
        cdef Py_ssize_t size
        cdef vector[float] best_score  # the lattice's scratch, reused from text to text
        cdef vector[int64_t] best_start, path
        cdef vector[id_t] best_id
        for k in range(data.size()):
            text = data[k]
            size = sizes[k]
            normalized.clear()
            if not skipped[k] and self._triggered(text, size):
                skipped[k] = 1
            if skipped[k] or size == 0:
                bounds.push_back(out.size())
                continue
            if self.prefix_unless_space and text[0] != b" " and not (
                    size >= 3 and text[0] == 0xE2 and text[1] == 0x96 and text[2] == 0x81):
                normalized.append(ESCAPED_SPACE, 3)
            self.normalizer.normalize_into(text, size, normalized)
            if normalized.size():
                if self.bpe is not None:
                    self.bpe.encode_into(<const uint8_t*>normalized.data(), normalized.size(), out, scratch)
                else:
                    self._unigram_into(<const uint8_t*>normalized.data(), normalized.size(), out,
                                       best_score, best_start, best_id, path)
            bounds.push_back(out.size())
        return 0

    cdef int _unigram_into(self, const uint8_t* data, Py_ssize_t size, vector[id_t]& out,
                           vector[float]& best_score, vector[int64_t]& best_start,
                           vector[id_t]& best_id, vector[int64_t]& path) except -1 nogil:
        """The lattice over the stretches between protected pieces (`CharModel._fragments`)."""
        cdef Py_ssize_t pos = 0, start = 0, used
        cdef id_t token
        while pos < size:
            used = self.normalizer.protected_at(data + pos, size - pos, &token)
            if used == 0:
                pos += utf8_length(data[pos])
                continue
            if pos > start:
                self.unigram._encode_with(data + start, pos - start, out, best_score, best_start, best_id, path)
            out.push_back(token)
            pos += used
            start = pos
        if size > start:
            self.unigram._encode_with(data + start, size - start, out, best_score, best_start, best_id, path)
        return 0
