# distutils: language = c++
"""Combining the parts' candidate lists into a document's top-n (ubpe 0.3.0's walk), and the
batch's encodings as the Python lists the API returns (or as four flat arrays, which
``encode_batch_to_numpy`` returns).

The reference builds a document's ``top_n`` encodings from the last part back: the tails
start as ``[([], 0.0)]``; for each part it pairs its candidates with the tails, always taking
the current pair and then advancing in the list whose next element gives the better
``(score, -length)`` (ties: a new candidate). It is a heuristic, not an exact k-best.

Tails are stored once, as a chain (this part's candidate, then the next part's tail), so the
walk costs ``O(parts * top_n)`` and never copies token lists; the chains are spelled out at
the end.

The lists are built in C from a table of the ids' int objects (``ids[t]`` is ``t``), shared
rather than created per token: a token costs a reference count, not an allocation, so the
part of ``encode_batch`` that holds the GIL stays small.

>>> import numpy as np
>>> # two parts: part 0 has candidates 0 ([5], 1.0) and 1 ([1, 2], 0.5); part 1 has ([3], 0.0)
>>> walk(np.array([0, 2, 3]), np.array([0, 1, 3, 4]), np.array([5, 1, 2, 3], np.int32),
...      np.array([1.0, 0.5, 0.0]), 2)
([[5, 3], [1, 2, 3]], [1.0, 0.5])
>>> # two documents: parts 0 and 1, then none
>>> top1_documents(np.array([5, 1, 2], np.int32), np.array([0, 1, 3]),
...                np.array([1.0, 0.5]), np.array([0, 2, 2]))
[[([5, 1, 2], 1.5)], [([], 0.0)]]
>>> [a.tolist() for a in top1_documents(np.array([5, 1, 2], np.int32), np.array([0, 1, 3]),
...                                     np.array([1.0, 0.5]), np.array([0, 2, 2]), arrays=True)]
[[5, 1, 2], [0, 3, 3], [1.5, 0.0], [0, 1, 2]]
"""

from cpython.list cimport PyList_New
from cpython.ref cimport PyObject
from libc.stdint cimport int32_t, int64_t
from libc.string cimport memcpy
from libcpp.vector cimport vector

from ubpe_native._numpy import np

from ubpe_native._checks cimport (as_array, check_ids, check_length, check_none_empty, check_offsets,
                                  check_top_n)
from ubpe_native._typedefs cimport id_t


cdef extern from "Python.h":
    PyObject* _list_item "PyList_GET_ITEM"(object, Py_ssize_t) nogil
    void _set_list_item "PyList_SET_ITEM"(object, Py_ssize_t, PyObject*) nogil
    void _incref "Py_INCREF"(PyObject*) nogil
    PyObject* _new_int "PyLong_FromLong"(long)  # a new reference, NULL on failure
    ctypedef struct PyListObject:
        PyObject** ob_item

# The table of the ids' int objects: ``_ids[t]`` is ``t``. Replaced (never changed in place)
# by a longer one when a larger id comes, so a reader's reference stays valid; made when first
# asked for, as long as asked (65,536 ints at import were 1.6 ms of every load).
cdef list _ids = []
# The ids handed out through `id_table_for` in this process (what its growth is paid by).
cdef Py_ssize_t _handed_out = 0
# Ids are int32 and never negative: every id is below this.
cdef int64_t ID_LIMIT = 0x7FFFFFFF
# The largest table the ``def`` entries here ask for (2M ints, about 70 MB): a larger id in
# their arguments gets a new int (``id_list``) instead of growing the shared table to it.
cdef Py_ssize_t ID_TABLE_LIMIT = 1 << 21


cdef list id_table(Py_ssize_t n):
    """A list whose item ``t`` is the int ``t``, for every ``t < n`` (shared, never mutated)."""
    global _ids
    if n > len(_ids):
        _ids = list(range(max(n, 2 * len(_ids))))
    return _ids


cdef list id_table_for(Py_ssize_t limit, Py_ssize_t n_out):
    """:func:`id_table` for a call about to hand out ``n_out`` ids below ``limit``, grown to at
    most twice the ids handed out through here so far (``_handed_out``): the table's ints are
    paid for by the lists that take them. A process's first short ``encode`` makes a few ints
    where ``id_table(65536)`` made 65,536 (~1.5-2 ms of its first call); a run of calls reaches
    the whole table once it has handed out half as many ids. (An id past the table gets a new
    int in :func:`id_list`: the same values.)"""
    global _handed_out
    _handed_out += n_out
    cdef Py_ssize_t wanted = min(limit, 2 * _handed_out)
    return id_table(wanted) if wanted > len(_ids) else _ids


def walk(const int64_t[::1] candidate_offsets not None, const int64_t[::1] token_offsets not None,
         const id_t[::1] tokens not None, const double[::1] scores not None, int top_n):
    """The reference's top-n of a document from its parts' candidates.

    Part ``p``'s candidates, best first, are ``candidate_offsets[p]:candidate_offsets[p+1]``;
    candidate ``j`` is ``tokens[token_offsets[j]:token_offsets[j+1]]`` scoring ``scores[j]``.
    Returns ``(token lists, scores)`` best first.
    """
    check_top_n(top_n)
    check_offsets(candidate_offsets, scores.shape[0], "candidate_offsets")
    check_none_empty(candidate_offsets, "candidate")  # the walk starts from each part's first
    check_offsets(token_offsets, tokens.shape[0], "token_offsets")
    check_length(token_offsets.shape[0], scores.shape[0] + 1, "token_offsets", "one per candidate, plus one")
    check_ids(tokens, ID_LIMIT, "tokens")  # the lists are built from the ids: none negative
    cdef vector[Tail] tails
    cdef vector[int64_t] current
    cdef Py_ssize_t n_parts = candidate_offsets.shape[0] - 1
    cdef const id_t* token_data = &tokens[0] if tokens.shape[0] else NULL
    cdef const double* score_data = &scores[0] if scores.shape[0] else NULL
    with nogil:
        walk_parts(&candidate_offsets[0], NULL, &token_offsets[0], score_data, top_n, n_parts, tails, current)
    ids = id_table(min(_largest(token_data, tokens.shape[0]) + 1, ID_TABLE_LIMIT))
    out_tokens, out_scores = [], []
    cdef Py_ssize_t k
    for k in range(<Py_ssize_t>current.size()):
        out_tokens.append(_spell(ids, tails, current[k], token_data, &token_offsets[0]))
        out_scores.append(tails[current[k]].score if current[k] >= 0 else 0.0)
    return out_tokens, out_scores


def top1_documents(tokens, token_offsets, scores, doc_part_offsets, candidate_offsets=None, bint arrays=False):
    """Every document's top-1 ``[(tokens, score)]`` from one candidate per part: part ``p``'s
    is candidate ``candidate_offsets[p]`` (default ``p``), ``tokens[token_offsets[c]:token_offsets[c + 1]]``
    scoring ``scores[c]``; document ``d`` holds parts ``doc_part_offsets[d]:doc_part_offsets[d + 1]``.
    Its tokens are its parts' back to back, its score their sum left to right (as the
    reference adds them). ``arrays=True``: the same as ``(ids, token_offsets, scores,
    doc_offsets)`` arrays (``ubpe.encoders.EncodedBatch``), no list built."""
    cdef const id_t[::1] token_view = as_array(tokens, np.int32, "tokens")
    cdef const int64_t[::1] offset_view = as_array(token_offsets, np.int64, "token_offsets")
    cdef const double[::1] score_view = as_array(scores, np.float64, "scores")
    cdef const int64_t[::1] doc_view = as_array(doc_part_offsets, np.int64, "doc_part_offsets")
    cdef const int64_t[::1] candidate_view
    cdef const int64_t* candidates = NULL
    check_offsets(offset_view, token_view.shape[0], "token_offsets")
    check_length(offset_view.shape[0], score_view.shape[0] + 1, "token_offsets", "one per candidate, plus one")
    cdef const id_t* token_data = &token_view[0] if token_view.shape[0] else NULL
    check_ids(token_view, ID_LIMIT, "tokens")  # no negative id
    if candidate_offsets is None:
        check_offsets(doc_view, score_view.shape[0], "doc_part_offsets")
    else:
        candidate_view = as_array(candidate_offsets, np.int64, "candidate_offsets")
        check_offsets(candidate_view, score_view.shape[0], "candidate_offsets")
        # a part's candidate is its first: a part with none would read the next part's, and
        # the last part's would be read past the end
        check_none_empty(candidate_view, "candidate")
        check_offsets(doc_view, candidate_view.shape[0] - 1, "doc_part_offsets")
        candidates = &candidate_view[0]
    cdef const double* score_data = &score_view[0] if score_view.shape[0] else NULL
    if arrays:
        return top1_arrays(token_data, &offset_view[0], score_data, candidates, NULL, &doc_view[0],
                           doc_view.shape[0] - 1)
    ids = id_table(min(_largest(token_data, token_view.shape[0]) + 1, ID_TABLE_LIMIT))
    return top1_lists(ids, token_data, &offset_view[0], score_data, candidates, NULL, &doc_view[0],
                      doc_view.shape[0] - 1)


cdef id_t _largest(const id_t* tokens, Py_ssize_t n) noexcept nogil:
    cdef id_t largest = -1
    cdef Py_ssize_t k
    for k in range(n):
        if tokens[k] > largest:
            largest = tokens[k]
    return largest


cdef list id_list(list ids, const id_t* tokens, Py_ssize_t n):
    """``[t for t in tokens[:n]]`` as a new list, built in C: an id below ``len(ids)`` takes
    the int ``ids[t]`` (``ids[t] == t``, see :func:`id_table`; a reference count, not an
    allocation), a larger one a new int."""
    cdef list out = PyList_New(n)  # empty slots (NULL), each filled once below
    # both item arrays read once: through the lists, every reference count written would
    # make the compiler read them again
    cdef PyObject** slots = (<PyListObject*>out).ob_item
    cdef PyObject** table = (<PyListObject*>ids).ob_item
    cdef Py_ssize_t k, n_table = len(ids)
    cdef PyObject* item
    cdef id_t t
    for k in range(n):
        t = tokens[k]
        if 0 <= t < n_table:
            item = table[t]
            _incref(item)  # the slot takes a reference
        else:
            item = _new_int(t)
            if item == NULL:  # out of memory: the slots filled so far are freed with ``out``
                raise MemoryError()
        slots[k] = item
    return out


cdef inline int64_t _candidate(const int64_t* candidate_offsets, const int64_t* part_entry, int64_t part) noexcept nogil:
    """The first candidate of ``part``."""
    if part_entry != NULL:
        part = part_entry[part]
    return candidate_offsets[part] if candidate_offsets != NULL else part


cdef struct Spelled:
    # a batch's encodings back to back: encoding e is flat[offsets[e]:offsets[e + 1]] scoring
    # totals[e]; document d has encodings doc_encodings[d]:doc_encodings[d + 1] (top-1: one each,
    # doc_encodings left empty)
    vector[id_t] flat
    vector[int64_t] offsets
    vector[double] totals
    vector[int64_t] doc_encodings


cdef int _spell_top1(const id_t* tokens, const int64_t* token_offsets, const double* scores,
                     const int64_t* candidate_offsets, const int64_t* part_entry, const int64_t* doc_part_offsets,
                     Py_ssize_t n_docs, Spelled& spelled) except -1 nogil:
    """Every document's best encoding into ``spelled`` (see :func:`top1_lists`)."""
    cdef Py_ssize_t d, k, size = 0
    cdef int64_t c, t
    cdef double total
    cdef id_t* out
    for k in range(doc_part_offsets[n_docs] - doc_part_offsets[0]):  # the tokens, to size ``flat`` once
        c = _candidate(candidate_offsets, part_entry, doc_part_offsets[0] + k)
        size += token_offsets[c + 1] - token_offsets[c]
    spelled.flat.resize(size)
    spelled.offsets.reserve(n_docs + 1)
    spelled.totals.reserve(n_docs)
    out = spelled.flat.data()
    spelled.offsets.push_back(0)
    for d in range(n_docs):
        total = 0.0
        for k in range(doc_part_offsets[d], doc_part_offsets[d + 1]):
            c = _candidate(candidate_offsets, part_entry, k)
            for t in range(token_offsets[c], token_offsets[c + 1]):
                out[0] = tokens[t]
                out += 1
            total += scores[c]
        spelled.offsets.push_back(out - spelled.flat.data())
        spelled.totals.push_back(total)
    return 0


cdef list top1_lists(list ids, const id_t* tokens, const int64_t* token_offsets, const double* scores,
                     const int64_t* candidate_offsets, const int64_t* part_entry, const int64_t* doc_part_offsets,
                     Py_ssize_t n_docs):
    """See :func:`top1_documents` (a part's candidate: its entry's first, see _combine.pxd;
    ``candidate_offsets`` NULL: candidate ``e`` is entry ``e``'s; arguments unchecked). The
    documents are spelled into one buffer without the GIL; only the lists are built with it."""
    cdef Spelled spelled
    with nogil:
        _spell_top1(tokens, token_offsets, scores, candidate_offsets, part_entry, doc_part_offsets, n_docs, spelled)
    return _encoding_lists(ids, spelled.flat, spelled.offsets, spelled.totals, NULL, n_docs)


cdef tuple top1_arrays(const id_t* tokens, const int64_t* token_offsets, const double* scores,
                       const int64_t* candidate_offsets, const int64_t* part_entry, const int64_t* doc_part_offsets,
                       Py_ssize_t n_docs):
    """:func:`top1_lists` as the four arrays of ``ubpe.encoders.EncodedBatch`` (no list)."""
    cdef Spelled spelled
    with nogil:
        _spell_top1(tokens, token_offsets, scores, candidate_offsets, part_entry, doc_part_offsets, n_docs, spelled)
    return _encoding_arrays(spelled, n_docs)


cdef int _spell_nbest(const id_t* tokens, const int64_t* token_offsets, const double* scores,
                      const int64_t* candidate_offsets, const int64_t* part_entry, const int64_t* doc_part_offsets,
                      Py_ssize_t n_docs, int top_n, Spelled& spelled) except -1 nogil:
    """Every document's top-n encodings into ``spelled`` (see :func:`nbest_lists`)."""
    cdef vector[Tail] tails
    cdef vector[int64_t] current
    cdef Py_ssize_t d, k, first, last, size
    cdef int64_t entry, c, node, j, t
    cdef id_t* out
    spelled.offsets.push_back(0)
    spelled.doc_encodings.reserve(n_docs + 1)
    spelled.doc_encodings.push_back(0)
    for d in range(n_docs):
        first = doc_part_offsets[d]
        last = doc_part_offsets[d + 1]
        if last - first > 1:
            tails.clear()
            walk_parts(candidate_offsets, part_entry + first if part_entry != NULL else NULL, token_offsets,
                       scores, top_n, last - first, tails, current)
            size = spelled.flat.size()
            for k in range(<Py_ssize_t>current.size()):
                size += _length(tails, current[k])
            spelled.flat.resize(size)  # the encodings' tokens are written straight into their place
            out = spelled.flat.data() + spelled.offsets.back()
            for k in range(<Py_ssize_t>current.size()):
                node = current[k]
                spelled.totals.push_back(_score(tails, node))
                while node >= 0:
                    j = tails[node].candidate
                    for t in range(token_offsets[j], token_offsets[j + 1]):
                        out[0] = tokens[t]
                        out += 1
                    node = tails[node].rest
                spelled.offsets.push_back(out - spelled.flat.data())
        elif last - first == 1:
            entry = part_entry[first] if part_entry != NULL else first
            for c in range(candidate_offsets[entry], candidate_offsets[entry + 1]):
                spelled.flat.insert(spelled.flat.end(), tokens + token_offsets[c], tokens + token_offsets[c + 1])
                spelled.offsets.push_back(spelled.flat.size())
                spelled.totals.push_back(scores[c])
        else:
            spelled.offsets.push_back(spelled.flat.size())
            spelled.totals.push_back(0.0)
        spelled.doc_encodings.push_back(spelled.totals.size())
    return 0


cdef list nbest_lists(list ids, const id_t* tokens, const int64_t* token_offsets, const double* scores,
                      const int64_t* candidate_offsets, const int64_t* part_entry, const int64_t* doc_part_offsets,
                      Py_ssize_t n_docs, int top_n):
    """Every document's top-n ``[(tokens, score)]``: a document of several parts by the
    reference's walk, one part: its own candidates, no part: ``[([], 0.0)]`` (parts'
    candidates: see _combine.pxd; arguments unchecked). Walked and spelled into one buffer
    without the GIL; only the lists are built with it."""
    cdef Spelled spelled
    with nogil:
        _spell_nbest(tokens, token_offsets, scores, candidate_offsets, part_entry, doc_part_offsets, n_docs, top_n,
                     spelled)
    return _encoding_lists(ids, spelled.flat, spelled.offsets, spelled.totals, spelled.doc_encodings.data(), n_docs)


cdef tuple nbest_arrays(const id_t* tokens, const int64_t* token_offsets, const double* scores,
                        const int64_t* candidate_offsets, const int64_t* part_entry, const int64_t* doc_part_offsets,
                        Py_ssize_t n_docs, int top_n):
    """:func:`nbest_lists` as the four arrays of ``ubpe.encoders.EncodedBatch`` (no list)."""
    cdef Spelled spelled
    with nogil:
        _spell_nbest(tokens, token_offsets, scores, candidate_offsets, part_entry, doc_part_offsets, n_docs, top_n,
                     spelled)
    return _encoding_arrays(spelled, n_docs)


cdef tuple _encoding_arrays(Spelled& spelled, Py_ssize_t n_docs):
    """``(ids, token_offsets, scores, doc_offsets)`` (int32, int64, float64, int64 arrays)
    from ``spelled``; top-1 (no ``doc_encodings``): document ``d`` has encoding ``d``."""
    ids = np.empty(spelled.flat.size(), dtype=np.int32)
    token_offsets = np.empty(spelled.offsets.size(), dtype=np.int64)
    scores = np.empty(spelled.totals.size(), dtype=np.float64)
    if spelled.doc_encodings.empty():
        doc_offsets = np.arange(n_docs + 1, dtype=np.int64)
    else:
        doc_offsets = np.empty(spelled.doc_encodings.size(), dtype=np.int64)
    cdef id_t[::1] id_view = ids
    cdef int64_t[::1] offset_view = token_offsets
    cdef double[::1] score_view = scores
    cdef int64_t[::1] doc_view = doc_offsets
    with nogil:
        if id_view.shape[0]:
            memcpy(&id_view[0], spelled.flat.data(), id_view.shape[0] * sizeof(id_t))
        if offset_view.shape[0]:
            memcpy(&offset_view[0], spelled.offsets.data(), offset_view.shape[0] * sizeof(int64_t))
        if score_view.shape[0]:
            memcpy(&score_view[0], spelled.totals.data(), score_view.shape[0] * sizeof(double))
        if not spelled.doc_encodings.empty():
            memcpy(&doc_view[0], spelled.doc_encodings.data(), doc_view.shape[0] * sizeof(int64_t))
    return ids, token_offsets, scores, doc_offsets


cdef list _encoding_lists(list ids, const vector[id_t]& flat, const vector[int64_t]& offsets,
                          const vector[double]& totals, const int64_t* doc_encodings, Py_ssize_t n_docs):
    """``[[(tokens, score), ...] per document]``: encoding ``e`` is ``flat[offsets[e]:offsets[e + 1]]``
    scoring ``totals[e]``; document ``d`` has encodings ``doc_encodings[d]:doc_encodings[d + 1]``
    (NULL: one each)."""
    cdef list out = PyList_New(n_docs)
    cdef list encodings
    cdef Py_ssize_t d, e, first, last
    for d in range(n_docs):
        first = doc_encodings[d] if doc_encodings != NULL else d
        last = doc_encodings[d + 1] if doc_encodings != NULL else d + 1
        encodings = PyList_New(last - first)
        for e in range(first, last):
            encoding = (id_list(ids, flat.data() + offsets[e], offsets[e + 1] - offsets[e]), totals[e])
            _incref(<PyObject*>encoding)
            _set_list_item(encodings, e - first, <PyObject*>encoding)
        _incref(<PyObject*>encodings)
        _set_list_item(out, d, <PyObject*>encodings)
    return out


cdef list _spell(list ids, vector[Tail]& tails, int64_t node, const id_t* tokens, const int64_t* token_offsets):
    """The tokens of the chain of tails from ``node``, as a list (:func:`id_list`: an id past
    ``ids`` gets a new int, so the caller's table may be shorter than the largest id)."""
    cdef vector[id_t] spelled
    cdef int64_t j
    if node >= 0:
        spelled.reserve(tails[node].length)
    while node >= 0:
        j = tails[node].candidate
        spelled.insert(spelled.end(), tokens + token_offsets[j], tokens + token_offsets[j + 1])
        node = tails[node].rest
    return id_list(ids, spelled.data(), spelled.size())


cdef inline double _score(vector[Tail]& tails, int64_t node) noexcept nogil:
    return tails[node].score if node >= 0 else 0.0


cdef inline int64_t _length(vector[Tail]& tails, int64_t node) noexcept nogil:
    return tails[node].length if node >= 0 else 0


cdef int walk_parts(const int64_t* candidate_offsets, const int64_t* part_entry, const int64_t* token_offsets,
                    const double* scores, int top_n, Py_ssize_t n_parts, vector[Tail]& tails,
                    vector[int64_t]& current) except -1 nogil:
    """The walk over parts ``0..n_parts - 1`` (their candidates: see _combine.pxd); new tails
    are appended to ``tails``, the document's top-n (indices into ``tails``, -1 for the empty
    tail) left in ``current``. The growing vectors raise MemoryError through ``except -1``."""
    cdef vector[int64_t] following
    cdef Py_ssize_t p, n_current, n_following, n_tails
    cdef int64_t entry, first, n_candidates, ci, ti, j, tail, length_j
    cdef double better_tail_score, better_candidate_score
    cdef int64_t better_tail_length, better_candidate_length
    cdef Tail* node
    # Room for every tail at once. A part keeps at most top_n tails, and at most its candidates
    # plus the tails after it, less one (each pairing advances one of the two lists): counted
    # from the end, so a top_n far above the paths there are allocates nothing more.
    cdef Py_ssize_t room = 0, widest = 1, bound = 1
    for p in range(n_parts - 1, -1, -1):
        entry = part_entry[p] if part_entry != NULL else p
        bound = min(<Py_ssize_t>top_n, max(0, candidate_offsets[entry + 1] - candidate_offsets[entry] + bound - 1))
        room += bound
        widest = max(widest, bound)
    n_tails = tails.size()
    tails.resize(n_tails + room)
    following.resize(widest)
    current.resize(widest)
    current[0] = -1  # the empty tail ([], 0.0)
    n_current = 1
    for p in range(n_parts - 1, -1, -1):
        entry = part_entry[p] if part_entry != NULL else p
        first = candidate_offsets[entry]
        n_candidates = candidate_offsets[entry + 1] - first
        n_following = 0
        ci = 0
        ti = 0
        while ci < n_candidates and ti < n_current and n_following < top_n:
            j = first + ci
            tail = current[ti]
            length_j = token_offsets[j + 1] - token_offsets[j]
            node = &tails[n_tails]
            node.candidate = j
            node.rest = tail
            node.score = scores[j] + _score(tails, tail)  # the reference's order: candidate + tail
            node.length = length_j + _length(tails, tail)
            following[n_following] = n_tails
            n_tails += 1
            n_following += 1
            if n_following == top_n or (ci == n_candidates - 1 and ti == n_current - 1):
                break
            if ci == n_candidates - 1:
                ti += 1
            elif ti == n_current - 1:
                ci += 1
            else:
                # (tail score + candidate score, -length) of advancing the tail vs the candidate
                better_tail_score = _score(tails, current[ti + 1]) + scores[j]
                better_tail_length = _length(tails, current[ti + 1]) + length_j
                better_candidate_score = _score(tails, tail) + scores[j + 1]
                better_candidate_length = _length(tails, tail) + (token_offsets[j + 2] - token_offsets[j + 1])
                if (better_tail_score > better_candidate_score or
                        (better_tail_score == better_candidate_score
                         and -better_tail_length > -better_candidate_length)):
                    ti += 1
                else:
                    ci += 1
        current.swap(following)
        n_current = n_following
    current.resize(n_current)
    tails.resize(n_tails)
    return 0
