"""``results/FINDINGS.md``: what holds across kinds, only for text, and what the data cannot
decide - every sentence computed from a table of ``results/default`` and citing it (issue 27).

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
from pathlib import Path

import pandas as pd

from experiments import RESULTS_DIR as RESULTS
from ubpe.lab import validity

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
        verdicts = set(part["verdict"])
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
            + f"; shorter is better in {positive} of {len(medians)} datasets")


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
             "pooled. Token lengths are compared with per-unit Wilcoxon tests, Holm over the report; "
             "a dataset is *mixed* when its settings (sizes, n_candidates) disagree.", ""]
    titles = {"across kinds": "What holds across kinds", "only for text": "What holds only for text",
              "undecided": "What the data cannot decide"}
    for key, title in titles.items():
        items = [line for part in parts for line in part[key]]
        lines += [f"## {title}", "", *(items or ["- nothing"]), ""]
    lines[-1:-1] = _powerless(comparisons, run)
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
