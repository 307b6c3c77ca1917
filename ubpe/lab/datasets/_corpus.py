"""`RawCorpus`: what a loader hands to the registry before the split, quantizing and the cap."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class RawCorpus:
    """All documents of a source in source order, with what the split needs.

    ``groups[i]`` decides the split of document ``i`` by hash (documents sharing a group stay
    together) unless ``heldout[i]`` gives it outright (signals hold out the last block of each
    recording); ``units[i]`` is the independent unit document ``i`` belongs to (a work, a
    file, a recording...: paired statistics aggregate over units), by default its group;
    ``series[i]``, for continuous signals, names the signal a quantizer is fitted on (one
    quantizer per series, fitted on that series' training windows).
    """

    ids: list[str]
    docs: list[Any]
    version: str
    groups: list[str] | None = None
    series: list[str] | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    units: list[str] | None = None
    heldout: list[bool] | None = None

    def __post_init__(self) -> None:
        if len(self.ids) != len(self.docs):
            raise ValueError("ids and docs differ in length")
        if len(set(self.ids)) != len(self.ids):
            raise ValueError("document ids must be unique")
        if self.groups is None:
            self.groups = list(self.ids)
        if self.units is None:
            self.units = list(self.groups)
        for name in ("groups", "units", "heldout", "series"):
            column = getattr(self, name)
            if column is not None and len(column) != len(self.ids):
                raise ValueError(f"{name} and docs differ in length")
