# distutils: language = c++
"""A tokenizer file's vocabulary (``{"token": id, ...}``, as the json module decoded it)
checked in one pass, without a Python object per entry.

What a loader asks of a vocabulary - every key a ``str``, every value an ``int`` (not a
``bool``) within bounds, the largest id, whether the ids are ``0, 1, 2, ...`` in the file's
order (the usual file: then they are distinct and the tokens' list is the keys' list) - took
seven passes of the interpreter over the dict (``min``, ``max``, ``set(map(type, ...))``...:
61 M instructions for BERT's 30k entries, more than ``tokenizers``' whole load of the file).

>>> vocab_ids({"a": 0, "b": 1, "c": 2}, 100), vocab_ids({"a": 5, "b": 1}, 100), vocab_ids({}, 100)
((2, True), (5, False), (-1, True))
>>> vocab_ids({"a": True}, 100), vocab_ids({"a": 101}, 100), vocab_ids({1: 0}, 100), vocab_ids({"a": -1}, 100)
(None, None, None, None)
"""

from cpython.dict cimport PyDict_Next
from cpython.long cimport PyLong_AsLongLongAndOverflow
from cpython.ref cimport PyObject
from cpython.unicode cimport PyUnicode_Check
from libc.stdint cimport int64_t


def vocab_ids(dict vocab not None, int64_t largest):
    """``(top, in_order)`` of a vocabulary: its largest id (-1 if it is empty) and whether its
    ids are ``0, 1, 2, ...`` in the dict's order; ``None`` unless every key is a ``str`` (or a
    subclass) and every value an ``int`` (exactly: no ``bool``) from 0 to ``largest``."""
    if largest < 0:
        raise ValueError(f"largest must be >= 0, not {largest}")
    cdef Py_ssize_t pos = 0, k = 0
    cdef PyObject* key
    cdef PyObject* value
    cdef long long id_value, top = -1
    cdef int overflow = 0
    cdef bint in_order = True
    # (nothing below runs Python code: the dict cannot change while it is read)
    while PyDict_Next(vocab, &pos, &key, &value):
        if not PyUnicode_Check(<object>key) or type(<object>value) is not int:
            return None
        id_value = PyLong_AsLongLongAndOverflow(<object>value, &overflow)
        if overflow or id_value < 0 or id_value > largest:
            return None
        if id_value > top:
            top = id_value
        if id_value != k:
            in_order = False
        k += 1
    return top, in_order
