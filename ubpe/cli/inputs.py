"""Reading the command line's inputs: documents from files, directories, stdin and ``--text``;
integer sequences; encoder options; where outputs go.

Bad input raises :class:`CLIError` (a :class:`~ubpe.errors.UBPEError`), which ``main``
reports as one line on stderr with exit code 1.
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
from collections.abc import Sequence

from ubpe_native._numpy import np

from ..errors import UBPEError
from ..io import load
from ..models.base import LOG_PROB
from ..files import parse_json

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import Any

PROG = "ubpe"
DOCS_PER = ("line", "file", "paragraph")
# files read before a progress bar is worth showing
PROGRESS_MIN_FILES = 20
# byte-level pre-tokenization when none is given: a preset HF's Oniguruma reads as we do
DEFAULT_BYTELEVEL_PATTERN = "gpt2"
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
#: a model read from a pipe is copied to a temporary file first (readers open a path twice:
#: to detect the format, then to read); past this size it is refused
MAX_PIPED_MODEL_BYTES = 1 << 32
ESCAPES = {"\\n": "\n", "\\t": "\t", "\\r": "\r", "\\s": " ", "\\\\": "\\"}


class CLIError(UBPEError, ValueError):
    """Bad input found by the command line itself (reported like our library errors)."""


def unescape(text: str) -> str:
    r"""Shell-friendly escapes in symbol lists: ``\n``, ``\t``, ``\r``, ``\s`` (space), ``\\``.

    >>> unescape(r" \n\s,")
    ' \n ,'
    """
    out, i = [], 0
    while i < len(text):
        pair = text[i : i + 2]
        if pair in ESCAPES:
            out.append(ESCAPES[pair])
            i += 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def input_files(inputs: Sequence[str], glob: str) -> list[str]:
    """Files named, with directories expanded recursively (``glob`` picks the files, hidden
    ones are skipped); ``-`` is stdin. A missing path is an error."""
    files: list[str] = []
    for name in inputs:
        if name == "-":
            files.append(name)
            continue
        if os.path.isdir(name):
            from pathlib import Path  # (only to walk a folder: pathlib imports urllib, ~1 ms of a one-shot call)

            path = Path(name)
            found = sorted(
                p for p in path.rglob(glob)
                if p.is_file() and not any(part.startswith(".") for part in p.relative_to(path).parts)
            )
            if not found:
                raise CLIError(f"no files matching {glob!r} in directory {name}")
            files.extend(str(p) for p in found)
        elif os.path.isfile(name) or _is_pipe(name):  # a pipe, a FIFO, a process substitution <(...)
            files.append(name)
        elif os.path.exists(name):
            raise CLIError(f"{name} is a device, not a file of documents (use - to read stdin)")
        else:
            raise CLIError(f"no such file or directory: {name}")
    return files


def _is_pipe(name: str) -> bool:
    try:
        return stat.S_ISFIFO(os.stat(name).st_mode)
    except OSError:
        return False


def read_file(name: str) -> str:
    """The UTF-8 text of file ``name`` (``-``: stdin), newlines made ``\\n``.

    One rule for files and stdin: the bytes must be UTF-8, and invalid bytes are an error
    naming where they are (stdin is not read with the locale's error handler)."""
    try:
        if name == "-":
            stream = getattr(sys.stdin, "buffer", None)
            if stream is None:  # already text (a test's StringIO)
                return sys.stdin.read()
            return stream.read().decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
        with open(name, encoding="utf-8") as handle:
            return handle.read()
    except UnicodeDecodeError as exc:
        where = "stdin" if name == "-" else name
        raise CLIError(f"{where} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def split_docs(text: str, docs_per: str) -> list[str]:
    """A file's text cut into documents.

    >>> split_docs("a b\\nc\\n", "line"), split_docs("a\\nb\\n\\n\\nc", "paragraph")
    (['a b', 'c'], ['a\\nb', 'c'])
    """
    if docs_per == "file":
        return [text]
    if docs_per == "paragraph":
        paragraphs = [p.strip("\n") for p in text.replace("\r\n", "\n").split("\n\n")]
        return [p for p in paragraphs if p]
    lines = text.split("\n")
    if lines and lines[-1] == "":  # the newline that ends the file starts no document
        lines.pop()
    return lines


def parse_ints(line: str, where: str = "input") -> list[int]:
    """One integer sequence: whitespace- or comma-separated, or a JSON list.

    >>> parse_ints("3 17 4"), parse_ints("[1, 2]"), parse_ints("5,6")
    ([3, 17, 4], [1, 2], [5, 6])
    """
    stripped = line.strip()
    try:
        if stripped.startswith("["):
            import json  # (a JSON list's: a plain one-shot call imports no json)

            parsed = json.loads(stripped)
            if not isinstance(parsed, list):
                raise ValueError
            values = [as_int(v) for v in parsed]
        else:
            values = [int(v) for v in stripped.replace(",", " ").split()]
    except (ValueError, TypeError):  # (json.JSONDecodeError is a ValueError)
        raise CLIError(f"{where}: expected integers, got {stripped[:60]!r}") from None
    return values


def parse_symbols(line: str, where: str = "input") -> list[int]:
    """:func:`parse_ints` for a document of integer symbols, which must be 64-bit integers
    (an alphabet of them is a numpy int64 table).

    >>> parse_symbols(str(2**64 - 1), "x")
    Traceback (most recent call last):
    ...
    ubpe.cli.inputs.CLIError: x: 18446744073709551615 is outside the 64-bit integers a symbol can be
    """
    values = parse_ints(line, where)
    for value in values:
        if not INT64_MIN <= value <= INT64_MAX:
            raise CLIError(f"{where}: {value} is outside the 64-bit integers a symbol can be")
    return values


def as_int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(value)
    return value


def ids_of_line(line: str, where: str) -> list[int]:
    """Ids from a plain line (``1 2 3``), a JSON list, or a JSON record of ``encode``.

    >>> ids_of_line('{"tokens": [4, 5], "score": 0.5}', "x"), ids_of_line("0.5\\t4 5", "x")
    ([4, 5], [4, 5])
    """
    stripped = line.strip()
    if stripped.startswith("{"):
        import json

        try:
            record = json.loads(stripped)
            tokens = record["tokens"] if "tokens" in record else record["encodings"][0]["tokens"]
            return [as_int(t) for t in tokens]
        except (KeyError, IndexError, TypeError, ValueError):
            raise CLIError(f"{where}: not an encode record with `tokens`: {stripped[:60]!r}") from None
    if "\t" in stripped:  # a top-n line of plain `encode` output: score, tab, ids
        stripped = stripped.split("\t", 1)[1]
    return parse_ints(stripped, where)


def read_docs(
    inputs: Sequence[str],
    *,
    texts: Sequence[str] = (),
    ints: bool = False,
    docs_per: str = "line",
    glob: str = "*",
    quiet: bool = True,
) -> list[Any]:
    """Documents from ``texts`` and files: str documents, or int sequences (``ints``, or
    any ``.npy`` file: a 1-D array is one document, each row of a 2-D array is one)."""
    docs: list[Any] = [parse_symbols(t, "--text") for t in texts] if ints else list(texts)
    names = list(inputs)
    if not names and not texts:
        if sys.stdin.isatty():
            raise CLIError("no input: give files or directories, '-' for stdin, or --text")
        names = ["-"]
    files = input_files(names, glob)
    if any(f.endswith(".npy") for f in files):
        ints = True
    for name in _progress(files, quiet, "reading"):
        if name.endswith(".npy"):
            docs.extend(_npy_docs(name))
        elif ints:
            lines = read_file(name).split("\n")
            docs.extend(parse_symbols(line, f"{name}:{n}") for n, line in enumerate(lines, 1) if line.strip())
        else:
            docs.extend(split_docs(read_file(name), docs_per))
    return docs


def read_model_docs(model: Any, args: argparse.Namespace) -> list[Any]:
    """The documents of ``args`` as ``model`` reads them: text, or integer sequences."""
    kind = model.symbol_type
    if kind not in (str, int):
        raise CLIError(f"the command line reads str and int documents; this model's symbols are {kind.__name__}")
    return read_docs(
        args.inputs, texts=args.text or (), ints=kind is int or getattr(args, "ints", False),
        docs_per=args.docs_per, glob=args.glob,
    )


def fit_weights_from(model: Any, paths: Sequence[str] | None) -> None:
    """``--fit-weights FILE...``: give an imported model idf weights from the lines of these
    files (``model.fit_weights``), so that its scores, ``tfidf`` and ``sample`` have weights."""
    if not paths:
        return
    if not hasattr(model, "fit_weights"):
        raise CLIError(f"--fit-weights: a {model.variant} model does not fit weights (a model read from "
                       "another system's file does; ubpe's own keep the weights of their fit)")
    docs = read_docs(paths, ints=model.symbol_type is int, docs_per="line", glob="*")
    if not docs:
        raise CLIError("--fit-weights: the files hold no documents")
    model.fit_weights(docs)


def score_note(model: Any) -> str | None:
    """One line saying what the score column holds, where it is not ubpe's tf-idf score."""
    from ..view import NO_SCORE

    kind = model.score_kind()
    if kind == LOG_PROB:
        return f"score: the encoding's log-probability under this {model.variant} model (higher: likelier)"
    if kind is None:
        fix = "; --fit-weights FILE gives it idf weights from a corpus" if hasattr(model, "fit_weights") else ""
        return f"score {NO_SCORE}: this {model.variant} model has no weights (its file holds none){fix}"
    return None


def _progress(items: list[Any], quiet: bool, description: str):
    if quiet or len(items) < PROGRESS_MIN_FILES:
        return items
    from tqdm.auto import tqdm

    return tqdm(items, desc=description, unit="file", leave=False)


def _npy_docs(name: str) -> list[np.ndarray]:
    try:
        array = np.load(name, allow_pickle=False)
    except ValueError as exc:
        raise CLIError(f"{name} is not a numeric .npy array: {exc}") from None
    if array.dtype.kind not in "iu":
        raise CLIError(f"{name} holds {array.dtype} values, not integers")
    if array.ndim == 1:
        return [array]
    if array.ndim == 2:
        return list(array)
    raise CLIError(f"{name} has {array.ndim} dimensions; expected one document (1-D) or one per row (2-D)")


def parse_options(pairs: Sequence[str]) -> dict[str, Any]:
    """``key=value`` encoder options; values are JSON (``0.1``, ``true``, ``[1, 2]``) or
    plain strings; ``@file.npy`` / ``@file.json`` loads an array (e.g. additive weights).

    >>> parse_options(["p=0.1", "priority=id", "exact=true"])
    {'p': 0.1, 'priority': 'id', 'exact': True}
    """
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not all(name.isidentifier() for name in key.split(".")):
            raise CLIError(f"encoder options are key=value, got {pair!r}")
        if value.startswith("@"):
            source = value[1:]
            if source.endswith(".npy"):
                try:
                    options[key] = np.load(source, allow_pickle=False)
                except ValueError as exc:
                    raise CLIError(f"{source} is not a numeric .npy array: {exc}") from None
            else:
                options[key] = parse_json(read_file(source), source)
            continue
        import json  # (only a call with options pays for it)

        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
    return options


def check_output(path: str) -> None:
    """Fail before any work if ``path`` cannot be written: its folder (a symlink's target's)
    is missing or not writable (the atomic save creates a file there), or it is a folder."""
    target = os.fsdecode(os.path.realpath(path))
    folder = os.path.dirname(target)
    if not os.path.isdir(folder):
        raise CLIError(f"cannot write {path}: no such directory {folder}")
    if os.path.isdir(target):
        raise CLIError(f"cannot write {path}: it is a directory")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise CLIError(f"cannot write {path}: permission denied in {folder}")


def load_model(path: str, *, variant: str | None = None, pattern: str | None = None) -> Any:
    """:func:`ubpe.load`: a ``.tiktoken`` file (which does not record its pattern) splits
    text by ``pattern``, by default as the API does (a published file's own pattern, any other
    file ``ubpe.io.tiktoken.DEFAULT_TIKTOKEN_PATTERN``, cl100k, with a warning); ``variant`` picks the class of a ubpe 0.3.0 dump. A model read from a pipe (``<(...)``,
    a FIFO) is copied to a temporary file first: readers open the path more than once."""
    if not _is_pipe(path):
        return load(path, variant=variant, pattern=pattern)
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory(prefix="ubpe-model-") as folder:
        copy = os.path.join(folder, "model")
        with open(path, "rb") as source, open(copy, "wb") as target:
            shutil.copyfileobj(source, target)
            if target.tell() > MAX_PIPED_MODEL_BYTES:
                raise CLIError(f"{path}: a piped model over {MAX_PIPED_MODEL_BYTES} bytes is refused")
        try:
            return load(copy, variant=variant, pattern=pattern)
        except UBPEError as exc:  # name the pipe, not the copy
            raise type(exc)(str(exc).replace(copy, path)) from None
