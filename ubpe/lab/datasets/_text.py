"""Text and JSON Lines files as documents: decoding, line splitting, paragraphs, records.

Lines end only where the formats say they do - at ``\\n``, ``\\r\\n`` or ``\\r`` - never at the
other characters `str.splitlines` also breaks at (U+2028, U+2029, U+0085, form feed, vertical
tab, U+001C-U+001E), which stay inside a document:

>>> split_lines("a\\r\\nb\\u2028c\\x0cd\\re")
['a', 'b\\u2028c\\x0cd', 'e']

A byte order mark at the start of a file is not text (`decode` removes it); a blank line is
one of spaces and tabs only.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ubpe.lab.datasets._base import DatasetError

#: Values per document when a column or array of numbers is cut into windows.
DEFAULT_WINDOW = 256
_LINE_END = re.compile(r"\r\n|\r|\n")
#: What a blank line may hold (a line of other characters, even invisible ones, is content).
_BLANK = " \t"
_BOM = "\ufeff"
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


class FileFormatError(DatasetError):
    """A file of a dataset cannot be read as its format says; the message names the file and
    the line or record."""


def check_encoding(encoding: Any, at: str) -> str:
    """``encoding`` when Python has a text codec of that name, else a `DatasetError`.

    >>> check_encoding("latin-1", "x")
    'latin-1'
    >>> check_encoding("no-such-codec", "datasets.x.encoding")
    Traceback (most recent call last):
    ...
    ubpe.lab.datasets._base.DatasetError: datasets.x.encoding: 'no-such-codec' is not a text encoding Python knows (e.g. "utf-8", "latin-1", "utf-16")
    """
    try:
        if not isinstance(encoding, str):
            raise LookupError(encoding)
        codecs.lookup(encoding)
        b"a".decode(encoding)  # a LookupError for the codecs that are not text (rot13, hex, ...)
    except UnicodeDecodeError:
        pass
    except LookupError:
        raise DatasetError(f"{at}: {encoding!r} is not a text encoding Python knows "
                           '(e.g. "utf-8", "latin-1", "utf-16")') from None
    return encoding


def first_line(error: BaseException) -> str:
    """The first line of an error's message (its type's name when it has none)."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def split_lines(text: str) -> list[str]:
    """``text`` cut at ``\\n``, ``\\r\\n`` and ``\\r`` only (a last empty line is dropped)."""
    lines = _LINE_END.split(text)
    return lines[:-1] if lines and lines[-1] == "" else lines


def is_blank(line: str) -> bool:
    return not line.strip(_BLANK)


def read_bytes(path: Path, label: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        raise FileFormatError(f"{label}: cannot be read ({error.strerror or type(error).__name__})") from None


def decode(path: Path, label: str, encoding: str) -> str:
    """The file's text in ``encoding``, its byte order mark removed."""
    data = read_bytes(path, label)
    check_encoding(encoding, f"{label}: encoding")
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise FileFormatError(f"{label}, line {line}: not {encoding} text ({error.reason})") from None
    return text[1:] if text.startswith(_BOM) else text


def text_documents(text: str, document: str) -> list[tuple[int, str]]:
    """``(first line number, document)`` of a text: the whole text, each non-blank line, or
    each paragraph (lines between blank lines, joined with ``\\n``).

    >>> text_documents("a b\\r\\nc\\r\\n\\r\\n\\r\\nd\\r\\n", "paragraph")
    [(1, 'a b\\nc'), (5, 'd')]
    """
    if document == "file":
        return [(1, text)] if not is_blank(text.replace("\n", "").replace("\r", "")) else []
    lines = split_lines(text)
    if document == "line":
        return [(number, line) for number, line in enumerate(lines, start=1) if not is_blank(line)]
    pieces: list[tuple[int, str]] = []
    block: list[str] = []
    for number, line in enumerate([*lines, ""], start=1):
        if not is_blank(line):
            block.append(line)
        elif block:
            pieces.append((number - len(block), "\n".join(block)))
            block = []
    return pieces


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def jsonl_records(text: str, label: str) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` of each non-blank line of a JSON Lines text.

    NaN and Infinity (which Python's `json` would accept) are refused, as JSON does.
    """
    for number, line in enumerate(split_lines(text), start=1):
        if is_blank(line):
            continue
        try:
            value = json.loads(line, parse_constant=_no_constant)
        except RecursionError:
            raise FileFormatError(f"{label}, line {number}: not JSON (nested too deep)") from None
        except ValueError as error:  # JSONDecodeError, and a number of too many digits
            reason = error.msg if isinstance(error, json.JSONDecodeError) else str(error).split(":")[0]
            raise FileFormatError(f"{label}, line {number}: not JSON ({reason})") from None
        yield number, value


def int_document(values: Any, at: str) -> np.ndarray:
    """Python or numpy integers as an int64 document; a value outside int64 is refused.

    >>> int_document([3, 1, 4], "x").tolist()
    [3, 1, 4]
    >>> int_document(np.array([1 << 63], dtype=np.uint64), "f.npy")
    Traceback (most recent call last):
    ...
    ubpe.lab.datasets._text.FileFormatError: f.npy: id 9223372036854775808 is outside the 64-bit signed range ids must be in
    """
    array = np.asarray(values) if isinstance(values, np.ndarray) else None
    if array is not None and array.dtype.kind in "iu":
        if array.size and array.dtype.kind == "u" and array.max() > INT64_MAX:
            raise FileFormatError(f"{at}: id {int(array.max())} is outside the 64-bit signed range ids must be in")
        return array.astype(np.int64)
    values = [int(v) for v in values]
    bad = next((v for v in values if not INT64_MIN <= v <= INT64_MAX), None)
    if bad is not None:
        shown = str(bad) if len(str(bad)) <= 40 else f"{str(bad)[:20]}... ({len(str(bad))} digits)"
        raise FileFormatError(f"{at}: id {shown} is outside the 64-bit signed range ids must be in")
    return np.asarray(values, dtype=np.int64)


def float_document(values: Any, at: str) -> np.ndarray:
    """Numbers as a float64 document (to quantize); NaN and infinities are refused."""
    array = np.array(values, dtype=np.float64)  # a copy: a document is never a view of a file's buffer
    if not np.all(np.isfinite(array)):
        i = int(np.flatnonzero(~np.isfinite(array))[0])
        raise FileFormatError(f"{at}: value {i} is {array[i]!r}, not a finite number")
    return array


def json_document(value: Any, at: str) -> Any:
    """A JSON value as a document: a string, or a list of integers or of numbers."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return int_document(value, at)
    if isinstance(value, list) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        try:
            return float_document(value, at)
        except OverflowError:
            raise FileFormatError(f"{at}: a number too large for a float") from None
    raise FileFormatError(f"{at}: a document is a string or a list of numbers, got {type(value).__name__}")
