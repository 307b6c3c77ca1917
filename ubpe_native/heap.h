// Heap operations shared by the kernels: a d-ary min-heap over a plain array, ordered by a
// comparator `before(a, b)` ("a comes out first"). Cython passes its comparators as function
// pointers; each call site passes one constant function, which the compiler inlines.
//
// The operations move a hole instead of swapping (one write per level), and compare a child
// with its parent only when strictly before, so equal items are never moved past each other
// on the way up. _lattice keeps a heap of its own: it must replay CPython's heapq exactly.
#pragma once

#include <cstddef>
#include <vector>

namespace ubpe {

// Move heap[position] towards the root while it comes out before its parent.
template <class T>
inline void heap_sift_up(T* heap, std::ptrdiff_t position, std::ptrdiff_t arity,
                         int (*before)(const T&, const T&)) {
  T item = heap[position];
  while (position > 0) {
    std::ptrdiff_t parent = (position - 1) / arity;
    if (!before(item, heap[parent])) break;
    heap[position] = heap[parent];
    position = parent;
  }
  heap[position] = item;
}

// Move heap[position] towards the leaves while a child comes out before it (heap of `size`).
template <class T>
inline void heap_sift_down(T* heap, std::ptrdiff_t size, std::ptrdiff_t position,
                           std::ptrdiff_t arity, int (*before)(const T&, const T&)) {
  T item = heap[position];
  while (true) {
    std::ptrdiff_t first = arity * position + 1;
    if (first >= size) break;
    std::ptrdiff_t stop = first + arity < size ? first + arity : size;
    std::ptrdiff_t child = first;
    for (std::ptrdiff_t other = first + 1; other < stop; ++other) {
      if (before(heap[other], heap[child])) child = other;
    }
    if (!before(heap[child], item)) break;
    heap[position] = heap[child];
    position = child;
  }
  heap[position] = item;
}

// Add `item` to the heap held by `heap`.
template <class T>
inline void heap_push(std::vector<T>& heap, const T& item, std::ptrdiff_t arity,
                      int (*before)(const T&, const T&)) {
  heap.push_back(item);
  heap_sift_up(heap.data(), static_cast<std::ptrdiff_t>(heap.size()) - 1, arity, before);
}

// Remove and return the item that comes out first (the heap must not be empty).
template <class T>
inline T heap_pop(std::vector<T>& heap, std::ptrdiff_t arity, int (*before)(const T&, const T&)) {
  T top = heap[0];
  heap[0] = heap.back();
  heap.pop_back();
  if (!heap.empty()) {
    heap_sift_down(heap.data(), static_cast<std::ptrdiff_t>(heap.size()), 0, arity, before);
  }
  return top;
}

}  // namespace ubpe
