"""Is a committed result still the result of today's data? (issue 27, point 1)

Every experiment writes into its ``run.json`` a ``data`` list: one record per dataset split it
loaded, with the arguments it was loaded with and the split's fingerprints, and ``git`` (the
commit of the code). `check` reloads each split with today's loaders and names every split
whose fingerprints changed: a result computed on other data than the loaders give today is
*stale*. ``tests/experiments/test_freshness.py`` runs `check` on every committed results
folder; a folder that is known to be stale and cannot be regenerated yet is listed, with the
reason, in ``results/STALE.toml`` and reported as such instead of failing.

A split's fingerprints are its content checksum (`experiments.datasets.content_checksum`,
SHA-256 of the documents) and a checksum of its documents' ids and units, so a change of
the paired tests' unit (a DNA block size, a time series' source) is a change of the data
too, though no symbol moved.

>>> rec = {"dataset": "kjv", "split": "heldout", "max_symbols": 300000, "options": {}}
>>> sorted(load_arguments(rec)[1])
['max_symbols']
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from experiments import RESULTS_DIR
from ubpe.lab import provenance
from ubpe.lab.provenance import REPO_ROOT, data_record, units_checksum

__all__ = ["Finding", "check", "check_provenance", "data_record", "known_stale", "load_arguments",
           "units_checksum"]

#: The list of committed results known to be stale, with the reason (see the module docstring).
#: The repository's results folder is found from this package (`experiments.RESULTS_DIR`), not
#: from ubpe's: installed from a wheel, ubpe has no repository (`provenance.REPO_ROOT` is None).
STALE_LIST = RESULTS_DIR / provenance.STALE_FILE


def load_arguments(record: dict[str, Any]) -> tuple[tuple[str, str], dict[str, Any]]:
    """``(name, split), keyword arguments`` that load the recorded split again."""
    cap = record["max_symbols"]
    kwargs = {"max_symbols": math.inf if cap == -1 else cap, **record.get("options", {})}
    return (record["dataset"], record["split"]), kwargs


@dataclass(frozen=True)
class Finding:
    """One reason a result is stale."""

    dataset: str
    split: str
    what: str

    def __str__(self) -> str:
        return f"{self.dataset}/{self.split}: {self.what}"


def check(run: dict[str, Any], loader=None) -> list[Finding]:
    """What in ``run`` (a parsed ``run.json``) no longer matches today's data: [] when fresh.

    ``loader`` is ``experiments.datasets.load`` unless given (tests pass a changed one). A run
    without ``data`` records is stale: nothing says what it was computed on.
    """
    if loader is None:
        from experiments.datasets import load as loader
    records = run.get("data")
    if not records:
        return [Finding("*", "*", "run.json records no data checksums (written before issue 27)")]
    found = []
    for record in records:
        (name, split), kwargs = load_arguments(record)
        ds = loader(name, split, **kwargs)
        if ds.checksum != record["checksum"]:
            found.append(Finding(name, split, f"content checksum {record['checksum'][:12]} -> "
                                              f"{ds.checksum[:12]} ({record['n_docs']} -> {ds.n_docs} docs)"))
        elif units_checksum(ds) != record["units_checksum"]:
            found.append(Finding(name, split, "same documents, other ids or units"))
    return found


#: What a result without a config or code hash is told (written before issue 34, point 7).
NO_HASHES = "run.json records no config and code hashes (written before issue 34)"


def check_provenance(run: dict[str, Any], root: Path | None = REPO_ROOT) -> list[Finding]:
    """What in ``run`` no longer matches today's config and code: [] when both are the same.

    The config: the file ``run.json`` names (``config_file``, in the repository) read again
    today and resolved, its SHA-256 against ``config_sha256``, and the keys that changed. The
    code: every source file ``run.json``'s ``code`` lists (the computing modules that ran,
    `ubpe.lab.provenance.code_record`), hashed again under ``root``. A run without the hashes
    is stale (`NO_HASHES`): nothing says what config and code computed it.
    """
    if "config_sha256" not in run or "code" not in run:
        return [Finding("*", "*", NO_HASHES)]
    found = []
    if run.get("git", {}).get("dirty"):
        found.append(Finding("git", str(run["git"].get("commit", ""))[:12],
                             "computed from a tree with uncommitted changes"))
    config_file = run.get("config_file") or ""
    if root is not None and config_file.endswith(".toml") and (root / config_file).is_file():
        from ubpe.lab.config import load_config

        today = load_config(root / config_file).as_dict()
        today = json.loads(json.dumps(today, default=str))  # as run.json holds it
        if provenance.config_sha256(today) != run["config_sha256"]:
            changed = sorted(_changed_keys(run.get("config", {}), today))
            found.append(Finding("config", config_file, "changed: " + (", ".join(changed[:8]) or "its hash")))
    for relative, digest in run["code"]["files"].items():
        path = root / relative if root is not None else None
        if path is None or not path.is_file():
            found.append(Finding("code", relative, "source file missing today"))
        elif provenance.file_digest(path) != digest:
            found.append(Finding("code", relative, "source changed"))
    return found


def _changed_keys(old: Any, new: Any, prefix: str = "") -> list[str]:
    """Dotted keys whose values differ between two JSON-like configs (``a.b = 1 -> 2``)."""
    if isinstance(old, dict) and isinstance(new, dict):
        return [k for key in sorted(set(old) | set(new))
                for k in _changed_keys(old.get(key), new.get(key), f"{prefix}{key}.")]
    return [] if old == new else [f"{prefix.rstrip('.')} = {old!r} -> {new!r}"]


def known_stale(path: Path = STALE_LIST) -> dict[str, str]:
    """``results/STALE.toml``: result folder name -> why it is stale and not regenerated."""
    return provenance.known_stale(path.parent) if path.name == provenance.STALE_FILE else {}
