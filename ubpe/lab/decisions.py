"""A decision in every report: per setting the best encoder and the ones not separable from it,
effects against a declared reference, rank intervals, and per kind a meta-analysis.

Computed from the per-document table (``documents.csv``) and the per-cell one (``metrics.csv``),
so a results folder re-derives them. Per setting (dataset x vocabulary size x n_candidates):

- each encoder's held-out token counts are summed per independent unit (seeded encoders: the
  per-document mean over seeds first), ``L[u, e] = ln T[u, e]``; units where every encoder has
  0 tokens are left out;
- **effect** against the reference ``r`` (``[statistics] reference``): the mean over units of
  ``L[u, e] - L[u, r]`` (a geometric-mean ratio of token counts; below 0: ``e`` shorter) with
  its 95 % percentile bootstrap interval over units (`ubpe.lab.stats.bootstrap_mean`);
- **ranks** by the mean of ``L`` (1 = shortest) with 95 % bootstrap intervals
  (`ubpe.lab.stats.bootstrap_ranks`), among the *fitted* vocabularies only: they have equal
  sizes; a vocabulary from a file has its own size and is listed with its effect, not ranked;
- **best** is rank 1; an encoder is **not separable** from it when the bootstrap interval of
  its mean log ratio to the best reaches 0, at the Bonferroni level 1 - 0.05 / (m - 1) over the
  m - 1 encoders compared with the best (a simultaneous statement about the whole tied set);
- with fewer than `ubpe.lab.stats.MIN_UNITS` units no best or tie is claimed.

Every draw is shared by all encoders of a setting (paired), with a fixed seed: the same folder
gives the same numbers. Across the datasets of one kind, `meta_analysis` pools each encoder's
effect per setting (vocabulary size, n_candidates) with DerSimonian-Laird random effects.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from ubpe.lab import stats as S

DECISION_BEST = "best"
DECISION_TIED = "not separable from the best"
DECISION_LONGER = "longer than the best"
DECISION_FILE = "own size (file vocabulary): not ranked"
DECISION_FEW = "too few units to decide"
SETTING = ["dataset", "kind", "size", "n_candidates"]


def unit_tokens(documents: pd.DataFrame) -> pd.DataFrame:
    """Token counts per (setting, encoder, unit): seeds averaged per document, then summed."""
    keys = ["dataset", "size", "n_candidates", "encoder", "doc", "unit"]
    per_doc = documents.groupby(keys, sort=False, dropna=False)["n_tokens"].mean().reset_index()
    return per_doc.groupby(keys[:4] + ["unit"], sort=False)["n_tokens"].sum().reset_index()


def decide(documents: pd.DataFrame, metrics: pd.DataFrame, reference: str | None,
           files: set[str] = frozenset(), *, resamples: int = S.BOOTSTRAP_RESAMPLES,
           seed: int = S.BOOTSTRAP_SEED) -> pd.DataFrame:
    """One row per (setting, encoder): effect vs ``reference``, rank interval, decision.

    ``files``: the variants that are vocabularies from files (not ranked with the fitted ones).
    """
    if documents.empty or metrics.empty:
        return pd.DataFrame()
    info = metrics.drop_duplicates(["dataset", "size", "n_candidates", "encoder"]).set_index(
        ["dataset", "size", "n_candidates", "encoder"])
    rows = []
    tokens = unit_tokens(documents)
    for (dataset, size, n_candidates), group in tokens.groupby(["dataset", "size", "n_candidates"], sort=False):
        table = group.pivot_table(index="unit", columns="encoder", values="n_tokens", sort=True)
        table = table[list(dict.fromkeys(group["encoder"]))].dropna()
        table = table[(table > 0).any(axis=1)]
        if table.empty or (table <= 0).to_numpy().any():
            continue  # an encoder with no token on a unit another encodes: no log ratio
        logs = np.log(table.to_numpy(dtype=np.float64))
        encoders = list(table.columns)
        n_units = logs.shape[0]
        draws = S.bootstrap_draws(n_units, resamples, seed)
        fitted = [i for i, e in enumerate(encoders) if e.split(":")[0] not in files]
        ref = encoders.index(reference) if reference in encoders else None
        ranks = low = high = None
        best = None
        if fitted:
            ranks, low, high = S.bootstrap_ranks(logs[:, fitted], draws=draws)
            best = fitted[int(np.argmin(logs[:, fitted].mean(axis=0)))]
        level = 1 - (1 - S.CONFIDENCE) / max(1, len(fitted) - 1)
        kind = info.loc[(dataset, size, n_candidates, encoders[0]), "kind"]
        for i, encoder in enumerate(encoders):
            row: dict[str, Any] = {"dataset": dataset, "kind": kind, "size": size, "n_candidates": n_candidates,
                                   "encoder": encoder, "reference": reference, "n_units": n_units,
                                   "vocab_size": int(info.loc[(dataset, size, n_candidates, encoder), "vocab_size"]),
                                   "mean_unit_tokens": float(table.iloc[:, i].mean())}
            if ref is not None:
                d = logs[:, i] - logs[:, ref]
                mean, lo, hi = S.bootstrap_mean(d, draws=draws)
                row.update(log_ratio=mean, ci_low=lo, ci_high=hi,
                           log_ratio_var=float(d.var(ddof=1) / n_units) if n_units > 1 else math.nan)
            else:
                row.update(log_ratio=math.nan, ci_low=math.nan, ci_high=math.nan, log_ratio_var=math.nan)
            if i in fitted:
                j = fitted.index(i)
                d_best = logs[:, i] - logs[:, best]
                mean, lo, hi = S.bootstrap_mean(d_best, draws=draws, confidence=level)
                row.update(rank=int(ranks[j]), rank_low=float(low[j]), rank_high=float(high[j]),
                           vs_best=mean, vs_best_low=lo, vs_best_high=hi, vs_best_level=level,
                           decision=(DECISION_FEW if n_units < S.MIN_UNITS else DECISION_BEST if i == best
                                     else DECISION_TIED if lo <= 0 else DECISION_LONGER))
            else:
                row.update(rank=math.nan, rank_low=math.nan, rank_high=math.nan, vs_best=math.nan,
                           vs_best_low=math.nan, vs_best_high=math.nan, vs_best_level=math.nan,
                           decision=DECISION_FILE)
            rows.append(row)
    out = pd.DataFrame(rows)
    if not out.empty:
        out["method"] = S.BOOTSTRAP_METHOD
        out["resamples"], out["seed"] = resamples, seed
    return out


def meta_analysis(decisions: pd.DataFrame) -> pd.DataFrame:
    """Per kind, setting (size, n_candidates) and encoder with >= 2 datasets of that kind:
    the DerSimonian-Laird pooled log ratio against the reference, its interval and tau^2.

    Datasets with fewer than `ubpe.lab.stats.MIN_UNITS` units, vocabularies from files and
    the reference itself are left out.
    """
    if decisions.empty or decisions["log_ratio"].isna().all():
        return pd.DataFrame()
    usable = decisions[(decisions["n_units"] >= S.MIN_UNITS) & (decisions["decision"] != DECISION_FILE)
                       & (decisions["encoder"] != decisions["reference"]) & (decisions["log_ratio_var"] > 0)]
    rows = []
    for (kind, size, n_candidates, encoder), group in usable.groupby(
            ["kind", "size", "n_candidates", "encoder"], sort=False):
        if len(group) < 2:
            continue
        pooled = S.dersimonian_laird(group["log_ratio"].to_numpy(), group["log_ratio_var"].to_numpy())
        rows.append({"kind": kind, "size": size, "n_candidates": n_candidates, "encoder": encoder,
                     "reference": group["reference"].iloc[0], "datasets": ", ".join(group["dataset"]),
                     **pooled, "method": S.META_METHOD})
    return pd.DataFrame(rows)
