"""The results folder, written whole or not at all, and checked whole before it is read.

A run writes its tables and ``run.json`` into a hidden folder beside ``results/<name>/``
(``.<name>.partial-<pid>``) and renames it into place when everything is written
(`staged_folder`): a run killed at any moment leaves the previous results as they were (or,
between the two renames of `publish`, no folder at all), never a folder mixing old and new
files or holding a cut table. ``run.json``, written last, records the SHA-256 of each file
written (``outputs``); `check_complete` - which the report and `ubpe.lab.load_results` call first -
refuses a folder whose tables are missing, cut, or differ from what its ``run.json`` says,
with an `IncompleteResultsError` saying to run the experiment again.

>>> import tempfile
>>> with tempfile.TemporaryDirectory() as d:
...     out = Path(d) / "demo"
...     with staged_folder(out) as stage:
...         _ = (stage / "metrics.csv").write_text("a\\n1\\n")
...     sorted(p.name for p in Path(d).iterdir())
['demo']
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ubpe.errors import UBPEError

#: The tables every results folder holds (``run.json`` beside them).
TABLES: tuple[str, ...] = ("datasets", "documents", "metrics", "comparisons")
#: What the report draws again from the tables (not recorded in ``outputs``).
DRAWN = frozenset({".png", ".md"})
#: An environment variable naming a point of `staged_folder` at which to kill the process
#: (``SIGKILL``), for the tests of interrupted runs: ``stage`` (the folder made), ``tables``
#: (some tables written), ``publish`` (between the two renames).
KILL_AT_ENV = "UBPE_LAB_KILL_AT"
_PARTIAL, _OLD = "partial", "old"


class IncompleteResultsError(UBPEError):
    """A results folder lacks a table, holds a cut one, or one its ``run.json`` does not
    describe: a run was interrupted, or a file was changed by hand."""


def kill_point(name: str) -> None:
    """Kill this process with SIGKILL when ``$UBPE_LAB_KILL_AT`` is ``name`` (tests only)."""
    if os.environ.get(KILL_AT_ENV) == name:
        import signal

        os.kill(os.getpid(), signal.SIGKILL)


def _sibling(out: Path, what: str, pid: int) -> Path:
    return out.with_name(f".{out.name}.{what}-{pid}")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def clean_leftovers(out: Path) -> None:
    """Remove the hidden folders that killed runs left beside ``out`` (a live run's are kept)."""
    for what in (_PARTIAL, _OLD):
        for leftover in out.parent.glob(f".{out.name}.{what}-*"):
            pid = leftover.name.rpartition("-")[2]
            if pid.isdigit() and not _alive(int(pid)) and leftover.is_dir():
                shutil.rmtree(leftover, ignore_errors=True)


def publish(stage: Path, out: Path) -> None:
    """Put the finished folder ``stage`` in the place of ``out`` (two renames, then the old
    folder is removed)."""
    old = _sibling(out, _OLD, os.getpid())
    if out.exists():
        os.replace(out, old)
    kill_point("publish")
    os.replace(stage, out)
    shutil.rmtree(old, ignore_errors=True)


@contextmanager
def staged_folder(out: Path) -> Iterator[Path]:
    """A new empty folder beside ``out`` to write into; renamed to ``out`` when the block ends
    without an exception (removed when it raises)."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    clean_leftovers(out)
    stage = _sibling(out, _PARTIAL, os.getpid())
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir()
    kill_point("stage")
    try:
        yield stage
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    publish(stage, out)


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def outputs_record(folder: Path) -> dict[str, str]:
    """``run.json``'s ``outputs``: the SHA-256 of each file the run wrote into ``folder``
    (its tables and the analyses' files; plots and Markdown are not among them: the report
    draws them again, `ubpe.lab.report.render_report`)."""
    return {path.name: file_sha256(path) for path in sorted(Path(folder).iterdir())
            if path.is_file() and path.name != "run.json" and path.suffix not in DRAWN}


def check_complete(folder: Path) -> dict[str, Any]:
    """``run.json`` of a whole results folder; `IncompleteResultsError` (one line) when a
    table is missing or cut, or differs from what ``run.json`` records."""
    folder = Path(folder)
    again = "run the experiment again"
    try:
        run = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise IncompleteResultsError(f"no results in {folder} (no run.json)") from None
    except (OSError, ValueError) as error:
        raise IncompleteResultsError(f"the results in {folder} are incomplete: run.json cannot be "
                                     f"read ({type(error).__name__}); {again}") from None
    if not isinstance(run, dict) or "experiment" not in run:
        raise IncompleteResultsError(f"the results in {folder} are incomplete: run.json is not "
                                     f"an experiment's record; {again}")
    recorded = run.get("outputs") or {}
    for name in [*(f"{t}.csv" for t in TABLES), *(n for n in recorded if n not in TABLES)]:
        path = folder / name
        if not path.is_file():
            raise IncompleteResultsError(f"the results in {folder} are incomplete: no {path.name}; {again}")
        if path.stat().st_size == 0 and path.suffix == ".csv":  # an empty table is one line
            raise IncompleteResultsError(f"the results in {folder} are incomplete: {path.name} is "
                                         f"empty (a run was interrupted while writing it); {again}")
        if path.name in recorded and recorded[path.name] != file_sha256(path):
            raise IncompleteResultsError(f"the results in {folder} are incomplete: {path.name} is not "
                                         f"the table run.json records (cut, or changed since); {again}")
    return run
