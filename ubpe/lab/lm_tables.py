"""The transformer study's tables, intervals and summary (`ubpe.lab.lm`): no PyTorch here.

Per dataset and arm: bits per symbol (seed mean) with a 95 % percentile bootstrap interval
over the dataset's units, its difference to the symbol model with the same positions
(``vs_symbols``) and to the context-matched one (``vs_matched``) with paired intervals (the
same unit resamples for every arm), and ``ranked`` / ``rank_bits`` (point 4: ranked only where
the intervals of ``vs_matched`` and ``vs_symbols`` lie below 0). Per kind: Spearman correlations of transformer
bits with tokens per symbol and with n-gram bits, with Fisher-z intervals.

>>> lo, hi = bootstrap_ratio(np.array([[1.0, 2.0, 3.0]]), np.array([1.0, 1.0, 1.0]), 200, 0)[1][0]
>>> bool(1.0 <= lo <= hi <= 3.0)
True
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from ubpe.lab import validity

#: The symbol-level arm at the token models' context in positions.
SYMBOLS = "symbols"


def matched_context(context: int, symbols_per_token: float) -> int:
    """The symbol model's context covering ``context`` tokens of a tokenisation with this many
    symbols per token, rounded up to a quarter of ``context`` (so arms share models).

    >>> matched_context(64, 3.2), matched_context(64, 1.0)
    (208, 64)
    """
    step = max(1, context // 4)
    return int(math.ceil(context * symbols_per_token / step - 1e-9) * step)


CONFIDENCE = 0.95
#: The seed of the bootstrap's unit resamples (fixed: a rerun gives the same intervals).
BOOTSTRAP_SEED = 20260
NOT_BEATING = "does not beat both symbol models (same symbols of context, same positions)"
#: Fewest points for a correlation with an interval (Fisher z needs n > 3).
MIN_POINTS = 4


def unit_sums(values: np.ndarray, units: list[str]) -> tuple[np.ndarray, list[str]]:
    """Per unit (sorted by name), the sum of ``values`` (last axis: documents)."""
    names = sorted(set(units))
    index = {n: i for i, n in enumerate(names)}
    at = np.array([index[u] for u in units])
    out = np.zeros(values.shape[:-1] + (len(names),))
    for i in range(len(names)):
        out[..., i] = values[..., at == i].sum(axis=-1)
    return out, names


def bootstrap_ratio(bits: np.ndarray, symbols: np.ndarray, resamples: int, seed: int
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``bits`` (arms x units) over ``symbols`` (units): each arm's ratio of sums, its percentile
    interval, and the resampled ratios (resamples x arms; the same unit draws for every arm)."""
    rng = np.random.default_rng(seed)
    n = bits.shape[1]
    draws = rng.integers(0, n, size=(resamples, n))
    counts = np.zeros((resamples, n))
    np.add.at(counts, (np.arange(resamples)[:, None], draws), 1)
    ratios = (counts @ bits.T) / (counts @ symbols)[:, None]
    tail = (1 - CONFIDENCE) / 2 * 100
    interval = np.percentile(ratios, [tail, 100 - tail], axis=0).T
    return bits.sum(axis=1) / symbols.sum(), interval, ratios


def spearman_interval(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """Spearman's rho with a 95 % Fisher-z interval (variance (1 + rho^2 / 2) / (n - 3),
    Bonett & Wright 2000); NaN with fewer than `MIN_POINTS` points or constant values.

    >>> [round(v, 2) for v in spearman_interval(np.arange(5.0), np.arange(5.0))]
    [1.0, -0.17, 1.0]
    """
    from scipy.stats import norm, spearmanr

    n = len(x)
    if n < MIN_POINTS or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan, math.nan, math.nan
    rho = float(spearmanr(x, y).statistic)
    # z is infinite at |rho| = 1: the interval is taken around the nearest value n points can
    # give (one swap of neighbours: 1 - 12 / (n^3 - n)) and closed at rho itself
    near = max(-1 + 12 / (n ** 3 - n), min(1 - 12 / (n ** 3 - n), rho))
    z = math.atanh(near)
    half = norm.ppf(0.5 + CONFIDENCE / 2) * math.sqrt((1 + near * near / 2) / (n - 3))
    return rho, min(rho, math.tanh(z - half)), max(rho, math.tanh(z + half))


def dataset_rows(study, task, result: dict[str, Any]) -> tuple[list[dict[str, Any]], pd.DataFrame]:
    """One dataset's rows of transformer.csv and its per-document table."""
    from ubpe.lab.transformer import parameter_count

    arms = result["arms"]
    n_symbols = result["n_symbols"]
    units = result["units"]
    seeds = list(study.seeds)
    per_doc = np.array([[result["bits"][a.name, s] for s in seeds] for a in arms])  # arms x seeds x docs
    mean_doc = per_doc.mean(axis=1)
    unit_bits, names = unit_sums(mean_doc, units)
    unit_symbols, _ = unit_sums(n_symbols.astype(float), units)
    bps, interval, ratios = bootstrap_ratio(unit_bits, unit_symbols, study.bootstrap, BOOTSTRAP_SEED)
    seed_bps = per_doc.sum(axis=2) / n_symbols.sum()
    index = {a.name: i for i, a in enumerate(arms)}
    total_symbols = int(n_symbols.sum())
    rows = []
    for i, arm in enumerate(arms):
        tokens = int(result["heldout_tokens"][arm.name].sum())
        per_token = tokens / total_symbols
        matched = (arm.name if arm.train is None
                   else _matched_name(matched_context(study.context, total_symbols / max(1, tokens)), study.context))
        j, k = index[SYMBOLS], index.get(matched, index[SYMBOLS])
        shape = result["shape"][arm.name]
        training = [result["training"][arm.name, s] for s in seeds]
        ngram = result["ngram_bits"].get(arm.test or SYMBOLS)
        row = {"dataset": task.dataset, "kind": task.kind, "arm": arm.name,
               "train_encoder": arm.train or "symbols", "test_encoder": arm.test or "symbols",
               "sampled_training": arm.sampled, "n_units": len(names), "n_docs": len(n_symbols),
               "heldout_symbols": total_symbols, "heldout_tokens": tokens, "tokens_per_symbol": per_token,
               "context_tokens": shape.context,
               "context_symbols": shape.context if arm.train is None else shape.context / per_token,
               "bits_per_symbol": bps[i], "bits_low": interval[i, 0], "bits_high": interval[i, 1],
               "seed_sd": float(seed_bps[i].std(ddof=1)) if len(seeds) > 1 else math.nan,
               "n_seeds": len(seeds),
               "ngram_bits_per_symbol": float(ngram.sum()) / total_symbols if ngram is not None else math.nan,
               "matched_arm": matched}
        # a sampled arm against the arm trained with its plain test encoder (same unit draws)
        plain = next((index[a.name] for a in arms if arm.sampled and not a.sampled
                      and a.train == arm.test and a.test == arm.test), None)
        row["plain_arm"] = arms[plain].name if plain is not None else ""
        for label, other in (("vs_symbols", j), ("vs_matched", k), ("vs_plain", plain)):
            if other is None:
                row[label] = row[f"{label}_low"] = row[f"{label}_high"] = math.nan
                continue
            diff = ratios[:, i] - ratios[:, other]
            tail = (1 - CONFIDENCE) / 2 * 100
            row[label] = bps[i] - bps[other]
            row[f"{label}_low"], row[f"{label}_high"] = np.percentile(diff, [tail, 100 - tail])
        row.update({"parameters": parameter_count(shape), "budget": result["budget"],
                    "vocab_size": shape.vocab_size, "d_model": shape.d_model, "d_ff": shape.d_ff,
                    "layers": shape.n_layers, "train_symbols": int(sum(len(d) for d in task.train_docs)),
                    "epochs": study.epochs, "steps": int(training[0]["steps"]),
                    "train_tokens": float(np.mean([t["tokens"] for t in training])),
                    "first_loss": float(np.mean([t["first_loss"] for t in training])),
                    "last_loss": float(np.mean([t["last_loss"] for t in training])),
                    "seconds": float(np.sum([t["seconds"] for t in training])),
                    "eval_seconds": float(np.sum([t["eval_seconds"] for t in training])), **task.dropped})
        rows.append(row)
    docs = pd.concat([pd.DataFrame({"dataset": task.dataset, "arm": arm.name, "seed": seed,
                                    "doc": np.arange(len(n_symbols)), "unit": units,
                                    "n_symbols": n_symbols, "n_tokens": result["heldout_tokens"][arm.name],
                                    "bits": result["bits"][arm.name, seed]})
                      for arm in arms for seed in seeds], ignore_index=True)
    return rows, docs


def _matched_name(context: int, study_context: int) -> str:

    return SYMBOLS if context == study_context else f"{SYMBOLS}@{context}"


def rank(table: pd.DataFrame) -> pd.DataFrame:
    """``beats_matched`` / ``beats_symbols`` (interval of the difference below 0), ``ranked``
    ("" or why not) and ``rank_bits`` among the ranked token arms of each dataset.

    An arm is ranked only where it beats the context-matched symbol model *and* the one with
    the same positions: small models trained briefly can do worse with a longer context (the
    quarter-scale run: 0.6-0.7 bits/symbol on the chorales at 112-128 symbols against 64), and
    a token model must not be ranked for beating a symbol model that more context only hurt."""
    table = table.copy()
    table["beats_symbols"] = table["vs_symbols_high"] < 0
    table["beats_matched"] = table["vs_matched_high"] < 0
    tokens = table["train_encoder"] != "symbols"
    few = table["n_units"].map(validity.too_few_units)
    beats = table["beats_matched"] & table["beats_symbols"]
    table["ranked"] = np.where(~tokens, "baseline", np.where(few, validity.FEW_UNITS, np.where(beats, "", NOT_BEATING)))
    ok = table["ranked"] == ""
    table["rank_bits"] = table["bits_per_symbol"].where(ok).groupby(table["dataset"]).rank(method="average")
    return table


def correlations(table: pd.DataFrame) -> pd.DataFrame:
    """Per kind: Spearman of transformer bits with tokens per symbol and with n-gram bits, over
    the plain arms and the same-positions symbol model of each dataset, centred per dataset;
    with several kinds, also over all of them."""
    plain = table[(~table["sampled_training"])
                  & ((table["train_encoder"] != "symbols") | (table["arm"] == "symbols"))].copy()
    rows = []
    groups = list(plain.groupby("kind", sort=True))
    if len(groups) > 1:
        groups.append(("all kinds", plain))
    for kind, group in groups:
        centred = group.copy()
        for column in ("bits_per_symbol", "tokens_per_symbol", "ngram_bits_per_symbol"):
            centred[column] = group[column] - group.groupby("dataset")[column].transform("mean")
        for predictor, label in (("tokens_per_symbol", "length (tokens per symbol)"),
                                 ("ngram_bits_per_symbol", "n-gram bits per symbol")):
            rho, low, high = spearman_interval(centred[predictor].to_numpy(), centred["bits_per_symbol"].to_numpy())
            rows.append({"kind": kind, "predictor": label, "n_points": len(group),
                         "n_datasets": group["dataset"].nunique(), "spearman": rho, "low": low, "high": high})
    return pd.DataFrame(rows)


def tables(study, results: list[tuple[Any, dict[str, Any]]]) -> dict[str, pd.DataFrame]:
    rows, docs = [], []
    for task, result in results:
        r, d = dataset_rows(study, task, result)
        rows += r
        docs.append(d)
    table = rank(pd.DataFrame(rows)) if rows else pd.DataFrame()
    return {"transformer": table,
            "transformer_documents": pd.concat(docs, ignore_index=True) if docs else pd.DataFrame(),
            "transformer_correlations": correlations(table) if rows else pd.DataFrame()}


def _fmt(value: float, digits: int = 3) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def summary(study, found: dict[str, pd.DataFrame], level: str = "#") -> str:
    """``transformer.md``: settings, then per dataset the arms, then the correlations
    (``level``: the heading's; the datasets' are one deeper)."""
    table, corr = found["transformer"], found["transformer_correlations"]
    lines = [f"{level} Downstream: small causal transformers per tokenisation", "",
             f"Setting: vocabulary size {study.size}, n_candidates {study.n_candidates}. Models: d_model "
             f"{study.d_model}, {study.layers} layers, {study.heads} heads, context {study.context} positions, "
             f"equal total parameters (feed-forward width adjusted; `parameters` column), {study.epochs} epochs "
             f"over the same training symbols, batch {study.batch} windows, AdamW lr {study.lr}, seeds "
             f"{list(study.seeds)}. Bits per symbol: held-out tokens and document ends, seed mean; "
             f"95 % intervals: percentile bootstrap over units ({study.bootstrap} resamples). An arm is "
             "ranked only where it beats the symbol model whose context covers as many symbols "
             "(`vs_matched`) and the one with the same positions (`vs_symbols`): both intervals below 0.", ""]
    if table.empty:
        return "\n".join(lines + ["No dataset at this setting."]) + "\n"
    for dataset, group in table.groupby("dataset", sort=False):
        lines += [f"{level}# {dataset} ({group['kind'].iloc[0]}, {group['n_units'].iloc[0]} units)", "",
                  "| arm | tokens/symbol | context (symbols) | bits/symbol [95 %] | vs symbols [95 %] "
                  "| vs matched [95 %] | n-gram bits | rank |", "|---|---|---|---|---|---|---|---|"]
        for row in group.itertuples():
            rank_text = _fmt(row.rank_bits, 1) if row.ranked == "" else row.ranked
            lines.append(f"| {row.arm} | {_fmt(row.tokens_per_symbol)} | {_fmt(row.context_symbols, 0)} | "
                         f"{_fmt(row.bits_per_symbol)} [{_fmt(row.bits_low)}, {_fmt(row.bits_high)}] | "
                         f"{_fmt(row.vs_symbols)} [{_fmt(row.vs_symbols_low)}, {_fmt(row.vs_symbols_high)}] | "
                         f"{_fmt(row.vs_matched)} [{_fmt(row.vs_matched_low)}, {_fmt(row.vs_matched_high)}] | "
                         f"{_fmt(row.ngram_bits_per_symbol)} | {rank_text} |")
        lines.append("")
    sampled = table[table["sampled_training"].astype(bool) & (table["plain_arm"].fillna("") != "")] \
        if "plain_arm" in table else table.iloc[:0]
    if not sampled.empty:
        lines += [f"{level}# Training with sampling, tested with the plain encoder", "",
                  "Bits per symbol of the model trained on sampled segmentations minus the one trained on "
                  "the plain encoder's, both tested with the plain encoder (below 0: sampling helped; "
                  "95 % paired bootstrap over units).", "",
                  "| dataset | trained with | plain arm | bits/symbol | plain | difference [95 %] |",
                  "|---|---|---|---|---|---|"]
        bits = table.set_index(["dataset", "arm"])["bits_per_symbol"]
        for row in sampled.itertuples():
            lines.append(f"| {row.dataset} | {row.arm} | {row.plain_arm} | {_fmt(row.bits_per_symbol)} | "
                         f"{_fmt(bits[row.dataset, row.plain_arm])} | {_fmt(row.vs_plain)} "
                         f"[{_fmt(row.vs_plain_low)}, {_fmt(row.vs_plain_high)}] |")
        lines.append("")
    if not corr.empty:
        lines += [f"{level}# Do length and n-gram bits go with transformer bits? (correlation, per kind)", "",
                  "| kind | predictor | points (datasets) | Spearman [95 %] |", "|---|---|---|---|"]
        for row in corr.itertuples():
            lines.append(f"| {row.kind} | {row.predictor} | {row.n_points} ({row.n_datasets}) | "
                         f"{_fmt(row.spearman, 2)} [{_fmt(row.low, 2)}, {_fmt(row.high, 2)}] |")
        lines.append("")
    return "\n".join(lines)


def plot(table: pd.DataFrame, path) -> None:
    """Bits per symbol (with intervals) against tokens per symbol, one panel per dataset."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if table.empty:
        return
    datasets = list(dict.fromkeys(table["dataset"]))
    fig, axes = plt.subplots(1, len(datasets), figsize=(4 * len(datasets), 3.6), squeeze=False)
    for ax, dataset in zip(axes[0], datasets):
        group = table[table["dataset"] == dataset]
        for row in group.itertuples():
            style = "s" if row.train_encoder == "symbols" else ("^" if row.sampled_training else "o")
            ax.errorbar(row.tokens_per_symbol, row.bits_per_symbol,
                        yerr=[[row.bits_per_symbol - row.bits_low], [row.bits_high - row.bits_per_symbol]],
                        fmt=style, capsize=2, label=row.arm)
        ax.set_title(dataset)
        ax.set_xlabel("held-out tokens per symbol")
        ax.set_ylabel("bits per symbol (transformer)")
    axes[0][-1].legend(fontsize=6, loc="best")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def report_section(folder, run: dict[str, Any]) -> list[str]:
    """The experiment README's section (`ubpe.lab.report`) from ``transformer.csv`` and
    ``transformer_correlations.csv``, and the plot drawn again; [] when the run has none."""
    from pathlib import Path
    from types import SimpleNamespace

    folder = Path(folder)
    settings = (run.get("config") or {}).get("transformer")
    if not settings or not (folder / "transformer.csv").is_file():
        return []
    found = {name: (pd.read_csv(folder / f"{name}.csv", keep_default_na=False, na_values=[""])
                    if (folder / f"{name}.csv").stat().st_size > 1 else pd.DataFrame())
             for name in ("transformer", "transformer_correlations")}
    if not found["transformer"].empty:
        found["transformer"]["ranked"] = found["transformer"]["ranked"].fillna("")
        plot(found["transformer"], folder / "transformer_bits.png")
    return [summary(SimpleNamespace(**settings), found, level="##"),
            "![transformer bits per symbol](transformer_bits.png)", ""]
