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

from ubpe.lab.formatting import _kind_key, _num, _p, _pct, _ratio_pct, _table

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
             "is better: the model predicts the text better). Ids the training tokenisation never "
             "produced are not mapped to an unknown token: the model's lowest order is "
             "interpolated with the uniform distribution over every id of the vocabulary and the "
             "end symbol, so such a token costs about log2 |V| bits plus its back-off weights - "
             "their share of held-out tokens is the *unseen* column range below.", ""]
    for n_candidates in sorted(summary["n_candidates"].unique()):
        part = _sorted(summary[summary["n_candidates"] == n_candidates])
        table = part.pivot_table(index=["kind", "dataset", "size"], columns="encoder",
                                 values="bits_per_symbol", sort=False)
        specs = [s for s in dict.fromkeys(part["encoder"]) if s in table.columns]
        table = table[specs].reset_index()
        best = table[specs].idxmin(axis=1)
        for spec in specs:
            table[spec] = [f"**{_num(v)}**" if spec == b else _num(v) for v, b in zip(table[spec], best)]
        table.columns = [f"`{c}`" if ":" in c else c for c in table.columns]
        lines += [f"### Bits per symbol, n_candidates = {n_candidates} (bold: lowest)", "",
                  _table(table), ""]
    lines += _ranks(summary)
    if not comparisons.empty:
        lines += _downstream_tests(comparisons, run)
    return lines


def _ranks(summary: pd.DataFrame) -> list[str]:
    """Mean rank of each encoder by bits and by length, and how the two orders agree."""
    ranks = (summary.groupby("encoder", sort=False)
             .agg(settings=("rank_bits", "size"), bits=("rank_bits", "mean"),
                  length=("rank_length", "mean"), bps=("bits_per_symbol", "median"),
                  tps=("tokens_per_symbol", "median"))
             .sort_values("bits").reset_index())
    best_bits = summary.loc[summary.groupby(["dataset", "size", "n_candidates"])["bits_per_symbol"].idxmin()]
    best_len = summary.loc[summary.groupby(["dataset", "size", "n_candidates"])["tokens_per_symbol"].idxmin()]
    wins = best_bits["encoder"].value_counts()
    table = pd.DataFrame({
        "encoder": "`" + ranks["encoder"] + "`", "settings": ranks["settings"],
        "mean rank by bits": ranks["bits"].map(lambda v: _num(v, 2)),
        "mean rank by length": ranks["length"].map(lambda v: _num(v, 2)),
        "lowest bits in": [f"{wins.get(e, 0)}" for e in ranks["encoder"]],
        "median bits/symbol": ranks["bps"].map(_num), "median tokens/symbol": ranks["tps"].map(_num)})
    correlations = []
    for _, group in summary.groupby(["dataset", "size", "n_candidates"]):
        if len(group) >= 3:
            from scipy.stats import spearmanr

            correlations.append(float(spearmanr(group["tokens_per_symbol"], group["bits_per_symbol"]).statistic))
    same = int((best_bits["encoder"].to_numpy() == best_len.set_index(["dataset", "size", "n_candidates"])
                .loc[best_bits.set_index(["dataset", "size", "n_candidates"]).index]["encoder"].to_numpy()).sum())
    unseen = summary["unseen_share"]
    return ["### Ranking: bits against length", "",
            "Rank 1 = lowest bits per symbol (or fewest tokens per symbol) among the encoders of "
            "one setting (dataset x size x n_candidates), averaged over the settings.", "",
            _table(table), "",
            f"- across the {len(correlations)} settings, the Spearman correlation between an "
            f"encoder's tokens/symbol and its bits/symbol has median "
            f"{_num(float(pd.Series(correlations).median()), 2)} (range "
            f"{_num(min(correlations), 2)} to {_num(max(correlations), 2)}); the encoder with "
            f"the fewest tokens also has the fewest bits in {same} of {len(best_bits)} settings",
            f"- unseen held-out tokens (ids absent from the training tokenisation): "
            f"{unseen.min() * 100:.2f} % to {unseen.max() * 100:.2f} % of held-out tokens (median "
            f"{unseen.median() * 100:.2f} %)", ""]


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
            "`downstream_comparisons.csv`. No comparison holds by construction here: the "
            "fewest-tokens encoder is not the fewest-bits one.", "",
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
