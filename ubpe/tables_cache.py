"""A per-machine cache of the tables every process would otherwise rebuild: the scanner's code
point classes (2.2 MB, ~0.3-1 s with the `regex` module), the regex VM's compiled programs
(~0.05-0.5 s per pattern, over every code point), llama.cpp's unsafe code points, and per
file content a sentencepiece BPE model's merge rules (derived in Python). Built once per
machine, then read in a few milliseconds by every later process.

Where: ``$UBPE_CACHE_DIR``, else the user cache folder (``platformdirs.user_cache_dir``:
``~/.cache/ubpe`` on Linux, ``$XDG_CACHE_HOME`` honoured, found here without importing
platformdirs), in a subfolder named by the key of
what the tables depend on - ubpe's version, the `regex` module's version (its Unicode data
decides every class) and the source of the modules that build them - so an upgrade or an edit
starts a new folder instead of reading stale tables. Each entry is one ``.npz`` file named by
a hash of its content key (the pattern, ...), and stores that key again: a file that does not
load, or holds another key, is rebuilt and replaced. Writes go to a temporary file renamed
into place (atomic on POSIX and Windows), so concurrent processes never read half a file; a
folder that cannot be written leaves the cache off for that process, with the results the
same. ``UBPE_NO_CACHE=1`` turns it off.

>>> import numpy as np
>>> calls = []
>>> def build():
...     calls.append(1)
...     return {"table": np.arange(3)}
>>> cached_arrays("example", "key", build)["table"].tolist(), len(calls)
([0, 1, 2], 1)
"""

from __future__ import annotations

import os
import sys
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ._version import __version__

try:  # CPython's own BLAKE2: `hashlib` loads OpenSSL's libcrypto first, ~2.5 ms of every cold load
    from _blake2 import blake2b as _blake2b
except ImportError:  # (another Python)
    from hashlib import blake2b as _blake2b

__all__ = ["cache_dir", "cached_arrays", "hasher", "DISABLE_VARIABLE", "DIR_VARIABLE"]

#: set to a non-empty value other than "0" to build every table in the process, as without a cache
DISABLE_VARIABLE = "UBPE_NO_CACHE"
#: the cache's folder, instead of the user cache folder
DIR_VARIABLE = "UBPE_CACHE_DIR"
#: the modules whose code decides the tables' content (relative to the package)
_SOURCES = ("text/patterns.py", "text/regex_program.py", "text/regex_parse.py", "text/pretokenizers.py",
            "models/sentencepiece.py", "tables_cache.py")
#: the key an entry stores beside its arrays
_KEY_FIELD = "__key__"

_folder: Path | None | bool = False  # False: not computed yet; None: no cache


def _disabled() -> bool:
    return os.environ.get(DISABLE_VARIABLE, "") not in ("", "0")


def hasher(data: bytes = b"", size: int = 32) -> Any:
    """A BLAKE2b hash object of ``size`` bytes (``.update``, ``.hexdigest``), for the content
    keys of entries.

    >>> hasher(b"abc", 8).hexdigest() == __import__("hashlib").blake2b(b"abc", digest_size=8).hexdigest()
    True
    """
    return _blake2b(data, digest_size=size)


def _code_key() -> str:
    """A hash of what every table depends on beyond its own key."""
    import numpy as np  # here, not at import: a process that never builds a table imports none
    import regex

    digest = hasher(f"{__version__}|{regex.__version__}|{sys.byteorder}|{np.__version__[:1]}".encode(), 8)
    package = Path(__file__).parent
    for name in _SOURCES:
        try:
            digest.update((package / name).read_bytes())
        except OSError:  # a frozen or zipped install: the version alone decides
            digest.update(name.encode())
    return digest.hexdigest()


def cache_dir() -> Path | None:
    """The folder of this version's tables (created), or None when the cache is off or the
    folder cannot be made."""
    global _folder
    if _disabled():
        return None
    if _folder is False:
        root = os.environ.get(DIR_VARIABLE)
        if not root:
            root = user_cache_dir()
        folder = Path(root) / f"tables-{__version__}-{_code_key()}"
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError:
            folder = None
        _folder = folder
    return _folder


def user_cache_dir() -> str:
    """``platformdirs.user_cache_dir("ubpe", appauthor=False)``; on Linux its rule without
    the import (~2-4 ms of a cold load): ``$XDG_CACHE_HOME`` (unless blank), else
    ``~/.cache``, then ``ubpe``."""
    if sys.platform.startswith("linux"):
        root = os.environ.get("XDG_CACHE_HOME", "")
        return os.path.join(root if root.strip() else os.path.expanduser("~/.cache"), "ubpe")
    import platformdirs

    return platformdirs.user_cache_dir("ubpe", appauthor=False)


def _reset() -> None:
    """Forget the folder computed (tests change the environment variables)."""
    global _folder
    _folder = False


def cached_arrays(kind: str, key: str, build: Callable[[], dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """The arrays ``build()`` returns for ``key`` (a string that decides them, e.g. a pattern),
    read from the machine's cache when an intact entry of ``kind`` holds them, else built and
    written there. ``build`` must return a dict of numpy arrays (no object arrays)."""
    folder = cache_dir()
    if folder is None:
        return build()
    path = _entry_path(folder, kind, key)
    found = _read(path, key)
    if found is not None:
        return found
    arrays = build()
    _write(path, key, arrays)
    return arrays


def is_cached(kind: str, key: str) -> bool:
    """Whether the machine's cache has an entry of ``kind`` for ``key`` (a look at the folder:
    whether it loads, :func:`cached_arrays` finds out, rebuilding it if not)."""
    folder = cache_dir()
    return folder is not None and _entry_path(folder, kind, key).is_file()


def _entry_path(folder: Path, kind: str, key: str) -> Path:
    return folder / f"{kind}-{hasher(key.encode('utf-8', 'surrogatepass'), 12).hexdigest()}.npz"


def _read(path: Path, key: str) -> dict[str, np.ndarray] | None:
    """The arrays of an intact entry holding ``key``, else None (missing, truncated, corrupt,
    another key: the caller rebuilds it)."""
    import numpy as np

    try:
        with np.load(path, allow_pickle=False) as stored:
            arrays = {name: stored[name] for name in stored.files}
    except FileNotFoundError:
        return None
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile):
        return None
    stored_key = arrays.pop(_KEY_FIELD, None)
    if stored_key is None or stored_key.dtype.kind != "U" or str(stored_key) != key:
        return None
    return arrays


def _write(path: Path, key: str, arrays: dict[str, np.ndarray]) -> None:
    """Write an entry atomically: a temporary file in the same folder, renamed over ``path``."""
    import numpy as np

    try:
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.stem, suffix=".tmp")
    except OSError:
        return
    try:
        with os.fdopen(handle, "wb") as out:
            np.savez(out, **arrays, **{_KEY_FIELD: np.array(key)})
        os.replace(temporary, path)
    except (OSError, ValueError):
        try:
            os.unlink(temporary)
        except OSError:
            pass
