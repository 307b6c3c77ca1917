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

Beside every tokenisation, its baselines (`experiments.baselines`): the same model over the
symbols (no merges) and log2 |alphabet|; a tokenisation above either is ``below_baseline``,
and a setting with such a tokenisation, or of a dataset with too few units
(`experiments.validity`), is not ranked (``ranked`` says why; ``rank_bits`` empty) and not
tested. Unseen held-out tokens and document ends are counted in bits, and the per-document
mixture of token and symbol model is reported. With ``orders`` / ``train_fractions`` every
cell is also measured at each order and on each share of the training documents.

Outputs (beside the experiment's tables): ``downstream.csv`` (per setting and encoder),
``downstream_documents.csv`` (per held-out document: unit, symbols, tokens, bits, the symbol
model's and the mixture's bits), ``downstream_sensitivity.csv`` (per setting, encoder, order
and training share: bits/symbol and the symbol-level baseline's) and
``downstream_comparisons.csv`` (the config's comparisons on bits over ranked settings, per
independent unit, Holm over this family).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ubpe.lab import stats as S
from ubpe.lab import validity
from ubpe.lab.baselines import (
    mixture_bits,
    symbol_document_bits,
    symbol_ids,
    training_subset,
    uniform_bits_per_symbol,
)
from ubpe.lab.cache import digest, read_raw
from ubpe.lab.config import DownstreamConfig
from ubpe.lab.grid import CellSpec, FitSpec
from ubpe.lab.ngram import KneserNeyLM
from ubpe.lab.tables import with_verdicts
from ubpe.lab.units import Unit, UnitResult, fitted_tokenizer

FEWER_BITS, MORE_BITS = "a fewer bits", "a more bits"
#: run_task's key of the symbol-level baseline (no cell key has this form).
SYMBOLS = "symbols"
#: Why a setting is not ranked by bits (``ranked`` column; "" where it is).
ABOVE_BASELINE = "proxy above a baseline"


@dataclass
class Task:
    fit: FitSpec
    cells: list[CellSpec]
    train_docs: list[Any]
    heldout_docs: list[Any]
    cache_dir: Path
    order: int
    discount: float
    alphabet: tuple[Any, ...] = ()
    orders: tuple[int, ...] = ()
    fractions: tuple[float, ...] = ()


def _path(task: Task, cell: CellSpec) -> Path:
    key = digest({"cell": cell.key, "train": task.fit.train_checksum, "order": task.order,
                  "discount": task.discount, "orders": list(task.orders),
                  "fractions": list(task.fractions), "model": "kneser-ney-interpolated-floor-v2"})
    return task.cache_dir / "downstream" / f"{cell.fit.dataset}-{key}.npz"


def _order_key(order: int) -> str:
    return f"bits_order_{order}"


def _fraction_key(fraction: float) -> str:
    return f"bits_fraction_{fraction:g}"


def _tokens(tok, docs: list[Any], encoder: str, options: dict[str, Any]) -> list[np.ndarray]:
    return [np.asarray(encodings[0][0], dtype=np.int64)
            for encodings in tok.encode_batch(docs, encoder=encoder, top_n=1, threads=1, **options)]


def measure_cell(tok, train_docs: list[Any], heldout_docs: list[Any], cell: CellSpec,
                 order: int, discount: float, orders: tuple[int, ...] = (),
                 fractions: tuple[float, ...] = ()) -> dict[str, np.ndarray]:
    """`measure` with the cell's encoder, options and seed."""
    options = dict(cell.options)
    if cell.seed is not None:
        options["seed"] = cell.seed
    return measure(tok, train_docs, heldout_docs, cell.encoder, options, order, discount,
                   orders=orders, fractions=fractions)


def measure(tok, train_docs: list[Any], heldout_docs: list[Any], encoder: str,
            options: dict[str, Any], order: int, discount: float, *,
            orders: tuple[int, ...] = (), fractions: tuple[float, ...] = ()) -> dict[str, np.ndarray]:
    """Train the model on ``encoder``'s tokenisation of ``train_docs``; per held-out document
    bits and tokens; how many held-out tokens the training tokens never contained and the
    bits they cost; the bits of the documents' ends. With ``orders`` / ``fractions``, also
    per document the bits at each other order (whole training split) and with each share of
    the training documents (`experiments.baselines.training_subset`, at ``order``)."""
    train = _tokens(tok, train_docs, encoder, options)
    heldout = _tokens(tok, heldout_docs, encoder, options)
    flat_train = np.concatenate(train) if train else np.zeros(0, np.int64)
    flat_held = np.concatenate(heldout) if heldout else np.zeros(0, np.int64)
    vocab_size = int(max(len(tok.vocabulary), flat_train.max(initial=-1) + 1,
                         flat_held.max(initial=-1) + 1))
    lm = KneserNeyLM(order, discount).fit(train, vocab_size)
    seen = np.zeros(vocab_size, dtype=bool)
    seen[flat_train] = True
    log2p = [lm.log2_probabilities(doc) for doc in heldout]
    unseen_bits = sum(float(-lp[:-1][~seen[doc]].sum()) for lp, doc in zip(log2p, heldout))
    out = {"bits": np.array([-lp.sum() for lp in log2p], dtype=np.float64),
           "n_tokens": np.array([len(t) for t in heldout], dtype=np.int64),
           "train_tokens": np.array(len(flat_train)),
           "unseen_tokens": np.array(int((~seen[flat_held]).sum())),
           "unseen_bits": np.array(unseen_bits),
           "end_bits": np.array(float(sum(-lp[-1] for lp in log2p))),
           "vocab_size": np.array(vocab_size)}
    for k in orders:
        out[_order_key(k)] = (out["bits"] if k == order
                              else KneserNeyLM(k, discount).fit(train, vocab_size).document_bits(heldout))
    for fraction in fractions:
        out[_fraction_key(fraction)] = (
            out["bits"] if fraction >= 1
            else KneserNeyLM(order, discount).fit(training_subset(train, fraction), vocab_size)
            .document_bits(heldout))
    return out


def measure_symbols(task: Task) -> dict[str, np.ndarray]:
    """The symbol-level baseline of a task's data (`experiments.baselines`): per held-out
    document its bits at the task's order, at each of its orders and training shares."""
    train = symbol_ids(task.train_docs, task.alphabet)
    heldout = symbol_ids(task.heldout_docs, task.alphabet)
    size = len(task.alphabet)
    out = {"bits": symbol_document_bits(train, heldout, size, task.order, task.discount)}
    for k in task.orders:
        out[_order_key(k)] = (out["bits"] if k == task.order
                              else symbol_document_bits(train, heldout, size, k, task.discount))
    for fraction in task.fractions:
        out[_fraction_key(fraction)] = (
            out["bits"] if fraction >= 1
            else symbol_document_bits(training_subset(train, fraction), heldout, size, task.order,
                                      task.discount))
    return out


def run_task(task: Task) -> dict[str, dict[str, np.ndarray]]:
    """Every cell of one fit (from the cache when measured before); results by cell key, and
    the symbol-level baseline under `SYMBOLS`."""
    out: dict[str, dict[str, np.ndarray]] = {SYMBOLS: measure_symbols(task)}
    tok = None
    for cell in task.cells:
        path = _path(task, cell)
        found = read_raw(path)  # None when absent, or unreadable (then computed again)
        if found is not None:
            out[cell.key] = found
            continue
        if tok is None:
            tok = fitted_tokenizer(Unit(task.fit, task.train_docs, task.heldout_docs, [],
                                        task.cache_dir, False), UnitResult(task.fit.key))
        out[cell.key] = measure_cell(tok, task.train_docs, task.heldout_docs, cell, task.order,
                                     task.discount, task.orders, task.fractions)
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
                          Path(cache_dir), down.order, down.discount, tuple(data.alphabet),
                          tuple(down.orders), tuple(down.train_fractions)))
    return found


def run_downstream(config, grid, cache_dir: Path, jobs: int,
                   units: dict[str, list[str]], progress: bool = False) -> dict[str, pd.DataFrame]:
    """Measure every task (in a process pool when ``jobs > 1``) and build the three tables."""
    from ubpe.lab.units import map_with_progress

    todo = tasks(config, grid, cache_dir)
    if jobs > 1 and len(todo) > 1:
        todo.sort(key=lambda t: -sum(len(d) for d in t.train_docs))
    results = map_with_progress(run_task, todo, jobs, progress=progress,
                                desc=f"{config.name}: downstream")
    summary, documents, sensitivity = [], [], []
    for task, result in zip(todo, results):
        n_symbols = np.array([len(d) for d in task.heldout_docs], dtype=np.int64)
        total_symbols = max(1, int(n_symbols.sum()))
        unit_names = units[task.fit.dataset]
        n_units = len(set(unit_names))
        symbols = result[SYMBOLS]
        uniform = uniform_bits_per_symbol(len(task.alphabet))
        for cell in task.cells:
            r = result[cell.key]
            label = {"dataset": task.fit.dataset, "kind": task.fit.kind, "size": str(task.fit.size),
                     "n_candidates": task.fit.n_candidates, "encoder": cell.spec}
            bits, held_tokens = float(r["bits"].sum()), int(r["n_tokens"].sum())
            unseen = int(r["unseen_tokens"])
            mixture = mixture_bits(r["bits"], symbols["bits"])
            summary.append({**label, "n_units": n_units, "vocab_size": int(r["vocab_size"]),
                            "order": task.order, "discount": task.discount,
                            "train_tokens": int(r["train_tokens"]),
                            "heldout_tokens": held_tokens, "heldout_symbols": int(n_symbols.sum()),
                            "unseen_share": unseen / max(1, held_tokens),
                            "unseen_tokens": unseen,
                            "unseen_bits_share": float(r["unseen_bits"]) / max(bits, 1e-300),
                            "bits_per_unseen_token": float(r["unseen_bits"]) / unseen if unseen else math.nan,
                            "end_bits_share": float(r["end_bits"]) / max(bits, 1e-300),
                            "tokens_per_symbol": held_tokens / total_symbols,
                            "bits_per_token": bits / max(1, held_tokens + len(n_symbols)),
                            "bits_per_symbol": bits / total_symbols,
                            "symbol_bits_per_symbol": float(symbols["bits"].sum()) / total_symbols,
                            "uniform_bits_per_symbol": uniform,
                            "mixture_bits_per_symbol": float(mixture.sum()) / total_symbols})
            documents.append(pd.DataFrame({**label, "doc": np.arange(len(n_symbols)),
                                           "unit": unit_names, "n_symbols": n_symbols,
                                           "n_tokens": r["n_tokens"], "bits": r["bits"],
                                           "bits_symbols": symbols["bits"], "bits_mixture": mixture}))
            for k in task.orders:
                sensitivity.append({**label, "n_units": n_units, "order": k, "train_fraction": 1.0,
                                    "bits_per_symbol": float(r[_order_key(k)].sum()) / total_symbols,
                                    "symbol_bits_per_symbol": float(symbols[_order_key(k)].sum()) / total_symbols,
                                    "uniform_bits_per_symbol": uniform})
            for fraction in task.fractions:
                if fraction >= 1 and task.order in task.orders:
                    continue  # the row of the order above
                sensitivity.append({**label, "n_units": n_units, "order": task.order, "train_fraction": fraction,
                                    "bits_per_symbol": float(r[_fraction_key(fraction)].sum()) / total_symbols,
                                    "symbol_bits_per_symbol":
                                        float(symbols[_fraction_key(fraction)].sum()) / total_symbols,
                                    "uniform_bits_per_symbol": uniform})
    summary_table = rank_settings(pd.DataFrame(summary))
    sensitivity_table = rank_settings(pd.DataFrame(sensitivity), ["order", "train_fraction"])
    doc_table = pd.concat(documents, ignore_index=True) if documents else pd.DataFrame()
    ranked = (summary_table.loc[summary_table["ranked"] == "", ["dataset", "size", "n_candidates"]]
              .drop_duplicates() if not summary_table.empty else pd.DataFrame())
    tested = (doc_table.merge(ranked, on=["dataset", "size", "n_candidates"])
              if not doc_table.empty and not ranked.empty else pd.DataFrame())
    return {"downstream": summary_table, "downstream_documents": doc_table,
            "downstream_sensitivity": sensitivity_table,
            "downstream_comparisons": compare_bits(config, tested)}


SETTING = ["dataset", "size", "n_candidates"]


def rank_settings(table: pd.DataFrame, extra: list[str] | None = None) -> pd.DataFrame:
    """Mark each row's ``below_baseline`` (its bits/symbol above the symbol-level n-gram's or
    the uniform baseline's) and each setting's ``ranked`` ("" when it is ranked, else why
    not: a dataset with too few units, or a tokenisation of the setting below a baseline);
    ``rank_bits`` / ``rank_length`` (1 = fewest bits / tokens) only in ranked settings."""
    if table.empty:
        return table
    keys = SETTING + (extra or [])
    table = table.copy()
    table["below_baseline"] = table["bits_per_symbol"] > np.minimum(table["symbol_bits_per_symbol"],
                                                                    table["uniform_bits_per_symbol"])
    below = table.groupby(keys)["below_baseline"].transform("any")
    few = table["n_units"].map(validity.too_few_units)
    table["ranked"] = np.where(few, validity.FEW_UNITS, np.where(below, ABOVE_BASELINE, ""))
    ok = table["ranked"] == ""
    for column, value in (("rank_bits", "bits_per_symbol"), ("rank_length", "tokens_per_symbol")):
        if value in table:
            table[column] = table[value].where(ok).groupby([table[k] for k in keys]).rank(method="average")
    return table


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
