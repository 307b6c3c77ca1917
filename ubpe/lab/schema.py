"""The config schema: every table's keys, each key's type and range, checked before any data
is read.

`check_schema` walks the parsed TOML once and raises `ubpe.lab.schema.ConfigError` (also `ubpe.lab.config.ConfigError`) at the
first key that is unknown (with the closest known ones, from `difflib`), of the wrong type or
out of range, naming the key by its dotted path:

>>> check_schema({"grid": {"vocab_size": [512]}, "datasets": {"a": {"path": "a.txt", "format": "text"}}})
Traceback (most recent call last):
ubpe.lab.schema.ConfigError: unknown key grid.vocab_size (did you mean vocab_sizes?); [grid] takes ...

The schema says what a value *is* (`Check`); `ubpe.lab.config.parse_config` then builds the
dataclasses from a config that passed, and checks what needs more than one key (a comparison
naming an encoder the run lists, a vocabulary naming a dataset the config has).
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

class ConfigError(ValueError):
    """The config file is missing, not TOML, or names something invalid."""


#: How many close matches an unknown name's error suggests.
SUGGESTIONS = 3
#: How close (difflib's ratio) a known name must be to be suggested.
SIMILARITY = 0.75


def suggest(name: Any, known: Any) -> str:
    """`` (did you mean a, b?)`` for a misspelt ``name`` among ``known``; empty when none is close.

    >>> suggest("vocab_size", ["vocab_sizes", "n_candidates"])
    ' (did you mean vocab_sizes?)'
    >>> suggest("zzz", ["text", "csv"])
    ''
    """
    close = difflib.get_close_matches(str(name), [str(k) for k in known], n=SUGGESTIONS, cutoff=SIMILARITY)
    return f" (did you mean {', '.join(close)}?)" if close else ""


def _error(message: str) -> Exception:
    return ConfigError(message)


@dataclass(frozen=True)
class Check:
    """One key's rule: ``accepts(value)`` and what the error says it must be."""

    accepts: Callable[[Any], bool]
    must_be: str

    def __call__(self, where: str, value: Any) -> None:
        if not self.accepts(value):
            raise _error(f"{where} must be {self.must_be}, got {value!r}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value)


def integer(minimum: int, maximum: int | None = None) -> Check:
    bound = f"in {minimum} .. {maximum}" if maximum is not None else f">= {minimum}"
    return Check(lambda v: _is_int(v) and v >= minimum and (maximum is None or v <= maximum),
                 f"an int {bound}")


def number(low: float, high: float, *, closed_high: bool = False) -> Check:
    bracket = "]" if closed_high else ")"
    return Check(lambda v: _is_number(v) and low < v and (v <= high if closed_high else v < high),
                 f"a number in ({low:g}, {high:g}{bracket}")


def size_ok(value: Any) -> bool:
    """A vocabulary size: an int >= 2 or ``"+k"`` with k >= 1."""
    if isinstance(value, str):
        return value.startswith("+") and value[1:].isdigit() and int(value[1:]) >= 1
    return _is_int(value) and value >= 2


def list_of(item: Check, *, empty: bool = False) -> Check:
    return Check(lambda v: isinstance(v, list) and (empty or bool(v)) and all(item.accepts(x) for x in v),
                 f"a {'' if empty else 'non-empty '}list, each {item.must_be}")


TEXT = Check(lambda v: isinstance(v, str), "a string")
NAME = Check(lambda v: isinstance(v, str) and bool(v.strip()), "a non-empty string")
BOOL = Check(lambda v: isinstance(v, bool), "true or false")
SIZE = Check(size_ok, "a vocabulary size (an int >= 2, or \"+k\": the alphabet plus k >= 1 tokens)")
#: A symbol cap: a positive int, or ``inf`` (TOML's infinity) for no cap.
CAP = Check(lambda v: (_is_int(v) and v >= 1) or (isinstance(v, float) and v == math.inf),
            "an int >= 1, or inf for no cap")
TABLE = Check(lambda v: isinstance(v, dict), "a table")
ANY = Check(lambda v: True, "anything")

#: Every table's keys and their rules (``datasets`` and ``vocabularies`` hold one such table
#: per name; ``comparisons`` is an array of tables).
TABLES: dict[str, dict[str, Check]] = {
    "": {"name": NAME, "description": TEXT, "grid": TABLE, "encoders": TABLE, "statistics": TABLE,
         "comparisons": Check(lambda v: isinstance(v, list), "an array of [[comparisons]] tables"),
         "datasets": Check(lambda v: isinstance(v, dict), "a table of [datasets.NAME] tables"),
         "downstream": TABLE, "beam": TABLE, "transformer": TABLE,
         "vocabularies": Check(lambda v: isinstance(v, dict), "a table of [vocabularies.NAME] tables")},
    "grid": {"vocab_sizes": list_of(SIZE), "n_candidates": list_of(integer(1)), "top_n": integer(1),
             "seeds": list_of(integer(0)), "equal_size": BOOL,
             "max_symbols": CAP, "heldout_max_symbols": CAP},
    "encoders": {"run": list_of(NAME, empty=True), "baseline": NAME, "options": TABLE,
                 "seeded": list_of(NAME, empty=True), "allow_failures": list_of(NAME, empty=True)},
    "statistics": {"alpha": number(0, 1), "reference": NAME, "resamples": integer(200), "seed": integer(0)},
    "comparisons": {"question": TEXT, "a": NAME, "b": NAME, "primary": BOOL},
    "downstream": {"sizes": list_of(SIZE), "n_candidates": list_of(integer(1)), "order": integer(2, 5),
                   "discount": number(0, 1), "orders": list_of(integer(2, 5)),
                   "train_fractions": list_of(number(0, 1, closed_high=True))},
    "beam": {"size": SIZE, "n_candidates": integer(1), "widths": list_of(integer(1)),
             "max_docs": integer(1), "exact_max_symbols": integer(1), "exact_max_nodes": integer(1)},
    "datasets": {"dataset": NAME, "regex": NAME, "break_tokens": list_of(ANY), "vocab_sizes": list_of(SIZE),
                 "max_symbols": CAP, "heldout_max_symbols": CAP},
    "vocabularies": {"path": NAME, "encoders": list_of(NAME), "datasets": list_of(NAME), "format": NAME},
}
#: The ``[[comparisons]]`` keys every comparison needs.
COMPARISON_KEYS = ("question", "a", "b")


def _check_table(where: str, table: Any, rules: dict[str, Check], extra: frozenset[str] = frozenset()) -> None:
    """Unknown keys (with suggestions), then each known key's rule."""
    label = f"[{where}]" if where else "the top level"
    if not isinstance(table, dict):
        raise _error(f"{where} must be a table, got {table!r}")
    for key, value in table.items():
        path = f"{where}.{key}" if where else key
        if key in rules:
            rules[key](path, value)
        elif key not in extra:
            known = sorted(set(rules) | extra)
            raise _error(f"unknown key {path}{suggest(key, known)}; {label} takes {', '.join(known)}")


def check_schema(data: dict[str, Any]) -> None:
    """Raise `ConfigError` at the first key of ``data`` (a parsed config) that the schema refuses."""
    _check_table("", data, TABLES[""])
    for table in ("grid", "encoders", "statistics", "downstream", "beam"):
        if table in data:
            _check_table(table, data[table], TABLES[table])
    for index, comparison in enumerate(data.get("comparisons", [])):
        where = f"comparisons[{index}]"
        if not isinstance(comparison, dict):
            raise _error(f"{where} must be a table with {', '.join(COMPARISON_KEYS)}, got {comparison!r}")
        _check_table(where, comparison, TABLES["comparisons"])
        missing = [k for k in COMPARISON_KEYS if k not in comparison]
        if missing:
            raise _error(f"{where} needs {', '.join(COMPARISON_KEYS)} (missing {', '.join(missing)})")
    for name, table in (data.get("datasets") or {}).items():
        _check_dataset(f"datasets.{name}", table)
    for name, table in (data.get("vocabularies") or {}).items():
        _check_table(f"vocabularies.{name}", table, TABLES["vocabularies"])
        if "path" not in table:
            raise _error(f"vocabularies.{name}.path must name the vocabulary's file")


def _check_dataset(where: str, table: Any) -> None:
    """A dataset table: the runner's keys, and for a user's files (``path``) its format's keys.

    A built-in dataset (no ``path``) passes its other keys to its loader, which checks them.
    """
    if not isinstance(table, dict):
        raise _error(f"{where} must be a table, got {table!r}")
    if "path" not in table:
        for key, value in table.items():
            if key in TABLES["datasets"]:
                TABLES["datasets"][key](f"{where}.{key}", value)
        return
    from ubpe.lab.datasets.files import COMMON_KEYS, FORMATS, KEYS

    fmt = table.get("format")
    if fmt not in FORMATS:
        raise _error(f"{where}.format must be one of {', '.join(FORMATS)}, got {fmt!r}{suggest(fmt, FORMATS)}")
    _check_table(where, table, TABLES["datasets"], (COMMON_KEYS - {"root"}) | KEYS[fmt])
