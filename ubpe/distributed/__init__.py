"""Scale-out on a Dask cluster (the ``[dask]`` extra): fit on a Bag, encode a Bag or a Series.

* ``dask`` - the entry points: :func:`~ubpe.distributed.dask.as_bag`,
  :func:`~ubpe.distributed.dask.partitioned`, ``encode``, ``best_ids``,
  ``encode_to_parquet``, and the counting of a Dask corpus for the fit;
* ``rounds`` - the merge rounds with the parts kept on the workers.

The in-memory path never imports this package: :func:`ubpe.fit.count_corpus` hands a Dask
collection to the counter that ``ubpe`` registers (see :func:`ubpe.fit.register_counter`).
"""
