"""Real datasets of eight kinds, read offline from packages the project installs.

>>> from experiments.datasets import list_datasets, load      # doctest: +SKIP
>>> list_datasets("signal")                                   # doctest: +SKIP
['ecg', 'ppg']
>>> load("ecg", "heldout", quantizer="mulaw:64")              # doctest: +SKIP
Dataset('ecg', kind='signal', split='heldout', docs=..., symbols=..., checksum=...)

Sources are pinned (`sources`) and installed by ``experiments/install_data.sh``; the split,
cap and checksum rules are in `_base`, the quantizers in `quantize`.
"""

from experiments.datasets._base import (
    CACHE_ENV,
    DEFAULT_MAX_SYMBOLS,
    HELDOUT_FRACTION,
    KINDS,
    DataNotInstalledError,
    Dataset,
    DatasetError,
    UnknownDatasetError,
    content_checksum,
    data_cache_dir,
)
from experiments.datasets.quantize import (
    MuLawQuantizer,
    QuantileQuantizer,
    Quantizer,
    QuantizerError,
    UniformQuantizer,
    make_quantizer,
)
from experiments.datasets.registry import DEFAULT_QUANTIZER, REGISTRY, DatasetSpec, clear_cache, get_spec, list_datasets, load

__all__ = [
    "load",
    "list_datasets",
    "get_spec",
    "clear_cache",
    "Dataset",
    "DatasetSpec",
    "REGISTRY",
    "KINDS",
    "HELDOUT_FRACTION",
    "DEFAULT_MAX_SYMBOLS",
    "DEFAULT_QUANTIZER",
    "CACHE_ENV",
    "data_cache_dir",
    "content_checksum",
    "Quantizer",
    "UniformQuantizer",
    "QuantileQuantizer",
    "MuLawQuantizer",
    "make_quantizer",
    "DatasetError",
    "DataNotInstalledError",
    "UnknownDatasetError",
    "QuantizerError",
]
