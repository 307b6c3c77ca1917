"""The report's sections for the analyses after the grid: the language-model proxy
(`ubpe.lab.downstream`) and the beam study with the tf-idf objective (`ubpe.lab.beam`).

Each section is rendered from the files those analyses wrote into the results folder (none:
no section), so ``python -m experiments report`` re-renders them without recomputing.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd

from ubpe.lab import validity
from ubpe.lab.formatting import _kind_key, _num, _p, _pct, _ratio_pct, _span, _table

_READ = {"dtype": {"size": str, "encoder": str, "a": str, "b": str}}


def _read(folder: Path, name: str) -> pd.DataFrame:
    path = folder / f"{name}.csv"
    if not path.exists() or path.stat().st_size <= 1:
        return pd.DataFrame()
    return pd.read_csv(path, **_READ)


def _sorted(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(_k=frame["kind"].map(_kind_key)).sort_values(["_k", "dataset"], kind="stable").drop(columns="_k")


# -- downstream ---------------------------------------------------------------------------


def downstream_section(folder: Path, run: dict[str, Any]) -> list[str]:
    summary = _read(folder, "downstream")
    if summary.empty:
        return []
    if "ranked" not in summary:  # a result from before issue 27: no baselines to read
        summary = summary.assign(ranked="", below_baseline=False)
    summary["ranked"] = summary["ranked"].fillna("")
    comparisons = _read(folder, "downstream_comparisons")
    cfg = run["config"].get("downstream") or {}
    order, discount = int(summary["order"].iloc[0]), float(summary["discount"].iloc[0])
    lines = ["## Downstream: held-out bits per symbol under an n-gram language model", "",
             f"Does a shorter encoding make the text easier to model? For every encoder at "
             f"vocabulary size {', '.join(cfg.get('sizes', []))} (n_candidates "
             f"{', '.join(map(str, cfg.get('n_candidates', [])))}), the training split is encoded "
             f"by that encoder (top-1; a seeded encoder with its first seed) and an interpolated "
             f"Kneser-Ney model of order {order} (one discount D = {discount} at every order; "
             "`ubpe/lab/ngram.py`, checked against NLTK's `KneserNeyInterpolated` in "
             "`tests/experiments/test_ngram.py`) is trained on those tokens; each held-out document, encoded "
             "the same way, costs -log2 p of its tokens and of its end. **bits/symbol** = held-out "
             "bits / held-out symbols, comparable across tokenisations of the same text (lower "
             "is better). Ids the training tokenisation never produced are not mapped to an "
             "unknown token: the model's lowest order is interpolated with the uniform "
             "distribution over every id of the vocabulary and the end symbol; what they cost "
             "is measured below (*unseen tokens*).", "",
             "**Baselines** (`experiments/baselines.py`), beside every tokenisation: *symbols* - "
             "the same model (order, discount, training documents) over the symbols, i.e. no "
             "merges; *uniform* - log2 of the alphabet size. A cell marked † is above a "
             "baseline: its token model predicts the text worse than not tokenising. A setting "
             "with a † cell, or of a dataset with fewer than "
             f"{validity.MIN_UNITS} held-out units (‡), is **not ranked** (no bold, no rank, no "
             "test below). *mixture*: the best tokenisation's bits under the per-document "
             "mixture (token model + symbol model) / 2, never more than one bit a document "
             "above the better of the two.", ""]
    for n_candidates in sorted(summary["n_candidates"].unique()):
        lines += [f"### Bits per symbol, n_candidates = {n_candidates} (bold: lowest in a ranked setting)", "",
                  _table(_bits_table(summary[summary["n_candidates"] == n_candidates])), ""]
    lines += _cost_table(summary)
    lines += _ranks(summary)
    lines += _sensitivity(_read(folder, "downstream_sensitivity"), order)
    if not comparisons.empty:
        lines += _downstream_tests(comparisons, run)
    return lines


def _mark(row: pd.Series) -> str:
    """‡ for a dataset with too few units, "" otherwise."""
    return " ‡" if row["ranked"] == validity.FEW_UNITS else ""


def _bits_table(part: pd.DataFrame) -> pd.DataFrame:
    """One row per dataset and size: every encoder's bits/symbol (bold: lowest where ranked; †:
    above a baseline), the baselines, the mixture and whether the setting is ranked."""
    part = _sorted(part)
    specs = list(dict.fromkeys(part["encoder"]))
    rows = []
    for (kind, dataset, size), cells in part.groupby(["kind", "dataset", "size"], sort=False):
        by = cells.set_index("encoder")
        first = cells.iloc[0]
        ranked = first["ranked"] == ""
        best = by["bits_per_symbol"].idxmin()
        row = {"kind": kind, "dataset": dataset + _mark(first), "size": size}
        for spec in specs:
            if spec not in by.index:
                row[f"`{spec}`"] = "–"
                continue
            text = _num(by.loc[spec, "bits_per_symbol"]) + (" †" if by.loc[spec, "below_baseline"] else "")
            row[f"`{spec}`"] = f"**{text}**" if ranked and spec == best else text
        if "symbol_bits_per_symbol" in cells:
            row["symbols"] = _num(first["symbol_bits_per_symbol"])
            row["uniform"] = _num(first["uniform_bits_per_symbol"])
            row["mixture (best)"] = _num(cells["mixture_bits_per_symbol"].min())
        row["ranked"] = "yes" if ranked else f"no: {first['ranked']}"
        rows.append(row)
    return pd.DataFrame(rows)


def _cost_table(summary: pd.DataFrame) -> list[str]:
    """Unseen tokens and document ends: what they cost, per setting (ranges over encoders)."""
    if "unseen_bits_share" not in summary:
        return []
    rows = []
    for (kind, dataset, size, n_cand), cells in _sorted(summary).groupby(
            ["kind", "dataset", "size", "n_candidates"], sort=False):
        worst = cells.loc[cells["unseen_bits_share"].idxmax()]
        rows.append({"dataset": dataset + _mark(cells.iloc[0]), "size": size, "n_cand.": n_cand,
                     "training tokens": f"{int(cells['train_tokens'].min()):,}-{int(cells['train_tokens'].max()):,}",
                     "unseen share of tokens": _range(cells["unseen_share"], percent=True),
                     "unseen share of bits": _range(cells["unseen_bits_share"], percent=True),
                     "bits per unseen token": _range(cells["bits_per_unseen_token"], digits=1),
                     "most bits on unseen": (f"`{worst['encoder']}` ({int(worst['unseen_tokens']):,} tokens)"
                                             if worst["unseen_tokens"] else "–"),
                     "end-of-document share of bits": _range(cells["end_bits_share"], percent=True)})
    table = pd.DataFrame(rows)
    per_unseen = summary["bits_per_unseen_token"].dropna()
    ends = summary["end_bits_share"]
    return ["### What unseen tokens and document ends cost", "",
            "Per setting, ranges over its encoders: held-out tokens whose id the training "
            "tokenisation never produced (share of tokens, share of the held-out bits they "
            "cost, bits per such token), and the share of the bits spent on predicting each "
            "document's end."
            + (f" Over every setting an unseen token costs "
               f"{_span(_num(per_unseen.min(), 1), _num(per_unseen.max(), 1))} bits; the end of a document "
               f"{ends.min() * 100:.1f} % to {ends.max() * 100:.1f} % of the bits."
               if len(per_unseen) else ""), "", _table(table), ""]


def _range(values: pd.Series, *, percent: bool = False, digits: int = 3) -> str:
    values = values.dropna()
    if values.empty:
        return "–"
    scale, unit = (100.0, " %") if percent else (1.0, "")
    low, high = values.min() * scale, values.max() * scale
    digits = 1 if percent else digits
    return f"{low:.{digits}f}{unit}" if round(low, digits) == round(high, digits) else \
        f"{low:.{digits}f}-{high:.{digits}f}{unit}"


def _ranks(summary: pd.DataFrame) -> list[str]:
    """Per group (text, non-text), over ranked settings only: each encoder's mean rank by bits
    and by length (per dataset the mean over its settings, then the mean over datasets: the
    settings of one dataset are not independent), and the length-bits correlation per dataset."""
    ranked = summary[summary["ranked"] == ""]
    not_ranked = summary[summary["ranked"] != ""].drop_duplicates(["dataset", "size", "n_candidates"])
    lines = ["### Ranking: bits against length, per group", "",
             "Only ranked settings (see above). Rank 1 = lowest bits per symbol (or fewest tokens "
             "per symbol) among the encoders of one setting (dataset x size x n_candidates). The "
             "settings of one dataset share their held-out documents, so each dataset counts "
             "once: its encoders' ranks are averaged over its settings, then over datasets. Text "
             "(prose, multilingual, code) and non-text are never pooled.", ""]
    for name in validity.GROUPS:
        part = ranked[ranked["kind"].map(validity.group) == name]
        skipped = not_ranked[not_ranked["kind"].map(validity.group) == name]
        why = "; ".join(f"{d} ({', '.join(sorted(set(g['ranked'])))})"
                        for d, g in skipped.groupby("dataset", sort=True))
        if part.empty:
            lines += [f"**{name}**: no ranked setting" + (f" - not ranked: {why}" if why else "") + ".", ""]
            continue
        per_dataset = part.groupby(["dataset", "encoder"], sort=False).agg(
            bits=("rank_bits", "mean"), length=("rank_length", "mean"),
            bps=("bits_per_symbol", "median"), tps=("tokens_per_symbol", "median")).reset_index()
        table = (per_dataset.groupby("encoder", sort=False)
                 .agg(datasets=("dataset", "nunique"), bits=("bits", "mean"), length=("length", "mean"),
                      bps=("bps", "median"), tps=("tps", "median"))
                 .sort_values("bits").reset_index())
        best = per_dataset.loc[per_dataset.groupby("dataset")["bits"].idxmin()]
        wins = best["encoder"].value_counts()
        n_settings = part[["dataset", "size", "n_candidates"]].drop_duplicates().shape[0]
        lines += [f"**{name}**: {part['dataset'].nunique()} datasets ({', '.join(sorted(part['dataset'].unique()))}), "
                  f"{n_settings} ranked settings" + (f"; not ranked: {why}" if why else "") + ".", "",
                  _table(pd.DataFrame({
                      "encoder": "`" + table["encoder"] + "`", "datasets": table["datasets"],
                      "mean rank by bits": table["bits"].map(lambda v: _num(v, 2)),
                      "mean rank by length": table["length"].map(lambda v: _num(v, 2)),
                      "best by bits in (datasets)": [f"{wins.get(e, 0)}" for e in table["encoder"]],
                      "median bits/symbol": table["bps"].map(_num),
                      "median tokens/symbol": table["tps"].map(_num)})), ""]
        correlations = _correlations(part)
        if not correlations.empty:
            lines += [f"Spearman correlation of tokens/symbol and bits/symbol across the encoders of "
                      f"a setting, per dataset (median over its ranked settings): "
                      + ", ".join(f"{r.dataset} {_num(r.rho, 2)} ({r.settings})" for r in correlations.itertuples())
                      + f"; positive (shorter is better) in {int((correlations['rho'] > 0).sum())} of "
                      f"{len(correlations)} datasets.", ""]
    return lines


def _correlations(part: pd.DataFrame) -> pd.DataFrame:
    from scipy.stats import spearmanr

    rows = []
    for (dataset, _, _), group in part.groupby(["dataset", "size", "n_candidates"], sort=True):
        if len(group) >= 3:
            rows.append({"dataset": dataset,
                         "rho": float(spearmanr(group["tokens_per_symbol"], group["bits_per_symbol"]).statistic)})
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    return frame.groupby("dataset").agg(rho=("rho", "median"), settings=("rho", "size")).reset_index()


def _sensitivity(table: pd.DataFrame, order: int) -> list[str]:
    """Per dataset and setting: the best encoder by bits at each order and training share, and
    the rank correlation of each ranking with the configured one."""
    if table.empty:
        return []
    from scipy.stats import spearmanr

    table = table.assign(ranked=table["ranked"].fillna(""))
    variants = table[["order", "train_fraction"]].drop_duplicates()
    variants = variants.iloc[sorted(range(len(variants)), key=lambda i: (
        variants["train_fraction"].iloc[i] < 1, variants["order"].iloc[i], variants["train_fraction"].iloc[i]))]
    reference = table[(table["order"] == order) & (table["train_fraction"] == 1.0)]
    rows = []
    for (kind, dataset, size, n_cand), cells in _sorted(table).groupby(
            ["kind", "dataset", "size", "n_candidates"], sort=False):
        ref = reference[(reference["dataset"] == dataset) & (reference["size"] == size)
                        & (reference["n_candidates"] == n_cand)].set_index("encoder")["bits_per_symbol"]
        row = {"dataset": dataset + _mark(cells.iloc[0]), "size": size, "n_cand.": n_cand}
        for v in variants.itertuples():
            here = cells[(cells["order"] == v.order) & (cells["train_fraction"] == v.train_fraction)]
            label = f"order {v.order}" if v.train_fraction == 1.0 else f"{v.train_fraction:g} of train"
            if here.empty:
                continue
            best = here.loc[here["bits_per_symbol"].idxmin()]
            if here["ranked"].iloc[0] != "":
                n_below = int(here["below_baseline"].sum())
                row[label] = f"not ranked ({n_below}/{len(here)} †)" if n_below else "not ranked"
                continue
            rho = float(spearmanr(here.set_index("encoder")["bits_per_symbol"].reindex(ref.index), ref).statistic)
            row[label] = f"`{best['encoder']}` (ρ {_num(rho, 2)})"
        rows.append(row)
    return ["### Sensitivity of the ranking to the order and to the training size", "",
            f"Per setting: the encoder with the fewest bits at each order (the whole training "
            f"split) and with each share of the training documents (every 4th, every 2nd; order "
            f"{order}), and ρ, the Spearman correlation of that ranking with the order-{order} "
            "ranking on the whole split. *not ranked (k/n †)*: k of the n tokenisations are above "
            "the symbol-level model of the same order and data (or the uniform baseline); "
            "the baselines per order are in `downstream_sensitivity.csv`.", "",
            _table(pd.DataFrame(rows)), ""]


def _downstream_tests(comparisons: pd.DataFrame, run: dict[str, Any]) -> list[str]:
    questions = run["config"]["comparisons"]
    kinds = sorted(dict.fromkeys(comparisons["kind"]), key=_kind_key)
    rows = []
    for index, question in enumerate(questions):
        sub = comparisons[comparisons["question"] == index]
        if sub.empty:
            continue
        row = {"question (a vs b)": f"{index + 1}. `{question['a']}` vs `{question['b']}`"}
        for kind in kinds:
            cells = sub[sub["kind"] == kind]
            counts = cells["verdict"].value_counts()
            row[kind] = ", ".join(f"{_short(v)} {counts[v]}/{len(cells)}" for v in counts.index) or "–"
            if not cells.empty:
                row[kind] += f" ({cells['dataset'].nunique()} datasets)"
        rows.append(row)
    detail = _sorted(comparisons.assign(  # the columns first, then the order
        q=comparisons["question"] + 1,
        units=comparisons["n_units"],
        bits=[f"{_num(a)} / {_num(b)}" for a, b in zip(comparisons["bits_per_symbol_a"], comparisons["bits_per_symbol_b"])],
        effect=comparisons["hl_log_ratio"].map(_ratio_pct),
        p=comparisons["p_holm"].map(_p)))
    detail = detail[["q", "dataset", "size", "n_candidates", "units", "n_docs", "bits", "effect", "p", "verdict"]]
    detail.columns = ["question", "dataset", "size", "n_cand.", "units", "docs", "bits/symbol a / b",
                      "HL change of a's bits", "p (Holm)", "verdict"]
    n_tests = int(comparisons["p_value"].notna().sum())
    return ["### The questions of this report, on bits instead of tokens", "",
            "The same paired design as the length tests: per independent unit, the held-out "
            "bits of `a` and `b` summed over the unit's documents, Wilcoxon signed-rank on the "
            f"per-unit log ratios, Holm over these {n_tests} tests (a family of its own), "
            "Hodges-Lehmann changes with Holm-consistent intervals in "
            "`downstream_comparisons.csv`. Only ranked settings are tested (none above a "
            "baseline, none with too few units). No comparison holds by construction here: the "
            "fewest-tokens encoder minimises tokens, not bits.", "",
            _table(pd.DataFrame(rows)), "", _table(detail), ""]


def _short(verdict: str) -> str:
    return {"no significant difference": "n.s.", "too few units to test": "too few units"}.get(verdict, verdict)


# -- beam ---------------------------------------------------------------------------------


def beam_section(folder: Path, run: dict[str, Any], metrics: pd.DataFrame) -> list[str]:
    summary = _read(folder, "beam_summary")
    if summary.empty:
        return []
    cfg = run["config"].get("beam") or {}
    widths = sorted(summary["width"].unique())
    lines = ["## The tf-idf beam on whole documents, against the exact optimum", "",
             f"The universal encoder (`tfidf`) keeps the `top_n` best tails per part; the grid "
             f"above runs it at top_n = 1 on documents that are whole and unsplit for DNA, "
             f"protein, signals, music and time series (text is split into words, its parts). "
             f"Universal tokenizer of size {cfg.get('size')} (n_candidates "
             f"{cfg.get('n_candidates')}, fitted to the classic one's final size as in the grid), the first "
             f"{cfg.get('max_docs')} held-out documents of each dataset, each encoded at widths "
             f"{', '.join(map(str, widths))}: how often a wider beam finds a strictly higher "
             "score than width 1 (*improved*) or a lower one (*worse*: the beam is not monotone "
             "in its width), the mean change of the best score and of its token count. The exact "
             "optimum (branch and bound, `ubpe.encoders.exact_tfidf`) is computed where every "
             f"part has at most {cfg.get('exact_max_symbols')} symbols (every text document) and "
             f"within {cfg.get('exact_max_nodes'):,} search nodes; of a longer unsplit document "
             f"the first {cfg.get('exact_max_symbols')} symbols are a second input (`first n "
             "symbols` rows), on which the widths run too. *at optimum*: share of resolved inputs "
             "whose best score equals the optimum (relative tolerance 1e-9); *gap*: mean "
             "(optimum - score) / optimum.", ""]
    summary = _sorted(summary)
    wide = summary.pivot_table(index=["kind", "dataset", "input"], columns="width", sort=False,
                               values=["improved", "worse", "mean_score_change", "mean_token_change",
                                       "optimal", "mean_gap"])
    base = summary[summary["width"] == widths[0]].set_index(["kind", "dataset", "input"])
    rows = []
    for key in wide.index:
        kind, dataset, name = key
        row = {"dataset": dataset, "input": name, "docs": int(base.loc[key, "docs"]),
               "mean symbols": _num(float(base.loc[key, "mean_symbols"]), 0)}
        for w in widths[1:]:
            row[f"improved / worse, top-{w}"] = (f"{wide.loc[key, ('improved', w)] * 100:.0f} % / "
                                                 f"{wide.loc[key, ('worse', w)] * 100:.0f} %")
        w = widths[-1]
        row[f"score, tokens change top-{w}"] = (f"{_pct(wide.loc[key, ('mean_score_change', w)], 2)}, "
                                               f"{_pct(wide.loc[key, ('mean_token_change', w)], 2)}")
        resolved = int(base.loc[key, "resolved"])
        row["resolved"] = resolved
        row["at optimum top-1 / top-" + str(w)] = (
            "–" if not resolved else
            f"{wide.loc[key, ('optimal', widths[0])] * 100:.0f} % / {wide.loc[key, ('optimal', w)] * 100:.0f} %")
        row["gap top-1 / top-" + str(w)] = (
            "–" if not resolved else
            f"{_pct(wide.loc[key, ('mean_gap', widths[0])], 3)} / {_pct(wide.loc[key, ('mean_gap', w)], 3)}")
        rows.append(row)
    lines += [_table(pd.DataFrame(rows)), ""]
    docs = summary[(summary["input"] == "document") & (summary["width"] == widths[-1])]
    unsplit = docs[~docs["kind"].isin(["prose", "multilingual", "code"])]
    if not unsplit.empty:
        lines += [f"- whole unsplit documents: top-{widths[-1]} finds a higher score than top-1 in "
                  f"{unsplit['improved'].min() * 100:.0f}-{unsplit['improved'].max() * 100:.0f} % of "
                  f"documents, a lower one in up to {unsplit['worse'].max() * 100:.0f} %; the best "
                  f"score moves by {_pct(unsplit['mean_score_change'].min(), 2)} to "
                  f"{_pct(unsplit['mean_score_change'].max(), 2)} on average, the token count by "
                  f"{_pct(unsplit['mean_token_change'].min(), 2)} to "
                  f"{_pct(unsplit['mean_token_change'].max(), 2)}", ""]
    lines += objective_section(folder, metrics)
    return lines


def objective_section(folder: Path, metrics: pd.DataFrame) -> list[str]:
    path = folder / "tfidf_objective.json"
    if not path.exists():
        return []
    o = json.loads(path.read_text())
    if not o:
        return []
    enc = o["encodings"]

    def shown(e: dict[str, Any]) -> str:
        return " ".join(f"`{p!r}` {w}" for p, w in zip(e["pieces"], e["weights"]))

    lines = ["### What tf-idf maximises", "",
             f"ubpe's universal score of a part is sum over its *distinct* tokens t of "
             f"(1 + ln count_t) x w_t, and a document's is the sum over its parts. The weight "
             f"w_t is the idf of the pair **at the moment it was merged** during fitting, "
             f"ln((1 + D) / (1 + documents containing the pair)): the first merges join the most "
             f"widespread pairs and get weights near 0, late merges join rare fragments and get "
             f"high weights. In `{o['dataset']}` ({o['size']}, {o['n_merged']:,} merged tokens) the "
             f"first tenth of the merges has mean weight {_num(o['mean_weight_first_tenth'])}, the "
             f"last tenth {_num(o['mean_weight_last_tenth'])}; the lowest weights: "
             + ", ".join(f"`{p!r}` {w}" for p, w in o["lowest"]) + "; the highest: "
             + ", ".join(f"`{p!r}` {w}" for p, w in o["highest"]) + ".", "",
             f"So whole frequent words add almost nothing and rare fragments add much, and "
             f"because each distinct token counts once (plus a logarithm for repeats), cutting a "
             f"word into several distinct fragments raises the score. The sentence "
             f"`{o['example']}`:", "",
             f"- `tfidf`: {enc['tfidf']['tokens']} tokens, score {_num(enc['tfidf']['score'], 2)}: "
             + shown(enc["tfidf"]),
             f"- `fewest`: {enc['fewest']['tokens']} tokens, score {_num(enc['fewest']['score'], 2)}: "
             + shown(enc["fewest"]), ""]
    if not metrics.empty:
        rows = metrics[(metrics["dataset"] == o["dataset"]) & (metrics["encoder"].isin(["universal:tfidf", "universal:fewest"]))]
        if not rows.empty:
            table = rows.pivot_table(index=["size", "n_candidates"], columns="encoder",
                                     values="tokens_per_symbol", sort=False).reset_index()
            parts = [f"{r['size']} (n_cand. {r['n_candidates']}): tf-idf {_num(r.get('universal:tfidf', math.nan))}, "
                     f"fewest {_num(r.get('universal:fewest', math.nan))}" for _, r in table.iterrows()]
            lines += ["The score does not reward fewer tokens, which is why tf-idf's held-out "
                      f"length hardly improves with the vocabulary in `{o['dataset']}` while the "
                      "fewest-tokens encoding on the same vocabulary does (tokens/symbol): "
                      + "; ".join(parts) + ".", ""]
    return lines
