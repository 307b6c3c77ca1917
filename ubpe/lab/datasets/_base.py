"""What every dataset shares: the `Dataset` record, the train / held-out split, the size cap
and the content checksum.

The split and the cap use only SHA-256 of stable identifiers, never Python's `hash` or a random
generator, so they are the same on every machine and every Python version:

- a document goes to the held-out split when the hash of ``"<dataset>:<group>"`` falls below
  `HELDOUT_FRACTION` (``group`` is the document's id unless a loader keeps related documents
  together, e.g. the four voices of one chorale, or a 50-kbp block of a genome), unless the
  loader decides the split itself (signals: the last `HELDOUT_FRACTION` of each recording's
  windows, a contiguous block, `tail_heldout`);
- the cap walks the split's documents in the order of the hash of ``"order:<dataset>:<id>"``
  (a fixed shuffle, so a capped corpus samples the whole source, not its first book) and keeps
  every document that still fits in `max_symbols`; the kept documents are returned in their
  source order.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ubpe.errors import UBPEError

Split = Literal["train", "heldout"]
SPLITS: tuple[str, ...] = ("train", "heldout")

#: The kinds of data a dataset can hold; experiments group their results by kind.
KINDS: tuple[str, ...] = (
    "prose",
    "multilingual",
    "code",
    "dna",
    "protein",
    "signal",
    "music",
    "timeseries",
)

#: Share of documents (or document groups) that go to the held-out split.
HELDOUT_FRACTION = 0.2

#: Symbols per split when `load` is not given `max_symbols`: small enough that the default
#: experiment fits and encodes every dataset within minutes on two cores.
DEFAULT_MAX_SYMBOLS: dict[str, int] = {"train": 300_000, "heldout": 75_000}

_HASH_SPAN = float(1 << 64)
_HASH_HEX_DIGITS = 16


class DatasetError(UBPEError, ValueError):
    """Base class for dataset errors (a bad file, an impossible split)."""


class DataNotInstalledError(DatasetError):
    """The package or file a loader reads is missing (the repository's built-in datasets:
    run ``experiments/install_data.sh``)."""


class UnknownDatasetError(DatasetError, KeyError):
    """`load` was given a name that is not in the registry."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


def unit_hash(text: str) -> float:
    """Map `text` to a number in [0, 1) with SHA-256: stable across machines and runs.

    >>> 0.0 <= unit_hash("kjv:Genesis 1") < 1.0
    True
    """
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:_HASH_HEX_DIGITS]
    return int(digest, 16) / _HASH_SPAN


def is_heldout(dataset: str, group: str) -> bool:
    """True when documents of `group` belong to the held-out split of `dataset`."""
    return unit_hash(f"{dataset}:{group}") < HELDOUT_FRACTION


def tail_heldout(count: int, min_windows: int = 5) -> list[bool] | None:
    """Which of a recording's ``count`` consecutive windows are held out: the last
    `HELDOUT_FRACTION` of them (at least one), a contiguous block, so held-out windows never
    interleave in time with training windows. ``None`` for a recording shorter than
    ``min_windows`` windows: it goes whole to one split, by hash of its name.

    >>> [int(h) for h in tail_heldout(10)]
    [0, 0, 0, 0, 0, 0, 0, 0, 1, 1]
    >>> tail_heldout(3) is None
    True
    """
    if count < min_windows:
        return None
    n_heldout = max(1, round(count * HELDOUT_FRACTION))
    return [i >= count - n_heldout for i in range(count)]


def cap_documents(dataset: str, ids: Sequence[str], docs: Sequence[Any],
                  max_symbols: float) -> list[int]:
    """Indices of the documents kept under `max_symbols`, in source order.

    Walks the documents in the fixed shuffled order (see the module docstring) and keeps each one
    that still fits; if even the first one is longer than the cap, that one alone is kept, so a
    split is never empty.
    """
    order = sorted(range(len(docs)), key=lambda i: unit_hash(f"order:{dataset}:{ids[i]}"))
    kept: list[int] = []
    total = 0
    for i in order:
        size = len(docs[i])
        if total + size <= max_symbols:
            kept.append(i)
            total += size
        if total >= max_symbols:
            break
    if not kept and order:
        kept.append(order[0])
    return sorted(kept)


def content_checksum(docs: Iterable[Any]) -> str:
    """SHA-256 of the documents in a canonical byte form, independent of container types.

    Each document contributes a tag (``s`` text, ``i`` integers), its length and its content:
    UTF-8 for text, little-endian int64 for integer sequences (lists and numpy arrays of the same
    numbers hash the same).
    """
    h = hashlib.sha256()
    for doc in docs:
        if isinstance(doc, str):
            data = doc.encode("utf-8")
            h.update(b"s%d:" % len(doc))
        else:
            values = np.asarray(doc)
            if values.ndim != 1 or not np.issubdtype(values.dtype, np.integer):
                raise DatasetError("documents must be str or 1-D integer sequences")
            data = values.astype("<i8", copy=False).tobytes()
            h.update(b"i%d:" % len(values))
        h.update(data)
    return h.hexdigest()


@dataclass(frozen=True)
class Dataset:
    """One split of one dataset, ready for fitting or encoding.

    ``docs`` are `str` for text (prose, multilingual, code, DNA, protein) and 1-D numpy int64
    arrays for integer symbols (quantized signals and time series, music events). The alphabet is
    whatever symbols occur; `alphabet` lists them.
    """

    name: str
    kind: str
    split: str
    docs: list[Any]
    doc_ids: list[str]
    source: str
    source_version: str
    licence: str
    description: str
    symbol_type: Literal["char", "int"]
    settings: dict[str, Any] = field(default_factory=dict)
    checksum: str = ""
    #: What one independent unit of this dataset is (a work, a file, a recording...), and the
    #: unit of each document: paired statistics aggregate documents per unit.
    unit: str = "document"
    doc_units: list[str] = field(default_factory=list)

    @property
    def n_units(self) -> int:
        return len(set(self.doc_units)) if self.doc_units else self.n_docs

    @property
    def n_docs(self) -> int:
        return len(self.docs)

    @property
    def n_symbols(self) -> int:
        return sum(len(doc) for doc in self.docs)

    @property
    def alphabet(self) -> list[Any]:
        """The distinct symbols of this split, sorted (characters or ints)."""
        if self.symbol_type == "char":
            return sorted(set().union(*map(set, self.docs))) if self.docs else []
        if not self.docs:
            return []
        return np.unique(np.concatenate([np.asarray(d) for d in self.docs])).tolist()

    def metadata(self) -> dict[str, Any]:
        """A JSON-ready summary for reports (everything but the documents)."""
        return {
            "name": self.name,
            "kind": self.kind,
            "split": self.split,
            "source": self.source,
            "source_version": self.source_version,
            "licence": self.licence,
            "description": self.description,
            "symbol_type": self.symbol_type,
            "n_docs": self.n_docs,
            "unit": self.unit,
            "n_units": self.n_units,
            "n_symbols": self.n_symbols,
            "alphabet_size": len(self.alphabet),
            "checksum": self.checksum,
            "settings": dict(self.settings),
        }

    def __repr__(self) -> str:
        return (f"Dataset({self.name!r}, kind={self.kind!r}, split={self.split!r}, "
                f"docs={self.n_docs}, symbols={self.n_symbols}, checksum={self.checksum[:12]})")
