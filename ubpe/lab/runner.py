"""The experiment runner: fit, encode, measure, compare - cached and in parallel.

One *fit* per (dataset, variant, vocabulary size, n_candidates) and one *cell* per (fit,
encoder, seed) - the grid (`ubpe.lab.grid`). Fitted tokenizers and each cell's raw
results are cached (`ubpe.lab.cache`; the repository's runs in ``experiments/.cache/``), keyed by everything
that decides them, so a rerun skips finished cells and a changed setting recomputes only
what it touches; ``force=True`` recomputes everything.

A work unit is one fit with its pending cells (`ubpe.lab.units`); units run in a process
pool (``jobs`` workers). Results are collected in grid order (`ubpe.lab.tables`), so the
tables do not depend on scheduling. With ``[grid] equal_size = true`` the classic fits run
first, then every other variant is fitted to the size the classic vocabulary of the same
setting ended with (after its rearrangement, which cascades), so variants are compared at
equal final vocabulary size.

Failures: an encoder not registered in `ubpe.encoders` is named in the report and skipped.
A cell whose fit or encoder raises a ubpe error (`ubpe.errors.UBPEError`) is a *failed
cell*: the tables and report are still written, then the run fails with `FailedCellsError`
(``python -m experiments`` exits with status 1, naming the cells) unless every failed cell's
``variant:encoder`` is listed in the config's ``[encoders] allow_failures``. Any other
exception in a worker is a bug and stops the run at once (`ubpe.lab.units.CellCrashed`).

Outputs in ``results/<experiment>/``: ``datasets.csv``, ``documents.csv`` (per held-out
document and cell), ``metrics.csv`` (per cell), ``comparisons.csv`` (paired tests),
``run.json`` (settings, versions, commit, machine, timings, the files' SHA-256), written
into a hidden folder beside it and renamed into place when whole (`ubpe.lab.outputs`), then
``README.md`` and the plots (`ubpe.lab.report`).
"""

from __future__ import annotations

import json
import sys
import time
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any, Protocol

from ubpe.lab import provenance
from ubpe.lab.extras import require

# pandas, SciPy, matplotlib (the engine's modules import them at their top): a missing one is
# an error naming the `lab` extra, not an ImportError from deep inside
require()

from ubpe.lab.cache import CACHE_DIR, cell_path, file_sha256, json_default, model_path, read_meta, read_raw
from ubpe.lab.config import NATIVE, REGEX_PRESETS, ConfigError, ExperimentConfig
from ubpe.lab.formatting import cap_lines
from ubpe.lab.grid import SIZE_LEADER, LoadedDataset, plan, takes_seed
from ubpe.lab.outputs import TABLES, kill_point, outputs_record, staged_folder
from ubpe.lab.tables import collect, numbers_only, write_csv
from ubpe.lab.units import Unit, UnitResult, final_size, run_unit

#: ``results/<experiment>/`` goes here unless a run names another folder (relative to the
#: working directory; ``python -m experiments`` writes into the repository's ``results/``).
RESULTS_DIR = Path("results")

__all__ = ["CACHE_DIR", "RESULTS_DIR", "FailedCellsError", "load_split", "numbers_only",
           "run_experiment"]


class NamedLoader(Protocol):
    """Loads a dataset by name (``experiments.datasets.load``, the built-in datasets)."""

    def __call__(self, name: str, split: str, *, max_symbols: int | None, **options: Any) -> Any: ...


class FailedCellsError(RuntimeError):
    """Cells failed that the config does not allow to fail (the results were still written)."""

    def __init__(self, failures: list[dict[str, Any]], out: Path):
        self.failures = failures
        self.out = out
        names = "\n".join(f"  {_cell_name(f)}: {f['error']}" for f in failures)
        super().__init__(f"{len(failures)} cell(s) failed (not in [encoders] allow_failures); "
                         f"results written to {out}:\n{names}")


def _cell_name(failure: dict[str, Any]) -> str:
    seed = f" seed {failure['seed']}" if failure.get("seed") is not None else ""
    return (f"{failure['dataset']} {failure['size']} n_candidates={failure['n_candidates']} "
            f"{failure['encoder']}{seed}")


def load_split(name: str, split: str, *, max_symbols: int | None, options: dict[str, Any],
               named: NamedLoader | None = None):
    """One split of a dataset (tests replace this with a tiny in-memory dataset): a user's
    files when the options name a ``path`` (`ubpe.lab.datasets.files`), else a dataset that
    ``named`` knows by name (the repository's built-in datasets)."""
    from ubpe.lab.datasets import DatasetError

    if "path" in options:
        from ubpe.lab.datasets.files import load_files

        return load_files(name, split, max_symbols=max_symbols, **options)
    if named is None:
        raise DatasetError(f"dataset {name!r} names no path: give it `path = ...` and `format = ...` "
                           "(the built-in datasets run with `python -m experiments` in ubpe's repository)")
    return named(name, split, max_symbols=max_symbols, **options)


def _load_datasets(config: ExperimentConfig, named: NamedLoader | None
                   ) -> tuple[list[LoadedDataset], dict[str, str]]:
    """The experiment's datasets, and those that could not be loaded (name -> why).

    A dataset whose source is not installed is skipped and named in the report rather than
    stopping the run; ``experiments/install_data.sh`` installs every built-in source.
    """
    from ubpe.lab.datasets import DataNotInstalledError

    loaded, missing = [], {}
    for ds in config.datasets:
        options = config.resolved_options(ds)
        try:
            train = load_split(ds.registry_name, "train", max_symbols=ds.max_symbols,
                               options=options, named=named)
            heldout = load_split(ds.registry_name, "heldout", max_symbols=ds.heldout_max_symbols,
                                 options=options, named=named)
        except DataNotInstalledError as exc:
            print(f"skipping dataset {ds.name!r}: {exc}", file=sys.stderr)
            missing[ds.name] = str(exc)
            continue
        # the tokenizer is told the symbol set of both splits; merges come from train only
        alphabet = tuple(sorted(set(train.alphabet) | set(heldout.alphabet)))
        loaded.append(LoadedDataset(ds, train, heldout, alphabet))
    return loaded, missing


def _run_units(units: list[Unit], jobs: int, bar, scheduler: str | None = None) -> dict[str, UnitResult]:
    """Run the work units (as tasks on the Dask cluster of ``scheduler``, else in a process
    pool when ``jobs > 1``); results by fit key."""
    results: dict[str, UnitResult] = {}
    if scheduler is None and (jobs <= 1 or len(units) <= 1):
        for unit in units:
            results[unit.fit.key] = run_unit(unit)
            bar.update(len(unit.cells))
        return results
    # the longest fits (most symbols, then most tokens) first, so none starts last
    units = sorted(units, key=lambda u: (-sum(len(d) for d in u.train_docs), -u.fit.n_tokens))
    if scheduler is not None:
        from ubpe.distributed.dask import cluster

        with cluster(scheduler) as client:
            pool = client.get_executor(pure=False)  # a concurrent.futures executor
            return _collect(pool, units, bar)
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        return _collect(pool, units, bar)


def _collect(pool: Executor, units: list[Unit], bar) -> dict[str, UnitResult]:
    results: dict[str, UnitResult] = {}
    futures = {pool.submit(run_unit, unit): unit for unit in units}
    try:
        for future in as_completed(futures):
            # a worker's exception (a crash, `CellCrashed`) propagates and stops the run
            results[futures[future].fit.key] = future.result()
            bar.update(len(futures[future].cells))
    except BaseException:
        for future in futures:  # start no further unit
            future.cancel()
        pool.shutdown(wait=True)
        raise
    return results


def _compute(grid, cache_dir: Path, jobs: int, force: bool, bar,
             scheduler: str | None) -> tuple[dict[str, UnitResult], int, int]:
    """Fit and encode what the grid still misses: (results by fit key, computed, cached).

    ``bar`` (the run's one progress bar over every cell) moves by the cached cells at once and
    by each unit's cells as it ends."""
    units, cached_cells, queued = [], 0, set()
    for fit, cells, data in grid:
        # a vocabulary from a file has the same cells at every grid setting: computed once
        pending = [c for c in cells if c.key not in queued
                   and (force or read_raw(cell_path(cache_dir, c)) is None)]  # unreadable: again
        queued.update(c.key for c in pending)
        cached_cells += len(cells) - len(pending)
        # a fitted model whose cache entry is gone or unreadable is fitted again even when its
        # cells are cached: its size (equal-size fits) and fit time come from that entry
        refit = fit.source_file is None and read_meta(model_path(cache_dir, fit)) is None
        if pending or refit:
            units.append(Unit(fit, list(data.train.docs), list(data.heldout.docs), pending,
                              cache_dir, force))
    bar.update(cached_cells)
    results = _run_units(units, jobs, bar, scheduler)
    computed = sum(1 for u in units for c in u.cells if cell_path(cache_dir, c).exists())
    return results, computed, cached_cells


def _stage(message: str, progress: bool) -> None:
    """One line on stderr for a stage of the run after the grid (so no stage is silent)."""
    if progress:
        print(message, file=sys.stderr, flush=True)


def run_experiment(config: ExperimentConfig, *, jobs: int | None = None, force: bool = False,
                   results_dir: Path | None = None, cache_dir: Path | None = None,
                   progress: bool = True, render: bool = True, scheduler: str | None = None,
                   named: NamedLoader | None = None, commands: dict[str, str] | None = None) -> Path:
    """Compute the experiment's grid and write ``results/<name>/``; returns that folder.

    Datasets with a ``path`` are a user's files (`ubpe.lab.datasets.files`); the others are
    loaded by name with ``named`` (the repository passes its built-in datasets). ``commands``
    (``{"run": ..., "report": ...}``) is how the report says to regenerate it.

    With ``scheduler`` (a Dask scheduler's address) the work units run as tasks on that
    cluster instead of a local pool (``jobs`` is then unused); the cache folder must be one
    the workers share.

    Raises `FailedCellsError` (after writing everything) when a cell failed that the
    config's ``allow_failures`` does not name.
    """
    from ubpe.encoders import available_encoders

    if config.transformer is not None:
        require(("torch",), "lm")  # before the grid's minutes, not after them
    started = time.perf_counter()
    code = provenance.git_state(exclude=["results"])  # the commit that computes, not the one at the end
    cache_dir = Path(cache_dir or CACHE_DIR)
    out = Path(results_dir or RESULTS_DIR) / config.name
    jobs = jobs or provenance.available_cores()
    available = set(available_encoders())
    for vocabulary in config.vocabularies:
        if not config.vocabulary_path(vocabulary).is_file():
            raise ConfigError(f"vocabularies.{vocabulary.name}.path: no file at {vocabulary.path!r}")
    datasets, missing = _load_datasets(config, named)
    caps = cap_records(datasets)
    for line in cap_lines(caps):
        print(line, file=sys.stderr)

    from tqdm import tqdm

    grid = plan(config, datasets, available)
    # every cell of the run, the equal-size ones fitted second included: the bar's total is
    # what run.json's cells_computed + cells_cached + failed cells add up to
    total = sum(len(cells) for _, cells, _ in plan(config, datasets, available, final_sizes={}))
    with tqdm(total=total, desc=f"{config.name}: cells", unit="cell", disable=not progress,
              file=sys.stderr) as bar:
        results, computed, cached_cells = _compute(grid, cache_dir, jobs, force, bar, scheduler)
        if config.equal_size:
            # the size leader's fits are done: fit the other variants to their final sizes (the
            # leader's only: a vocabulary from a file of the same setting has its own size)
            sizes = {fit.setting: final_size(cache_dir, fit) for fit, _, _ in grid
                     if fit.variant == SIZE_LEADER and fit.source_file is None}
            done = {fit.key for fit, _, _ in grid}
            grid = plan(config, datasets, available, final_sizes=sizes)
            pending = [entry for entry in grid if entry[0].key not in done]
            more, more_computed, more_cached = _compute(pending, cache_dir, jobs, force, bar, scheduler)
            results.update(more)
            computed, cached_cells = computed + more_computed, cached_cells + more_cached

    short = sum(1 for result in results.values() if result.short_fit)
    if short:  # one line for the run, not a warning per fit
        print(f"{short} of {len(results)} fits computed now ended with fewer ids than asked (the corpus "
              "held no more merges); their sizes are metrics.csv's vocab_size", file=sys.stderr)
    _stage(f"{config.name}: tables and paired statistics of {total:,} cells", progress)
    tables = collect(config, grid, cache_dir, results)
    from ubpe.lab.decisions import decide, meta_analysis

    tables["decisions"] = decide(tables["documents"], tables["metrics"], config.reference(),
                                 {v.name for v in config.vocabularies},
                                 resamples=config.stats.resamples, seed=config.stats.seed)
    tables["meta"] = meta_analysis(tables["decisions"])
    # written beside `out` and renamed into place when whole (`ubpe.lab.outputs`): a run
    # killed here leaves the previous results as they were
    with staged_folder(out) as stage:
        for name in (*TABLES, "decisions", "meta"):
            write_csv(tables[name], stage / f"{name}.csv")
            kill_point(f"{name}.csv")
        extra_seconds = _extras(config, grid, cache_dir, jobs, stage, progress)
        info = run_info(config, available, tables["failures"], missing, jobs=jobs,
                        seconds=time.perf_counter() - started, computed=computed,
                        cached=cached_cells, force=force, dask=scheduler is not None)
        info["run"]["analysis_seconds"] = extra_seconds
        info["run"]["cells_total"] = total
        info["run"]["cells_failed"] = len(tables["failures"])
        info["caps"] = caps
        info["config_sha256"] = provenance.config_sha256(info["config"])
        info["code"] = code_record(results)
        info["data"] = data_records(datasets)
        info["git"] = code
        info["commands"] = commands or {"run": f"ubpe experiment {config.source or config.name}",
                                        "report": "ubpe experiment report <this folder>"}
        info["outputs"] = outputs_record(stage)
        (stage / "run.json").write_text(json.dumps(info, indent=2, default=json_default) + "\n")
    if render:
        from ubpe.lab.report import render_report

        _stage(f"{config.name}: report and plots", progress)
        render_report(out)
    allowed = {str(e) for e in config.allow_failures}
    fatal = [f for f in tables["failures"] if f["encoder"] not in allowed]
    if fatal:
        raise FailedCellsError(fatal, out)
    return out


def _extras(config: ExperimentConfig, grid, cache_dir: Path, jobs: int, out: Path,
            progress: bool = False) -> dict[str, float]:
    """The analyses after the grid that the config asks for - the language-model proxy
    (``[downstream]``, `ubpe.lab.downstream`), the transformer study (``[transformer]``,
    `ubpe.lab.lm`) and the beam study (``[beam]``, `ubpe.lab.beam`) - written beside the
    tables; their wall-clock seconds."""
    seconds: dict[str, float] = {}
    if config.downstream is not None:
        from ubpe.lab.downstream import run_downstream
        from ubpe.lab.tables import units_of

        started = time.perf_counter()
        units = {fit.dataset: units_of(data.heldout) for fit, _, data in grid}
        _stage(f"{config.name}: [downstream] n-gram models of each tokenisation", progress)
        for name, table in run_downstream(config, grid, cache_dir, jobs, units, progress=progress).items():
            write_csv(table, out / f"{name}.csv")
        seconds["downstream"] = round(time.perf_counter() - started, 1)
    if config.transformer is not None:
        from ubpe.lab.lm import run_transformer, write_outputs
        from ubpe.lab.tables import units_of

        started = time.perf_counter()
        units = {fit.dataset: units_of(data.heldout) for fit, _, data in grid}
        write_outputs(config.transformer, run_transformer(config, grid, cache_dir, units), out)
        seconds["transformer"] = round(time.perf_counter() - started, 1)
    if config.beam is not None:
        from ubpe.lab.beam import run_beam

        started = time.perf_counter()
        _stage(f"{config.name}: [beam] widths against the exact optimum", progress)
        found = run_beam(config, grid, cache_dir, jobs, progress=progress)
        write_csv(found["beam"], out / "beam.csv")
        write_csv(found["beam_summary"], out / "beam_summary.csv")
        (out / "tfidf_objective.json").write_text(json.dumps(found["objective"], indent=2) + "\n")
        seconds["beam"] = round(time.perf_counter() - started, 1)
    return seconds


def code_record(results: dict[str, UnitResult]) -> dict[str, Any]:
    """``run.json``'s ``code`` (`ubpe.lab.provenance.code_record`): the computing modules loaded
    here, those the workers reported, and the fitted variants' classes (a fully cached run fits
    nothing, but its cells were computed by them)."""
    import ubpe
    from ubpe.lab.grid import VARIANT_CLASSES

    for name in VARIANT_CLASSES.values():
        getattr(ubpe, name)
    return provenance.code_record(set().union(*(r.modules for r in results.values())))


def cap_records(datasets: list[LoadedDataset]) -> list[dict[str, Any]]:
    """``run.json``'s ``caps``: per dataset split its symbol cap (None: none), what it kept and
    what it left out (`ubpe.lab.datasets.split`: documents, symbols, units)."""
    rows = []
    for d in datasets:
        for split in (d.train, d.heldout):
            dropped = split.settings.get("cap_dropped") or {}
            rows.append({"dataset": d.config.name, "split": split.split, "unit": split.unit,
                         "max_symbols": split.settings.get("max_symbols"),
                         "kept_documents": split.n_docs, "kept_units": split.n_units,
                         "kept_symbols": split.n_symbols,
                         **{f"dropped_{k}": int(dropped.get(k, 0)) for k in ("documents", "units", "symbols")}})
    return rows


def data_records(datasets: list[LoadedDataset]) -> list[dict[str, Any]]:
    """``run.json``'s ``data``: each split's load arguments and fingerprints
    (the repository's ``experiments.freshness`` checks them against today's loaders)."""
    from ubpe.lab.provenance import data_record

    return [data_record(split, registry_name=d.config.registry_name, max_symbols=cap,
                        options=d.config.load_options)
            for d in datasets
            for split, cap in ((d.train, d.config.max_symbols), (d.heldout, d.config.heldout_max_symbols))]


def run_info(config: ExperimentConfig, available: set[str], failures: list[dict[str, Any]],
             missing: dict[str, str], *,
             jobs: int, seconds: float, computed: int, cached: int, force: bool,
             dask: bool = False) -> dict[str, Any]:
    """``run.json``: settings, encoders, failures, versions, commit, machine, timings."""
    from ubpe.encoders import encoder_info

    allowed = {str(e) for e in config.allow_failures}
    return {
        "experiment": config.name,
        "description": config.description,
        "config_file": config.source,
        "config": config.as_dict(),
        "regex_presets": {d.regex: d.regex_pattern for d in config.datasets
                          if d.regex in REGEX_PRESETS},
        "encoders": {
            name: {"supports_nbest": encoder_info(name).supports_nbest,
                   "optimises": encoder_info(name).optimises,
                   "source": encoder_info(name).source, "takes_seed": takes_seed(name)}
            for name in sorted(available)
        },
        "unavailable_encoders": [str(e) for e in config.encoders
                                 if e.encoder not in available and e.encoder != NATIVE],
        "vocabulary_files": {v.name: {"path": v.path, "sha256": file_sha256(config.vocabulary_path(v))}
                             for v in config.vocabularies if config.vocabulary_path(v).is_file()},
        "failed_cells": [{**f, "allowed": f["encoder"] in allowed} for f in failures],
        "missing_datasets": missing,
        "versions": provenance.package_versions(),
        "git": provenance.git_state(exclude=["results"]),
        "machine": provenance.machine(),
        "run": {"jobs": jobs, "dask": dask, "seconds": round(seconds, 1), "cells_computed": computed,
                "cells_cached": cached, "force": force,
                "peak_memory_mb": provenance.peak_memory_mb(),
                "finished": time.strftime("%Y-%m-%d %H:%M:%S %Z")},
    }
