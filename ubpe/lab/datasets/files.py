"""A user's own files as a dataset of an experiment: text, JSONL, CSV, parquet, npy / npz,
FASTA and MIDI.

A config names them in a ``[datasets.<name>]`` table with a ``path`` (a file, a folder or a
glob, relative to the config file) and a ``format``; the other keys are optional:

.. code-block:: toml

    [datasets.notes]
    path = "notes/"          # a folder: every file in it (recursively), in sorted order; or a
                             # glob, or a list of them; $VARIABLES are expanded
    format = "text"
    document = "file"        # text: "line" | "paragraph" | "file" (default: "file" for a
                             # folder or glob, "line" for one file)
    strict = true            # stop at a file that cannot be read (default: skip and list it)
    [datasets.smiles]
    path = "molecules.jsonl"
    format = "jsonl"
    field = "smiles"         # jsonl: the field holding the document
    unit = "scaffold"        # the unit of independence: "document" (default), "file", or a
                             # field / column whose value names the unit
    [datasets.sensors]
    path = "series.csv"
    format = "csv"           # csv | parquet
    column = "values"        # strings, integer lists ("3 1 4" or "[3, 1, 4]"), or numbers
    values = "numbers"       # "text" | "ints" | "numbers" (default: what the column holds)
    window = 256             # numbers: a document is this many consecutive values of a series
    quantizer = "uniform:64" # numbers: the quantizer (`ubpe.lab.datasets.quantize`)
    [datasets.genomes]
    path = "genomes.fa"
    format = "fasta"         # via pyfaidx (the `fasta` extra); a document per record
    chunk = 1000             # fasta: cut records into pieces of this many symbols (unit: the
                             # record; unit = "chunk" holds pieces out on their own)
    [datasets.songs]
    path = "midi/*.mid"
    format = "midi"          # via MidiTok (the `midi` extra): REMI token ids, a document per file
    [datasets.arrays]
    path = "runs.npz"        # (at most MAX_ARRAY_BYTES of array data per file)
    format = "npy"           # .npy / .npz integer arrays: a document per row (2-D) or array (1-D)

``kind`` (e.g. "dna", "code") names what the documents are for the report's grouping
(default: from the format and the symbols), ``description`` a line for the report.

The split follows the units exactly as for the built-in datasets (`ubpe.lab.datasets.split`):
all documents of a unit go to the same split, by the hash of the unit's name. The report
records the checksum of each split's documents and ``files_sha256``, the SHA-256 of the files
read (names and bytes).

A file that cannot be read is a `FileFormatError` (a `DatasetError`) naming the file and the
line or record (`_text`, `_tables`, `_arrays`, `_sequences` say what each format checks: lines
end only at ``\n``, ``\r\n``, ``\r``; ids fit int64; numbers are finite; arrays are bounded
before they are read; a MIDI file is whole and holds a note). In a dataset of several files a
bad file is skipped, named on stderr and listed in the report (``skipped_files``);
``strict = true`` in the dataset's table makes it stop the run instead.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import math
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ubpe.lab.datasets._arrays import MAX_ARRAY_BYTES, array_documents
from ubpe.lab.datasets._base import DatasetError
from ubpe.lab.datasets._corpus import RawCorpus
from ubpe.lab.datasets._sequences import fasta_documents, midi_tokenizer, midi_tokens
from ubpe.lab.datasets._tables import table_documents
from ubpe.lab.datasets._text import (
    DEFAULT_WINDOW,
    FileFormatError,
    check_encoding,
    decode,
    json_document,
    jsonl_records,
    text_documents,
)
from ubpe.lab.datasets.split import Source, split_corpus

__all__ = ["DEFAULT_WINDOW", "FORMATS", "KEYS", "MAX_ARRAY_BYTES", "FileFormatError", "check_options",
           "files_checksum", "find_files", "load_files", "midi_tokenizer", "midi_tokens", "read_corpus"]

FORMATS: tuple[str, ...] = ("text", "jsonl", "csv", "parquet", "npy", "fasta", "midi")
#: The keys a file dataset takes besides the runner's own (regex, vocab_sizes, max_symbols...).
KEYS: dict[str, frozenset[str]] = {
    "text": frozenset({"document", "encoding"}),
    "jsonl": frozenset({"field", "encoding"}),
    "csv": frozenset({"column", "values", "window", "encoding"}),
    "parquet": frozenset({"column", "values", "window"}),
    "npy": frozenset({"window"}),
    "fasta": frozenset({"chunk"}),
    "midi": frozenset(),
}
COMMON_KEYS = frozenset({"path", "format", "kind", "unit", "description", "quantizer", "root", "strict"})
TEXT_DOCUMENTS = ("line", "paragraph", "file")
VALUE_KINDS = ("text", "ints", "numbers")
#: Symbols of DNA / RNA (IUPAC's unknown base N included); any other letter makes a protein.
NUCLEOTIDES = frozenset("ACGTUN")
_WILDCARDS = "*?["


def check_options(name: str, options: dict[str, Any]) -> None:
    """Raise `DatasetError` when a file dataset's options are not ones its format takes."""
    fmt = options.get("format")
    if fmt not in FORMATS:
        raise DatasetError(f"datasets.{name}.format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    unknown = set(options) - COMMON_KEYS - KEYS[fmt]
    if unknown:
        takes = ", ".join(sorted(COMMON_KEYS - {"root"} | KEYS[fmt]))
        raise DatasetError(f"datasets.{name}: {', '.join(sorted(unknown))} not a key of format "
                           f"{fmt!r} (it takes {takes})")
    if fmt == "text" and options.get("document", "line") not in TEXT_DOCUMENTS:
        raise DatasetError(f"datasets.{name}.document must be one of {', '.join(TEXT_DOCUMENTS)}")
    if options.get("values", "text") not in VALUE_KINDS:
        raise DatasetError(f"datasets.{name}.values must be one of {', '.join(VALUE_KINDS)}")
    for key in ("window", "chunk"):
        value = options.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise DatasetError(f"datasets.{name}.{key} must be an int >= 1, got {value!r}")
    if not isinstance(options.get("strict", False), bool):
        raise DatasetError(f"datasets.{name}.strict must be true or false, got {options['strict']!r}")
    if "encoding" in options:
        check_encoding(options["encoding"], f"datasets.{name}.encoding")
    if fmt in ("jsonl",) and not isinstance(options.get("field"), str):
        raise DatasetError(f"datasets.{name}: format {fmt!r} needs `field = \"...\"`, the field "
                           "holding the document")
    if fmt in ("csv", "parquet") and not isinstance(options.get("column"), str):
        raise DatasetError(f"datasets.{name}: format {fmt!r} needs `column = \"...\"`, the column "
                           "holding the documents")
    paths = options.get("path")
    if not (isinstance(paths, str) or isinstance(paths, list) and paths
            and all(isinstance(p, str) for p in paths)):
        raise DatasetError(f"datasets.{name}.path must be a path or a list of paths, got {paths!r}")


def _walk(folder: Path, depth: float = math.inf) -> Iterator[Path]:
    """Every file under ``folder`` (at most ``depth`` folders down) but hidden ones, following
    symbolic links to folders but entering no folder twice (a link back to a parent is a
    loop, not more files)."""
    seen: set[tuple[int, int]] = set()
    for top, dirs, files in os.walk(folder, followlinks=True, onerror=lambda error: None):
        try:
            info = os.stat(top)
        except OSError:
            dirs[:] = []
            continue
        if (info.st_dev, info.st_ino) in seen:
            dirs[:] = []
            continue
        seen.add((info.st_dev, info.st_ino))
        below = len(Path(top).relative_to(folder).parts)
        dirs[:] = sorted(d for d in dirs if not d.startswith(".")) if below < depth else []
        for file in sorted(files):
            path = Path(top) / file
            if not file.startswith(".") and path.is_file():
                yield path


def _matches(parts: tuple[str, ...], pattern: tuple[str, ...]) -> bool:
    """Does a relative path (its parts) match a glob (its parts, ``**`` any number of folders)?
    As in `glob`, a wildcard does not match a name starting with ".".

    >>> _matches(("a", "b", "c.txt"), ("**", "*.txt")), _matches((".a", "c.txt"), ("**", "*.txt"))
    (True, False)
    """
    if not pattern:
        return not parts
    if pattern[0] == "**":
        return any(_matches(parts[i:], pattern[1:]) for i in range(len(parts) + 1)
                   if not any(p.startswith(".") for p in parts[:i]))
    if not parts or (parts[0].startswith(".") and not pattern[0].startswith(".")):
        return False
    return fnmatch.fnmatchcase(parts[0], pattern[0]) and _matches(parts[1:], pattern[1:])


def _glob(full: Path) -> list[Path]:
    """The files a glob names, without `glob.glob`'s descent into symbolic link loops."""
    parts = full.parts
    fixed = next((i for i, part in enumerate(parts) if any(c in part for c in _WILDCARDS)), len(parts))
    base = Path(*parts[:fixed]) if fixed else Path(".")
    pattern = parts[fixed:]
    if not base.is_dir():
        return []
    depth = math.inf if "**" in pattern else len(pattern) - 1
    return [path for path in _walk(base, depth) if _matches(path.relative_to(base).parts, pattern)]


def find_files(path: str | list[str], root: str | Path = "") -> list[Path]:
    """The files a dataset's ``path`` names: a file, every file under a folder, or a glob's
    matches (relative to ``root``), in sorted order; hidden files are left out, and symbolic
    links to folders are followed once (a loop ends). A list of such paths names the files of
    each, in its order."""
    if isinstance(path, list):
        found = [file for item in path for file in find_files(item, root)]
        return list(dict.fromkeys(found))
    full = Path(root) / Path(os.path.expandvars(path)).expanduser()
    if full.is_file():
        return [full]
    found = list(_walk(full)) if full.is_dir() else _glob(full)
    if not found:
        raise DatasetError(f"no file at {path!r}" + (f" (looked in {full})" if root else ""))
    return sorted(found)


@dataclass
class _Record:
    """One document read from a file, before the split: its id and unit."""

    doc: Any
    id: str
    unit: str


def _read_text(path: Path, label: str, options: dict[str, Any], many: bool) -> Iterator[_Record]:
    text = decode(path, label, options.get("encoding", "utf-8"))
    for line, doc in text_documents(text, options.get("document") or ("file" if many else "line")):
        yield _Record(doc, f"{label}:{line}", f"{label}:{line}")


def _read_jsonl(path: Path, label: str, options: dict[str, Any], unit: str) -> Iterator[_Record]:
    key = options["field"]
    text = decode(path, label, options.get("encoding", "utf-8"))
    for number, record in jsonl_records(text, label):
        if not isinstance(record, dict) or key not in record:
            raise FileFormatError(f"{label}, line {number}: no field {key!r}")
        doc = json_document(record[key], f"{label}, line {number}, field {key!r}")
        if not len(doc):
            continue
        where = f"{label}:{number}"
        yield _Record(doc, where, _unit_of(record, unit, where, f"{label}, line {number}"))


def _unit_of(record: dict[str, Any], unit: str, where: str, at: str) -> str:
    if unit in ("document", "record", "row", "file"):
        return where
    if unit not in record:
        raise FileFormatError(f"{at}: no field or column {unit!r} (the unit)")
    return str(record[unit])


def _read(fmt: str, path: Path, label: str, options: dict[str, Any], unit: str, many: bool) -> list[_Record]:
    """Every document of one file (a `FileFormatError` names what is wrong with it)."""
    if fmt == "text":
        return list(_read_text(path, label, options, many))
    if fmt == "jsonl":
        return list(_read_jsonl(path, label, options, unit))
    if fmt in ("csv", "parquet"):
        return [_Record(*found) for found in table_documents(path, label, options, unit)]
    if fmt == "npy":
        return [_Record(doc, where, where) for where, doc in array_documents(path, label)]
    if fmt == "fasta":
        return [_Record(*found) for found in fasta_documents(path, label, options.get("chunk"))]
    return [_Record(midi_tokens(path, label, options.get("tokenizer")), label, label)]


def files_checksum(files: list[Path], root: Path) -> str:
    """SHA-256 of the files (names relative to ``root``, and bytes), in order (a file that
    cannot be read counts by its name)."""
    h = hashlib.sha256()
    for path in files:
        h.update(_label(path, root).encode() + b"\0")
        try:
            h.update(hashlib.sha256(path.read_bytes()).digest())
        except OSError:
            h.update(b"unreadable")
    return h.hexdigest()


def _label(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.name


def read_corpus(name: str, options: dict[str, Any]) -> tuple[RawCorpus, Source]:
    """Every document of the files, in file order, with their units, and what
    the split records about them.

    A file that cannot be read as the format says stops the read when it is the dataset's
    only file, or when ``strict = true``; otherwise it is skipped, named on stderr, and listed
    with its error in the split's settings (``skipped_files``: the report and ``run.json``
    show them).
    """
    check_options(name, options)
    fmt, unit = options["format"], options.get("unit", "document")
    files = find_files(options["path"], options.get("root", ""))
    paths = options["path"] if isinstance(options["path"], list) else [options["path"]]
    given = [Path(options.get("root", "")) / Path(os.path.expandvars(p)).expanduser() for p in paths]
    base = _common_folder(given)
    many = len(files) > 1 or any(g.is_dir() for g in given)
    strict = options.get("strict", False) or len(files) == 1
    if fmt == "midi":
        options = {**options, "tokenizer": midi_tokenizer()}  # one tokenizer for every file
    records: list[_Record] = []
    skipped: list[dict[str, str]] = []
    for path in files:
        label = _label(path, base)
        try:
            found = _read(fmt, path, label, options, unit, many)
        except FileFormatError as error:
            if strict:
                raise
            skipped.append({"file": label, "error": str(error)})
            print(f"dataset {name!r}: skipping {label}: {error}", file=sys.stderr)
            continue
        for record in found:
            if unit == "file":
                record.unit = label
            elif unit == "chunk":  # FASTA pieces held out on their own (one long genome)
                record.unit = record.id
            records.append(record)
    if not records:
        why = f" ({len(skipped)} skipped; the first: {skipped[0]['error']})" if skipped else ""
        raise DatasetError(f"dataset {name!r}: the files at {options['path']!r} hold no document{why}")
    numeric = [isinstance(r.doc, np.ndarray) and np.issubdtype(r.doc.dtype, np.floating) for r in records]
    if any(numeric) and not all(numeric):
        raise DatasetError(f"dataset {name!r}: some documents are integers and some numbers to quantize")
    quantized = all(numeric)
    text = all(isinstance(r.doc, str) for r in records)
    if not text and any(isinstance(r.doc, str) for r in records):
        raise DatasetError(f"dataset {name!r}: some documents are text and some numbers")
    ids = [r.id for r in records]
    if len(set(ids)) != len(ids):
        raise DatasetError(f"dataset {name!r}: two documents read from the same place ({options['path']!r})")
    checksum = files_checksum(files, base)
    settings: dict[str, Any] = {"format": fmt, "files": len(files), "files_sha256": checksum}
    if skipped:
        settings["skipped_files"] = skipped
    corpus = RawCorpus(ids=ids, docs=[r.doc for r in records], version=checksum[:12],
                       units=[r.unit for r in records], groups=[r.unit for r in records],
                       # one quantizer, fitted on the train split's values: a series held
                       # out whole (its unit) has no training values of its own to fit on
                       series=None, settings=settings)
    kind = options.get("kind") or _default_kind(fmt, records, quantized)
    # a FASTA document is a record, or a piece of one: the record is the unit
    unit_name = "record" if fmt == "fasta" and unit == "document" else unit
    source = Source(name, kind=kind, symbol_type="char" if text else "int",
                    source=f"{fmt} files: {', '.join(paths)}", licence="the user's",
                    description=options.get("description") or f"{len(files)} {fmt} file(s)",
                    quantized=quantized, unit=unit_name)
    return corpus, source


def _common_folder(paths: list[Path]) -> Path:
    """The folder that file labels are relative to: the deepest folder holding every path
    (a glob's part with wildcards left out)."""
    folders = []
    for path in paths:
        folder = path if path.is_dir() else path.parent
        while any(c in folder.as_posix() for c in "*?["):
            folder = folder.parent
        folders.append(folder.resolve())
    return Path(os.path.commonpath(folders)) if folders else Path(".")


def _default_kind(fmt: str, records: list[_Record], quantized: bool) -> str:
    if fmt == "midi":
        return "music"
    if fmt == "fasta":
        letters = set().union(*(set(r.doc) for r in records))
        return "dna" if letters <= NUCLEOTIDES else "protein"
    if quantized:
        return "timeseries"
    return "prose" if isinstance(records[0].doc, str) else "sequence"


_PARSED: dict[tuple[str, str], tuple[RawCorpus, Source]] = {}


def load_files(name: str, split: str, *, max_symbols: float | None = None, **options: Any):
    """One split (`ubpe.lab.datasets.Dataset`) of the dataset a user's files make.

    The files are read once per set of options (the train and held-out loads share the read);
    ``quantizer`` applies to numbers (default `ubpe.lab.datasets.DEFAULT_QUANTIZER`).
    """
    key = (name, json.dumps(options, sort_keys=True, default=str))
    if key not in _PARSED:
        _PARSED.clear()  # one dataset's files at a time in memory
        _PARSED[key] = read_corpus(name, options)
    corpus, source = _PARSED[key]
    try:
        return split_corpus(source, corpus, split, max_symbols=max_symbols,
                            quantizer=options.get("quantizer"))
    except DatasetError as error:
        n_units = len(set(corpus.units or ()))
        raise DatasetError(f"{error}: its {len(corpus.ids)} documents are {n_units} unit(s) "
                           f"of {source.unit!r}, too few for a held-out split; name a finer `unit`"
                           ) from None
