"""``results/FINDINGS.md``: what holds across kinds, only for text, and what the data cannot
decide - every sentence computed from a table of ``results/default`` (and of ``results/beyond_text``,
``results/downstream`` and ``results/midi`` where they are published) and citing it (issue 27).

    python -m experiments findings            # reads results/default, writes results/FINDINGS.md

The rules (`ubpe.lab.validity`): a dataset with fewer than ten held-out units does not
count; settings that repeat a smaller size do not count; a dataset counts once, however
many settings it has, and *agrees* with a verdict when every one of its settings has it
(*mixed*: its settings - sizes, n_candidates - disagree).

- **Length** (``comparisons.csv``, per question): a verdict *holds across kinds* when every
  counted dataset of both groups (text, non-text) has it in every setting; *only for text*
  when every text dataset has it and not every non-text one; otherwise the data do not
  decide it, and the counts say why.
- **Bits** (``downstream.csv``): per group, how many settings the proxy may be ranked in (no
  tokenisation above the symbol-level or uniform baseline); where none, the proxy cannot
  decide; where some, the encoder with the best mean rank and the sign of the length-bits
  correlation per dataset.
- **Sensitivity** (``downstream_sensitivity.csv``): in how many ranked settings the best
  encoder stays the same at every order.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import pandas as pd

from experiments import RESULTS_DIR as RESULTS
from ubpe.lab import validity
from ubpe.lab.answers import EXPLORATORY_SUFFIX

#: Verdicts a dataset can agree on (tested ones; "by construction" is not a finding).
TESTED = ("a shorter", "a longer", "no significant difference")
BY_CONSTRUCTION = "a never longer (by construction)"


def _read(folder: Path, name: str) -> pd.DataFrame:
    path = folder / f"{name}.csv"
    if not path.exists() or path.stat().st_size <= 1:
        return pd.DataFrame()
    return pd.read_csv(path, dtype={"size": str}, keep_default_na=True)


def dataset_verdicts(comparisons: pd.DataFrame, saturated: dict | None = None) -> pd.DataFrame:
    """Per question and counted dataset: its group and its verdict if every setting shares
    it ("mixed" otherwise).

    >>> c = pd.DataFrame({"question": 0, "dataset": ["a", "a", "b"], "kind": ["prose", "prose", "dna"],
    ...                   "size": "+1", "n_candidates": [1, 50, 1], "n_units": 20,
    ...                   "verdict": ["a shorter", "a shorter", "a longer"]})
    >>> dataset_verdicts(c)[["dataset", "group", "verdict"]].values.tolist()
    [['a', 'text', 'a shorter'], ['b', 'non-text', 'a longer']]
    """
    saturated = saturated or {}
    keep = ~comparisons["n_units"].map(validity.too_few_units)
    keep &= pd.Series([(d, int(n), str(s)) not in saturated for d, n, s in
                       zip(comparisons["dataset"], comparisons["n_candidates"], comparisons["size"])],
                      index=comparisons.index, dtype=bool)
    rows = []
    for (question, dataset), part in comparisons[keep].groupby(["question", "dataset"], sort=False):
        verdicts = {str(v).replace(EXPLORATORY_SUFFIX, "") for v in part["verdict"]}
        rows.append({"question": int(question), "dataset": dataset,
                     "group": validity.group(part["kind"].iloc[0]), "settings": len(part),
                     "verdict": verdicts.pop() if len(verdicts) == 1 else "mixed"})
    return pd.DataFrame(rows)


def classify(verdicts: pd.DataFrame) -> tuple[str, str]:
    """``(class, verdict)`` of one question's dataset verdicts: "across kinds", "only for
    text" or "undecided".

    >>> v = pd.DataFrame({"group": ["text", "text", "non-text"], "verdict": ["a shorter"] * 2 + ["mixed"]})
    >>> classify(v)
    ('only for text', 'a shorter')
    """
    text = set(verdicts.loc[verdicts["group"] == "text", "verdict"])
    other = set(verdicts.loc[verdicts["group"] == "non-text", "verdict"])
    if len(text) == 1 and next(iter(text)) in TESTED:
        verdict = next(iter(text))
        if other == {verdict}:
            return "across kinds", verdict
        return "only for text", verdict
    return "undecided", ""


def _counts(verdicts: pd.DataFrame, group: str) -> str:
    part = verdicts[verdicts["group"] == group]
    if part.empty:
        return f"no {group} dataset counted"
    counts = part["verdict"].value_counts()
    return f"{group}: " + ", ".join(f"{v} {n}/{len(part)}" for v, n in counts.items())


def length_findings(comparisons: pd.DataFrame, questions: list[dict], saturated: dict) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {"across kinds": [], "only for text": [], "undecided": [],
                                   "by construction": []}
    verdicts = dataset_verdicts(comparisons, saturated)
    for index, question in enumerate(questions):
        mine = verdicts[verdicts["question"] == index] if not verdicts.empty else verdicts
        if mine.empty:
            continue
        label = f"`{question['a']}` vs `{question['b']}`"
        if set(mine["verdict"]) <= {BY_CONSTRUCTION}:
            found["by construction"].append(label)
            continue
        cls, verdict = classify(mine)
        if question.get("family", "primary") != "primary":
            label += " (exploratory: not one of the config's primary contrasts)"
        cite = f"(`results/default/comparisons.csv`, question {index + 1}; README *Answers per dataset kind*)"
        detail = f"{_counts(mine, 'text')}; {_counts(mine, 'non-text')}"
        if cls == "undecided":
            found[cls].append(f"- {label}: no verdict shared by every text dataset - {detail} {cite}.")
        else:
            found[cls].append(f"- {label}: **{verdict}** in every setting of every "
                              f"{'counted' if cls == 'across kinds' else 'text'} dataset - {detail} {cite}.")
    return found


def bits_findings(summary: pd.DataFrame, sensitivity: pd.DataFrame) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {"across kinds": [], "only for text": [], "undecided": []}
    if summary.empty or "ranked" not in summary:
        return found
    summary = summary.assign(ranked=summary["ranked"].fillna(""), group=summary["kind"].map(validity.group))
    cite = "(`results/default/downstream.csv`; README *Downstream*)"
    settings = summary.drop_duplicates(["dataset", "size", "n_candidates"])
    for group in validity.GROUPS:
        mine = settings[(settings["group"] == group) & ~settings["n_units"].map(validity.too_few_units)]
        ranked = mine[mine["ranked"] == ""]
        below = summary[(summary["group"] == group) & summary["below_baseline"].astype(bool)
                        & ~summary["n_units"].map(validity.too_few_units)]
        counts = (f"{len(ranked)} of {len(mine)} {group} settings ranked; in {below['dataset'].nunique()} "
                  f"{group} datasets a tokenisation is above the symbol-level or uniform baseline")
        if ranked.empty:
            found["undecided"].append(f"- Which tokenisation models {group} data best: the bits proxy cannot "
                                      f"say - {counts} {cite}.")
            continue
        cells = summary[(summary["group"] == group) & (summary["ranked"] == "")]
        per_dataset = cells.groupby(["dataset", "encoder"])["rank_bits"].mean().groupby("encoder").mean()
        best = per_dataset.idxmin()
        found["only for text" if group == "text" else "undecided"].append(
            f"- Bits proxy on {group}: {counts}; best mean rank by bits `{best}` "
            f"({per_dataset.min():.2f}, datasets counted once) {cite}.")
        rho = _length_bits_signs(cells)
        if rho:
            found["only for text" if group == "text" else "undecided"].append(
                f"- Length against bits on {group}: {rho} (`results/default/downstream.csv`; README *Ranking*).")
    if not sensitivity.empty and "ranked" in sensitivity:
        sens = sensitivity[(sensitivity["train_fraction"] == 1.0)].assign(
            ranked=lambda f: f["ranked"].fillna(""), group=lambda f: f["kind"].map(validity.group))
        for group in validity.GROUPS:
            mine = sens[(sens["group"] == group) & ~sens["n_units"].map(validity.too_few_units)]
            if mine.empty:
                continue
            changed = total = 0
            unranked: dict[int, int] = {}
            for _, part in mine.groupby(["dataset", "size", "n_candidates"]):
                total += 1
                bests = set()
                for order, g in part.groupby("order"):
                    if (g["ranked"] != "").any():
                        unranked[int(order)] = unranked.get(int(order), 0) + 1
                    else:
                        bests.add(g.loc[g["bits_per_symbol"].idxmin(), "encoder"])
                changed += len(bests) > 1
            orders = sorted(mine["order"].unique())
            found["undecided"].append(
                f"- Order {orders[0]}-{orders[-1]} on {group}: the best encoder by bits differs between the "
                f"orders a setting is ranked at in {changed} of {total} settings; not ranked (a tokenisation "
                "above the symbol-level model of that order) at "
                + ", ".join(f"order {o} in {unranked.get(int(o), 0)}" for o in orders)
                + f" of {total} (`results/default/downstream_sensitivity.csv`; README *Sensitivity*).")
    return found


def _length_bits_signs(cells: pd.DataFrame) -> str:
    from scipy.stats import spearmanr

    per = {}
    for (dataset, _, _), g in cells.groupby(["dataset", "size", "n_candidates"]):
        if len(g) >= 3:
            per.setdefault(dataset, []).append(float(spearmanr(g["tokens_per_symbol"], g["bits_per_symbol"]).statistic))
    if not per:
        return ""
    medians = {d: float(pd.Series(v).median()) for d, v in per.items()}
    positive = sum(v > 0 for v in medians.values())
    return (f"Spearman correlation of tokens/symbol and bits/symbol (median per dataset) "
            + ", ".join(f"{d} {v:+.2f}" for d, v in sorted(medians.items()))
            + f"; positive (shorter tokenisations go with fewer n-gram bits, a correlation, not an effect "
              f"of length) in {positive} of {len(medians)} datasets")


def _powerless(comparisons: pd.DataFrame, run: dict) -> list[str]:
    """Counted datasets with no significant verdict at all whose exact test cannot pass Holm's
    first step: their "no significant difference" is a matter of units, not of evidence."""
    alpha = run["config"].get("stats", {}).get("alpha", 0.05)
    n_tests = int(comparisons["p_value"].notna().sum()) if "p_value" in comparisons else 0
    lines = []
    for dataset, part in comparisons.groupby("dataset", sort=False):
        units = int(part["n_units"].max())
        tested = part[part["verdict"].isin(TESTED)]
        if (validity.too_few_units(units) or tested.empty
                or set(tested["verdict"]) != {"no significant difference"} or not n_tests):
            continue
        smallest = 2.0 / 2 ** units
        if smallest > alpha / n_tests:
            lines.append(f"- {dataset}: no significant difference in any of its {len(tested)} tests; with "
                         f"{units} units the exact test's smallest p is {smallest:.1e}, above Holm's first "
                         f"threshold {alpha} / {n_tests} = {alpha / n_tests:.1e}, so this says little about "
                         "the effect (`results/default/comparisons.csv`; README *Settings*).")
    return lines


def _pct(log_ratio: float) -> str:
    """A mean log ratio of token counts as a percentage change (``-0.105`` -> ``-10.0 %``)."""
    return f"{math.expm1(log_ratio) * 100:+.1f} %"


def decision_findings(decisions: pd.DataFrame) -> list[str]:
    """Per counted dataset (`ubpe.lab.decisions`, ``decisions.csv``): the encoder that is best in
    most of its settings, in how many, its effect against the reference with the intervals'
    span, and the encoders not separable from the best in some setting.

    >>> d = pd.DataFrame({"dataset": "a", "kind": "dna", "size": ["+1", "+1", "+2", "+2"], "n_candidates": 1,
    ...                   "encoder": ["x", "y"] * 2, "reference": "y", "n_units": 20,
    ...                   "log_ratio": [-0.1, 0.0, -0.2, 0.0], "ci_low": [-0.15, 0.0, -0.3, 0.0],
    ...                   "ci_high": [-0.05, 0.0, -0.1, 0.0], "decision": ["best", "longer than the best"] * 2})
    >>> print(decision_findings(d)[0])  # doctest: +NORMALIZE_WHITESPACE
    - a (dna, 20 units): best `x` in 2 of 2 settings, -18.1 % to -9.5 % tokens against `y` (95 % intervals
      within [-25.9 %, -4.9 %]); no other encoder is tied with the best in any setting.
    """
    from ubpe.lab.decisions import DECISION_BEST, DECISION_FILE, DECISION_TIED

    lines: list[str] = []
    if decisions.empty:
        return lines
    fitted = decisions[decisions["decision"] != DECISION_FILE]
    for dataset, part in fitted.groupby("dataset", sort=False):
        units = int(part["n_units"].max())
        if validity.too_few_units(units):
            continue
        settings = len(part.drop_duplicates(["size", "n_candidates"]))
        best = part[part["decision"] == DECISION_BEST]
        if best.empty:
            continue
        counts = best["encoder"].value_counts()
        top = str(counts.index[0])
        mine = best[best["encoder"] == top]
        reference = str(part["reference"].iloc[0])
        if top == reference:
            effect = "the reference itself"
        else:
            effect = (f"{_pct(mine['log_ratio'].min())} to {_pct(mine['log_ratio'].max())} tokens against "
                      f"`{reference}` (95 % intervals within [{_pct(mine['ci_low'].min())}, "
                      f"{_pct(mine['ci_high'].max())}])")
        others = ", ".join(f"`{e}` in {n}" for e, n in counts.iloc[1:].items())
        tied = part[part["decision"] == DECISION_TIED]["encoder"].value_counts()
        tie_text = ("no other encoder is tied with the best in any setting" if tied.empty else
                    "not separable from the best: " + ", ".join(f"`{e}` in {n}" for e, n in tied.items()))
        lines.append(f"- {dataset} ({part['kind'].iloc[0]}, {units} units): best `{top}` in {counts[top]} of "
                     f"{settings} settings, {effect}{'; best elsewhere: ' + others if others else ''}; "
                     f"{tie_text}.")
    return lines


def counted_meta(decisions: pd.DataFrame) -> pd.DataFrame:
    """``meta.csv``'s pooling (`ubpe.lab.decisions.meta_analysis`, DerSimonian-Laird) over the
    datasets these findings count: those with at least ``validity.MIN_UNITS`` held-out units (the
    report's ``meta.csv`` pools from ``ubpe.lab.stats.MIN_UNITS``, fewer)."""
    from ubpe.lab.decisions import meta_analysis

    if decisions.empty:
        return pd.DataFrame()
    return meta_analysis(decisions[~decisions["n_units"].map(validity.too_few_units)])


def meta_findings(meta: pd.DataFrame) -> list[str]:
    """Per kind with >= 2 datasets (:func:`counted_meta`, DerSimonian-Laird): per setting the
    encoder with the lowest pooled log ratio against the reference, with its interval and tau^2."""
    lines: list[str] = []
    if meta.empty:
        return lines
    for kind, part in meta.groupby("kind", sort=False):
        items = []
        for (size, n_candidates), setting in part.groupby(["size", "n_candidates"], sort=False):
            row = setting.loc[setting["estimate"].idxmin()]
            items.append(f"{size}/{n_candidates}: `{row['encoder']}` {_pct(row['estimate'])} "
                         f"[{_pct(row['low'])}, {_pct(row['high'])}], tau2 {row['tau2']:.3g}")
        first = part.iloc[0]
        lines.append(f"- {kind} ({int(first['k'])} datasets: {first['datasets']}), the shortest against "
                     f"`{first['reference']}` per setting (size/n_candidates), random effects: " + "; ".join(items)
                     + " (pooled from `decisions.csv`).")
    return lines


def _left_out(decisions: pd.DataFrame) -> str:
    """The datasets with too few units to count, with their units (``"none"``)."""
    if decisions.empty:
        return "none"
    units = decisions.groupby("dataset", sort=False)["n_units"].max()
    few = units[units.map(validity.too_few_units)]
    return ", ".join(f"{name} ({int(n)} units)" for name, n in few.items()) or "none"


def downstream_findings(folder: Path) -> list[str]:
    """From the transformer study (``results/downstream``): per kind, the rank correlation of
    length with transformer bits (a correlation over tokenisations, centred per dataset); per
    dataset the best ranked arm or why none is ranked; each sampled training arm against its
    plain arm."""
    table, corr = _read(folder, "transformer"), _read(folder, "transformer_correlations")
    if table.empty:
        return []
    lines = []
    for row in corr[corr["predictor"].str.startswith("length")].itertuples():
        if pd.isna(row.spearman):
            lines.append(f"- {row.kind}: too few points for a correlation ({row.n_points}).")
            continue
        sign = ("shorter tokenisations go with fewer bits" if row.low > 0 else
                "shorter tokenisations go with more bits" if row.high < 0 else "no separable association")
        lines.append(f"- {row.kind}: Spearman correlation of tokens per symbol with transformer bits per symbol "
                     f"{row.spearman:+.2f} [{row.low:+.2f}, {row.high:+.2f}] over {row.n_points} arms of "
                     f"{row.n_datasets} datasets (centred per dataset): {sign} - a correlation across "
                     "tokenisations, not an effect of length.")
    table = table.assign(ranked=table["ranked"].fillna(""))
    for dataset, part in table.groupby("dataset", sort=False):
        ranked = part[part["ranked"] == ""]
        symbols = part[part["arm"] == "symbols"].iloc[0]
        if ranked.empty:
            why = part.loc[part["train_encoder"] != "symbols", "ranked"].iloc[0]
            lines.append(f"- {dataset} ({part['kind'].iloc[0]}, {int(part['n_units'].iloc[0])} units): no "
                         f"tokenisation ranked ({why}); symbol model {symbols['bits_per_symbol']:.3f} bits/symbol.")
            continue
        best = ranked.loc[ranked["bits_per_symbol"].idxmin()]
        lines.append(f"- {dataset} ({part['kind'].iloc[0]}, {int(part['n_units'].iloc[0])} units): best ranked "
                     f"`{best['arm']}` {best['bits_per_symbol']:.3f} bits/symbol [{best['bits_low']:.3f}, "
                     f"{best['bits_high']:.3f}], against the context-matched symbol model "
                     f"{best['vs_matched']:+.3f} [{best['vs_matched_low']:+.3f}, {best['vs_matched_high']:+.3f}] "
                     f"({len(ranked)} of {int((part['train_encoder'] != 'symbols').sum())} token arms ranked).")
    if "plain_arm" in table:
        sampled = table[table["sampled_training"].astype(bool) & table["plain_arm"].fillna("").ne("")]
        for row in sampled.itertuples():
            word = ("helped" if row.vs_plain_high < 0 else "hurt" if row.vs_plain_low > 0 else
                    "made no separable difference")
            lines.append(f"- {row.dataset}: training with `{row.arm.split('>')[0]}` (tested with `{row.plain_arm}`) "
                         f"{word}: {row.vs_plain:+.4f} bits/symbol [{row.vs_plain_low:+.4f}, "
                         f"{row.vs_plain_high:+.4f}] against training on `{row.plain_arm}`.")
    return [line.rstrip(".") + " (`results/downstream/transformer.csv`)." for line in lines]


def midi_findings(folder: Path) -> list[str]:
    """``results/midi/summary.csv``, one line per comparison (ubpe's tokenisation x MidiTok's at
    equal merges or equal size): the verdict at each number of merges, and the span of the
    token ratios (ubpe / MidiTok) with their 95 % intervals over pieces clustered by collection."""
    table = _read(folder, "summary")
    if table.empty or "verdict" not in table:
        return []
    lines = []
    for (mine, at), part in table.groupby(["ubpe", "at"], sort=False):
        verdicts = "; ".join(f"{verdict} at {', '.join(str(m) for m in group['merges'])} merges"
                             for verdict, group in part.groupby("verdict", sort=False))
        lines.append(f"- ubpe `{mine}` vs MidiTok's BPE at {at} ({part['pieces'].iloc[0]} held-out pieces, "
                     f"{part['collections'].iloc[0]} collections): {verdicts}; token ratio "
                     f"{part['ratio'].min():.3f} to {part['ratio'].max():.3f} (95 % intervals within "
                     f"[{part['95% low'].min():.3f}, {part['95% high'].max():.3f}]) (`results/midi/summary.csv`).")
    return lines


def findings(folder: Path) -> str:
    from ubpe.lab.validity import saturated_sizes

    run = json.loads((folder / "run.json").read_text())
    comparisons, metrics = _read(folder, "comparisons"), _read(folder, "metrics")
    saturated = saturated_sizes(metrics) if not metrics.empty else {}
    parts = [length_findings(comparisons, run["config"]["comparisons"], saturated),
             bits_findings(_read(folder, "downstream"), _read(folder, "downstream_sensitivity"))]
    few = sorted(set(comparisons.loc[comparisons["n_units"].map(validity.too_few_units), "dataset"]))
    lines = ["# Findings", "",
             f"Generated by `python -m experiments findings` from `results/{folder.name}` (commit "
             f"`{run['git']['commit'][:10]}`); each line cites the table it is computed from. Rules: "
             f"a dataset counts once however many settings it has; datasets with fewer than "
             f"{validity.MIN_UNITS} held-out units ({', '.join(few) or 'none'}) and sizes that repeat "
             "a smaller one do not count; text (prose, multilingual, code) and non-text are never "
             "pooled. Token lengths are compared with per-unit Wilcoxon tests, Holm over the config's primary "
             "contrasts (the others are labelled exploratory); "
             "a dataset is *mixed* when its settings (sizes, n_candidates) disagree.", ""]
    decided = [("Decisions per dataset (best encoder, tied set, effect with 95 % intervals)",
                "From `results/default/decisions.csv` (percentile bootstrap over units; an encoder is "
                "tied with the best when the Bonferroni-level interval of its log ratio to the best "
                "reaches 0; fitted vocabularies at equal size only).",
                decision_findings(_read(folder, "decisions"))),
               ("Across the datasets of a kind (random effects)",
                "From `results/default/decisions.csv`: `meta.csv`'s DerSimonian-Laird pooling over the "
                f"datasets counted here ({validity.MIN_UNITS} or more units).",
                meta_findings(counted_meta(_read(folder, "decisions"))))]
    beyond = folder.parent / "beyond_text"
    if (beyond / "run.json").exists():
        commit = json.loads((beyond / "run.json").read_text())["git"]["commit"][:10]
        beyond_decisions = _read(beyond, "decisions")
        decided.append((
            "Beyond text: every non-text dataset",
            f"From `results/beyond_text/` (commit `{commit}`; `python -m experiments beyond_text`): every "
            "non-text dataset, the random-effects pooling per kind over the datasets counted here, then "
            "the decision per dataset (both from `decisions.csv`), on the same rules as above; left out "
            f"for too few units: {_left_out(beyond_decisions)}.",
            meta_findings(counted_meta(beyond_decisions)) + decision_findings(beyond_decisions)))
    later = [("Does shorter mean a better model? (small transformers)",
              "From `results/downstream/` (equal parameters and training symbols, 3 seeds; an arm is "
              "ranked only where it beats both symbol-level baselines).",
              downstream_findings(folder.parent / "downstream")),
             ("MIDI: ubpe's BPE against MidiTok's", "From `results/midi/` (piece as unit, collection as "
              "cluster).", midi_findings(folder.parent / "midi"))]
    for title, source, items in decided:
        if items:
            lines += [f"## {title}", "", source, "", *items, ""]
    titles = {"across kinds": "What holds across kinds", "only for text": "What holds only for text",
              "undecided": "What the data cannot decide"}
    for key, title in titles.items():
        items = [line for part in parts for line in part[key]]
        lines += [f"## {title}", "", *(items or ["- nothing"]), ""]
    lines[-1:-1] = _powerless(comparisons, run)
    for title, source, items in later:
        if items:
            lines += [f"## {title}", "", source, "", *items, ""]
    construction = parts[0]["by construction"]
    if construction:
        lines += [f"Not findings: {', '.join(construction)} hold by construction (the fewest-tokens "
                  "encoder is never longer on its own vocabulary).", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments findings", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--folder", type=Path, default=RESULTS / "default", help="the results folder read")
    parser.add_argument("--out", type=Path, default=RESULTS / "FINDINGS.md", help="the file written")
    args = parser.parse_args(argv)
    args.out.write_text(findings(args.folder), encoding="utf-8")
    print(f"wrote {args.out}")
    return 0
