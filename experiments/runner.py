"""The experiment runner: fit, encode, measure, compare - cached and in parallel.

One *fit* per (dataset, variant, vocabulary size, n_candidates) - the tokenizer is fitted on
the training split and cached under ``experiments/.cache/models/`` - and one *cell* per
(fit, encoder, seed): the held-out split encoded by one registered encoder, its raw results
(per-document lengths, scores of the alternatives, unigram token counts, segmentation
fingerprints, the encoding time) cached under ``experiments/.cache/cells/``. Cache keys are
hashes of everything that decides the result (data checksums, alphabet, split settings,
n_tokens, n_candidates, encoder and options, seed, top_n, a hash of the ubpe code that runs
(`code_fingerprint`) and `RAW_FORMAT`), so a rerun skips finished cells and a changed setting recomputes only what it
touches; ``force=True`` recomputes everything.

A work unit is one fit with all its cells; units run in a process pool (``jobs`` workers).
Results are collected in grid order, so the tables do not depend on scheduling. Encoders not
registered in `ubpe.encoders` and cells that fail (e.g. the classic encoder on a universal
vocabulary whose trimmed tokens lost a component) are listed in ``run.json``, never fatal.

Outputs in ``results/<experiment>/``: ``datasets.csv``, ``documents.csv`` (per held-out
document and cell), ``metrics.csv`` (per cell), ``comparisons.csv`` (paired tests),
``run.json`` (settings, versions, commit, machine, timings), then ``README.md`` and the plots
(`experiments.report`).
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import io
import json
import math
import os
import platform
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import metrics as M
from . import stats as S
from .config import REGEX_PRESETS, ExperimentConfig, n_tokens_for

REPO_ROOT = Path(__file__).resolve().parent.parent
#: Where fitted models and per-cell raw results are kept (ignored by git).
CACHE_DIR = Path(__file__).resolve().parent / ".cache"
#: ``results/<experiment>/`` goes here.
RESULTS_DIR = REPO_ROOT / "results"
#: Bump when the cached raw results change shape, so old cells are recomputed.
RAW_FORMAT = 1
#: Columns that measure time: they differ between runs and are left out of reproducibility
#: checks (`numbers_only`).
TIMING_COLUMNS = ("fit_seconds", "encode_seconds", "symbols_per_second")
VARIANT_CLASSES = {"universal": "UBPE", "classic": "UBPEClassic"}
_KEY_HEX_DIGITS = 20


def _digest(payload: Any) -> str:
    text = json.dumps(payload, sort_keys=True, default=_json_default)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:_KEY_HEX_DIGITS]


def _json_default(value: Any) -> Any:
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A hash of the ubpe modules that fit and encode (sources, and compiled kernels' bytes).

    Part of every cache key, so a change to ubpe's code (or a rebuilt kernel) recomputes the
    cells, while edits to modules the runner does not load do not. Computed once in the main
    process and carried in `FitSpec`, so workers never recompute it.
    """
    import ubpe
    import ubpe.encoders  # noqa: F401  (loads every registered encoder's modules)

    h = hashlib.sha256()
    for name in sorted(sys.modules):
        if name.split(".")[0] not in ("ubpe", "ubpe_native"):
            continue
        path = getattr(sys.modules[name], "__file__", None)
        if path and Path(path).is_file():
            h.update(name.encode() + b"\0" + Path(path).read_bytes())
    h.update(ubpe.__version__.encode())
    return h.hexdigest()[:_KEY_HEX_DIGITS]


def load_split(name: str, split: str, *, max_symbols: int | None, options: dict[str, Any]):
    """One split of a dataset (tests replace this with a tiny in-memory dataset)."""
    from .datasets import load

    return load(name, split, max_symbols=max_symbols, **options)


# -- the grid ------------------------------------------------------------------------------


@dataclass(frozen=True)
class FitSpec:
    """One tokenizer to fit: a dataset's training split, a variant, a size, n_candidates."""

    dataset: str
    kind: str
    variant: str
    size: int | str
    n_tokens: int
    n_candidates: int
    alphabet: tuple[Any, ...]
    regex: str | None
    break_tokens: tuple[Any, ...] | None
    train_checksum: str
    code: str  # `code_fingerprint()` of the main process

    @functools.cached_property
    def key(self) -> str:
        return _digest({
            "train": self.train_checksum, "variant": self.variant, "n_tokens": self.n_tokens,
            "n_candidates": self.n_candidates, "alphabet": list(self.alphabet),
            "regex": self.regex, "break_tokens": self.break_tokens, "code": self.code,
            "format": RAW_FORMAT,
        })


@dataclass(frozen=True)
class CellSpec:
    """One encoder run on the held-out split with one fitted tokenizer."""

    fit: FitSpec
    encoder: str
    options: tuple[tuple[str, Any], ...]
    seed: int | None
    top_n: int
    heldout_checksum: str

    @property
    def spec(self) -> str:
        return f"{self.fit.variant}:{self.encoder}"

    @property
    def key(self) -> str:
        return _digest({
            "fit": self.fit.key, "heldout": self.heldout_checksum, "encoder": self.encoder,
            "options": self.options, "seed": self.seed, "top_n": self.top_n,
        })

    def label(self) -> dict[str, Any]:
        return {"dataset": self.fit.dataset, "size": str(self.fit.size),
                "n_candidates": self.fit.n_candidates, "encoder": self.spec,
                "seed": self.seed}


@dataclass
class Unit:
    """A work unit for a worker: one fit and the cells that still need computing."""

    fit: FitSpec
    train_docs: list[Any]
    heldout_docs: list[Any]
    cells: list[CellSpec]
    cache_dir: Path
    force: bool


@dataclass
class UnitResult:
    fit_key: str
    vocab_size: int | None = None
    fit_seconds: float | None = None
    errors: dict[str, str] = field(default_factory=dict)  # cell key (or "fit") -> message


def takes_seed(encoder: str) -> bool:
    """True when the registered encoder's factory has a ``seed`` parameter (e.g. dropout)."""
    from ubpe.encoders import encoder_info

    try:
        return "seed" in inspect.signature(encoder_info(encoder).factory).parameters
    except (TypeError, ValueError):
        return False


def supports_nbest(encoder: str) -> bool:
    from ubpe.encoders import encoder_info

    return bool(encoder_info(encoder).supports_nbest)


# -- cache files ---------------------------------------------------------------------------


def _model_path(cache_dir: Path, fit: FitSpec) -> Path:
    return cache_dir / "models" / f"{fit.dataset}-{fit.variant}-{fit.key}.json"


def _cell_path(cache_dir: Path, cell: CellSpec) -> Path:
    return cache_dir / "cells" / f"{cell.fit.dataset}-{cell.spec.replace(':', '-')}-{cell.key}.npz"


def _write_atomically(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _fitted_tokenizer(unit: Unit, result: UnitResult):
    """The unit's tokenizer: from the model cache, else fitted now and cached."""
    import ubpe

    cls = getattr(ubpe, VARIANT_CLASSES[unit.fit.variant])
    path = _model_path(unit.cache_dir, unit.fit)
    meta_path = path.with_suffix(".meta.json")
    if path.exists() and meta_path.exists() and not unit.force:
        tok = cls.load(path)
        result.fit_seconds = json.loads(meta_path.read_text())["fit_seconds"]
    else:
        tok = cls(alphabet=list(unit.fit.alphabet), n_tokens=unit.fit.n_tokens,
                  regex_str=unit.fit.regex,
                  break_tokens=list(unit.fit.break_tokens) if unit.fit.break_tokens else None)
        started = time.perf_counter()
        tok.fit(unit.train_docs, n_candidates=unit.fit.n_candidates, quiet=True)
        result.fit_seconds = time.perf_counter() - started
        path.parent.mkdir(parents=True, exist_ok=True)
        tok.save(path)
        _write_atomically(meta_path, json.dumps({"fit_seconds": result.fit_seconds}).encode())
    result.vocab_size = len(tok.vocabulary)
    return tok


def _piece_lengths(vocabulary) -> np.ndarray:
    lengths = np.ones(len(vocabulary), dtype=np.int64)
    lengths[vocabulary.n_base:] = np.diff(vocabulary.piece_offsets)
    return lengths


def encode_cell(tok, docs: Sequence[Any], cell: CellSpec) -> dict[str, np.ndarray]:
    """Encode ``docs`` with the cell's encoder: the raw arrays the metrics are computed from."""
    options = dict(cell.options)
    if cell.seed is not None:
        options["seed"] = cell.seed
    vocabulary = tok.vocabulary
    started = time.perf_counter()
    best = tok.encode_batch(docs, encoder=cell.encoder, top_n=1, n_threads=1, **options)
    seconds = time.perf_counter() - started
    tokens = [encodings[0][0] for encodings in best]
    piece_lengths = _piece_lengths(vocabulary)
    flat = np.fromiter((t for seq in tokens for t in seq), dtype=np.int64)
    n_best = cell.top_n if cell.top_n > 1 and supports_nbest(cell.encoder) else 1
    scores = np.full((len(docs), n_best), np.nan)
    if n_best > 1:
        for d, encodings in enumerate(tok.encode_batch(docs, encoder=cell.encoder, top_n=n_best,
                                                       n_threads=1, **options)):
            values = [score for _, score in encodings[:n_best]]
            scores[d, : len(values)] = values
    else:
        scores[:, 0] = [encodings[0][1] for encodings in best]
    return {
        "n_symbols": np.array([len(doc) for doc in docs], dtype=np.int64),
        "n_tokens": np.array([len(seq) for seq in tokens], dtype=np.int64),
        "n_covered": np.array([int(piece_lengths[seq].sum()) if seq else 0 for seq in tokens],
                              dtype=np.int64),
        "segmentation": np.array([M.segmentation_key(seq, piece_lengths) for seq in tokens],
                                 dtype=np.uint64),
        "scores": scores,
        "token_counts": np.bincount(flat, minlength=len(vocabulary)).astype(np.int64),
        "vocab_size": np.array(len(vocabulary)),
        "encode_seconds": np.array(seconds),
    }


def run_unit(unit: Unit) -> UnitResult:
    """Fit (or load) one tokenizer and compute its pending cells (runs in a worker)."""
    result = UnitResult(unit.fit.key)
    try:
        tok = _fitted_tokenizer(unit, result)
    except Exception as exc:  # a fit that cannot run (e.g. n_tokens below the alphabet)
        result.errors["fit"] = f"{type(exc).__name__}: {exc}"
        return result
    for cell in unit.cells:
        path = _cell_path(unit.cache_dir, cell)
        if path.exists() and not unit.force:
            continue
        try:
            raw = encode_cell(tok, unit.heldout_docs, cell)
        except Exception as exc:  # an encoder that does not apply to this vocabulary
            result.errors[cell.key] = f"{type(exc).__name__}: {exc}"
            continue
        buffer = io.BytesIO()
        np.savez(buffer, **raw)
        _write_atomically(path, buffer.getvalue())
    return result


# -- running -------------------------------------------------------------------------------


@dataclass
class LoadedDataset:
    config: Any
    train: Any
    heldout: Any
    alphabet: tuple[Any, ...]


def _load_datasets(config: ExperimentConfig) -> tuple[list[LoadedDataset], dict[str, str]]:
    """The experiment's datasets, and those that could not be loaded (name -> why).

    A dataset whose source is not installed is skipped and named in the report rather than
    stopping the run; ``experiments/install_data.sh`` installs every source.
    """
    from .datasets import DataNotInstalledError

    loaded, missing = [], {}
    for ds in config.datasets:
        try:
            train = load_split(ds.registry_name, "train", max_symbols=ds.max_symbols,
                               options=ds.load_options)
            heldout = load_split(ds.registry_name, "heldout", max_symbols=ds.heldout_max_symbols,
                                 options=ds.load_options)
        except DataNotInstalledError as exc:
            print(f"skipping dataset {ds.name!r}: {exc}", file=sys.stderr)
            missing[ds.name] = str(exc)
            continue
        # the tokenizer is told the symbol set of both splits; merges come from train only
        alphabet = tuple(sorted(set(train.alphabet) | set(heldout.alphabet)))
        loaded.append(LoadedDataset(ds, train, heldout, alphabet))
    return loaded, missing


def plan(config: ExperimentConfig, datasets: list[LoadedDataset], available: set[str]
         ) -> list[tuple[FitSpec, list[CellSpec], LoadedDataset]]:
    """The grid: every fit with its cells, in a fixed order."""
    runnable = [e for e in config.encoders if e.encoder in available]
    variants = list(dict.fromkeys(e.variant for e in runnable))
    units = []
    for data in datasets:
        ds = data.config
        for size in config.sizes_for(ds):
            n_tokens = n_tokens_for(size, len(data.alphabet))
            for n_candidates in config.n_candidates:
                for variant in variants:
                    fit = FitSpec(ds.name, data.train.kind, variant, size, n_tokens, n_candidates,
                                  data.alphabet, ds.regex_pattern, ds.break_tokens,
                                  data.train.checksum, code_fingerprint())
                    cells = []
                    for spec in runnable:
                        if spec.variant != variant:
                            continue
                        options = tuple(sorted(config.encoder_options.get(spec.encoder, {}).items()))
                        seeds = config.seeds if spec.encoder in config.seeded else (None,)
                        cells.extend(CellSpec(fit, spec.encoder, options, seed, config.top_n,
                                              data.heldout.checksum) for seed in seeds)
                    units.append((fit, cells, data))
    return units


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def run_experiment(config: ExperimentConfig, *, jobs: int | None = None, force: bool = False,
                   results_dir: Path | None = None, cache_dir: Path | None = None,
                   progress: bool = True, render: bool = True) -> Path:
    """Compute the experiment's grid and write ``results/<name>/``; returns that folder."""
    from tqdm import tqdm
    from ubpe.encoders import available_encoders

    started = time.perf_counter()
    cache_dir = Path(cache_dir or CACHE_DIR)
    out = Path(results_dir or RESULTS_DIR) / config.name
    jobs = jobs or default_jobs()
    available = set(available_encoders())
    datasets, missing = _load_datasets(config)
    grid = plan(config, datasets, available)

    units, cached_cells = [], 0
    for fit, cells, data in grid:
        pending = [c for c in cells if force or not _cell_path(cache_dir, c).exists()]
        cached_cells += len(cells) - len(pending)
        if pending:
            units.append(Unit(fit, list(data.train.docs), list(data.heldout.docs), pending,
                              cache_dir, force))
    results: dict[str, UnitResult] = {}
    total = sum(len(u.cells) for u in units)
    with tqdm(total=total, desc=f"{config.name}: cells", unit="cell", disable=not progress,
              file=sys.stderr) as bar:
        if jobs <= 1 or len(units) <= 1:
            for unit in units:
                results[unit.fit.key] = run_unit(unit)
                bar.update(len(unit.cells))
        else:
            # the longest fits (most symbols, then most tokens) first, so none starts last
            units.sort(key=lambda u: (-sum(len(d) for d in u.train_docs), -u.fit.n_tokens))
            with ProcessPoolExecutor(max_workers=jobs) as pool:
                futures = {pool.submit(run_unit, unit): unit for unit in units}
                for future in as_completed(futures):
                    unit = futures[future]
                    try:
                        results[unit.fit.key] = future.result()
                    except Exception as exc:  # a worker died (e.g. a crash in a kernel)
                        results[unit.fit.key] = UnitResult(
                            unit.fit.key, errors={"fit": f"worker failed: {type(exc).__name__}: {exc}"})
                    bar.update(len(unit.cells))
    computed = sum(1 for u in units for c in u.cells if _cell_path(cache_dir, c).exists())

    tables = collect(config, grid, cache_dir, results)
    out.mkdir(parents=True, exist_ok=True)
    write_csv(tables["datasets"], out / "datasets.csv")
    write_csv(tables["documents"], out / "documents.csv")
    write_csv(tables["metrics"], out / "metrics.csv")
    write_csv(tables["comparisons"], out / "comparisons.csv")
    info = run_info(config, available, tables["failures"], missing, jobs=jobs,
                    seconds=time.perf_counter() - started, computed=computed,
                    cached=cached_cells, force=force)
    (out / "run.json").write_text(json.dumps(info, indent=2, default=_json_default) + "\n")
    if render:
        from .report import render_report

        render_report(out)
    return out


def write_csv(frame: pd.DataFrame, path: Path) -> None:
    """CSV with full float precision (``repr``), so reruns compare exactly."""
    frame.to_csv(path, index=False, lineterminator="\n")


def numbers_only(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` without its timing columns (what must be identical between two runs)."""
    return frame.drop(columns=[c for c in TIMING_COLUMNS if c in frame.columns])


# -- tables --------------------------------------------------------------------------------


def _load_raw(path: Path) -> dict[str, np.ndarray]:
    with np.load(path) as data:
        return {key: data[key] for key in data.files}


def collect(config: ExperimentConfig, grid, cache_dir: Path, results: dict[str, UnitResult]
            ) -> dict[str, Any]:
    """Turn the cached raw results of the grid into the experiment's tables."""
    raw: dict[str, dict[str, np.ndarray]] = {}
    failures: list[dict[str, Any]] = []
    fit_seconds: dict[str, float | None] = {}
    for fit, cells, _ in grid:
        result = results.get(fit.key)
        meta = _model_path(cache_dir, fit).with_suffix(".meta.json")
        fit_seconds[fit.key] = (result.fit_seconds if result and result.fit_seconds is not None
                                else json.loads(meta.read_text())["fit_seconds"]
                                if meta.exists() else None)
        for cell in cells:
            path = _cell_path(cache_dir, cell)
            if path.exists():
                raw[cell.key] = _load_raw(path)
            else:
                message = (result.errors.get(cell.key) or result.errors.get("fit")
                           if result else None) or "not computed"
                failures.append({**cell.label(), "error": message})

    dataset_rows = []
    for fit, cells, data in grid:
        if any(r["name"] == data.config.name for r in dataset_rows):
            continue
        for split in (data.train, data.heldout):
            meta = split.metadata()
            meta["name"] = data.config.name
            meta["registry_name"] = data.config.registry_name
            meta["settings"] = json.dumps(meta["settings"], sort_keys=True, default=_json_default)
            meta["alphabet_size_both_splits"] = len(data.alphabet)
            meta["source_version"] = getattr(split, "source_version", "")
            dataset_rows.append(meta)
    datasets_table = pd.DataFrame(dataset_rows)

    doc_frames, metric_rows = [], []
    by_label: dict[tuple, list[CellSpec]] = {}
    for fit, cells, _ in grid:
        for cell in cells:
            if cell.key not in raw:
                continue
            by_label.setdefault((fit.dataset, str(fit.size), fit.n_candidates, cell.spec), []).append(cell)
    baseline = str(config.baseline) if config.baseline else None
    for fit, cells, data in grid:
        for cell in cells:
            if cell.key not in raw:
                continue
            r = raw[cell.key]
            label = cell.label()
            doc_frames.append(pd.DataFrame({
                **{k: [v] * len(r["n_tokens"]) for k, v in label.items()},
                "doc": np.arange(len(r["n_tokens"])),
                "n_symbols": r["n_symbols"], "n_tokens": r["n_tokens"],
            }))
            row = {**label, "kind": fit.kind, "variant": fit.variant, "encoder_name": cell.encoder,
                   "n_tokens_requested": fit.n_tokens, "vocab_size": int(r["vocab_size"]),
                   "alphabet_size": len(fit.alphabet)}
            row.update(cell_metrics(r, cell.top_n))
            base_cells = by_label.get((fit.dataset, str(fit.size), fit.n_candidates, baseline), [])
            row["baseline"] = baseline
            row["differs_from_baseline"] = (
                M.differ_share(r["segmentation"], raw[base_cells[0].key]["segmentation"])
                if base_cells else math.nan)
            row["fit_seconds"] = fit_seconds.get(fit.key)
            row["encode_seconds"] = float(r["encode_seconds"])
            row["symbols_per_second"] = M.throughput(int(r["n_symbols"].sum()),
                                                     float(r["encode_seconds"]))
            metric_rows.append(row)
    documents = pd.concat(doc_frames, ignore_index=True) if doc_frames else pd.DataFrame()
    metrics_table = pd.DataFrame(metric_rows)
    for frame in (documents, metrics_table):
        if "seed" in frame.columns:
            frame["seed"] = frame["seed"].astype("Int64")
    comparisons = compare(config, grid, raw, by_label)
    return {"datasets": datasets_table, "documents": documents, "metrics": metrics_table,
            "comparisons": comparisons, "failures": failures}


def cell_metrics(r: dict[str, np.ndarray], top_n: int) -> dict[str, Any]:
    """The metrics of one cell from its raw arrays (see `experiments.metrics`)."""
    lengths = M.length_summary(r["n_tokens"])
    vocab_size = int(r["vocab_size"])
    return {
        "n_docs": int(r["n_tokens"].size),
        "n_symbols": int(r["n_symbols"].sum()),
        "lossless": bool(np.array_equal(r["n_covered"], r["n_symbols"])),
        "corpus_tokens": M.corpus_tokens(r["n_tokens"]),
        "tokens_per_symbol": M.tokens_per_symbol(r["n_tokens"], r["n_symbols"]),
        "compression_ratio": M.compression_ratio(r["n_tokens"], r["n_symbols"]),
        "renyi_efficiency": M.renyi_efficiency(r["token_counts"], vocab_size),
        "vocab_utilisation": M.vocabulary_utilisation(r["token_counts"], vocab_size),
        "doc_tokens_mean": lengths["mean"],
        "doc_tokens_median": lengths["median"],
        "doc_tokens_p95": lengths["p95"],
        "top_n": int(r["scores"].shape[1]),
        **M.score_gaps(r["scores"], r["scores"].shape[1]),
    }


def _paired_lengths(raw, cells: list[CellSpec]) -> tuple[np.ndarray, np.ndarray]:
    """Per-document token counts of a cell group (mean over seeds) and one segmentation."""
    lengths = np.mean([raw[c.key]["n_tokens"] for c in cells], axis=0)
    return lengths, raw[cells[0].key]["segmentation"]


def compare(config: ExperimentConfig, grid, raw, by_label) -> pd.DataFrame:
    """Paired statistics for every configured comparison on every (dataset, size, n_cand)."""
    rows = []
    settings = list(dict.fromkeys((fit.dataset, fit.kind, str(fit.size), fit.n_candidates)
                                  for fit, _, _ in grid))
    for index, comparison in enumerate(config.comparisons):
        for dataset, kind, size, n_candidates in settings:
            cells_a = by_label.get((dataset, size, n_candidates, str(comparison.a)))
            cells_b = by_label.get((dataset, size, n_candidates, str(comparison.b)))
            if not cells_a or not cells_b:
                continue
            a, seg_a = _paired_lengths(raw, cells_a)
            b, seg_b = _paired_lengths(raw, cells_b)
            seed = S.derive_seed(config.stats.seed, dataset, size, n_candidates,
                                 comparison.a, comparison.b)
            result = S.paired_comparison(a, b, resamples=config.stats.resamples,
                                         confidence=config.stats.confidence, seed=seed)
            rows.append({
                "question": index, "a": str(comparison.a), "b": str(comparison.b),
                "dataset": dataset, "kind": kind, "size": size, "n_candidates": n_candidates,
                "vocab_size_a": int(raw[cells_a[0].key]["vocab_size"]),
                "vocab_size_b": int(raw[cells_b[0].key]["vocab_size"]),
                "seeds_a": len(cells_a), "seeds_b": len(cells_b),
                **result,
                "share_segmentation_differs": M.differ_share(seg_a, seg_b),
            })
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    table["p_holm"] = S.holm(table["p_value"].to_numpy())
    significant = table["p_holm"] < config.stats.alpha
    table["verdict"] = np.where(~significant, "no significant difference",
                                np.where(table["rank_biserial"] < 0, "a shorter", "a longer"))
    table["test"] = S.WILCOXON_TEST
    table["ci"] = f"{config.stats.confidence:.0%} {S.BOOTSTRAP_METHOD} ({config.stats.resamples} resamples)"
    return table


# -- provenance ----------------------------------------------------------------------------


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=REPO_ROOT, capture_output=True, text=True,
                              timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def package_versions() -> dict[str, str]:
    from importlib import metadata

    import ubpe

    versions = {"python": platform.python_version(), "ubpe": ubpe.__version__}
    for name in ("numpy", "scipy", "pandas", "matplotlib", "tqdm", "regex", "Cython"):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def run_info(config: ExperimentConfig, available: set[str], failures: list[dict[str, Any]],
             missing: dict[str, str], *,
             jobs: int, seconds: float, computed: int, cached: int, force: bool) -> dict[str, Any]:
    from ubpe.encoders import encoder_info

    # the run rewrites its own results folder: only changes to anything else make it "dirty"
    status = _git("status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)results")
    return {
        "experiment": config.name,
        "description": config.description,
        "config_file": os.path.relpath(config.source, REPO_ROOT) if config.source else "",
        "config": config.as_dict(),
        "regex_presets": {d.regex: d.regex_pattern for d in config.datasets
                          if d.regex in REGEX_PRESETS},
        "encoders": {
            name: {"supports_nbest": encoder_info(name).supports_nbest,
                   "optimises": encoder_info(name).optimises,
                   "source": encoder_info(name).source, "takes_seed": takes_seed(name)}
            for name in sorted(available)
        },
        "unavailable_encoders": [str(e) for e in config.encoders if e.encoder not in available],
        "failed_cells": failures,
        "missing_datasets": missing,
        "versions": package_versions(),
        "git": {"commit": _git("rev-parse", "HEAD"), "dirty": bool(status)},
        "machine": {"platform": platform.platform(), "cpu": _cpu_model(),
                    "cores": os.cpu_count(), "cores_available": default_jobs()},
        "run": {"jobs": jobs, "seconds": round(seconds, 1), "cells_computed": computed,
                "cells_cached": cached, "force": force,
                "finished": time.strftime("%Y-%m-%d %H:%M:%S %Z")},
    }
