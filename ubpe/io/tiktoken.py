"""tiktoken's ``.tiktoken`` files: one ``base64(bytes) rank`` line per mergeable token.

The file holds neither the pre-tokenization pattern nor the special tokens: a reader gets them
from its caller (``ubpe.load(path, pattern="gpt2", special_tokens={...})``). Without one, a
``.tiktoken`` file is read with :data:`DEFAULT_TIKTOKEN_PATTERN`, ``cl100k`` (the library's
default pattern, that of ``cl100k_base.tiktoken``), by the API and the command line alike;
writing a model whose pattern is another warns, naming the ``pattern=`` to read it back with.

>>> parse_tiktoken("YQ== 0\\nYg== 1\\n")
{b'a': 0, b'b': 1}
>>> detect(b"IQ== 0\\nIg== 1\\n"), detect(b'{"a": 1}')
(True, False)
"""

from __future__ import annotations

import base64
import binascii
import os
import re
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..text.patterns import DEFAULT_PATTERN, PATTERNS
from ..errors import IgnoredInputWarning, InvalidParameterError, ModelFormatError
from ..files import write_atomically
from .format import Format

_LINE = re.compile(rb"[A-Za-z0-9+/]+={0,2} [0-9]+(\r?\n|$)")

#: the pattern a ``.tiktoken`` file is read with when none is given (API and CLI)
DEFAULT_TIKTOKEN_PATTERN = DEFAULT_PATTERN



def read(
    path: str | os.PathLike, *, pattern: str | None = None, special_tokens: Mapping[str, int] | None = None
) -> Any:
    """A :class:`~ubpe.models.bytelevel.ByteLevelBPE` from a ``.tiktoken`` file (e.g.
    ``cl100k_base.tiktoken``) with the ``pattern`` (default: :data:`DEFAULT_TIKTOKEN_PATTERN`,
    cl100k) and ``special_tokens`` that go with it."""
    try:
        text = Path(path).read_text(encoding="ascii")
    except UnicodeDecodeError as exc:
        raise ModelFormatError(f"{path} is not a .tiktoken file (not ASCII): {exc}") from None
    if not text.strip():
        raise ModelFormatError(f"{path} is an empty file, not a .tiktoken model")
    from ..models.bytelevel import ByteLevelBPE

    return ByteLevelBPE.from_mergeable_ranks(
        parse_tiktoken(text, str(path)), pattern=pattern or DEFAULT_TIKTOKEN_PATTERN,
        special_tokens=special_tokens
    )


def write(tokenizer: Any, path: str | os.PathLike) -> None:
    """Write the mergeable tokens of a byte-level tokenizer, by rank. The pattern and the
    special tokens are not part of the format."""
    ranks_of = getattr(tokenizer, "mergeable_ranks", None)
    if ranks_of is None:
        raise InvalidParameterError(
            f".tiktoken holds byte-level vocabularies; this is a {getattr(tokenizer, 'variant', type(tokenizer).__name__)} model"
        )
    pattern = getattr(tokenizer, "pattern", None)
    if pattern is not None and pattern != PATTERNS[DEFAULT_TIKTOKEN_PATTERN]:
        preset = next((name for name, text in PATTERNS.items() if text == pattern), None)
        warnings.warn(
            f"{path}: a .tiktoken file does not record the pattern; this model's "
            f"({preset or 'a custom regex'}) is not the {DEFAULT_TIKTOKEN_PATTERN} that readers assume: "
            f"read it with pattern={preset or '<the regex>'!r} (CLI: ubpe convert {Path(path).name} "
            f"model.json --pattern {preset or 'REGEX'})",
            IgnoredInputWarning,
            stacklevel=3,
        )
    lines = [
        f"{base64.b64encode(piece).decode('ascii')} {rank}\n"
        for piece, rank in sorted(ranks_of().items(), key=lambda item: item[1])
    ]
    write_atomically(path, "".join(lines))


def parse_tiktoken(text: str, where: str = "<string>") -> dict[bytes, int]:
    """``bytes -> rank`` from the lines of a ``.tiktoken`` file; blank lines are skipped."""
    ranks: dict[bytes, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) != 2:
            raise ModelFormatError(f"{where}:{number}: expected 'base64 rank', got {line[:80]!r}")
        encoded, rank = fields
        try:
            piece = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            raise ModelFormatError(f"{where}:{number}: {encoded[:40]!r} is not base64") from None
        if not rank.isdigit():
            raise ModelFormatError(f"{where}:{number}: rank {rank[:20]!r} is not a non-negative integer")
        if piece in ranks:
            raise ModelFormatError(f"{where}:{number}: token {piece!r} appears twice")
        ranks[piece] = int(rank)
    return ranks


def detect(head: bytes) -> bool:
    """Whether ``head`` starts with a ``.tiktoken`` line."""
    return _LINE.match(head.lstrip(b"\r\n")) is not None


FORMAT = Format("tiktoken", ".tiktoken", detect, read, write, hints=("pattern", "special_tokens"))
