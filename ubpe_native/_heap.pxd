# Declarations of heap.h: the d-ary min-heap the kernels share (_fit, _paths, _ranked, _classic).
# ``before(a, b)`` is true when ``a`` comes out first; pass a cdef inline comparator.
# ``heap_push`` may allocate: ``except +`` turns std::bad_alloc into MemoryError.
from libcpp.vector cimport vector


cdef extern from "heap.h" namespace "ubpe" nogil:
    void heap_sift_up[T](T* heap, Py_ssize_t position, Py_ssize_t arity,
                         bint (*before)(const T&, const T&) noexcept nogil)
    void heap_sift_down[T](T* heap, Py_ssize_t size, Py_ssize_t position, Py_ssize_t arity,
                           bint (*before)(const T&, const T&) noexcept nogil)
    void heap_push[T](vector[T]& heap, const T& item, Py_ssize_t arity,
                      bint (*before)(const T&, const T&) noexcept nogil) except +
    T heap_pop[T](vector[T]& heap, Py_ssize_t arity,
                  bint (*before)(const T&, const T&) noexcept nogil)
