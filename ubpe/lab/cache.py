"""The runner's cache: keys, file names and atomic writes for fitted models and cells.

Fitted tokenizers go to ``<cache>/models/`` (the model JSON plus ``.meta.json`` with the fit
time), raw per-cell results to ``<cache>/cells/`` (``.npz``), each written atomically; an
entry that cannot be read all the same (a file cut or changed by hand) is removed with a
`CacheEntryWarning` and computed again (`read_raw`, `read_meta`). Keys are hashes of everything
that decides a result (`digest`); `code_fingerprint` puts the ubpe code that runs into every
key, and `RAW_FORMAT` the shape of the cached arrays.

>>> digest({"b": 1, "a": [1, 2]}) == digest({"a": [1, 2], "b": 1})
True
>>> len(digest("x"))
20
"""

from __future__ import annotations

from .. import _fntools as functools  # (functools' tools without its import: ubpe._fntools)
import hashlib
import importlib.machinery
import io
import json
import os
import warnings
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np

#: Environment variable naming the folder of fitted models and per-cell raw results.
CACHE_ENV = "UBPE_LAB_CACHE"
#: Where fitted models and per-cell raw results are kept unless a run names a folder:
#: ``$UBPE_LAB_CACHE``, else ``ubpe/lab`` in the user's cache folder (``$XDG_CACHE_HOME`` or
#: ``~/.cache``). The repository's ``python -m experiments`` uses ``experiments/.cache``.
CACHE_DIR = Path(os.environ.get(CACHE_ENV) or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
                 / "ubpe" / "lab")
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


_CODE_SUFFIXES = (".py", ".pyx", ".pxd", ".h", *importlib.machinery.EXTENSION_SUFFIXES)


def tree_fingerprint(roots: list[Path]) -> str:
    """A hash of every source and compiled-extension file under ``roots`` (by path relative to
    its root, in sorted order; ``__pycache__`` and other files left out).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = (Path(d) / "a.py").write_text("x = 1")
    ...     before = tree_fingerprint([Path(d)])
    ...     _ = (Path(d) / "notes.txt").write_text("ignored")
    ...     same = tree_fingerprint([Path(d)]) == before
    ...     _ = (Path(d) / "a.py").write_text("x = 2")
    ...     same, tree_fingerprint([Path(d)]) == before
    (True, False)
    """
    h = hashlib.sha256()
    for root in roots:
        files = sorted(path for path in root.rglob("*")
                       if path.is_file() and path.name.endswith(_CODE_SUFFIXES) and "__pycache__" not in path.parts
                       and not _excluded(path.relative_to(root)))
        for path in files:
            h.update(f"{root.name}/{path.relative_to(root).as_posix()}".encode() + b"\0")
            h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()[:_KEY_HEX_DIGITS]


#: Folders of the fingerprinted packages that are not the code that fits and encodes: the
#: engine itself (``ubpe/lab``: its tables and report change no cached result)
FINGERPRINT_EXCLUDES = ("lab",)


def _excluded(relative: Path) -> bool:
    return bool(relative.parts) and relative.parts[0] in FINGERPRINT_EXCLUDES


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A hash of the ubpe code that fits and encodes: every module of the ``ubpe`` and
    ``ubpe_native`` packages on disk (sources, and the compiled kernels' bytes) and the version.

    Part of every cache key, so a change to ubpe's code (or a rebuilt kernel) recomputes the
    cells. It covers the packages' files, not the modules imported so far, so it does not
    depend on what happened to be imported first (lazy imports included). Computed once in the
    main process and carried in the fit specs, so workers never recompute it.
    """
    import ubpe
    import ubpe_native

    roots = [Path(package.__file__).resolve().parent for package in (ubpe, ubpe_native)]
    return digest([tree_fingerprint(roots), ubpe.__version__])


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes (a vocabulary file keys its cells by it)."""
    h = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(functools.partial(handle.read, 1 << 20), b""):
            h.update(block)
    return h.hexdigest()


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
    with np.load(path, allow_pickle=False) as data:
        return {key: data[key] for key in data.files}


class CacheEntryWarning(UserWarning):
    """A cache entry could not be read (a run killed while writing it, a full disk, a file
    changed by hand): it is removed and computed again."""


#: What reading a damaged cache file raises (a cut ``.npz`` is a BadZipFile, a cut JSON a
#: ValueError, a member cut short an EOFError or a zlib error).
DAMAGED = (OSError, ValueError, EOFError, KeyError, TypeError, zipfile.BadZipFile, zlib.error)


def discard(path: Path, error: BaseException) -> None:
    """Warn that the cache entry ``path`` is unreadable, and remove it (and a model's
    ``.meta.json``) so that it is computed again."""
    warnings.warn(f"cache entry {path.name} cannot be read ({type(error).__name__}: {error}); "
                  "computing it again", CacheEntryWarning, stacklevel=3)
    for stale in (path, path.with_suffix(".meta.json")):
        stale.unlink(missing_ok=True)


def read_raw(path: Path) -> dict[str, np.ndarray] | None:
    """The arrays cached at ``path``; None when there are none, or when they cannot be read
    (then the entry is removed with a `CacheEntryWarning`, to be computed again)."""
    if not path.exists():
        return None
    try:
        return load_raw(path)
    except DAMAGED as error:
        discard(path, error)
        return None


def read_meta(path: Path) -> dict[str, Any] | None:
    """A fitted model's ``.meta.json`` (fit seconds, final size); None when it is missing or
    unreadable (then the model is removed with a `CacheEntryWarning`, to be fitted again)."""
    meta_path = path.with_suffix(".meta.json")
    if not meta_path.exists():
        return None
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        if not isinstance(meta, dict) or not isinstance(meta.get("fit_seconds"), (int, float)):
            raise ValueError("no fit_seconds")
        return meta
    except (*DAMAGED, UnicodeDecodeError) as error:
        discard(path, error)
        return None
