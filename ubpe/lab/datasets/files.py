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
    path = "runs.npz"
    format = "npy"           # .npy / .npz integer arrays: a document per row (2-D) or array (1-D)

``kind`` (e.g. "dna", "code") names what the documents are for the report's grouping
(default: from the format and the symbols), ``description`` a line for the report.

The split follows the units exactly as for the built-in datasets (`ubpe.lab.datasets.split`):
all documents of a unit go to the same split, by the hash of the unit's name. The report
records the checksum of each split's documents and ``files_sha256``, the SHA-256 of the files
read (names and bytes). A file that cannot be read is a `FileFormatError` naming the file and
the line or record.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ubpe.lab.datasets._base import DatasetError
from ubpe.lab.datasets._corpus import RawCorpus
from ubpe.lab.datasets.split import Source, split_corpus

FORMATS: tuple[str, ...] = ("text", "jsonl", "csv", "parquet", "npy", "fasta", "midi")
#: The keys a file dataset takes besides the runner's own (regex, vocab_sizes, max_symbols...).
KEYS: dict[str, frozenset[str]] = {
    "text": frozenset({"document", "encoding"}),
    "jsonl": frozenset({"field", "encoding"}),
    "csv": frozenset({"column", "values", "window"}),
    "parquet": frozenset({"column", "values", "window"}),
    "npy": frozenset({"window"}),
    "fasta": frozenset({"chunk"}),
    "midi": frozenset(),
}
COMMON_KEYS = frozenset({"path", "format", "kind", "unit", "description", "quantizer", "root"})
TEXT_DOCUMENTS = ("line", "paragraph", "file")
VALUE_KINDS = ("text", "ints", "numbers")
#: Values per document when a column or array of numbers is cut into windows.
DEFAULT_WINDOW = 256
#: Symbols of DNA / RNA (IUPAC's unknown base N included); any other letter makes a protein.
NUCLEOTIDES = frozenset("ACGTUN")
#: Besides letters, a FASTA sequence may hold gaps and stop codons.
RESIDUE_MARKS = frozenset("-*.")
_INT_LIST = re.compile(r"^\s*\[?\s*-?\d+(?:\s*[,\s]\s*-?\d+)*\s*,?\s*\]?\s*$")
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")


class FileFormatError(DatasetError):
    """A file of a dataset cannot be read as its format says; the message names the file and
    the line or record."""


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
    if fmt in ("jsonl",) and not isinstance(options.get("field"), str):
        raise DatasetError(f"datasets.{name}: format {fmt!r} needs `field = \"...\"`, the field "
                           "holding the document")
    if fmt in ("csv", "parquet") and not isinstance(options.get("column"), str):
        raise DatasetError(f"datasets.{name}: format {fmt!r} needs `column = \"...\"`, the column "
                           "holding the documents")


def find_files(path: str | list[str], root: str | Path = "") -> list[Path]:
    """The files a dataset's ``path`` names: a file, every file under a folder, or a glob's
    matches (relative to ``root``), in sorted order; hidden files are left out. A list of
    such paths names the files of each, in its order."""
    if isinstance(path, list):
        found = [file for item in path for file in find_files(item, root)]
        return list(dict.fromkeys(found))
    full = Path(root) / Path(os.path.expandvars(path)).expanduser()
    if full.is_file():
        return [full]
    if full.is_dir():
        found = [p for p in full.rglob("*") if p.is_file()
                 and not any(part.startswith(".") for part in p.relative_to(full).parts)]
    else:
        found = [Path(p) for p in glob.glob(str(full), recursive=True) if Path(p).is_file()]
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
    text = _decode(path, label, options.get("encoding", "utf-8"))
    document = options.get("document") or ("file" if many else "line")
    if document == "file":
        pieces = [(1, text)]
    elif document == "line":
        pieces = list(enumerate(text.splitlines(), start=1))
    else:
        pieces, line = [], 1
        for block in _PARAGRAPH_BREAK.split(text):
            pieces.append((line, block.strip("\n")))
            line += block.count("\n") + 2
    for line, doc in pieces:
        if doc.strip():
            yield _Record(doc, f"{label}:{line}", f"{label}:{line}")


def _decode(path: Path, label: str, encoding: str) -> str:
    data = path.read_bytes()
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise FileFormatError(f"{label}, line {line}: not {encoding} text ({error.reason})") from None


def _read_jsonl(path: Path, label: str, options: dict[str, Any], unit: str) -> Iterator[_Record]:
    key = options["field"]
    text = _decode(path, label, options.get("encoding", "utf-8"))
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise FileFormatError(f"{label}, line {number}: not JSON ({error.msg})") from None
        if not isinstance(record, dict) or key not in record:
            raise FileFormatError(f"{label}, line {number}: no field {key!r}")
        doc = _document(record[key], f"{label}, line {number}, field {key!r}")
        where = f"{label}:{number}"
        yield _Record(doc, where, _unit_of(record, unit, where, f"{label}, line {number}"))


def _unit_of(record: dict[str, Any], unit: str, where: str, at: str) -> str:
    if unit in ("document", "record", "row", "file"):
        return where
    if unit not in record:
        raise FileFormatError(f"{at}: no field or column {unit!r} (the unit)")
    return str(record[unit])


def _document(value: Any, at: str) -> Any:
    """A JSON value as a document: a string, or a list of integers."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return np.asarray(value, dtype=np.int64)
    if isinstance(value, list) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        return np.asarray(value, dtype=np.float64)
    raise FileFormatError(f"{at}: a document is a string or a list of numbers, got {type(value).__name__}")


def _read_table(path: Path, label: str, options: dict[str, Any], unit: str) -> Iterator[_Record]:
    """CSV or parquet: one column's cells, or the column as series of numbers cut in windows."""
    from ubpe.lab import require

    require(("pandas",))
    import pandas as pd

    column = options["column"]
    try:
        if options["format"] == "csv":
            # a column declared text or ints is read as strings ("007" stays text); else as it looks
            as_text = options.get("values") in ("text", "ints")
            table = pd.read_csv(path, dtype={column: str} if as_text else None, keep_default_na=not as_text)
        else:
            require(("pyarrow",), "parquet")
            table = pd.read_parquet(path)
    except (ValueError, OSError, pd.errors.ParserError) as error:
        raise FileFormatError(f"{label}: not a {options['format']} table ({_first_line(error)})") from None
    if column not in table.columns:
        raise FileFormatError(f"{label}: no column {column!r} (columns: {', '.join(map(str, table.columns))})")
    if unit not in ("document", "row", "record", "file") and unit not in table.columns:
        raise FileFormatError(f"{label}: no column {unit!r} (the unit)")
    cells = table[column]
    values = options.get("values") or _values_of(cells)
    first_line = 2 if options["format"] == "csv" else 0  # a CSV's first data row is its line 2

    def row_label(i: int) -> str:
        return f"{label}, line {i + first_line}" if first_line else f"{label}, row {i}"

    if values == "numbers" and not any(isinstance(c, (list, np.ndarray)) for c in cells[:1]):
        yield from _windows(table, column, unit, label, row_label, options.get("window") or DEFAULT_WINDOW)
        return
    for i, cell in enumerate(cells):
        where = f"{label}:{i}"
        doc = _cell_document(cell, values, row_label(i), column)
        if doc is None:
            continue
        unit_name = where if unit in ("document", "row", "record") else label if unit == "file" \
            else str(table[unit].iloc[i])
        yield _Record(doc, where, unit_name)


def _first_line(error: Exception) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


def _values_of(cells: Any) -> str:
    """What a column holds: numbers, integer lists (lists, or strings like "3 1 4"), or text."""
    present = [c for c in cells if c is not None and not (isinstance(c, float) and np.isnan(c))]
    if present and all(isinstance(c, (int, float, np.number)) and not isinstance(c, bool) for c in present):
        return "numbers"
    if present and all(isinstance(c, (list, np.ndarray)) for c in present):
        whole = all(np.issubdtype(np.asarray(c).dtype, np.integer) for c in present)
        return "ints" if whole else "numbers"
    if present and all(isinstance(c, str) and _INT_LIST.match(c) for c in present):
        return "ints"
    return "text"


def _cell_document(cell: Any, values: str, at: str, column: str) -> Any:
    if cell is None or (isinstance(cell, float) and np.isnan(cell)):
        return None
    if values == "text":
        if not isinstance(cell, str):
            raise FileFormatError(f"{at}, column {column!r}: not text ({cell!r})")
        return cell if cell else None
    if isinstance(cell, str):
        if not _INT_LIST.match(cell):
            raise FileFormatError(f"{at}, column {column!r}: not a list of integers ({cell[:40]!r})")
        return np.asarray([int(x) for x in re.findall(r"-?\d+", cell)], dtype=np.int64)
    array = np.asarray(cell)
    if values == "ints":
        if array.ndim != 1 or not (np.issubdtype(array.dtype, np.integer)
                                   or (np.issubdtype(array.dtype, np.floating) and np.all(array == np.round(array)))):
            raise FileFormatError(f"{at}, column {column!r}: not a list of integers")
        return array.astype(np.int64)
    return array.astype(np.float64)


def _windows(table: Any, column: str, unit: str, label: str, row_label: Any, window: int) -> Iterator[_Record]:
    """A numeric column as series (one per unit value, else the file), cut into windows."""
    import pandas as pd

    numbers = pd.to_numeric(table[column], errors="coerce")
    bad = numbers.isna() & table[column].notna()
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise FileFormatError(f"{row_label(i)}, column {column!r}: not a number ({table[column].iloc[i]!r})")
    keys = table[unit].astype(str) if unit in table.columns else pd.Series([label] * len(table))
    for key in dict.fromkeys(keys):
        series = numbers[(keys == key).to_numpy()].dropna().to_numpy(dtype=np.float64)
        series_name = key if unit in table.columns else label
        for start in range(0, len(series), window):
            where = f"{series_name}:{start}"
            unit_name = series_name if unit in table.columns or unit == "file" else where
            yield _Record(series[start:start + window], where, unit_name)


def _read_arrays(path: Path, label: str, options: dict[str, Any]) -> Iterator[_Record]:
    """``.npy`` / ``.npz``: a 1-D array is a document, a 2-D array a document per row."""
    try:
        loaded = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as error:
        raise FileFormatError(f"{label}: not a .npy / .npz file ({_first_line(error)})") from None
    arrays = ({key: loaded[key] for key in loaded.files} if isinstance(loaded, np.lib.npyio.NpzFile)
              else {"": loaded})
    for key, array in arrays.items():
        at = f"{label}, array {key!r}" if key else label
        if not (np.issubdtype(array.dtype, np.integer) or np.issubdtype(array.dtype, np.floating)):
            raise FileFormatError(f"{at}: an array of {array.dtype}, not of numbers")
        if array.ndim not in (1, 2):
            raise FileFormatError(f"{at}: {array.ndim}-D; a document is a 1-D array or a 2-D array's row")
        rows = [array] if array.ndim == 1 else list(array)
        base = f"{label}:{key}" if key else label
        for i, row in enumerate(rows):
            where = f"{base}:{i}" if array.ndim == 2 else base
            doc = row.astype(np.int64) if np.issubdtype(row.dtype, np.integer) else row.astype(np.float64)
            yield _Record(doc, where, where)


def _read_fasta(path: Path, label: str, options: dict[str, Any]) -> Iterator[_Record]:
    from ubpe.lab import require

    require(("pyfaidx",), "fasta")
    import pyfaidx

    chunk = options.get("chunk")
    with tempfile.TemporaryDirectory() as scratch:  # the index: nothing is written beside the file
        try:
            fasta = pyfaidx.Fasta(str(path), indexname=str(Path(scratch) / "index.fai"),
                                  read_long_names=True, sequence_always_upper=True, as_raw=True,
                                  duplicate_action="stop")
            yield from _fasta_records(fasta, label, chunk)
        except FileFormatError:
            raise
        except (pyfaidx.FastaIndexingError, pyfaidx.FetchError, ValueError, UnicodeDecodeError) as error:
            raise FileFormatError(f"{label}: not a readable FASTA file ({_first_line(error)})") from None


def _fasta_records(fasta: Any, label: str, chunk: int | None) -> Iterator[_Record]:
    names = list(fasta.keys())
    if not names:
        raise FileFormatError(f"{label}: no FASTA record (a record starts with '>')")
    for name in names:
        sequence = str(fasta[name][:]).replace("\n", "")
        if not sequence:
            continue
        bad = next((c for c in sequence if not (c.isalpha() or c in RESIDUE_MARKS)), None)
        if bad is not None:
            raise FileFormatError(f"{label}, record {name!r}: {bad!r} is not a residue letter")
        pieces = [sequence] if not chunk else [sequence[i:i + chunk] for i in range(0, len(sequence), chunk)]
        for i, piece in enumerate(pieces):
            where = f"{label}:{name}" + (f":{i}" if chunk else "")
            yield _Record(piece, where, f"{label}:{name}")


def _read_midi(path: Path, label: str, options: dict[str, Any]) -> Iterator[_Record]:
    yield _Record(midi_tokens(path, label), label, label)


def midi_tokenizer():
    """MidiTok's REMI tokenizer with its default settings, all tracks in one token stream (a
    document per MIDI file); the tokens are its vocabulary's ids."""
    from ubpe.lab import require

    require(("miditok", "symusic"), "midi")
    import miditok

    return miditok.REMI(miditok.TokenizerConfig(use_programs=True))


def midi_tokens(path: Path, label: str, tokenizer: Any = None) -> np.ndarray:
    """One MIDI file as REMI token ids (`midi_tokenizer`)."""
    import symusic

    tokenizer = tokenizer or midi_tokenizer()
    try:
        score = symusic.Score(str(path))
    except Exception as error:  # symusic raises RuntimeError / ValueError with the parser's words
        raise FileFormatError(f"{label}: not a readable MIDI file ({_first_line(error)})") from None
    sequence = tokenizer.encode(score)
    sequence = sequence[0] if isinstance(sequence, list) else sequence
    return np.asarray(sequence.ids, dtype=np.int64)


def files_checksum(files: list[Path], root: Path) -> str:
    """SHA-256 of the files (names relative to ``root``, and bytes), in order."""
    h = hashlib.sha256()
    for path in files:
        h.update(_label(path, root).encode() + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def _label(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.name


def read_corpus(name: str, options: dict[str, Any]) -> tuple[RawCorpus, Source]:
    """Every document of the files, in file order, with their units, and what
    the split records about them."""
    check_options(name, options)
    fmt, unit = options["format"], options.get("unit", "document")
    files = find_files(options["path"], options.get("root", ""))
    paths = options["path"] if isinstance(options["path"], list) else [options["path"]]
    given = [Path(options.get("root", "")) / Path(os.path.expandvars(p)).expanduser() for p in paths]
    base = _common_folder(given)
    records: list[_Record] = []
    for path in files:
        label = _label(path, base)
        if fmt == "text":
            found = _read_text(path, label, options, many=len(files) > 1 or any(g.is_dir() for g in given))
        elif fmt == "jsonl":
            found = _read_jsonl(path, label, options, unit)
        elif fmt in ("csv", "parquet"):
            found = _read_table(path, label, options, unit)
        elif fmt == "npy":
            found = _read_arrays(path, label, options)
        elif fmt == "fasta":
            found = _read_fasta(path, label, options)
        else:
            found = _read_midi(path, label, options)
        for record in found:
            if unit == "file":
                record.unit = label
            elif unit == "chunk":  # FASTA pieces held out on their own (one long genome)
                record.unit = record.id
            records.append(record)
    if not records:
        raise DatasetError(f"dataset {name!r}: the files at {options['path']!r} hold no document")
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
    corpus = RawCorpus(ids=ids, docs=[r.doc for r in records],
                       version=files_checksum(files, base)[:12],
                       units=[r.unit for r in records], groups=[r.unit for r in records],
                       # one quantizer, fitted on the train split's values: a series held
                       # out whole (its unit) has no training values of its own to fit on
                       series=None,
                       settings={"format": fmt, "files": len(files),
                                 "files_sha256": files_checksum(files, base)})
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
