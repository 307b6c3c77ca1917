"""The experiment's tables from the cached raw results of its grid.

`collect` reads every cell's raw arrays and builds ``datasets.csv`` (both splits of each
dataset), ``documents.csv`` (per held-out document and cell), ``metrics.csv`` (per cell,
`cell_metrics`) and ``comparisons.csv`` (`compare`: the paired tests of the config's
questions); cells without raw results are returned as ``failures``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ubpe.lab import metrics as M
from ubpe.lab import stats as S
from ubpe.lab.cache import cell_path, json_default, model_path, read_meta, read_raw
from ubpe.lab.config import ExperimentConfig
from ubpe.lab.grid import CellSpec, Grid

#: Columns that measure time: they differ between runs and are left out of reproducibility
#: checks (`numbers_only`).
TIMING_COLUMNS = ("fit_seconds", "encode_seconds", "symbols_per_second")


def write_csv(frame: pd.DataFrame, path: Path) -> None:
    """CSV with full float precision (``repr``), so reruns compare exactly."""
    frame.to_csv(path, index=False, lineterminator="\n")


def numbers_only(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` without its timing columns (what must be identical between two runs)."""
    return frame.drop(columns=[c for c in TIMING_COLUMNS if c in frame.columns])


def collect(config: ExperimentConfig, grid: Grid, cache_dir: Path, results: dict[str, Any]
            ) -> dict[str, Any]:
    """Turn the cached raw results of the grid into the experiment's tables."""
    raw: dict[str, dict[str, np.ndarray]] = {}
    failures: list[dict[str, Any]] = []
    fit_seconds: dict[str, float | None] = {}
    for fit, cells, _ in grid:
        result = results.get(fit.key)
        fit_seconds[fit.key] = (result.fit_seconds if result and result.fit_seconds is not None
                                else (read_meta(model_path(cache_dir, fit)) or {}).get("fit_seconds"))
        for cell in cells:
            found = read_raw(cell_path(cache_dir, cell))
            if found is not None:
                raw[cell.key] = found
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
            meta["settings"] = json.dumps(meta["settings"], sort_keys=True, default=json_default)
            meta["alphabet_size_both_splits"] = len(data.alphabet)
            meta["source_version"] = getattr(split, "source_version", "")
            dataset_rows.append(meta)
    datasets_table = pd.DataFrame(dataset_rows)

    doc_frames, metric_rows = [], []
    units = {fit.dataset: units_of(data.heldout) for fit, _, data in grid}
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
                "unit": units_of(data.heldout),
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
    comparisons = compare(config, grid, raw, by_label, units)
    return {"datasets": datasets_table, "documents": documents, "metrics": metrics_table,
            "comparisons": comparisons, "failures": failures}


def cell_metrics(r: dict[str, np.ndarray], top_n: int) -> dict[str, Any]:
    """The metrics of one cell from its raw arrays (see `ubpe.lab.metrics`)."""
    lengths = M.length_summary(r["n_tokens"])
    vocab_size = int(r["vocab_size"])
    return {
        "n_docs": int(r["n_tokens"].size),
        "n_symbols": int(r["n_symbols"].sum()),
        "lossless": bool(np.array_equal(r["n_covered"], r["n_symbols"])),
        "corpus_tokens": M.corpus_tokens(r["n_tokens"]),
        "tokens_per_symbol": M.tokens_per_symbol(r["n_tokens"], r["n_symbols"]),
        "compression_ratio": M.compression_ratio(r["n_tokens"], r["n_symbols"]),
        # fewer held-out tokens than ids: utilisation cannot reach 1 and the unigram
        # distribution over the ids is not estimable; the report flags these cells
        "distribution_estimable": bool(int(r["n_tokens"].sum()) >= vocab_size),
        "renyi_efficiency": M.renyi_efficiency(r["token_counts"], vocab_size),
        "vocab_utilisation": M.vocabulary_utilisation(r["token_counts"], vocab_size),
        "doc_tokens_mean": lengths["mean"],
        "doc_tokens_median": lengths["median"],
        "doc_tokens_p95": lengths["p95"],
        "top_n": int(r["scores"].shape[1]),
        **M.score_gaps(r["scores"], r["scores"].shape[1]),
    }


def units_of(split: Any) -> list[str]:
    """Each document's unit (the document itself when the split names none)."""
    units = list(getattr(split, "doc_units", None) or [])
    return units if len(units) == len(split.docs) else [str(i) for i in range(len(split.docs))]


def _paired_lengths(raw, cells: list[CellSpec]) -> tuple[np.ndarray, np.ndarray]:
    """Per-document token counts of a cell group (mean over seeds) and one segmentation."""
    lengths = np.mean([raw[c.key]["n_tokens"] for c in cells], axis=0)
    return lengths, raw[cells[0].key]["segmentation"]


def by_construction(a: str, b: str) -> str | None:
    """``"a"`` / ``"b"`` when that side is the fewest-tokens encoder on the same vocabulary as
    the other: then it is never longer, by construction, and the comparison is not a test.

    >>> by_construction("universal:fewest", "universal:tfidf"), by_construction(
    ...     "universal:fewest", "classic:fewest")
    ('a', None)
    """
    (variant_a, encoder_a), (variant_b, encoder_b) = a.split(":"), b.split(":")
    if variant_a != variant_b:
        return None
    return "a" if encoder_a == "fewest" else "b" if encoder_b == "fewest" else None


#: ``comparisons.csv``'s ``sizes``: equal vocabulary sizes, a vocabulary from a file at its
#: own size (never part of an equal-size claim), or fitted ones that ended unequal
SIZES_EQUAL, SIZES_FILE, SIZES_UNEQUAL = "equal", "own size (file vocabulary)", "unequal"


def size_basis(comparison, files: set[str], size_a: int, size_b: int) -> str:
    """How the two sides' vocabulary sizes relate (`SIZES_EQUAL`, `SIZES_FILE`, `SIZES_UNEQUAL`)."""
    if comparison.a.variant in files or comparison.b.variant in files:
        return SIZES_FILE
    return SIZES_EQUAL if size_a == size_b else SIZES_UNEQUAL


VERDICT_SHORTER, VERDICT_LONGER = "a shorter", "a longer"
VERDICT_NS = "no significant difference"
VERDICT_FEW_UNITS = "too few units to test"
VERDICT_DISAGREE = "BUG: interval and test disagree"
VERDICT_CONSTRUCTION = {"a": "a never longer (by construction)",
                        "b": "a never shorter (by construction)"}


def compare(config: ExperimentConfig, grid, raw, by_label, units: dict[str, list[str]]
            ) -> pd.DataFrame:
    """Paired per-unit statistics for every comparison on every (dataset, size, n_cand).

    Token counts are summed per unit (`ubpe.lab.stats`); comparisons that hold by
    construction are labelled, not tested, and so are those with fewer than
    `stats.MIN_UNITS` units; Holm's correction runs over the tested ones, and each interval
    is computed at the level that makes it agree with the Holm-adjusted verdict.
    """
    rows, differences = [], []
    files = {v.name for v in config.vocabularies}
    settings = list(dict.fromkeys((fit.dataset, fit.kind, str(fit.size), fit.n_candidates)
                                  for fit, _, _ in grid))
    for index, comparison in enumerate(config.comparisons):
        a_spec, b_spec = str(comparison.a), str(comparison.b)
        construction = by_construction(a_spec, b_spec)
        for dataset, kind, size, n_candidates in settings:
            cells_a = by_label.get((dataset, size, n_candidates, a_spec))
            cells_b = by_label.get((dataset, size, n_candidates, b_spec))
            if not cells_a or not cells_b:
                continue
            a, seg_a = _paired_lengths(raw, cells_a)
            b, seg_b = _paired_lengths(raw, cells_b)
            per_unit = (pd.DataFrame({"unit": units[dataset], "a": a, "b": b})
                        .groupby("unit", sort=True)[["a", "b"]].sum())
            result = S.unit_comparison(per_unit["a"].to_numpy(), per_unit["b"].to_numpy())
            if construction is not None:
                result["p_value"] = result["wilcoxon_w"] = math.nan
            differences.append(S.log_ratios(per_unit["a"].to_numpy(), per_unit["b"].to_numpy()))
            rows.append({
                "question": index, "a": a_spec, "b": b_spec,
                "dataset": dataset, "kind": kind, "size": size, "n_candidates": n_candidates,
                "vocab_size_a": int(raw[cells_a[0].key]["vocab_size"]),
                "vocab_size_b": int(raw[cells_b[0].key]["vocab_size"]),
                "sizes": size_basis(comparison, files, int(raw[cells_a[0].key]["vocab_size"]),
                                    int(raw[cells_b[0].key]["vocab_size"])),
                "seeds_a": len(cells_a), "seeds_b": len(cells_b),
                "n_docs": int(a.size),
                "mean_a": float(a.mean()) if a.size else math.nan,
                "mean_b": float(b.mean()) if b.size else math.nan,
                "docs_a_shorter": float(np.mean(a < b)) if a.size else math.nan,
                "docs_a_longer": float(np.mean(a > b)) if a.size else math.nan,
                **result,
                "family": PRIMARY if comparison.primary else EXPLORATORY,
                "by_construction": construction or "",
                "share_segmentation_differs": M.differ_share(seg_a, seg_b),
            })
    return with_verdicts(pd.DataFrame(rows), differences, config.stats.alpha)


#: ``comparisons.csv``'s ``family``: the pre-declared primary contrasts (one Holm family) and
#: everything else (each row at its own level, labelled exploratory)
PRIMARY, EXPLORATORY = "primary", "exploratory"


def with_verdicts(table: pd.DataFrame, differences: list[np.ndarray], alpha: float,
                  words: tuple[str, str] = (VERDICT_SHORTER, VERDICT_LONGER)) -> pd.DataFrame:
    """Holm-adjusted p-values over the table's tested *primary* rows (column ``family``; a
    table without one is one primary family), each interval at the level that agrees with its
    verdict, and the verdicts (``words``: a below / above b). An exploratory row keeps its own
    p (``p_holm`` is that p, unadjusted), its interval is at ``alpha``, and its verdict says
    it is exploratory."""
    if table.empty:
        return table
    if "family" not in table.columns:
        table["family"] = PRIMARY
    primary = (table["family"] == PRIMARY).to_numpy()
    p = table["p_value"].to_numpy(dtype=np.float64)
    table["p_holm"] = np.where(primary, S.holm(np.where(primary, p, np.nan)), p)
    lows, highs, levels, verdicts = [], [], [], []
    for row, d in zip(table.itertuples(index=False), differences):
        suffix = "" if row.family == PRIMARY else " (exploratory)"
        if row.by_construction:
            lows.append(math.nan), highs.append(math.nan), levels.append(math.nan)
            violated = row.docs_a_longer if row.by_construction == "a" else row.docs_a_shorter
            verdicts.append(VERDICT_CONSTRUCTION[row.by_construction] if violated == 0
                            else "VIOLATED: the fewest-tokens encoder is longer")
            continue
        if math.isnan(row.p_value):
            lows.append(math.nan), highs.append(math.nan), levels.append(math.nan)
            verdicts.append(VERDICT_FEW_UNITS)
            continue
        level = S.holm_level(alpha, row.p_value, row.p_holm)
        low, high = S.wilcoxon_interval(d, level)
        lows.append(low), highs.append(high), levels.append(level)
        significant, excludes_zero = row.p_holm < alpha, not low <= 0 <= high
        verdicts.append(VERDICT_DISAGREE if significant != excludes_zero
                        else (VERDICT_NS if not significant else words[0] if high < 0 else words[1]) + suffix)
    table["ci_level"] = levels
    table["ci_low"], table["ci_high"] = lows, highs
    table["verdict"] = verdicts
    table["test"] = S.WILCOXON_TEST
    table["ci"] = S.INTERVAL_METHOD
    return table
