"""The experiments engine: a TOML config -> fitted vocabularies, encodings, metrics, paired
statistics and a report, on the repository's datasets or one's own files.

    ubpe experiment init                     # writes experiment.toml, an example to edit
    ubpe experiment experiment.toml --results out/

    >>> tables = load_results("out/example")              # doctest: +SKIP
    >>> tables["comparisons"][["dataset", "size", "verdict"]]  # doctest: +SKIP

The parts, one stage per module: `config` (the TOML), `grid` (which fits and cells),
`units` (fit and encode, in worker processes), `cache` (fitted models and raw cells),
`runner` (all of it, cached and in parallel), `metrics` and `stats` (per cell, per unit),
`tables`, `report` and `plots` (the results folder), `provenance` (versions, commit,
machine), `datasets` (the split rules, quantizers, and readers of a user's files).

The tables, statistics and plots need pandas, SciPy and matplotlib: ``pip install
'ubpe[lab]'`` (`require` names what is missing).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ubpe.lab.extras import LAB_REQUIREMENTS, MissingExtraError, require


def load_results(folder: str | Path) -> dict[str, Any]:
    """An experiment's results folder as pandas DataFrames (``datasets``, ``documents``,
    ``metrics``, ``comparisons``) and its ``run`` record (run.json), in one call; in a notebook
    each table shows itself.

    A folder that a killed run or a hand left incomplete is an
    `ubpe.lab.outputs.IncompleteResultsError`.

    >>> load_results("no-such-folder")
    Traceback (most recent call last):
    ...
    FileNotFoundError: no results in no-such-folder (metrics.csv, run.json)
    """
    folder = Path(folder)
    if not (folder / "metrics.csv").is_file() or not (folder / "run.json").is_file():
        raise FileNotFoundError(f"no results in {folder} (metrics.csv, run.json)")
    require()
    from ubpe.lab.report import read_results

    return read_results(folder)


__all__ = ["LAB_REQUIREMENTS", "MissingExtraError", "load_results", "require"]
