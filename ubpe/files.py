"""Files: atomic writes, text and JSON reading, and the first bytes that format detection reads.

Files are written atomically: a temporary file in the same folder, flushed and synced, then
renamed over the target, so a crash never leaves half a model. The file keeps its mode (a
new one gets the umask's), and a symlink keeps pointing at the file it names.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "x.json")
>>> write_atomically(path, '{"a": 1}')
>>> read_head(path), parse_json(read_text(path), path)
(b'{"a": 1}', {'a': 1})
"""

from __future__ import annotations

import gc
import os
import stat

from .errors import InvalidParameterError, ModelFormatError

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import Any

# how many bytes format detection reads
HEAD_SIZE = 1 << 16
#: how deep a part of a model file that a reader walks recursively may nest (a tokenizer.json
#: normalizer or pre-tokenizer: a few levels of ``Sequence``)
MAX_JSON_DEPTH = 64


class gc_paused:  # noqa: N801 (used as a function: ``with gc_paused():``)
    """No cyclic garbage collection inside: reading a big vocabulary creates hundreds of
    thousands of strings and lists, none of them cyclic, and the collector's passes over them
    cost a tenth of the load time. (A class, not ``contextlib.contextmanager``: importing
    ``contextlib`` is ~0.5 ms of a small file's cold load.)

    >>> with gc_paused():
    ...     gc.isenabled()
    False
    >>> gc.isenabled()
    True
    """

    def __enter__(self) -> None:
        self._enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc_info: object) -> None:
        if self._enabled:
            gc.enable()


def check_path(path: Any, what: str = "path") -> str | bytes | os.PathLike:
    """``path`` if it names a file (a str, bytes or :class:`os.PathLike`); anything else is an
    :class:`InvalidParameterError`. ``open`` takes an int as a file descriptor (and closing it
    would close, say, stdout for ``True``): a model path never is one.

    >>> check_path(True)
    Traceback (most recent call last):
    ...
    ubpe.errors.InvalidParameterError: `path` must be a file path (str or os.PathLike), not bool
    """
    if isinstance(path, (str, bytes, os.PathLike)):
        return path
    raise InvalidParameterError(f"`{what}` must be a file path (str or os.PathLike), not {type(path).__name__}")


def read_head(path: str | os.PathLike, size: int = HEAD_SIZE) -> bytes:
    """The first ``size`` bytes of the file at ``path``."""
    with open(check_path(path), "rb") as handle:
        return handle.read(size)


def write_atomically(path: str | os.PathLike, text: str | bytes) -> None:
    """Write ``text`` to ``path`` so that readers see the old file or the new, never half.

    A symlink is followed: its target is replaced, the link stays. A new file gets the mode
    ``0o666`` minus the umask (like ``open``); a replaced file keeps its mode. Text that UTF-8
    cannot hold (a lone surrogate) is refused before anything is written; bytes are written as
    they are.
    """
    check_path(path)
    try:
        data = text if isinstance(text, bytes) else text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise unencodable(path, exc) from None
    target = os.fsdecode(os.path.realpath(path))
    if os.path.isdir(target):  # os.replace would raise IsADirectoryError (or replace an empty folder)
        raise InvalidParameterError(f"cannot save {os.fspath(path)}: it is a directory (give the path of a file)")
    try:
        mode: int | None = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = None  # os.open applies the umask to 0o666
    descriptor, temporary = _create_temporary(target)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise


def unencodable(path: str | os.PathLike, exc: UnicodeEncodeError) -> InvalidParameterError:
    """The error for a model that UTF-8 cannot hold (a lone surrogate in ``exc.object``)."""
    bad = exc.object[exc.start : exc.end]
    return InvalidParameterError(
        f"cannot save {os.fspath(path)}: the model holds {bad!r}, a lone surrogate, which UTF-8 "
        "cannot hold (was some input decoded with errors='surrogateescape'?)"
    )


def _create_temporary(target: str) -> tuple[int, str]:
    """A new, empty, hidden file next to ``target`` (mode 0o666 minus the umask)."""
    import secrets  # (when a file is written: its import loads OpenSSL, ~3-14 ms)

    for _ in range(100):
        folder, base = os.path.split(target)
        name = os.path.join(folder, f".{base}.{secrets.token_hex(4)}.tmp")
        try:
            return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), name
        except FileExistsError:
            continue
        except OSError as exc:  # name the file the user asked for, not the hidden temporary
            raise type(exc)(exc.errno, exc.strerror, str(target)) from None
    raise FileExistsError(f"no free temporary name next to {target}")


def sha256_hex(data: bytes) -> str:
    """SHA-256 of ``data`` in hex, by CPython's own module where it has one: `hashlib` loads
    OpenSSL's libcrypto first, ~3-5 ms of a cold load (as `ubpe.tables_cache` does for BLAKE2).

    >>> sha256_hex(b"abc")[:16]
    'ba7816bf8f01cfea'
    """
    try:
        from _sha2 import sha256  # (Python 3.12+)
    except ImportError:
        try:
            from _sha256 import sha256  # (3.11)
        except ImportError:  # (another Python)
            from hashlib import sha256
    return sha256(data).hexdigest()


def read_text(path: str | os.PathLike, what: str = "a ubpe model") -> str:
    """The UTF-8 text of the file at ``path`` (:class:`ModelFormatError` if it is not UTF-8)."""
    try:
        with open(check_path(path), "rb") as handle:
            return decoded_text(handle.read())
    except UnicodeDecodeError as exc:
        raise ModelFormatError(f"{path} is not {what} (not UTF-8 text): {exc}") from None


def decoded_text(data: bytes) -> str:
    """UTF-8 ``data`` as text mode reads a file: the bytes decoded at once, then the newlines
    (twice as fast as a text-mode read); ``UnicodeDecodeError`` if it is not UTF-8."""
    text = data.decode("utf-8")
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def parse_json(text: str, what: str) -> Any:
    """``text`` as JSON (:class:`ModelFormatError` naming ``what`` if it is not, or if it nests
    deeper than the decoder's own limit, about a thousand levels, or holds an integer of more
    digits than Python converts).

    >>> parse_json("[" * 100_000 + "]" * 100_000, "x.json")
    Traceback (most recent call last):
    ...
    ubpe.errors.ModelFormatError: x.json nests arrays and objects too deep to be a model file
    """
    try:
        return loads_json(text)
    except (ValueError, TypeError, RecursionError):
        pass  # the json module's own reading says what is wrong (it raises the same)
    import json

    try:
        return json.loads(text)
    except (json.JSONDecodeError, TypeError) as exc:
        raise ModelFormatError(f"{what} is not valid JSON (corrupt or truncated?): {exc}") from None
    except ValueError as exc:  # an integer of more digits than Python converts (4,300)
        raise ModelFormatError(f"{what} holds a number too long to be a model's: {exc}") from None
    except RecursionError:
        raise ModelFormatError(f"{what} nests arrays and objects too deep to be a model file") from None


class _JsonContext:
    """What ``json.JSONDecoder()`` hands its C scanner: the defaults of ``json.loads``."""

    strict = True
    object_hook = object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}.__getitem__


_json_scanner: Any = None
_JSON_SPACE = " \t\n\r"


def loads_json(text: str) -> Any:
    """``json.loads(text)`` for a str, without importing the ``json`` package: its scanner in C
    (``_json``, what ``json.loads`` itself runs) called as ``json.JSONDecoder.decode`` calls it.
    The ``json`` package compiles five regular expressions when imported (with ``re``, ~1 ms of
    a small file's cold load). Errors are ``ValueError`` (``json.JSONDecodeError`` or a
    ``StopIteration``'s value as one), ``RecursionError`` or ``TypeError``; :func:`parse_json`
    names them as the ``json`` module does.

    >>> loads_json(' {"a": [1, 2.5, "\\u00e9", null, NaN]} ')
    {'a': [1, 2.5, 'é', None, nan]}
    >>> loads_json('{"a": 1} x')
    Traceback (most recent call last):
    ...
    ValueError: extra data at 8
    """
    global _json_scanner
    if _json_scanner is None:
        try:
            from _json import make_scanner
        except ImportError:  # (an interpreter without CPython's accelerator)
            import json

            return json.loads(text)
        _json_scanner = make_scanner(_JsonContext())
    if not isinstance(text, str):
        raise TypeError(f"JSON text must be a str, not {type(text).__name__}")
    start = len(text) - len(text.lstrip(_JSON_SPACE))
    try:
        value, end = _json_scanner(text, start)
    except StopIteration as stop:
        raise ValueError(f"expecting a value at {stop.value}") from None
    if end != len(text) and text[end:].strip(_JSON_SPACE):
        raise ValueError(f"extra data at {end}")
    return value


def check_depth(value: Any, what: str, limit: int = MAX_JSON_DEPTH) -> Any:
    """``value`` (parsed JSON) if its arrays and objects nest at most ``limit`` deep, for a
    reader that walks it recursively (iterative: no recursion here).

    >>> check_depth([[[1]]], "x", limit=2)
    Traceback (most recent call last):
    ...
    ubpe.errors.ModelFormatError: x nests arrays and objects deeper than 2 levels
    """
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        for child in children:
            if isinstance(child, (dict, list)):
                if depth >= limit:
                    raise ModelFormatError(f"{what} nests arrays and objects deeper than {limit} levels")
                stack.append((child, depth + 1))
    return value
