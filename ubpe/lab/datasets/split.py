"""From a parsed corpus to one split: held-out by unit hash, quantized, capped, checksummed.

What a dataset is made of is its loader's business (the repository's built-in datasets, or
`ubpe.lab.datasets.files` for a user's files); what happens next is the same for all of them,
so the rules in `_base` hold everywhere:

>>> from ubpe.lab.datasets._corpus import RawCorpus
>>> corpus = RawCorpus(ids=[f"doc{i}" for i in range(20)], docs=["abc"] * 20, version="1")
>>> source = Source("toy", kind="prose", symbol_type="char")
>>> train, heldout = (split_corpus(source, corpus, s, max_symbols=math.inf) for s in SPLITS)
>>> train.n_docs + heldout.n_docs, train.unit
(20, 'document')
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ubpe.lab.datasets._base import (
    DEFAULT_MAX_SYMBOLS,
    SPLITS,
    Dataset,
    DatasetError,
    cap_documents,
    content_checksum,
    is_heldout,
)
from ubpe.lab.datasets._corpus import RawCorpus
from ubpe.lab.datasets.quantize import Quantizer, make_quantizer

#: Quantizer of the signal and time-series datasets unless `load` is given another.
DEFAULT_QUANTIZER = "uniform:64"


@dataclass(frozen=True)
class Source:
    """What a split records about where its documents came from (the registry's
    ``DatasetSpec`` has the same fields, and a loader besides)."""

    name: str
    kind: str
    symbol_type: Literal["char", "int"]
    source: str = ""
    licence: str = ""
    description: str = ""
    quantized: bool = False
    #: What one independent unit is (see `Dataset.unit`).
    unit: str = "document"


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


def resolve_cap(split: str, max_symbols: float | None) -> float:
    """The symbol cap of a split: `DEFAULT_MAX_SYMBOLS` for None, else a positive number."""
    if max_symbols is None:
        return DEFAULT_MAX_SYMBOLS[split]
    if isinstance(max_symbols, bool) or not isinstance(max_symbols, (int, float)) \
            or not max_symbols > 0:
        raise ValueError(f"max_symbols must be a positive number or math.inf, got {max_symbols!r}")
    return max_symbols


def split_corpus(source: Any, corpus: RawCorpus, split: str, *, max_symbols: float | None,
                 quantizer: str | Quantizer | None = None) -> Dataset:
    """One split of a parsed corpus (``source`` is a `Source` or anything with its fields).

    Documents go to the held-out split by the hash of their group (`_base.is_heldout`) unless
    the corpus decides; a quantized source's series are quantized with ``quantizer`` (default
    `DEFAULT_QUANTIZER`) fitted on their training documents; the split is capped at
    ``max_symbols`` (`resolve_cap`) and checksummed.
    """
    name = source.name
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    cap = resolve_cap(split, max_symbols)
    heldout = (list(corpus.heldout) if corpus.heldout is not None
               else [is_heldout(name, group) for group in corpus.groups])
    docs: list[Any] = corpus.docs
    keep = [True] * len(docs)
    settings: dict[str, Any] = dict(corpus.settings)
    if source.quantized:
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
    settings["cap_dropped"] = _dropped(corpus, docs, candidates, selected)
    out_docs = [docs[i] for i in selected]
    return Dataset(
        name=name, kind=source.kind, split=split, docs=out_docs,
        doc_ids=[corpus.ids[i] for i in selected],
        source=source.source, source_version=corpus.version, licence=source.licence,
        description=source.description, symbol_type=source.symbol_type, settings=settings,
        checksum=content_checksum(out_docs), unit=source.unit,
        doc_units=[corpus.units[i] for i in selected])


def _dropped(corpus: RawCorpus, docs: list[Any], candidates: list[int], selected: list[int]) -> dict[str, int]:
    """What the symbol cap left out of a split: documents, symbols, units (the independent
    units of the paired tests) and, for a user's files, files (a unit that is a file)."""
    kept = set(selected)
    left = [i for i in candidates if i not in kept]
    units_before = {corpus.units[i] for i in candidates}
    units_after = {corpus.units[i] for i in selected}
    return {"documents": len(left), "symbols": int(sum(len(docs[i]) for i in left)),
            "units": len(units_before - units_after),
            "symbols_before": int(sum(len(docs[i]) for i in candidates))}
