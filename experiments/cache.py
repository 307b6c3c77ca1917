"""The runner's cache: keys, file names and atomic writes for fitted models and cells.

Fitted tokenizers go to ``<cache>/models/`` (the model JSON plus ``.meta.json`` with the fit
time), raw per-cell results to ``<cache>/cells/`` (``.npz``). Keys are hashes of everything
that decides a result (`digest`); `code_fingerprint` puts the ubpe code that runs into every
key, and `RAW_FORMAT` the shape of the cached arrays.

>>> digest({"b": 1, "a": [1, 2]}) == digest({"a": [1, 2], "b": 1})
True
>>> len(digest("x"))
20
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

#: Where fitted models and per-cell raw results are kept (ignored by git).
CACHE_DIR = Path(__file__).resolve().parent / ".cache"
#: Bump when the cached raw results change shape, so old cells are recomputed.
RAW_FORMAT = 1
_KEY_HEX_DIGITS = 20


def json_default(value: Any) -> Any:
    """`json.dumps` fallback: numpy scalars as numbers, sets and tuples as lists."""
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)


def digest(payload: Any) -> str:
    """A short stable hash of a JSON-able payload (key order does not matter)."""
    text = json.dumps(payload, sort_keys=True, default=json_default)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:_KEY_HEX_DIGITS]


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A hash of the ubpe modules that fit and encode (sources, and compiled kernels' bytes).

    Part of every cache key, so a change to ubpe's code (or a rebuilt kernel) recomputes the
    cells, while edits to modules the runner does not load do not. Computed once in the main
    process and carried in the fit specs, so workers never recompute it.
    """
    import ubpe
    import ubpe.encoders  # noqa: F401  (loads every registered encoder's modules)

    h = hashlib.sha256()
    for name in sorted(sys.modules):
        if name.split(".")[0] not in ("ubpe", "ubpe_native"):
            continue
        path = getattr(sys.modules[name], "__file__", None)
        if path and Path(path).is_file():
            h.update(name.encode() + b"\0" + Path(path).read_bytes())
    h.update(ubpe.__version__.encode())
    return h.hexdigest()[:_KEY_HEX_DIGITS]


def model_path(cache_dir: Path, fit: Any) -> Path:
    """The cached model of a fit spec (``.meta.json`` beside it holds the fit time)."""
    return Path(cache_dir) / "models" / f"{fit.dataset}-{fit.variant}-{fit.key}.json"


def cell_path(cache_dir: Path, cell: Any) -> Path:
    """The cached raw arrays of a cell spec."""
    return (Path(cache_dir) / "cells"
            / f"{cell.fit.dataset}-{cell.spec.replace(':', '-')}-{cell.key}.npz")


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``path``, then rename it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def save_raw(path: Path, raw: dict[str, np.ndarray]) -> None:
    """A cell's raw arrays as one ``.npz``, written atomically."""
    buffer = io.BytesIO()
    np.savez(buffer, **raw)
    write_atomically(path, buffer.getvalue())


def load_raw(path: Path) -> dict[str, np.ndarray]:
    """The arrays `save_raw` wrote."""
    with np.load(path) as data:
        return {key: data[key] for key in data.files}
