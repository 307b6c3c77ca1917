"""What a file format declares: :class:`Format`, one per format module of :mod:`ubpe.io`.

A format module (``gguf``, ``ours``, ``tiktoken``, ...) holds its detector, reader and writer
and declares them in a module-level ``FORMAT``; :mod:`ubpe.io` lists the format modules once,
in detection order, and builds its ``FORMATS`` table from their declarations. Readers import
the model families they build when they run, so that recognising a file imports no model.
"""

from __future__ import annotations

import os
from .._fntools import namedtuple  # (collections.namedtuple without exec: ubpe._fntools)
from collections.abc import Callable

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import Any


class Format(namedtuple("Format", "name title detect read write hints", defaults=((),))):
    """One file format: how to recognise, read and write it.

    ``detect`` looks at a file's first bytes; ``read(path, **hints)`` returns a tokenizer
    (``None``: ubpe writes the format but cannot read it); ``write(tokenizer, path)`` writes
    one (``None``: read only). ``hints`` are the :func:`ubpe.io.load` keywords the reader takes
    (things the file does not record, such as a ``.tiktoken`` file's pattern); other formats
    ignore them. (A named tuple, not a dataclass: `dataclasses` imports `inspect`, 4 ms of
    every load; and `collections`' one: `typing.NamedTuple` compiles each field's annotation,
    ~1 ms here.)
    """

    __slots__ = ()

    name: str
    title: str
    detect: Callable[[bytes], bool]
    read: Callable[..., Any] | None
    write: Callable[[Any, str | os.PathLike], None] | None
    hints: tuple[str, ...]  # (default: ())
