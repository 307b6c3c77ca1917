"""CSV and parquet columns as documents: text cells, integer lists, or numbers cut in windows.

A cell of integers is a list (parquet) or a string such as ``"3 1 4"`` or ``"[3, 1, 4]"``
(CSV); every id must fit a signed 64-bit integer (``uint64`` ids of 2^63 and more are refused,
not wrapped to negative numbers). Numbers must be finite; a missing cell is no document (a
series of numbers goes on past it).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ubpe.lab.datasets._text import DEFAULT_WINDOW, FileFormatError, first_line, float_document, int_document

_INT_LIST = re.compile(r"^\s*\[?\s*-?\d+(?:\s*[,\s]\s*-?\d+)*\s*,?\s*\]?\s*$")
_INT = re.compile(r"-?\d+")
#: The most digits an id may be written with (a longer one cannot fit 64 bits anyway, and
#: Python refuses to read integers of thousands of digits).
_MAX_DIGITS = 25


def read_table(path: Path, label: str, options: dict[str, Any]) -> Any:
    """The file as a pandas DataFrame (CSV via pandas, parquet via pyarrow)."""
    from ubpe.lab.extras import require

    require(("pandas",))
    import pandas as pd

    column = options["column"]
    try:
        if options["format"] == "csv":
            # a column declared text or ints is read as strings ("007" stays text); else as it looks
            as_text = options.get("values") in ("text", "ints")
            return pd.read_csv(path, dtype={column: str} if as_text else None,
                               keep_default_na=not as_text, encoding=options.get("encoding", "utf-8"))
        require(("pyarrow",), "parquet")
        return pd.read_parquet(path)
    except (ValueError, OSError, LookupError, pd.errors.ParserError, OverflowError) as error:
        # pyarrow's ArrowInvalid is a ValueError, its IO errors OSErrors
        raise FileFormatError(f"{label}: not a {options['format']} table ({first_line(error)})") from None
    except Exception as error:  # pyarrow's other errors (ArrowNotImplementedError, ...)
        if type(error).__module__.partition(".")[0] == "pyarrow":
            raise FileFormatError(f"{label}: not a parquet table ({first_line(error)})") from None
        raise


def table_documents(path: Path, label: str, options: dict[str, Any], unit: str) -> Iterator[tuple[Any, str, str]]:
    """``(document, id, unit)`` of one column of a CSV or parquet file."""
    table = read_table(path, label, options)
    column = options["column"]
    if column not in table.columns:
        raise FileFormatError(f"{label}: no column {column!r} (columns: {', '.join(map(str, table.columns))})")
    if unit not in ("document", "row", "record", "file") and unit not in table.columns:
        raise FileFormatError(f"{label}: no column {unit!r} (the unit)")
    cells = table[column]
    values = options.get("values") or values_of(cells)
    first_line = 2 if options["format"] == "csv" else 0  # a CSV's first data row is its line 2

    def row_label(i: int) -> str:
        return f"{label}, line {i + first_line}" if first_line else f"{label}, row {i}"

    if values == "numbers" and not any(isinstance(c, (list, np.ndarray)) for c in cells[:1]):
        yield from _windows(table, column, unit, label, row_label, options.get("window") or DEFAULT_WINDOW)
        return
    for i, cell in enumerate(cells):
        where = f"{label}:{i}"
        doc = cell_document(cell, values, f"{row_label(i)}, column {column!r}")
        if doc is None or not len(doc):
            continue
        unit_name = where if unit in ("document", "row", "record") else label if unit == "file" \
            else str(table[unit].iloc[i])
        yield doc, where, unit_name


def values_of(cells: Any) -> str:
    """What a column holds: numbers, integer lists (lists, or strings like "3 1 4"), or text."""
    present = [c for c in cells if not _missing(c)]
    if present and all(isinstance(c, (int, float, np.number)) and not isinstance(c, bool) for c in present):
        return "numbers"
    if present and all(isinstance(c, (list, np.ndarray)) for c in present):
        whole = all(np.asarray(c).dtype.kind in "iu" for c in present)
        return "ints" if whole else "numbers"
    if present and all(isinstance(c, str) and _INT_LIST.match(c) for c in present):
        return "ints"
    return "text"


def _missing(cell: Any) -> bool:
    return cell is None or (isinstance(cell, float) and np.isnan(cell))


def cell_document(cell: Any, values: str, at: str) -> Any:
    """One cell as a document (None for a missing cell)."""
    if _missing(cell):
        return None
    if values == "text":
        if not isinstance(cell, str):
            raise FileFormatError(f"{at}: not text ({cell!r})")
        return cell if cell else None
    if isinstance(cell, str):
        if not _INT_LIST.match(cell):
            raise FileFormatError(f"{at}: not a list of integers ({cell[:40]!r})")
        numbers = _INT.findall(cell)
        long = next((n for n in numbers if len(n.lstrip("-")) > _MAX_DIGITS), None)
        if long is not None:
            raise FileFormatError(f"{at}: id {long[:20]}... ({len(long)} digits) is outside the 64-bit "
                                  "signed range ids must be in")
        return int_document([int(n) for n in numbers], at)
    try:
        array = np.asarray(cell)
    except (ValueError, TypeError):
        raise FileFormatError(f"{at}: not a list of numbers") from None
    if array.ndim != 1 or array.dtype.kind not in "iuf":
        raise FileFormatError(f"{at}: not a list of {'integers' if values == 'ints' else 'numbers'}")
    if values == "ints":
        if array.dtype.kind == "f":
            if not (np.all(np.isfinite(array)) and np.all(array == np.round(array))):
                raise FileFormatError(f"{at}: not a list of integers")
            if array.size and np.abs(array).max() >= 2.0 ** 63:
                raise FileFormatError(f"{at}: an id outside the 64-bit signed range ids must be in")
            return array.astype(np.int64)
        return int_document(array, at)
    return float_document(array, at)


def _windows(table: Any, column: str, unit: str, label: str, row_label: Any, window: int
             ) -> Iterator[tuple[Any, str, str]]:
    """A numeric column as series (one per unit value, else the file), cut into windows."""
    import pandas as pd

    try:
        numbers = pd.to_numeric(table[column], errors="coerce").astype(np.float64)
    except (ValueError, TypeError, OverflowError):
        raise FileFormatError(f"{label}, column {column!r}: not numbers") from None
    bad = (numbers.isna() & table[column].notna()) | np.isinf(numbers)
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise FileFormatError(f"{row_label(i)}, column {column!r}: not a finite number ({table[column].iloc[i]!r})")
    keys = table[unit].astype(str) if unit in table.columns else pd.Series([label] * len(table))
    for key in dict.fromkeys(keys):
        series = numbers[(keys == key).to_numpy()].dropna().to_numpy(dtype=np.float64)
        series_name = key if unit in table.columns else label
        for start in range(0, len(series), window):
            where = f"{series_name}:{start}"
            unit_name = series_name if unit in table.columns or unit == "file" else where
            yield series[start:start + window], where, unit_name
