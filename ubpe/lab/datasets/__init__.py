"""Datasets of the experiments: the `Dataset` record and its split rules (`_base`), the
quantizers of numeric series (`quantize`), one split of a parsed corpus (`split`), and a
user's own files (`files`: text, JSONL, CSV, parquet, npy / npz, FASTA, MIDI, read by `_text`,
`_tables`, `_arrays` and `_sequences`; a file that cannot be read is a `DatasetError`).

The repository's built-in datasets (``experiments.datasets``) use the same split rules.
"""

from ubpe.lab.datasets._base import (
    DEFAULT_MAX_SYMBOLS,
    HELDOUT_FRACTION,
    KINDS,
    SPLITS,
    DataNotInstalledError,
    Dataset,
    DatasetError,
    UnknownDatasetError,
    content_checksum,
)
from ubpe.lab.datasets._corpus import RawCorpus
from ubpe.lab.datasets.quantize import (
    MuLawQuantizer,
    QuantileQuantizer,
    Quantizer,
    QuantizerError,
    UniformQuantizer,
    make_quantizer,
)
from ubpe.lab.datasets.split import DEFAULT_QUANTIZER, Source, split_corpus

__all__ = [
    "DEFAULT_MAX_SYMBOLS",
    "DEFAULT_QUANTIZER",
    "HELDOUT_FRACTION",
    "KINDS",
    "SPLITS",
    "DataNotInstalledError",
    "Dataset",
    "DatasetError",
    "MuLawQuantizer",
    "QuantileQuantizer",
    "Quantizer",
    "QuantizerError",
    "RawCorpus",
    "Source",
    "UniformQuantizer",
    "UnknownDatasetError",
    "content_checksum",
    "make_quantizer",
    "split_corpus",
]
