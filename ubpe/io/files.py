"""Files: atomic writes, text and JSON reading, and the first bytes that format detection reads.

Files are written atomically: a temporary file in the same folder, flushed and synced, then
renamed over the target, so a crash never leaves half a model.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "x.json")
>>> write_atomically(path, '{"a": 1}')
>>> read_head(path), parse_json(read_text(path), path)
(b'{"a": 1}', {'a': 1})
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from ..errors import ModelFormatError

# how many bytes format detection reads
HEAD_SIZE = 1 << 16


def read_head(path: str | os.PathLike, size: int = HEAD_SIZE) -> bytes:
    """The first ``size`` bytes of the file at ``path``."""
    with open(path, "rb") as handle:
        return handle.read(size)


def write_atomically(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` so that readers see the old file or the new, never half."""
    target = Path(path)
    handle = tempfile.NamedTemporaryFile(
        "w", encoding="utf-8", dir=target.parent, prefix=f".{target.name}.", suffix=".tmp", delete=False
    )
    try:
        with handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(handle.name, target)
    except BaseException:
        Path(handle.name).unlink(missing_ok=True)
        raise


def read_text(path: str | os.PathLike, what: str = "a ubpe model") -> str:
    """The UTF-8 text of the file at ``path`` (:class:`ModelFormatError` if it is not UTF-8)."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ModelFormatError(f"{path} is not {what} (not UTF-8 text): {exc}") from None


def parse_json(text: str, what: str) -> Any:
    """``text`` as JSON (:class:`ModelFormatError` naming ``what`` if it is not)."""
    try:
        return json.loads(text)
    except (json.JSONDecodeError, TypeError) as exc:
        raise ModelFormatError(f"{what} is not valid JSON (corrupt or truncated?): {exc}") from None
