"""Model files: format detection and every reader and writer, behind :func:`load` and :func:`save`.

Formats only: each format is one module that declares its detector (a look at a file's first
bytes, kept in :mod:`ubpe.io.sniff` so that detection imports no format module), its reader and its writer in a ``FORMAT`` (:class:`~ubpe.io.format.Format`), and
:data:`FORMAT_REGISTRY` names them in detection order; ``FORMATS`` is the table built from the
declarations. The format modules are imported when first needed, and import the models they
build when they read one: loading a file imports that file's reader and model, not the
others. :func:`load` finds the format by content (or takes ``format=``) and returns a
tokenizer of the right family (a :class:`~ubpe.models.base.Tokenizer`); :func:`save` writes one
in any format that can hold it. The modules: ``gguf``, ``sentencepiece``, ``ours`` (our
versioned envelope), ``ubpe030`` (the reference's JSON), ``minbpe``, ``tiktoken``, ``tekken``
(Mistral's JSON), ``hf``
(``tokenizer.json``; its reader is ``hf_import``), ``clip`` (CLIP's gzip'd merges). Readers import the model family they
build when they run; the shared file helpers (atomic writes, bounded reads) are
:mod:`ubpe.files`. The writers of other systems' formats (tokenizer.json, sentencepiece
``.model``, GGUF) are :mod:`ubpe.io.write`, which also says which format holds which family
(:func:`ubpe.io.write.why_not`, the table of ``ubpe convert``).

Adding a format is one module (``FORMAT = Format(name, title, detect, read, write)``), its
line in :data:`FORMAT_REGISTRY` and its detector in ``ubpe.io.sniff.DETECTORS``.

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
from collections.abc import Iterator

from ..errors import InvalidParameterError, ModelFormatError, UBPEError
from ..files import check_path, read_head
from .format import Format
from .sniff import DETECTORS

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import Any


#: Format name -> the module of this package that declares it (``FORMAT``), in detection order
#: (the first whose detector accepts a file's head wins: binary formats with a magic or a
#: protobuf tag first, then the JSON and text formats). A format is one module declaring
#: ``FORMAT`` (see :mod:`ubpe.io.format`) plus its line here. The modules are imported when
#: first needed - detection asks `ubpe.io.sniff`'s detectors, in this order, then imports the
#: module of the one that accepts the file - so that ``import ubpe.io`` loads none of them.
FORMAT_REGISTRY: dict[str, str] = {
    "gguf": "gguf", "sentencepiece": "sentencepiece", "ubpe": "ours", "ubpe030": "ubpe030", "minbpe": "minbpe",
    "tiktoken": "tiktoken", "hf": "hf", "tekken": "tekken", "clip": "clip",
}
#: The format modules, in detection order.
FORMAT_MODULES = tuple(FORMAT_REGISTRY.values())

#: Format name -> its :class:`Format` row, in detection order: every format module's
#: declaration (built on first use, which imports every format module).
FORMATS: dict[str, Format]


def format_module(module: str) -> Any:
    """The module of one format (``"ours"``, ``"ubpe030"``, ...)."""
    return importlib.import_module(f"{__name__}.{module}")


def _rows() -> Iterator[Format]:
    """Every format's row in detection order, each module imported when reached."""
    for module in FORMAT_MODULES:
        yield format_module(module).FORMAT


def __getattr__(name: str) -> Any:
    if name == "FORMATS":  # (PEP 562: built once, then a plain module attribute)
        table = {row.name: row for row in _rows()}
        globals()["FORMATS"] = table
        return table
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def supported(action: str = "read") -> list[str]:
    """Names of the formats ubpe can ``"read"`` or ``"write"``.

    >>> supported("read")[:3], "gguf" in supported("write"), "clip" in supported("write")
    (['gguf', 'sentencepiece', 'ubpe'], True, False)
    """
    return [row.name for row in _rows() if (row.read if action == "read" else row.write) is not None]


def format_of(name: str) -> Format:
    """The ``FORMATS`` row named ``name`` (:class:`ModelFormatError` naming the known ones).

    >>> format_of("tiktoken").title, format_of("hf").read is None
    ('.tiktoken', False)
    """
    try:
        module = FORMAT_REGISTRY[name]
    except (KeyError, TypeError):
        raise ModelFormatError(f"unknown model format {name!r}; ubpe knows: {', '.join(FORMAT_REGISTRY)}") from None
    return format_module(module).FORMAT


def detect(path: str | os.PathLike) -> str:
    """The name of the format of the file at ``path``, from its first bytes."""
    head = read_head(path)
    if not head.strip():
        raise ModelFormatError(f"{path} is an empty file, not a model")
    if head.startswith(b"\xef\xbb\xbf"):  # (a Windows editor's); the peers refuse it too
        raise ModelFormatError(f"{path} starts with a UTF-8 byte order mark, which no model format has: "
                               "save it as UTF-8 without one")
    for name, accepts in DETECTORS.items():  # (imports no format module: `ubpe.io.sniff`)
        if accepts(head):
            return name
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
    check_path(path)
    row = format_of(format) if format is not None else format_of(detect(path))
    if row.read is None:
        raise ModelFormatError(
            f"{path} is an {row.title} file; ubpe writes that format but does not read it "
            f"(it reads: {', '.join(supported('read'))})"
        )
    given = {"variant": variant, "pattern": pattern, "special_tokens": special_tokens, "token_type": token_type}
    try:
        tokenizer = row.read(path, **{k: v for k, v in given.items() if k in row.hints and v is not None})
    except UBPEError as error:  # every reader error names the file, whichever reader raised it
        where = os.fsdecode(path)
        if where not in str(error):
            error.args = (f"{where}: {error}", *error.args[1:])
        raise
    if variant is not None and tokenizer.variant != variant:
        raise ModelFormatError(f"{path} holds a {tokenizer.variant} model, not a {variant} one")
    return tokenizer


def save(tokenizer: Any, path: str | os.PathLike, format: str | None = "ubpe") -> None:
    """Write ``tokenizer`` to ``path`` in ``format`` (``None``: by the file's name, see
    :func:`ubpe.io.write.format_for`; default: ours), atomically.

    A format that cannot hold the tokenizer raises :class:`InvalidParameterError` saying why
    (:func:`ubpe.io.write.why_not`)."""
    check_path(path)
    if format is None:
        from .write import format_for

        format = format_for(path, getattr(tokenizer, "variant", ""))
    row = format_of(format)
    if row.write is None:
        raise InvalidParameterError(f"ubpe reads {row.title} files but does not write them")
    from .write import CannotWrite, why_not

    variant = getattr(tokenizer, "variant", type(tokenizer).__name__)
    reason = why_not(variant, row.name)
    if reason is not None:
        raise CannotWrite(f"a {row.title} file cannot hold a {variant} model: {reason}")
    row.write(tokenizer, path)


__all__ = ["FORMATS", "Format", "detect", "format_of", "load", "save", "supported"]
