"""Number and table formatting shared by the report's sections (`ubpe.lab.report`).

>>> _pct(0.123), _p(0.00012), _num(1234)
('+12.3 %', '1.2e-04', '1,234')
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

KIND_ORDER = ("prose", "multilingual", "code", "dna", "protein", "signal", "music", "timeseries")
PERCENT = 100.0


def _num(value: Any, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.{digits}f}"


def _p(value: float) -> str:
    if value is None or math.isnan(value):
        return "–"
    if value == 0:
        return "< 1e-300"
    if value < 1e-3:
        return f"{value:.1e}"
    # three significant digits, so a p just above alpha (0.0502) does not print as 0.050
    return f"{value:.3g}"


def _pct(value: float, digits: int = 1) -> str:
    return "–" if value is None or math.isnan(value) else f"{value * PERCENT:+.{digits}f} %"


def _table(frame: pd.DataFrame) -> str:
    """A pipe table (strings as they are, numbers pre-formatted by the caller)."""
    head = "| " + " | ".join(map(str, frame.columns)) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    body = ["| " + " | ".join(str(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([head, rule, *body])


def _kind_key(kind: str) -> int:
    return KIND_ORDER.index(kind) if kind in KIND_ORDER else len(KIND_ORDER)


def _size_key(size: str) -> tuple[int, int]:
    return (0, int(size[1:])) if size.startswith("+") else (1, int(size))


def _estimable(value: float) -> str:
    return "n.e." if value == -math.inf else _num(value)


def _span(low: str, high: str) -> str:
    return low if low == high else f"{low} to {high}"


def _ratio_pct(log_ratio: float) -> str:
    """A log ratio as a signed percentage of ``b`` (``exp(x) - 1``)."""
    if log_ratio is None or math.isnan(log_ratio):
        return "–"
    if math.isinf(log_ratio):
        return "-100 %" if log_ratio < 0 else "+∞"
    return _pct(math.expm1(log_ratio))


def _interval(low: float, high: float) -> str:
    if math.isnan(low) or math.isnan(high):
        return "–"
    return f"[{_ratio_pct(low)}, {_ratio_pct(high)}]"


def cap_lines(caps: list[dict[str, Any]]) -> list[str]:
    """One line per split that its cap cut, saying what was left out and how to lift it.

    >>> cap_lines([{"dataset": "notes", "split": "train", "unit": "file", "max_symbols": 300000,
    ...             "kept_documents": 28, "kept_units": 20, "kept_symbols": 299000,
    ...             "dropped_documents": 52, "dropped_units": 9, "dropped_symbols": 600000}])[0][:79]
    'notes train: the cap of 300,000 symbols left out 52 documents, 9 units (file), '
    """
    lines = []
    for row in caps:
        if not row["dropped_documents"]:
            continue
        key = "max_symbols" if row["split"] == "train" else "heldout_max_symbols"
        lines.append(f"{row['dataset']} {row['split']}: the cap of {row['max_symbols']:,} symbols left out "
                     f"{row['dropped_documents']:,} documents, {row['dropped_units']:,} units ({row['unit']}), "
                     f"{row['dropped_symbols']:,} symbols (kept {row['kept_documents']:,} documents, "
                     f"{row['kept_units']:,} units, {row['kept_symbols']:,} symbols); lift it with "
                     f"`{key} = inf` in [grid] or the dataset's table")
    return lines
