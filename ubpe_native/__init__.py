"""Cython kernels of ubpe: one module per structure or algorithm, no Python-level policy.

``_fit`` (pair merging for fitting), ``_radix`` (radix tree over id sequences), ``_lattice``
(tf-idf top-n over all segmentations), ``_combine`` (top-n across parts), ``_classic``
(batched pair substitution), ``_ranked`` (rank-ordered merges, BPE-dropout), ``_paths``
(fewest tokens, longest match, additive scores), ``_pretokenize`` (native regex presets).
The public API is :mod:`ubpe`.
"""
