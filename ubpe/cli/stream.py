"""The documents of ``ubpe fit``'s inputs, read lazily and as often as needed.

``ubpe fit`` reads its inputs twice: once to infer the alphabet (unless ``--alphabet`` is
given), once to fit (a streaming fit: see :mod:`ubpe.fit`). Neither pass holds more than one
line - or, with ``--docs-per file|paragraph``, one file - plus what the pass keeps (the set of
symbols; the distinct parts). Stdin can be read only once, so it is first copied to a
temporary file (disk, not memory). The documents are exactly those
:func:`~ubpe.cli.inputs.read_docs` returns, in the same order, with the same errors - except
that of a file holding both invalid UTF-8 and a line that is no integers (``--ints``), the
stream reports whichever comes first, where ``read_docs`` reports the encoding.

>>> import os, tempfile
>>> folder = tempfile.mkdtemp()
>>> with open(os.path.join(folder, "a.txt"), "w") as f:
...     _ = f.write("ab\\r\\n\\nba\\n")
>>> with DocStream([folder], skip_empty=True) as docs:
...     list(docs), list(docs), docs.n_docs
(['ab', 'ba'], ['ab', 'ba'], 2)
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator, Sequence

from .inputs import CLIError, _npy_docs, _progress, input_files, parse_symbols, split_docs

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import Any

STDIN = "-"


def _not_utf8(where: str, exc: UnicodeDecodeError, offset: int) -> CLIError:
    return CLIError(f"{where} is not UTF-8 text ({exc.reason} at byte {offset + exc.start})")


def _lines(path: str, where: str) -> Iterator[str]:
    """The lines of a UTF-8 file, one at a time, as ``read_file(...).split("\\n")`` has them
    (newlines ``\\r\\n`` and ``\\r`` made ``\\n``; the newline that ends the file starts no line)."""
    offset = 0
    with open(path, "rb") as file:
        for raw in file:
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise _not_utf8(where, exc, offset) from None
            offset += len(raw)
            pieces = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
            if pieces[-1] == "":  # the line ended with its newline
                pieces.pop()
            yield from pieces


def _text(path: str, where: str) -> str:
    with open(path, "rb") as file:
        data = file.read()
    try:
        return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    except UnicodeDecodeError as exc:
        raise _not_utf8(where, exc, 0) from None


class DocStream:
    """The documents of ``inputs`` (files, directories, ``-`` for stdin), re-read on every
    iteration; ``n_docs`` is how many the last complete pass yielded. With ``skip_empty``
    empty text documents are left out. Use it as a context manager (the stdin copy is
    removed on exit)."""

    def __init__(
        self, inputs: Sequence[str], *, ints: bool = False, docs_per: str = "line", glob: str = "*",
        quiet: bool = True, skip_empty: bool = False,
    ):
        names = list(inputs)
        if not names:
            if sys.stdin.isatty():
                raise CLIError("no input: give files or directories, '-' for stdin, or --text")
            names = [STDIN]
        self.files = input_files(names, glob)
        self.ints = ints or any(f.endswith(".npy") for f in self.files)
        self.docs_per = docs_per
        self.quiet = quiet
        self.skip_empty = skip_empty and not self.ints
        self.n_docs = 0
        self._stdin: str | None = None
        if STDIN in self.files:
            self._stdin = self._copy_stdin()

    @staticmethod
    def _copy_stdin() -> str:
        handle, path = tempfile.mkstemp(prefix="ubpe-stdin-")
        with os.fdopen(handle, "wb") as out:
            stream = getattr(sys.stdin, "buffer", None)
            if stream is None:  # already text (a test's StringIO)
                out.write(sys.stdin.read().encode("utf-8"))
            else:
                shutil.copyfileobj(stream, out)
        return path

    def close(self) -> None:
        if self._stdin is not None:
            os.unlink(self._stdin)
            self._stdin = None

    def __enter__(self) -> DocStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __iter__(self) -> Iterator[Any]:
        n = 0
        for name in _progress(self.files, self.quiet, "reading"):
            for doc in self._docs_of(name):
                if self.skip_empty and not doc:
                    continue
                n += 1
                yield doc
        self.n_docs = n

    def any(self) -> bool:
        """Whether the inputs hold a document (reads up to the first one)."""
        return next(iter(self), None) is not None

    def _docs_of(self, name: str) -> Iterator[Any]:
        path, where = (self._stdin, "stdin") if name == STDIN else (name, name)
        if name.endswith(".npy"):
            yield from _npy_docs(name)
        elif self.ints:
            for n, line in enumerate(_lines(path, where), 1):
                if line.strip():
                    yield parse_symbols(line, f"{name}:{n}")
        elif self.docs_per == "line":
            yield from _lines(path, where)
        else:
            yield from split_docs(_text(path, where), self.docs_per)
