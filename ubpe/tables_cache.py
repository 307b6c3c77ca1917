"""A per-machine cache of the tables every process would otherwise rebuild: the scanner's code
point classes (2.2 MB, ~0.3-1 s with the `regex` module), the regex VM's compiled programs
(~0.05-0.5 s per pattern, over every code point; a peer's Unicode keyed by its class table), and per
file content a GGUF llama model's merge rules (derived in Python; a ``.model`` file's are
derived in C at every load, ubpe_native._spm_proto). Built once per
machine, then read in a few milliseconds by every later process.

Where: ``$UBPE_CACHE_DIR``, else the user cache folder (``platformdirs.user_cache_dir``:
``~/.cache/ubpe`` on Linux, ``$XDG_CACHE_HOME`` honoured, found here without importing
platformdirs), in a subfolder named by the key of
what the tables depend on - ubpe's version, the `regex` module's version (its Unicode data
decides every class) and the source of the modules that build them and of the peers' tables
(``text/peer_classes.py``: a peer's entries are keyed by its name alone) - so an upgrade or an edit
starts a new folder instead of reading stale tables. Each entry is one file named by a hash of
its content key (the pattern, ...): a JSON header holding that key again and each array's
dtype, shape and place, then the arrays' bytes, mapped copy-on-write as one buffer that the arrays
view - numpy arrays (:func:`cached_arrays`), or memoryviews read without importing numpy
(:func:`cached_buffers`: what a load that runs only the kernels needs); a file that does not
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
from collections.abc import Callable

from ._version import __version__
from .files import loads_json  # (json's C scanner: the json package compiles regexes on import)

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from mmap import mmap
    from typing import Any
    from pathlib import Path

try:  # CPython's own BLAKE2: `hashlib` loads OpenSSL's libcrypto first, ~2.5 ms of every cold load
    from _blake2 import blake2b as _blake2b
except ImportError:  # (another Python)
    from hashlib import blake2b as _blake2b

__all__ = ["cache_dir", "cached_arrays", "cached_buffers", "hasher", "DISABLE_VARIABLE", "DIR_VARIABLE"]

#: set to a non-empty value other than "0" to build every table in the process, as without a cache
DISABLE_VARIABLE = "UBPE_NO_CACHE"
#: the cache's folder, instead of the user cache folder
DIR_VARIABLE = "UBPE_CACHE_DIR"
#: the modules whose code decides the tables' content (relative to the package)
_SOURCES = ("text/patterns.py", "text/class_tables.py", "text/peer_classes.py", "text/regex_program.py",
            "text/regex_parse.py", "text/pretokenizers.py", "models/sentencepiece.py", "tables_cache.py")
#: an entry's file: its name's ending, its first bytes, the largest header read (a key is a
#: pattern or a hash), where each array starts (a multiple of this from the file's start)
SUFFIX, _MAGIC, _MAX_HEADER, _ALIGN = ".tables", b"UBPETBL1", 1 << 20, 64
#: the numbers' dtypes an entry holds (little-endian: ``sys.byteorder`` is in the folder's
#: key), and the ``memoryview`` format of each (on a little-endian machine)
_FORMATS = {"|b1": "?", "|u1": "B", "|i1": "b", "<u2": "H", "<i2": "h", "<u4": "I", "<i4": "i", "<u8": "Q",
            "<i8": "q", "<f4": "f", "<f8": "d"}
_DTYPE_OF_FORMAT = {code: dtype for dtype, code in _FORMATS.items()}

_folder: str | None | bool = False  # False: not computed yet; None: no cache


def _disabled() -> bool:
    return os.environ.get(DISABLE_VARIABLE, "") not in ("", "0")


def hasher(data: bytes = b"", size: int = 32) -> Any:
    """A BLAKE2b hash object of ``size`` bytes (``.update``, ``.hexdigest``), for the content
    keys of entries.

    >>> hasher(b"abc", 8).hexdigest() == __import__("hashlib").blake2b(b"abc", digest_size=8).hexdigest()
    True
    """
    return _blake2b(data, digest_size=size)


def _regex_version() -> str:
    """The installed `regex` module's version (its Unicode makes the code-point classes), read
    from the name of its distribution's metadata folder beside it: importing it to ask costs
    8 ms that a load whose text needs no regex does not pay. Else the module's own. (The path
    finder itself: `importlib.util`'s import is ~1-2 ms of a cold load.)"""
    from importlib.machinery import PathFinder

    spec = None if "regex" in sys.modules else PathFinder.find_spec("regex")
    if spec is not None and spec.origin:
        folder = os.path.dirname(os.path.dirname(spec.origin))
        try:
            found = [name for name in os.listdir(folder) if name.startswith("regex-") and name.endswith(".dist-info")]
        except OSError:
            found = []
        if len(found) == 1:
            return found[0][len("regex-"):-len(".dist-info")]
    import regex

    return regex.__version__


def _code_key(root: str | None = None) -> str:
    """`_computed_code_key`; with the cache's ``root``, computed once per install and remembered
    there under a signature of the same things as their files' sizes and modification times
    (`_code_signature`: what CPython trusts a ``.pyc`` by), so that a later process reads 16
    bytes where it looked `regex` up and read and hashed the sources (~0.5 ms of a process's
    first encode)."""
    signature = _code_signature() if root else None
    if signature is None:
        return _computed_code_key()
    memo = os.path.join(root, "code-keys", signature)
    try:
        with open(memo, "rb") as handle:
            known = handle.read(64).decode("ascii", "replace")
    except OSError:
        known = ""
    if len(known) == 16 and not known.strip("0123456789abcdef"):
        return known
    key = _computed_code_key()
    # written whole, then renamed into place; a folder that cannot be written: not remembered
    # (not `ubpe.files.write_atomically`: its temporary's random name imports OpenSSL, which a
    # process filling the cache does without)
    temporary = f"{memo}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(memo), exist_ok=True)
        with open(temporary, "w", encoding="ascii") as handle:
            handle.write(key)
        os.replace(temporary, memo)
    except OSError:
        try:
            os.unlink(temporary)
        except OSError:
            pass
    return key


def _computed_code_key() -> str:
    """A hash of what every table depends on beyond its own key: ubpe's version, the `regex`
    module's, the byte order and the sources of `_SOURCES`."""
    digest = hasher(f"{__version__}|{_regex_version()}|{sys.byteorder}".encode(), 8)
    package = os.path.dirname(__file__)
    for name in _SOURCES:
        try:
            with open(os.path.join(package, name), "rb") as source:
                digest.update(source.read())
        except OSError:  # a frozen or zipped install: the version alone decides
            digest.update(name.encode())
    return digest.hexdigest()


def _code_signature() -> str | None:
    """A hash of ubpe's version, the byte order, and the size and modification time of each
    source of `_SOURCES` and of the `regex` package's ``__init__.py`` (the first on
    ``sys.path``, as the path finder finds it, by its absolute path; an upgrade rewrites it):
    what `_code_key` depends on, read without reading the files. None when a file is not found
    (the key is then computed every time)."""
    package = os.path.dirname(__file__)
    parts = [__version__, sys.byteorder]
    try:
        for name in _SOURCES:
            info = os.stat(os.path.join(package, name))
            parts.append(f"{name}:{info.st_size}:{info.st_mtime_ns}")
        if "regex" in sys.modules:
            parts.append(f"regex:{getattr(sys.modules['regex'], '__version__', '')}")
        else:
            for entry in sys.path:
                init = os.path.join(entry or os.curdir, "regex", "__init__.py")
                if os.path.isfile(init):
                    info = os.stat(init)
                    parts.append(f"{os.path.abspath(init)}:{info.st_size}:{info.st_mtime_ns}")
                    break
            else:
                return None
    except (OSError, TypeError):
        return None
    return hasher("\0".join(parts).encode("utf-8", "surrogatepass"), 12).hexdigest()


def cache_dir() -> Path | None:
    """The folder of this version's tables (created), or None when the cache is off or the
    folder cannot be made."""
    from pathlib import Path  # (a load's path keeps to os.path: pathlib imports urllib, ~1 ms)

    folder = _cache_folder()
    return None if folder is None else Path(folder)


def _cache_folder() -> str | None:
    """:func:`cache_dir` as a str."""
    global _folder
    if _disabled():
        return None
    if _folder is False:
        root = os.environ.get(DIR_VARIABLE)
        if not root:
            root = user_cache_dir()
        folder: str | None = os.path.join(root, f"tables-{__version__}-{_code_key(root)}")
        try:
            os.makedirs(folder, exist_ok=True)
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


def cached_arrays(kind: str, key: str, build: Callable[[], dict[str, Any]]) -> dict[str, np.ndarray]:
    """The arrays ``build()`` returns for ``key`` (a string that decides them, e.g. a pattern),
    read from the machine's cache when an intact entry of ``kind`` holds them, else built and
    written there. ``build`` returns a dict of numpy arrays (or of ``memoryview`` objects) of
    numbers or text; the arrays returned are numpy arrays."""
    import numpy as np

    found = _cached(kind, key, build)
    if isinstance(found, tuple):
        data, layout = found
        return {name: np.frombuffer(data, dtype=dtype, count=count, offset=offset).reshape(shape) if count
                else np.zeros(shape, dtype=dtype) for name, (dtype, shape, count, offset) in layout.items()}
    return {name: np.asarray(value) for name, value in found.items()}


def cached_buffers(kind: str, key: str, build: Callable[[], dict[str, Any]]) -> dict[str, memoryview | str]:
    """:func:`cached_arrays` as memoryviews of the entry's buffer (shaped, of the arrays'
    formats; a scalar as one item, an empty array 1-D), read without importing numpy; ``build``'s arrays as
    such memoryviews when it runs. A text scalar (a failed program's reason) comes as a ``str``."""
    found = _cached(kind, key, build)
    if not isinstance(found, tuple):
        return {name: _built_view(value) for name, value in found.items()}
    data, layout = found
    view = memoryview(data)
    return {name: _text(view[offset:offset + count * _itemsize(dtype)]) if dtype.startswith("<U") else
            view[offset:offset + count * _itemsize(dtype)].cast(_FORMATS[dtype], *([shape] if count and shape else []))
            for name, (dtype, shape, count, offset) in layout.items()}


def _text(view: memoryview) -> str:
    """A text scalar's UTF-32 bytes (padded with NULs, as numpy keeps them) as a str."""
    return bytes(view).decode("utf-32-le", "surrogatepass").rstrip("\0")


def _built_view(value: Any) -> memoryview | str:
    """What :func:`cached_buffers` gives of an array ``build`` returned: as if read back."""
    if not isinstance(value, memoryview):
        import numpy as np

        value = np.ascontiguousarray(value) if np.ndim(value) else np.asarray(value).reshape(1)
        if value.dtype.kind == "U":
            return str(value[0]) if value.shape == (1,) else str(value)
    view = memoryview(value)
    return view.cast("B").cast(view.format, list(view.shape) or [1]) if view.ndim != 1 else view


def _cached(kind: str, key: str, build: Callable[[], dict[str, Any]]) -> Any:
    """``(buffer, layout)`` of the intact entry of ``kind`` holding ``key``, else what
    ``build()`` returns (written to the cache first, when it is on)."""
    folder = _cache_folder()
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
    folder = _cache_folder()
    return folder is not None and os.path.isfile(_entry_path(folder, kind, key))


def _entry_path(folder: str, kind: str, key: str) -> str:
    return os.path.join(folder, f"{kind}-{hasher(key.encode('utf-8', 'surrogatepass'), 12).hexdigest()}{SUFFIX}")


def _read(path: str | os.PathLike, key: str) -> tuple[mmap, dict[str, tuple[str, tuple[int, ...], int, int]]] | None:
    """The buffer of an intact entry holding ``key`` and its arrays' ``(dtype, shape, count,
    offset)``, else None (missing, truncated, corrupt, another key: the caller rebuilds it).

    The buffer maps the file copy-on-write (``ACCESS_COPY``: writable and private, as a copy
    read into memory was): a table's pages are read when the kernels first touch them, so a
    process that encodes a sentence reads a page or two of the 2.2 MB code point classes, not
    all of them (reading the whole was ~1.5 ms of a first ``encode``). Entries are only ever
    replaced by renaming a new file into place (`_write`), never rewritten, so a mapped entry
    keeps its content whatever later processes write."""
    import mmap  # (~0.3 ms, where reading the code point classes into memory took ~1.5)

    try:
        with open(path, "rb") as handle:
            if os.fstat(handle.fileno()).st_size < len(_MAGIC) + 4:
                return None  # (an empty file cannot be mapped)
            data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_COPY)
    except (OSError, ValueError):  # missing, a folder in the way, unreadable, emptied meanwhile
        return None
    layout = _layout(data, key)
    return None if layout is None else (data, layout)


def _layout(data: bytes | bytearray | mmap, key: str) -> dict[str, tuple[str, tuple[int, ...], int, int]] | None:
    """Each array's ``(dtype, shape, count, offset)`` in an entry's bytes, if its header is
    intact, holds ``key`` and places every array inside the file; else None."""
    start = len(_MAGIC) + 4
    if len(data) < start or data[:len(_MAGIC)] != _MAGIC:
        return None
    size = int.from_bytes(data[len(_MAGIC):start], "little")
    if size > _MAX_HEADER or start + size > len(data):
        return None
    base = start + size + (-(start + size) % _ALIGN)  # where the arrays start (offsets count from here)
    try:
        header = loads_json(bytes(data[start:start + size]).decode("ascii"))
        if header["key"] != key:
            return None
        layout = {}
        for name, dtype, shape, offset in header["arrays"]:
            shape = tuple(shape)
            count = 1
            for extent in shape:
                count *= extent
            itemsize = _itemsize(dtype)
            if (itemsize is None or not all(type(e) is int and e >= 0 for e in shape)
                    or type(offset) is not int or offset < 0 or base + offset + count * itemsize > len(data)):
                return None
            layout[str(name)] = (dtype, shape, count, base + offset)
    except (ValueError, KeyError, TypeError, RecursionError):  # not JSON, a field missing or of another type
        return None
    return layout


def _itemsize(dtype: Any) -> int | None:
    """The bytes per item of a dtype an entry may hold (``_FORMATS``, or text: ``<U`` and a
    length, as a failed program's reason), else None."""
    if type(dtype) is not str:
        return None
    if dtype in _FORMATS:
        return int(dtype[2:])
    if dtype.startswith("<U") and dtype[2:].isdigit() and 0 < int(dtype[2:]) <= _MAX_HEADER:
        return 4 * int(dtype[2:])
    return None


def _described(value: Any) -> tuple[str, list[int], bytes] | None:
    """``(dtype, shape, bytes)`` of a numpy array or a ``memoryview`` to store, or None for
    what an entry does not hold (objects; a memoryview on a big-endian machine)."""
    if isinstance(value, memoryview):
        dtype = _DTYPE_OF_FORMAT.get(value.format) if sys.byteorder == "little" else None
        return None if dtype is None else (dtype, list(value.shape), value.tobytes())
    import numpy as np

    value = np.asarray(value, order="C")  # (ascontiguousarray would make a scalar 1-D)
    dtype = value.dtype.newbyteorder("<").str if value.dtype.itemsize > 1 else "|" + value.dtype.str[1:]
    if _itemsize(dtype) is None:
        return None
    return dtype, list(value.shape), value.astype(dtype, copy=False).tobytes()


def _write(path: str | os.PathLike, key: str, arrays: dict[str, Any]) -> None:
    """Write an entry atomically: a temporary file in the same folder, renamed over ``path``.
    The entry: ``_MAGIC``, the header's length (4 bytes, little-endian), the header (JSON: the
    key, each array's name, dtype, shape and offset from the arrays' start), then the arrays'
    bytes, each at a multiple of 64 bytes from the file's start. An array the format does not
    hold leaves the entry unwritten (the tables stay what ``build`` made)."""
    rows, blobs, offset = [], [], 0
    for name, value in arrays.items():
        described = _described(value)
        if described is None:
            return
        dtype, shape, blob = described
        rows.append([name, dtype, shape, offset])
        blobs.append(blob + bytes(-len(blob) % _ALIGN))
        offset += len(blobs[-1])
    import json  # (only when an entry is written)

    header = json.dumps({"key": key, "arrays": rows}).encode("ascii")
    head = _MAGIC + len(header).to_bytes(4, "little") + header
    head += bytes(-len(head) % _ALIGN)
    import tempfile  # (only when an entry is written: it imports shutil, random, bz2, lzma)

    folder, name = os.path.split(os.fspath(path))
    try:
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=os.path.splitext(name)[0], suffix=".tmp")
    except OSError:
        return
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(head)
            for blob in blobs:
                out.write(blob)
        os.replace(temporary, path)
    except (OSError, ValueError):
        try:
            os.unlink(temporary)
        except OSError:
            pass
