"""``python -m experiments``: run an experiment end to end, or re-render its report.

    python -m experiments                     # the default experiment -> runs/default/
    python -m experiments --results results   # ... -> results/default/ (the published results)
    python -m experiments large --jobs 2      # experiments/configs/large.toml
    python -m experiments --scheduler tcp://scheduler:8786   # cells as tasks on a Dask cluster
    python -m experiments path/to/my.toml --force
    python -m experiments report default      # re-render runs/default/README.md and plots
                                              # from its CSV files, without recomputing
    python -m experiments report results/default   # ... of the published results
    python -m experiments llm                 # inference methods on real LLM vocabularies
                                              # -> results/llm/ (see experiments/llm.py)
    python -m experiments midi                # music21's corpus as MIDI: ubpe's standard BPE and default vs
                                              # MidiTok's BPE -> results/midi/ (see experiments/midi.py)
    python -m experiments beyond_text         # every non-text dataset (configs/beyond_text.toml)
    python -m experiments llm-grid            # the same vocabularies in the one runner
                                              # (configs/llm-grid.toml) -> results/llm-grid/
    python -m experiments alternatives        # ambiguity and sampling -> results/alternatives/
    python -m experiments findings            # results/FINDINGS.md from results/default's tables
    python -m experiments variance            # training subsamples, training size, cross-domain
                                              # -> results/variance/ (see experiments/variance.py)
    python -m experiments downstream          # small transformers per tokenisation (the [lm]
                                              # extra; configs/downstream.toml, ubpe/lab/lm.py)

A run writes ``runs/<experiment>/`` (ignored by git) unless ``--results DIR`` names another
folder: running the README's main job leaves the checkout as it was, and the published
``results/`` change only when a maintainer regenerates them (``--results results``), from a
clean tree: publishing refuses uncommitted changes outside ``results/`` (``--allow-dirty``
overrides it for a trial, and the freshness test then fails on the recorded dirty commit).
Fitted models and per-cell raw results are cached under ``experiments/.cache/``; a rerun
computes only missing cells, ``--force`` recomputes everything.

Exit status: 0 when every cell was computed (or its failure is allow-listed in the config's
``[encoders] allow_failures``); 1 when a cell failed (the results are still written and the
failed cells are named on stderr) or a worker crashed; 2 for a usage or config error.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from ubpe.lab.config import ConfigError, load_config

from experiments import CACHE_DIR, CONFIG_DIR, RUNS_DIR


def _run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("config", nargs="?", default="default",
                        help="a config name in experiments/configs/ or a .toml path")
    parser.add_argument("--jobs", type=int, default=None,
                        help="worker processes (default: the cores available)")
    parser.add_argument("--scheduler", metavar="ADDRESS", default=None,
                        help="run the cells as tasks on this Dask scheduler (tcp://host:8786) "
                             "instead of local processes; the cache must be on a shared disk")
    parser.add_argument("--force", action="store_true",
                        help="refit and re-encode every cell, ignoring the cache")
    parser.add_argument("--results", type=Path, default=None,
                        help="folder to write <experiment>/ into (default: runs/, ignored by git; "
                             "`--results results` regenerates the published results)")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.add_argument("--allow-dirty", action="store_true",
                        help="write into results/ from a tree with uncommitted changes (not for "
                             "publishing: run.json then says dirty and the freshness test fails)")
    args = parser.parse_args(argv)
    if args.jobs is not None and args.jobs < 1:
        parser.error("--jobs must be at least 1")
    try:
        config = load_config(args.config, named=CONFIG_DIR)
    except ConfigError as exc:
        parser.error(str(exc))
    if args.results is not None and publishes(args.results) and not args.allow_dirty:
        dirty = _dirty_files()
        if dirty:
            parser.error(f"{args.results} holds the published results: they are computed from a "
                         f"commit, and the tree has uncommitted changes ({', '.join(dirty[:5])}"
                         f"{' ...' if len(dirty) > 5 else ''}); commit or stash them first")
    from ubpe.errors import InvalidParameterError
    from ubpe.lab import MissingExtraError
    from ubpe.lab.datasets import DatasetError

    from ubpe.lab.runner import FailedCellsError, run_experiment

    from experiments.datasets import CACHE_ENV, data_cache_dir, load

    # configs name files in the data cache as ${UBPE_DATA_CACHE}/... (experiments/configs/llm-grid.toml)
    os.environ.setdefault(CACHE_ENV, str(data_cache_dir()))

    started = time.perf_counter()
    where = f" --results {args.results}" if args.results else ""
    commands = {"run": f"python -m experiments {config.name}{where}",
                "report": f"python -m experiments report {config.name}{where}"}
    try:
        out = run_experiment(config, jobs=args.jobs, force=args.force,
                             results_dir=args.results or RUNS_DIR, cache_dir=CACHE_DIR,
                             progress=not args.no_progress, scheduler=args.scheduler,
                             named=load, commands=commands)
    except FailedCellsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except (InvalidParameterError, DatasetError, MissingExtraError) as exc:  # e.g. a scheduler that does
        parser.error(str(exc))                                                # not answer, a bad file
    print(f"wrote {out} in {time.perf_counter() - started:.1f} s")
    return 0


def publishes(results: Path) -> bool:
    """Whether ``results`` is the repository's ``results/`` (the published results)."""
    from ubpe.lab.provenance import REPO_ROOT

    return REPO_ROOT is not None and Path(results).resolve() == (REPO_ROOT / "results").resolve()


def _dirty_files() -> list[str]:
    """Tracked files with uncommitted changes, outside ``results/`` (a run rewrites its own)."""
    from ubpe.lab.provenance import git

    status = git("status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)results")
    return [line[3:] for line in status.splitlines() if line.strip()]


def _report(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments report",
                                     description="Re-render a report from its CSV files.")
    parser.add_argument("experiment", nargs="?", default="default",
                        help="an experiment name (runs/<name>/) or a results folder (results/default)")
    parser.add_argument("--results", type=Path, default=None,
                        help="folder holding <experiment>/ (default: runs/)")
    args = parser.parse_args(argv)
    from ubpe.lab.report import render_report

    folder = Path(args.experiment)
    if not (folder / "metrics.csv").exists():
        folder = (args.results or RUNS_DIR) / args.experiment
    if not (folder / "metrics.csv").exists():
        parser.error(f"no results in {folder}: run `python -m experiments {args.experiment}` first")
    from ubpe.lab.outputs import IncompleteResultsError

    try:
        path = render_report(folder)
    except IncompleteResultsError as exc:  # a run was killed while writing it
        parser.error(str(exc))
    print(f"wrote {path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "report":
        return _report(argv[1:])
    if argv and argv[0] == "llm":
        from experiments.llm import main as llm_main

        return llm_main(argv[1:])
    if argv and argv[0] == "variance":
        from experiments.variance import main as variance

        return variance(argv[1:])
    if argv and argv[0] == "midi":
        from experiments.midi import main as midi

        return midi(argv[1:])
    if argv and argv[0] == "findings":
        from experiments.findings import main as findings

        return findings(argv[1:])
    if argv and argv[0] == "alternatives":
        from experiments.alternatives import main as alternatives

        return alternatives(argv[1:])
    return _run(argv)


if __name__ == "__main__":
    sys.exit(main())
