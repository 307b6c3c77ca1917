"""Real datasets of eight kinds, read offline from packages the project installs.

>>> from experiments.datasets import list_datasets, load      # doctest: +SKIP
>>> list_datasets("signal")                                   # doctest: +SKIP
['ecg', 'ppg']
>>> load("ecg", "heldout", quantizer="mulaw:64")              # doctest: +SKIP
Dataset('ecg', kind='signal', split='heldout', docs=..., symbols=..., checksum=...)

Sources are pinned (`sources`) and installed by ``experiments/install_data.sh``; the split,
cap and checksum rules are in `ubpe.lab.datasets`, as for a user's own files.
"""

from ubpe.lab import datasets as _lab
from ubpe.lab.datasets import *  # noqa: F403  (the Dataset record, split rules and quantizers)

from experiments.datasets.registry import REGISTRY, DatasetSpec, clear_cache, get_spec, list_datasets, load
from experiments.datasets.sources import CACHE_ENV, data_cache_dir

__all__ = ["load", "list_datasets", "get_spec", "clear_cache", "DatasetSpec", "REGISTRY", "CACHE_ENV",
           "data_cache_dir", *_lab.__all__]
