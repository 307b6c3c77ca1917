"""Cython kernels of ubpe: one module per structure or algorithm, no Python-level policy.

Kernels: ``_fit`` (pair merging for fitting), ``_radix`` (radix tree over id sequences),
``_lattice`` (tf-idf top-n over all segmentations; ``_lattice_cache``: ``Lattice``, the
kernel over many parts with a cache of the parts encoded), ``_combine`` (top-n across parts),
``_classic`` (batched pair substitution), ``_ranked`` (rank-ordered merges, BPE-dropout),
``_paths`` (fewest tokens, longest match, additive scores), ``_pretokenize`` (native regex
presets), ``_score`` (the tf-idf score of an encoding: ``score_tokens``), ``_pieces`` (a
vocabulary's pairs expanded into pieces, and checked against them).

Shared helpers, cimported by the kernels (as scikit-learn keeps ``utils/_heap.pxd``):
``_typedefs.pxd`` (id and count types), ``_flat_map.pxd`` + ``flat_map.h`` (the hash map and
``pack_key``, its one key packing), ``_heap.pxd`` + ``heap.h`` (the d-ary heap of ``_fit``,
``_paths``, ``_ranked`` and ``_classic``; ``_lattice`` keeps its own, which must replay
CPython's ``heapq``), ``_checks.pxd`` (argument checks of every ``def``: offsets, ids, lengths,
buffer sizes, and the busy flag of stateful objects, whose error is ``_errors.BusyError``),
``_sums.pxd`` (CPython's compensated float sum), ``_score.pxd`` (the per-part tf-idf sum),
``_radix.pxd`` and ``_pretokenize.pxd`` (what other kernels use of those two).

The public API is :mod:`ubpe`.
"""
