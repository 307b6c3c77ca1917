"""``ubpe experiment``: run an experiment config (`ubpe.lab`) from anywhere, or start one.

    ubpe experiment init [experiment.toml]          # an example config to edit (it runs as is)
    ubpe experiment my.toml --results out/          # -> out/<name>/: tables, README.md, plots
    ubpe experiment my.toml --scheduler tcp://host:8786   # the cells as tasks on Dask
    ubpe experiment report out/<name>               # re-render the report from the CSV files

Fitted models and encodings are cached (``--cache``, default ``$UBPE_LAB_CACHE`` or
``~/.cache/ubpe/lab``): a rerun computes only what changed. The engine needs the ``lab``
extra (``pip install 'ubpe[lab]'``); FASTA and MIDI datasets the ``fasta`` and ``midi`` ones.
Exit status: 0 done; 1 a cell failed (the results are still written); 2 a bad input - the
config (`ubpe.lab.schema` checks every key, encoder and format before any data is read), a
dataset's file, a results folder that is incomplete - or a missing library (one line naming
the extra to install), and usage errors.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from ..files import write_atomically
from .inputs import PROG, check_output

INIT, REPORT = "init", "report"
DEFAULT_CONFIG = "experiment.toml"


def add_parser(commands, name: str, help_text: str) -> None:
    """The ``experiment`` sub-command (``name``, ``help_text``: ``ubpe.cli.parser.COMMANDS``'s)
    of the ``ubpe`` parser."""
    parser = commands.add_parser(
        name, help=help_text, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("config", metavar="CONFIG",
                        help=f"a .toml config; '{INIT}' writes an example, '{REPORT}' re-renders a report")
    parser.add_argument("target", nargs="?", metavar="PATH",
                        help=f"{INIT}: the file to write (default: {DEFAULT_CONFIG}); "
                             f"{REPORT}: the results folder")
    parser.add_argument("--results", type=Path, default=None, metavar="DIR",
                        help="folder to write <name>/ into (default: ./results)")
    parser.add_argument("--cache", type=Path, default=None, metavar="DIR",
                        help="fitted models and encodings (default: $UBPE_LAB_CACHE or ~/.cache/ubpe/lab)")
    parser.add_argument("--jobs", type=_at_least_one, default=None, help="worker processes (default: the cores)")
    parser.add_argument("--scheduler", metavar="ADDRESS", default=None,
                        help="run the cells on this Dask scheduler (the `dask` extra; the cache on a shared disk)")
    parser.add_argument("--force", action="store_true", help="recompute everything, ignoring the cache")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.add_argument("-q", "--quiet", action="store_true")
    parser.set_defaults(handler=run)


def _at_least_one(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return int(text)


def run(args: argparse.Namespace) -> int:
    if args.config == INIT:
        return _init(Path(args.target or DEFAULT_CONFIG), args.quiet)
    from ..lab import MissingExtraError, require
    from ..lab.config import ConfigError
    from ..lab.datasets import DatasetError
    from ..lab.outputs import IncompleteResultsError

    try:
        require()
        if args.config == REPORT:
            return _report(args)
        if args.target is not None:
            return _fail(f"one config at a time (got {args.config!r} and {args.target!r})", EXIT_INPUT)
        return _run(args)
    except (MissingExtraError, ConfigError, DatasetError, IncompleteResultsError) as error:
        return _fail(str(error), EXIT_INPUT)


#: A cell failed (the results are written); a bad input or a missing library.
EXIT_FAILED_CELLS, EXIT_INPUT = 1, 2


def _fail(message: str, status: int = EXIT_FAILED_CELLS) -> int:
    one_line = message.replace("\r", " ").replace("\n", " ") if status == EXIT_INPUT else message
    print(f"{PROG}: error: {one_line}", file=sys.stderr)
    return status


def _init(path: Path, quiet: bool) -> int:
    from ..lab.example import example_config

    if path.exists():
        return _fail(f"{path} exists: name another file (ubpe experiment init PATH)", EXIT_INPUT)
    check_output(path)
    write_atomically(path, example_config(path.name))
    if not quiet:
        print(f"{PROG}: wrote {path}; run it with: ubpe experiment {path}", file=sys.stderr)
    return 0


def _run(args: argparse.Namespace) -> int:
    from ..lab.config import load_config
    from ..lab.runner import RESULTS_DIR, FailedCellsError, run_experiment

    config = load_config(args.config)  # a ConfigError: one line, exit 2 (`run`)
    results = args.results or RESULTS_DIR
    commands = {"run": f"ubpe experiment {Path(args.config).name}" + (f" --results {args.results}" if args.results else ""),
                "report": f"ubpe experiment report {results / config.name}"}
    started = time.perf_counter()
    try:
        out = run_experiment(config, jobs=args.jobs, force=args.force, results_dir=results,
                             cache_dir=args.cache, progress=not (args.no_progress or args.quiet),
                             scheduler=args.scheduler, commands=commands)
    except FailedCellsError as error:
        return _fail(str(error))
    if not args.quiet:
        print(f"{PROG}: wrote {out} in {time.perf_counter() - started:.1f} s "
              f"(report: {out / 'README.md'})", file=sys.stderr)
    return 0


def _report(args: argparse.Namespace) -> int:
    from ..lab.report import render_report

    if not args.target:
        return _fail("ubpe experiment report FOLDER: the results folder to re-render", EXIT_INPUT)
    folder = Path(args.target)
    if not (folder / "metrics.csv").exists() or not (folder / "run.json").exists():
        return _fail(f"no results in {folder} (metrics.csv, run.json)", EXIT_INPUT)
    path = render_report(folder)  # an incomplete folder: IncompleteResultsError (`run`)
    if not args.quiet:
        print(f"{PROG}: wrote {path}", file=sys.stderr)
    return 0
