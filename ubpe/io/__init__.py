"""Model files: format detection and every reader and writer, behind :func:`load` and :func:`save`.

``FORMATS`` is the one table of the formats ubpe knows: a name, a title, a detector that
looks at a file's first bytes, a reader (``None``: ubpe writes the format but cannot read it)
and a writer (``None``: read only). :func:`load` finds the format by content (or takes
``format=``) and returns a tokenizer of the right family (:class:`~ubpe.tokenizer.Tokenizer`);
:func:`save` writes one in any format that can hold it. One module per format:
``ours`` (our versioned envelope), ``ubpe030`` (the reference's JSON), ``tiktoken``, ``hf``
(``tokenizer.json``); ``files`` has the shared helpers (atomic writes, reading). A format's
module is imported when one of its functions is first called (so saving a fitted model
loads ``ours`` alone, and no numpy).

>>> import os, tempfile
>>> from ubpe import UBPEClassic
>>> tok = UBPEClassic(alphabet="ab", n_tokens=3)
>>> tok.fit(["abab"], quiet=True)
>>> folder = tempfile.mkdtemp()
>>> save(tok, os.path.join(folder, "model.json"))
>>> save(tok, os.path.join(folder, "reference.json"), format="ubpe030")
>>> [detect(os.path.join(folder, name)) for name in ("model.json", "reference.json")]
['ubpe', 'ubpe030']
>>> load(os.path.join(folder, "reference.json")).tokens_mapper == tok.tokens_mapper
True
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from typing import Any, Callable

from ..errors import InvalidParameterError, ModelFormatError
from .files import read_head


@dataclass(frozen=True)
class Format:
    """One row of ``FORMATS``: how to recognise, read and write one file format.

    ``hints`` are the :func:`load` keywords the reader takes (things the file does not
    record, such as a ``.tiktoken`` file's pattern); other formats ignore them.
    """

    name: str
    title: str
    detect: Callable[[bytes], bool]
    read: Callable[..., Any] | None
    write: Callable[[Any, str | os.PathLike], None] | None
    hints: tuple[str, ...] = ()


def _entry(module: str, name: str) -> Callable[..., Any]:
    """``ubpe.io.<module>.<name>``, its module imported when first called."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(f".{module}", __name__), name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"``ubpe.io.{module}.{name}`` (its module imported when first called)."
    return call


def _row(name: str, title: str, module: str, read: str | None, write: str | None, *,
         read_module: str | None = None, hints: tuple[str, ...] = ()) -> Format:
    """The ``FORMATS`` row of the format whose detector is ``module.detect``, whose reader is
    ``read`` (in ``read_module``, default ``module``) and whose writer ``write`` (None: none)."""
    return Format(
        name, title, _entry(module, "detect"),
        _entry(read_module or module, read) if read else None,
        _entry(module, write) if write else None,
        hints,
    )


# Detection tries the rows in this order; the first whose detector accepts the head wins:
# binary formats with a magic or a protobuf tag first, then the JSON and text formats.
FORMATS: dict[str, Format] = {
    row.name: row
    for row in (
        _row("gguf", "llama.cpp GGUF vocabulary", "gguf", "read", None),
        _row("sentencepiece", "sentencepiece .model", "sentencepiece", "read", None),
        _row("ubpe", "ubpe model format", "ours", "read", "write"),
        _row("ubpe030", "ubpe 0.3.0 JSON", "ubpe030", "read", "write", hints=("variant", "token_type")),
        _row("minbpe", "minbpe .model", "minbpe", "read", "write"),
        _row("tiktoken", ".tiktoken", "tiktoken", "read", "write", hints=("pattern", "special_tokens")),
        _row("hf", "HF tokenizer.json", "hf", "read", "save_tokenizer_json", read_module="hf_import"),
    )
}


def supported(action: str = "read") -> list[str]:
    """Names of the formats ubpe can ``"read"`` or ``"write"``.

    >>> supported("read"), supported("write")
    (['gguf', 'sentencepiece', 'ubpe', 'ubpe030', 'minbpe', 'tiktoken', 'hf'], ['ubpe', 'ubpe030', 'minbpe', 'tiktoken', 'hf'])
    """
    return [row.name for row in FORMATS.values() if (row.read if action == "read" else row.write) is not None]


def format_of(name: str) -> Format:
    """The ``FORMATS`` row named ``name`` (:class:`ModelFormatError` naming the known ones).

    >>> format_of("tiktoken").title, format_of("hf").read is None
    ('.tiktoken', False)
    """
    try:
        return FORMATS[name]
    except (KeyError, TypeError):
        raise ModelFormatError(f"unknown model format {name!r}; ubpe knows: {', '.join(FORMATS)}") from None


def detect(path: str | os.PathLike) -> str:
    """The name of the format of the file at ``path``, from its first bytes."""
    head = read_head(path)
    if not head.strip():
        raise ModelFormatError(f"{path} is an empty file, not a model")
    for row in FORMATS.values():
        if row.detect(head):
            return row.name
    raise ModelFormatError(
        f"{path} is not a ubpe model nor any other model file ubpe reads ({', '.join(supported('read'))})"
    )


def load(
    path: str | os.PathLike,
    format: str | None = None,
    *,
    variant: str | None = None,
    pattern: str | None = None,
    special_tokens: dict[str, int] | None = None,
    token_type: type | None = None,
) -> Any:
    """The tokenizer in the file at ``path``, in any format ubpe reads (``format``: skip
    detection). ``variant`` requires a family (``"universal"``, ``"classic"``,
    ``"bytelevel"``...) and picks the class of a ubpe 0.3.0 dump, which does not record it;
    ``pattern`` and ``special_tokens`` complete a ``.tiktoken`` file, ``token_type`` the
    symbols of a ubpe 0.3.0 dump; formats that record these ignore the hints.

    >>> import os, tempfile
    >>> from ubpe import UBPE
    >>> tok = UBPE(alphabet="ab", n_tokens=4)
    >>> tok.fit(["abab", "abba"], quiet=True)
    >>> path = os.path.join(tempfile.mkdtemp(), "model.json")
    >>> tok.save(path)
    >>> load(path).tokens_mapper == tok.tokens_mapper
    True
    >>> load(path, variant="classic")
    Traceback (most recent call last):
    ...
    ubpe.errors.ModelFormatError: ... holds a universal model, not a classic one
    """
    row = format_of(format) if format is not None else format_of(detect(path))
    if row.read is None:
        raise ModelFormatError(
            f"{path} is an {row.title} file; ubpe writes that format but does not read it "
            f"(it reads: {', '.join(supported('read'))})"
        )
    given = {"variant": variant, "pattern": pattern, "special_tokens": special_tokens, "token_type": token_type}
    tokenizer = row.read(path, **{k: v for k, v in given.items() if k in row.hints and v is not None})
    if variant is not None and tokenizer.variant != variant:
        raise ModelFormatError(f"{path} holds a {tokenizer.variant} model, not a {variant} one")
    return tokenizer


def save(tokenizer: Any, path: str | os.PathLike, format: str = "ubpe") -> None:
    """Write ``tokenizer`` to ``path`` in ``format`` (default: ours), atomically.

    A format that cannot hold the tokenizer raises :class:`InvalidParameterError`."""
    row = format_of(format)
    if row.write is None:
        raise InvalidParameterError(f"ubpe reads {row.title} files but does not write them")
    row.write(tokenizer, path)


#: the format modules, imported when first named (``ubpe.io.gguf``) or used
_MODULES = ("files", "gguf", "hf", "hf_import", "minbpe", "ours", "sentencepiece", "tiktoken", "ubpe030")


def __getattr__(name: str) -> Any:
    if name in _MODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["FORMATS", "Format", "detect", "format_of", "load", "save", "supported"]
