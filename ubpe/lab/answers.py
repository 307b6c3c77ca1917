"""The report's answers: the summary table and, per question, the verdicts per dataset kind.

Reads ``comparisons.csv`` as `ubpe.lab.tables.compare` wrote it (per-unit tests, Holm-
consistent intervals, labels for comparisons that hold by construction or have too few
units) and ``documents.csv`` for the largest per-document excesses.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from ubpe.lab import validity
from ubpe.lab.formatting import (
    _interval,
    _kind_key,
    _p,
    _pct,
    _ratio_pct,
    _size_key,
    _span,
    _table,
)

TESTED = ("a shorter", "a longer", "no significant difference")
EXPLORATORY_SUFFIX = " (exploratory)"


def _plain(verdict: str) -> str:
    """A verdict without its exploratory label."""
    return verdict.removesuffix(EXPLORATORY_SUFFIX)


def _claim(rows: pd.DataFrame, a: str, b: str) -> str:
    """One sentence per kind: how many settings favour a, b or neither, with the test."""
    n = len(rows)
    rows = rows.assign(verdict=rows["verdict"].map(_plain))
    parts = []
    for verdict, label in (("a shorter", f"`{a}` shorter"), ("a longer", f"`{a}` longer")):
        sub = rows[rows["verdict"] == verdict]
        if len(sub):
            parts.append(
                f"{label} in {len(sub)} of {n} settings (Holm-adjusted Wilcoxon signed-rank "
                f"over {_span(str(sub['n_units'].min()), str(sub['n_units'].max()))} units, "
                f"p ≤ {_p(sub['p_holm'].max())}; per-unit ratio (Hodges-Lehmann) "
                f"{_span(_ratio_pct(sub['hl_log_ratio'].min()), _ratio_pct(sub['hl_log_ratio'].max()))}; "
                f"corpus tokens {_span(_pct(sub['relative_diff'].min()), _pct(sub['relative_diff'].max()))})")
    ns = rows[rows["verdict"] == "no significant difference"]
    if len(ns):
        parts.append(f"no significant difference in {len(ns)} of {n} (Holm-adjusted p ≥ "
                     f"{_p(ns['p_holm'].min())})")
    for verdict in dict.fromkeys(rows["verdict"]):
        if verdict not in TESTED:
            parts.append(f"{verdict} in {int((rows['verdict'] == verdict).sum())} of {n}")
    return "; ".join(parts)


def _answer_word(rows: pd.DataFrame) -> str:
    """The short answer: one verdict shared by every setting of the kind, else "mixed"."""
    verdicts = set(rows["verdict"])
    if len(verdicts) == 1:
        return f"**{next(iter(verdicts))}**"
    return "**mixed**"


EXTREMES_SHOWN = 3


def _extremes(documents: pd.DataFrame, a: str, b: str) -> str:
    """The documents where ``a`` is longest relative to ``b`` (outliers the means hide)."""
    keys = ["dataset", "size", "n_candidates", "doc"]
    mean_a = documents[documents["encoder"] == a].groupby(keys, sort=False)["n_tokens"].mean()
    mean_b = documents[documents["encoder"] == b].groupby(keys, sort=False)["n_tokens"].mean()
    joined = pd.concat([mean_a.rename("a"), mean_b.rename("b")], axis=1, join="inner").reset_index()
    joined = joined[(joined["b"] > 0) & (joined["a"] > joined["b"])]
    if joined.empty:
        return f"`{a}` is never longer than `{b}` on a document."
    joined["ratio"] = joined["a"] / joined["b"]
    top = joined.sort_values(["ratio", "dataset", "size", "doc"], ascending=[False, True, True, True],
                             kind="stable").head(EXTREMES_SHOWN)
    items = [f"{r.dataset} {r.size} n_candidates={r.n_candidates} document {r.doc} "
             f"({r.a:,.0f} vs {r.b:,.0f} tokens)" for r in top.itertuples()]
    return f"Largest per-document excess of `a`: {'; '.join(items)}."


SHORT_VERDICTS = {"a shorter": "a shorter", "a longer": "a longer",
                  "no significant difference": "n.s.", "too few units to test": "too few units"}


def _summary(comparisons: pd.DataFrame, run: dict[str, Any]) -> list[str]:
    """One row per question, one column per kind: the verdict and how many settings share it."""
    if comparisons.empty:
        return []
    kinds = sorted(dict.fromkeys(comparisons["kind"]), key=_kind_key)
    few = comparisons["n_units"].map(validity.too_few_units)
    left_out = sorted(set(comparisons.loc[few, "dataset"]))
    counted = comparisons[~few]
    rows = []
    for index, question in enumerate(run["config"]["comparisons"]):
        sub = counted[counted["question"] == index]
        family = question.get("family", "primary")
        row = {"question (a vs b)": f"{index + 1}. `{question['a']}` vs `{question['b']}`",
               "family": family}
        for kind in kinds:
            cells = sub[sub["kind"] == kind]
            if cells.empty:
                row[kind] = ("few units ‡" if kind in set(comparisons.loc[few, "kind"])
                             else "not run" if sub.empty else "–")
                continue
            counts = cells["verdict"].map(_plain).value_counts()
            row[kind] = ", ".join(f"{SHORT_VERDICTS.get(v, v)} {counts[v]}/{len(cells)}"
                                  for v in counts.index) + f" ({cells['dataset'].nunique()} datasets)"
        rows.append(row)
    return ["## Summary", "",
            "Per question and dataset kind: in how many settings (datasets x vocabulary sizes x "
            "n_candidates) `a` gives significantly shorter or longer held-out encodings than `b` "
            "(Wilcoxon signed-rank over independent units; *primary* questions: declared before "
            "the run, one Holm family, adjusted p < "
            f"{run['config']['stats']['alpha']}; *exploratory* ones: each at its own level, "
            "hypotheses for a next run, not findings), no significant difference (n.s.), too few "
            "units to test, or an answer that holds by construction. The settings of one "
            "dataset share its held-out units: they are not independent replications (nested "
            "vocabulary sizes over the same documents), so each cell also says over how many "
            "datasets its settings are. Details, effect sizes and intervals under *Answers per "
            "dataset kind*."
            + (f" Not counted here (‡, fewer than {validity.MIN_UNITS} held-out units; their tests "
               f"are in the answers below): {', '.join(left_out)}." if left_out else ""), "",
            _table(pd.DataFrame(rows)), ""]


def _answers(comparisons: pd.DataFrame, documents: pd.DataFrame, run: dict[str, Any]) -> list[str]:
    lines = ["## Answers per dataset kind", "",
             "Each comparison is paired over the same held-out units (a unit's documents "
             "summed): the effect is the per-unit ratio A_u / B_u of token counts (below 0 %: "
             "`a` shorter). Per setting (dataset x vocabulary size x n_candidates): the number "
             "of units and documents, the Hodges-Lehmann estimate of the per-unit ratio with "
             "its interval (the Wilcoxon test inverted at the Holm-consistent level, so it "
             "excludes 0 % exactly when the verdict is significant; ±∞: too few units to bound "
             "it at that level), the corpus-level relative difference, the share of units where "
             "`a` is shorter / longer, the Wilcoxon signed-rank test (W, Holm-adjusted p) and "
             "the matched-pairs rank-biserial correlation r over units. Seeded encoders enter "
             "with their per-document mean over seeds. Between variants the vocabularies may "
             "differ in size as well as content (column `V a / b`); a comparison with one "
             "variant on both sides compares encoders on the same vocabulary.", ""]
    unavailable = set(run["unavailable_encoders"])
    for index, question in enumerate(run["config"]["comparisons"]):
        a, b = question["a"], question["b"]
        family = question.get("family", "primary")
        lines += [f"### {index + 1}. {question['question']}", "",
                  f"`a` = `{a}`, `b` = `{b}`; "
                  + ("**primary** (declared in the config before the run; Holm over the primary "
                     "tests only)." if family == "primary" else
                     "*exploratory* (p unadjusted, interval at the nominal level: a lead for a "
                     "next run, not a finding)."), ""]
        rows = comparisons[comparisons["question"] == index] if not comparisons.empty else comparisons
        if rows.empty:
            missing = [e for e in (a, b) if e in unavailable]
            why = (f"{' and '.join(f'`{e}`' for e in missing)} not registered in `ubpe.encoders` "
                   f"when this ran" if missing else "no cell of `a` or `b` could be computed "
                   "(see the failed cells above)")
            lines += [f"Not answered: {why}.", ""]
            continue
        rows = rows.assign(_k=rows["kind"].map(_kind_key), _s=rows["size"].map(_size_key))
        rows = rows.sort_values(["_k", "dataset", "_s", "n_candidates"], kind="stable")
        for kind, sub in rows.groupby("kind", sort=False):
            datasets = ", ".join(d + (" ‡" if validity.too_few_units(u) else "")
                                 for d, u in dict.fromkeys(zip(sub["dataset"], sub["n_units"])))
            lines.append(f"- **{kind}** ({datasets}): {_answer_word(sub)} - {_claim(sub, a, b)}.")
        lines.append("")
        table = pd.DataFrame({
            "kind": rows["kind"], "dataset": rows["dataset"], "size": rows["size"],
            "n_cand": rows["n_candidates"],
            "units / docs": [f"{u:,} / {n:,}" for u, n in zip(rows["n_units"], rows["n_docs"])],
            "V a / b": [f"{x:,} / {y:,}" + ("" if basis in ("equal", "") else f" ({basis})")
                        for x, y, basis in zip(rows["vocab_size_a"], rows["vocab_size_b"],
                                               rows.get("sizes", pd.Series([""] * len(rows), index=rows.index)).fillna(""))],
            "mean tokens a / b": [f"{x:,.1f} / {y:,.1f}" for x, y in zip(rows["mean_a"], rows["mean_b"])],
            "per-unit ratio [interval]": [f"{_ratio_pct(m)} {_interval(lo, hi)}" for m, lo, hi in
                                          zip(rows["hl_log_ratio"], rows["ci_low"], rows["ci_high"])],
            "corpus": rows["relative_diff"].map(_pct),
            "units a shorter / longer": [f"{s:.0%} / {l:.0%}" for s, l in
                                         zip(rows["units_a_shorter"], rows["units_a_longer"])],
            "W": rows["wilcoxon_w"].map(lambda v: "–" if math.isnan(v) else f"{v:,.1f}"),
            "p (Holm; exploratory: raw)": rows["p_holm"].map(_p),
            "r": rows["rank_biserial"].map(lambda v: f"{v:+.2f}"),
            "verdict": rows["verdict"],
        })
        lines += [_table(table), "", _extremes(documents, a, b), ""]
    return lines


def _decisions(decisions: pd.DataFrame, meta: pd.DataFrame) -> list[str]:
    """Per setting the best encoder, the ones not separable from it and each effect against
    the reference (`ubpe.lab.decisions`); per kind the random-effects pooled effects."""
    if decisions.empty:
        return []
    from ubpe.lab import decisions as D

    reference = decisions["reference"].dropna().iloc[0] if decisions["reference"].notna().any() else None
    lines = ["## Decision per dataset", "",
             "Per setting (dataset x vocabulary size x n_candidates), among the fitted "
             "vocabularies (equal sizes): the **best** encoder (fewest held-out tokens, mean "
             "over units of ln tokens), the encoders **not separable** from it (the bootstrap "
             "interval of their mean per-unit log ratio to the best reaches 0, Bonferroni over "
             "the encoders compared with the best), each encoder's rank with its 95 % bootstrap "
             "interval, and its effect against the reference "
             + (f"`{reference}`" if reference else "(none declared)")
             + " with a 95 % percentile bootstrap interval over units (below 0 %: shorter). "
             "Vocabularies from files are at their own size: listed with their effect, never "
             f"ranked. With fewer than {validity.MIN_UNITS} units no best is claimed.", ""]
    rows = []
    for (dataset, size, n_candidates), group in decisions.groupby(["dataset", "size", "n_candidates"], sort=False):
        best = group[group["decision"] == D.DECISION_BEST]
        tied = group[group["decision"] == D.DECISION_TIED]
        few = (group["decision"] == D.DECISION_FEW).any()
        files = group[group["decision"] == D.DECISION_FILE]

        def effect(r) -> str:
            return "–" if math.isnan(r.log_ratio) else f"{_ratio_pct(r.log_ratio)} {_interval(r.ci_low, r.ci_high)}"

        rows.append({
            "dataset": dataset, "kind": group["kind"].iloc[0], "size": size, "n_cand": n_candidates,
            "units": int(group["n_units"].iloc[0]),
            "best [rank interval]": ("too few units" if few else "; ".join(
                f"`{r.encoder}` [{r.rank_low:.0f}–{r.rank_high:.0f}] {effect(r)}" for r in best.itertuples())),
            "not separable from the best": "–" if few or tied.empty else "; ".join(
                f"`{r.encoder}` {effect(r)}" for r in tied.itertuples()),
            "file vocabularies (own size)": "–" if files.empty else "; ".join(
                f"`{r.encoder}` V={r.vocab_size:,} {effect(r)}" for r in files.itertuples()),
        })
    lines += [_table(pd.DataFrame(rows)), "",
              "Every encoder's effect, rank and rank interval: `decisions.csv`.", ""]
    if not meta.empty:
        lines += ["### Across the datasets of a kind (random effects)", "",
                  "Per kind and setting with at least two datasets: the DerSimonian-Laird pooled "
                  "log ratio against the reference (each dataset's mean per-unit log ratio, "
                  "weighted by 1 / (its sampling variance + tau²)), its 95 % interval, tau² (the "
                  "between-dataset variance) and I².", "",
                  _table(pd.DataFrame({
                      "kind": meta["kind"], "size": meta["size"], "n_cand": meta["n_candidates"],
                      "encoder": meta["encoder"].map(lambda e: f"`{e}`"), "vs": meta["reference"].map(lambda e: f"`{e}`"),
                      "datasets": meta["k"], "pooled ratio [95 %]": [
                          f"{_ratio_pct(m)} {_interval(lo, hi)}" for m, lo, hi in zip(meta["estimate"], meta["low"], meta["high"])],
                      "tau²": meta["tau2"].map(lambda v: f"{v:.2e}"), "I²": meta["i2"].map(lambda v: f"{v:.0%}"),
                  })), ""]
    return lines

