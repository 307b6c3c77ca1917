"""karpathy/minbpe's ``.model`` files (``minbpe/base.py``: ``Tokenizer.save`` / ``load``).

Line 1 ``minbpe v1``; line 2 the split pattern; line 3 the number of special tokens, then one
``<token> <id>`` line each; then one ``<left> <right>`` line per merge, the i-th creating id
``256 + i``. Read into :class:`~ubpe.models.minbpe.MinbpeBPE`; written from it or from a
fitted :class:`~ubpe.models.bytelevel.ByteLevelBPE`. (The ``.vocab`` file beside it is for people;
the GPT-4 variant's byte permutation is never saved by minbpe, so it cannot be read.)

>>> detect(b"minbpe v1\\n"), detect(b"minbpe v2\\n")
(True, False)
>>> model = parse_minbpe("minbpe v1\\n\\\\w+\\n1\\n<|end|> 257\\n104 105\\n")
>>> model.merges, model.special_tokens, model.encode("hi")
([(104, 105)], {'<|end|>': 257}, [256])
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ModelFormatError
from ..files import read_text, write_atomically
from .format import Format
from .sniff import MINBPE_VERSION, minbpe as detect

if TYPE_CHECKING:
    from ..models.minbpe import MinbpeBPE

#: minbpe's first line
VERSION = MINBPE_VERSION


def read(path: str | os.PathLike) -> MinbpeBPE:
    """The tokenizer of a minbpe ``.model`` file."""
    return parse_minbpe(read_text(path, "a minbpe model"), where=str(path))


def parse_minbpe(text: str, where: str = "<minbpe>") -> MinbpeBPE:
    """The tokenizer of a minbpe ``.model`` file's text; every line checked."""
    from ..models.minbpe import MAX_TOKENS, MinbpeBPE

    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines or lines[0].strip() != VERSION:
        raise ModelFormatError(f"{where}: not a minbpe model (first line must be {VERSION!r})")
    if len(lines) < 3:
        raise ModelFormatError(f"{where}: a minbpe model needs a pattern line and a special-token count")
    pattern = lines[1].strip()  # minbpe strips it too
    n_special = _integer(lines[2], where, 3, "the number of special tokens")
    if n_special > MAX_TOKENS or 3 + n_special > len(lines):
        raise ModelFormatError(f"{where}: {n_special} special tokens announced, {len(lines) - 3} lines follow")
    specials: dict[str, int] = {}
    for number, line in enumerate(lines[3 : 3 + n_special], start=4):
        fields = line.split()
        if len(fields) != 2:
            raise ModelFormatError(f"{where}, line {number}: expected '<token> <id>', got {line!r}")
        if fields[0] in specials:
            raise ModelFormatError(f"{where}, line {number}: special token {fields[0]!r} appears twice")
        specials[fields[0]] = _integer(fields[1], where, number, "a special token's id")
    merges = []
    for number, line in enumerate(lines[3 + n_special :], start=4 + n_special):
        fields = line.split()
        if len(fields) != 2:
            raise ModelFormatError(f"{where}, line {number}: expected '<left id> <right id>', got {line!r}")
        merges.append((_integer(fields[0], where, number, "an id"), _integer(fields[1], where, number, "an id")))
    return MinbpeBPE(merges, pattern=pattern, special_tokens=specials, where=where)


def _integer(field: str, where: str, number: int, what: str) -> int:
    field = field.strip()
    if not (field.isascii() and field.isdigit()) or len(field) > 10:
        raise ModelFormatError(
            f"{where}, line {number}: {what} must be a non-negative integer of at most 10 digits, got {field[:40]!r}"
        )
    return int(field)


def write(tokenizer: Any, path: str | os.PathLike) -> None:
    """Write ``tokenizer`` as a minbpe ``.model`` file (atomically)."""
    from ..models.minbpe import check_writable

    merges, pattern, specials = check_writable(tokenizer)
    if "\n" in pattern or "\r" in pattern:
        raise ModelFormatError("minbpe keeps the pattern on one line; this pattern holds a line break")
    for text in specials:
        if not text or any(c.isspace() for c in text):
            raise ModelFormatError(f"minbpe cannot hold the special token {text!r} (empty or with whitespace)")
    lines = [VERSION, pattern, str(len(specials))]
    lines += [f"{text} {token}" for text, token in specials.items()]
    lines += [f"{a} {b}" for a, b in merges]
    write_atomically(Path(path), "\n".join(lines) + "\n")


FORMAT = Format("minbpe", "minbpe .model", detect, read, write)
