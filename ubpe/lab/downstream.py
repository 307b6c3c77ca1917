"""A downstream proxy beyond length: held-out bits per symbol under an n-gram language model
trained on each tokenisation of the training split (issue 14, item 4).

For each fit of the settings the config's ``[downstream]`` table names (vocabulary sizes and
n_candidates; the fitted tokenizers come from the runner's cache) and each encoder of that
fit, the training split and the held-out split are encoded (top-1; a seeded encoder with the
grid's first seed), an interpolated Kneser-Ney model (`ubpe.lab.ngram.KneserNeyLM`, the
config's order and discount) is trained on the training tokens, and every held-out document
gets ``-sum log2 p`` of its tokens and its end. ``bits / held-out symbols`` is comparable
across tokenisations of the same text (PathPiece's point: fewest tokens need not be best
downstream). Held-out ids that the training tokenisation never produced get the model's
uniform floor (see `ubpe.lab.ngram`); their share is reported.

    [downstream]
    sizes = ["+1024"]       # vocabulary sizes of the grid to measure at
    n_candidates = [1, 50]  # n_candidates of the grid to measure at
    order = 3               # n-gram order
    discount = 0.75         # Kneser-Ney discount, every order

Outputs (beside the experiment's tables): ``downstream.csv`` (per setting and encoder),
``downstream_documents.csv`` (per held-out document: unit, symbols, tokens, bits) and
``downstream_comparisons.csv`` (the config's comparisons on bits, per independent unit,
Holm over this family).
"""

from __future__ import annotations

import math
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ubpe.lab import stats as S
from ubpe.lab.cache import digest
from ubpe.lab.config import DownstreamConfig
from ubpe.lab.grid import CellSpec, FitSpec
from ubpe.lab.ngram import KneserNeyLM
from ubpe.lab.tables import with_verdicts
from ubpe.lab.units import Unit, UnitResult, fitted_tokenizer

FEWER_BITS, MORE_BITS = "a fewer bits", "a more bits"


@dataclass
class Task:
    fit: FitSpec
    cells: list[CellSpec]
    train_docs: list[Any]
    heldout_docs: list[Any]
    cache_dir: Path
    order: int
    discount: float


def _path(task: Task, cell: CellSpec) -> Path:
    key = digest({"cell": cell.key, "train": task.fit.train_checksum, "order": task.order,
                  "discount": task.discount, "model": "kneser-ney-interpolated-floor-v1"})
    return task.cache_dir / "downstream" / f"{cell.fit.dataset}-{key}.npz"


def _tokens(tok, docs: list[Any], encoder: str, options: dict[str, Any]) -> list[np.ndarray]:
    return [np.asarray(encodings[0][0], dtype=np.int64)
            for encodings in tok.encode_batch(docs, encoder=encoder, top_n=1, n_threads=1, **options)]


def measure_cell(tok, train_docs: list[Any], heldout_docs: list[Any], cell: CellSpec,
                 order: int, discount: float) -> dict[str, np.ndarray]:
    """`measure` with the cell's encoder, options and seed."""
    options = dict(cell.options)
    if cell.seed is not None:
        options["seed"] = cell.seed
    return measure(tok, train_docs, heldout_docs, cell.encoder, options, order, discount)


def measure(tok, train_docs: list[Any], heldout_docs: list[Any], encoder: str,
            options: dict[str, Any], order: int, discount: float) -> dict[str, np.ndarray]:
    """Train the model on ``encoder``'s tokenisation of ``train_docs``; per held-out document
    bits and tokens, and how many held-out tokens the training tokens never contained."""
    train = _tokens(tok, train_docs, encoder, options)
    heldout = _tokens(tok, heldout_docs, encoder, options)
    flat_train = np.concatenate(train) if train else np.zeros(0, np.int64)
    flat_held = np.concatenate(heldout) if heldout else np.zeros(0, np.int64)
    vocab_size = int(max(len(tok.vocabulary), flat_train.max(initial=-1) + 1,
                         flat_held.max(initial=-1) + 1))
    lm = KneserNeyLM(order, discount).fit(train, vocab_size)
    seen = np.zeros(vocab_size, dtype=bool)
    seen[flat_train] = True
    return {"bits": lm.document_bits(heldout),
            "n_tokens": np.array([len(t) for t in heldout], dtype=np.int64),
            "train_tokens": np.array(len(flat_train)),
            "unseen_tokens": np.array(int((~seen[flat_held]).sum())),
            "vocab_size": np.array(vocab_size)}


def run_task(task: Task) -> dict[str, dict[str, np.ndarray]]:
    """Every cell of one fit (from the cache when measured before); results by cell key."""
    out: dict[str, dict[str, np.ndarray]] = {}
    tok = None
    for cell in task.cells:
        path = _path(task, cell)
        if path.exists():
            with np.load(path) as data:
                out[cell.key] = {k: data[k] for k in data.files}
            continue
        if tok is None:
            tok = fitted_tokenizer(Unit(task.fit, task.train_docs, task.heldout_docs, [],
                                        task.cache_dir, False), UnitResult(task.fit.key))
        out[cell.key] = measure_cell(tok, task.train_docs, task.heldout_docs, cell, task.order,
                                     task.discount)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp.npz")
        np.savez(tmp, **out[cell.key])
        tmp.replace(path)
    return out


def tasks(config, grid, cache_dir: Path) -> list[Task]:
    """One task per fit at the downstream settings; one cell per encoder (first seed)."""
    down: DownstreamConfig = config.downstream
    found = []
    for fit, cells, data in grid:
        if str(fit.size) not in down.sizes or fit.n_candidates not in down.n_candidates \
                or fit.source_file is not None:  # the fitted vocabularies only
            continue
        chosen = {}
        for cell in cells:
            chosen.setdefault(cell.encoder, cell)  # seeded encoders: the first seed
        found.append(Task(fit, list(chosen.values()), list(data.train.docs), list(data.heldout.docs),
                          Path(cache_dir), down.order, down.discount))
    return found


def run_downstream(config, grid, cache_dir: Path, jobs: int,
                   units: dict[str, list[str]]) -> dict[str, pd.DataFrame]:
    """Measure every task (in a process pool when ``jobs > 1``) and build the three tables."""
    todo = tasks(config, grid, cache_dir)
    if jobs > 1 and len(todo) > 1:
        todo.sort(key=lambda t: -sum(len(d) for d in t.train_docs))
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            results = list(pool.map(run_task, todo))
    else:
        results = [run_task(t) for t in todo]
    summary, documents = [], []
    for task, result in zip(todo, results):
        n_symbols = np.array([len(d) for d in task.heldout_docs], dtype=np.int64)
        unit_names = units[task.fit.dataset]
        for cell in task.cells:
            r = result[cell.key]
            label = {"dataset": task.fit.dataset, "kind": task.fit.kind, "size": str(task.fit.size),
                     "n_candidates": task.fit.n_candidates, "encoder": cell.spec}
            bits, held_tokens = float(r["bits"].sum()), int(r["n_tokens"].sum())
            summary.append({**label, "vocab_size": int(r["vocab_size"]), "order": task.order,
                            "discount": task.discount, "train_tokens": int(r["train_tokens"]),
                            "heldout_tokens": held_tokens, "heldout_symbols": int(n_symbols.sum()),
                            "unseen_share": int(r["unseen_tokens"]) / max(1, held_tokens),
                            "tokens_per_symbol": held_tokens / max(1, int(n_symbols.sum())),
                            "bits_per_token": bits / max(1, held_tokens + len(n_symbols)),
                            "bits_per_symbol": bits / max(1, int(n_symbols.sum()))})
            documents.append(pd.DataFrame({**label, "doc": np.arange(len(n_symbols)),
                                           "unit": unit_names, "n_symbols": n_symbols,
                                           "n_tokens": r["n_tokens"], "bits": r["bits"]}))
    summary_table = pd.DataFrame(summary)
    if not summary_table.empty:
        summary_table["rank_bits"] = summary_table.groupby(
            ["dataset", "size", "n_candidates"])["bits_per_symbol"].rank(method="average")
        summary_table["rank_length"] = summary_table.groupby(
            ["dataset", "size", "n_candidates"])["tokens_per_symbol"].rank(method="average")
    doc_table = pd.concat(documents, ignore_index=True) if documents else pd.DataFrame()
    return {"downstream": summary_table, "downstream_documents": doc_table,
            "downstream_comparisons": compare_bits(config, doc_table)}


def compare_bits(config, documents: pd.DataFrame) -> pd.DataFrame:
    """The config's comparisons on held-out bits, per independent unit (Wilcoxon on per-unit
    log ratios of bits, Holm over this table, Holm-consistent intervals)."""
    if documents.empty:
        return pd.DataFrame()
    rows, differences = [], []
    settings = documents[["dataset", "kind", "size", "n_candidates"]].drop_duplicates()
    for index, comparison in enumerate(config.comparisons):
        a, b = str(comparison.a), str(comparison.b)
        for setting in settings.itertuples(index=False):
            here = documents[(documents["dataset"] == setting.dataset) & (documents["size"] == setting.size)
                             & (documents["n_candidates"] == setting.n_candidates)]
            da, db = here[here["encoder"] == a], here[here["encoder"] == b]
            if da.empty or db.empty:
                continue
            paired = da.merge(db[["doc", "bits"]], on="doc", suffixes=("_a", "_b"))
            per_unit = (paired.rename(columns={"bits_a": "a", "bits_b": "b"})
                        .groupby("unit", sort=True)[["a", "b"]].sum())
            result = S.unit_comparison(per_unit["a"].to_numpy(), per_unit["b"].to_numpy())
            differences.append(S.log_ratios(per_unit["a"].to_numpy(), per_unit["b"].to_numpy()))
            rows.append({"question": index, "a": a, "b": b, **setting._asdict(),
                         "n_docs": len(da), "bits_per_symbol_a": da["bits"].sum() / da["n_symbols"].sum(),
                         "bits_per_symbol_b": db["bits"].sum() / db["n_symbols"].sum(),
                         **result, "by_construction": ""})
    return with_verdicts(pd.DataFrame(rows), differences, config.stats.alpha, (FEWER_BITS, MORE_BITS))


def spearman(x: pd.Series, y: pd.Series) -> float:
    """Rank correlation of two columns (NaN with fewer than 3 values)."""
    if len(x) < 3:
        return math.nan
    from scipy.stats import spearmanr

    return float(spearmanr(x, y).statistic)
