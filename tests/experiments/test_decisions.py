"""The report's decision statistics (`ubpe.lab.stats`, `ubpe.lab.decisions`): bootstrap
intervals cover a known effect at about the nominal rate, DerSimonian-Laird agrees with a hand
computation (and statsmodels when installed), ranks and ties follow the data, vocabularies
from files are never ranked, and the primary contrasts are their own Holm family."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe.lab import decisions as D
from ubpe.lab import stats as S
from ubpe.lab.tables import EXPLORATORY, PRIMARY, with_verdicts


def test_the_bootstrap_interval_covers_a_known_effect_at_about_the_nominal_rate():
    """400 simulated experiments of 40 units with a true mean log ratio of -0.1: the 95 %
    percentile interval covers it in 90-98 % of them (binomial sd at 95 %: 1.1 points)."""
    rng = np.random.default_rng(7)
    true, n_units, trials = -0.1, 40, 400
    draws = S.bootstrap_draws(n_units, 1000, seed=1)
    covered = 0
    for _ in range(trials):
        d = rng.normal(true, 0.2, n_units)
        _, low, high = S.bootstrap_mean(d, draws=draws)
        covered += low <= true <= high
    assert 0.90 <= covered / trials <= 0.98


def _dl_by_hand(y, v):
    """DerSimonian & Laird (1986), written out: Q about the fixed-effect mean, tau^2 by moments."""
    w = [1 / x for x in v]
    fixed = sum(wi * yi for wi, yi in zip(w, y)) / sum(w)
    q = sum(wi * (yi - fixed) ** 2 for wi, yi in zip(w, y))
    c = sum(w) - sum(wi * wi for wi in w) / sum(w)
    tau2 = max(0.0, (q - (len(y) - 1)) / c)
    w2 = [1 / (x + tau2) for x in v]
    mean = sum(wi * yi for wi, yi in zip(w2, y)) / sum(w2)
    se = math.sqrt(1 / sum(w2))
    return mean, se, tau2, q


@pytest.mark.parametrize("y, v", [
    ([0.1, 0.5, -0.2], [0.02, 0.05, 0.01]),          # heterogeneous: tau^2 > 0
    ([-0.30, -0.29, -0.31, -0.30], [0.01, 0.02, 0.01, 0.03]),  # homogeneous: tau^2 = 0
    ([-0.52, -0.29], [0.004, 0.006]),
])
def test_dersimonian_laird_equals_the_hand_computation(y, v):
    mean, se, tau2, q = _dl_by_hand(y, v)
    r = S.dersimonian_laird(y, v)
    assert r["estimate"] == pytest.approx(mean) and r["se"] == pytest.approx(se)
    assert r["tau2"] == pytest.approx(tau2) and r["q"] == pytest.approx(q)
    assert r["low"] == pytest.approx(mean - 1.959963984540054 * se)
    assert r["high"] == pytest.approx(mean + 1.959963984540054 * se)
    if len(y) == 3 and y[0] == 0.1:
        assert tau2 > 0


def test_dersimonian_laird_equals_statsmodels():
    meta = pytest.importorskip("statsmodels.stats.meta_analysis")
    y, v = np.array([0.1, 0.5, -0.2, 0.3]), np.array([0.02, 0.05, 0.01, 0.04])
    theirs = meta.combine_effects(y, v, method_re="dl")
    ours = S.dersimonian_laird(y, v)
    assert ours["tau2"] == pytest.approx(theirs.tau2)
    assert ours["estimate"] == pytest.approx(theirs.mean_effect_re)
    assert ours["se"] == pytest.approx(theirs.sd_eff_w_re)


def test_dersimonian_laird_refuses_what_it_cannot_pool():
    with pytest.raises(ValueError):
        S.dersimonian_laird([0.1], [0.0])


@settings(max_examples=25, deadline=None)
@given(st.integers(6, 30), st.integers(0, 2**31))
def test_a_clearly_shorter_encoder_is_best_with_rank_interval_1(n_units, seed):
    """One encoder 30 % shorter on every unit, two others equal to each other: the first is
    best (rank interval 1-1), the equal two are not separable from each other's ranks."""
    rng = np.random.default_rng(seed)
    base = rng.integers(100, 1000, n_units).astype(float)
    logs = np.log(np.column_stack([base * 0.7, base, base * rng.uniform(0.999, 1.001, n_units)]))
    ranks, low, high = S.bootstrap_ranks(logs)
    assert ranks[0] == 1 and low[0] == high[0] == 1
    assert low[1] >= 2 and low[2] >= 2


def _frames(tokens: dict[str, list[float]], files: tuple[str, ...] = (), units=None):
    """documents / metrics frames of one setting: one document per unit."""
    n = len(next(iter(tokens.values())))
    units = units or [f"u{i}" for i in range(n)]
    documents = pd.concat([pd.DataFrame({"dataset": "d", "size": "+8", "n_candidates": 50, "encoder": e,
                                         "seed": pd.NA, "doc": range(n), "unit": units, "n_tokens": t})
                           for e, t in tokens.items()], ignore_index=True)
    metrics = pd.DataFrame([{"dataset": "d", "kind": "prose", "size": "+8", "n_candidates": 50, "encoder": e,
                             "vocab_size": 999 if e.split(":")[0] in files else 300} for e in tokens])
    return documents, metrics


def test_decide_names_the_best_the_tied_and_the_file_vocabulary():
    rng = np.random.default_rng(3)
    base = rng.integers(200, 400, 20).astype(float)
    tokens = {"classic:classic": base, "universal:tfidf": base * 0.8,
              "universal:fewest": base * 0.8 * rng.uniform(0.97, 1.03, 20), "llama:native": base * 0.5}
    documents, metrics = _frames(tokens, files=("llama",))
    table = D.decide(documents, metrics, "classic:classic", {"llama"}).set_index("encoder")
    assert table.loc["llama:native", "decision"] == D.DECISION_FILE and math.isnan(table.loc["llama:native", "rank"])
    assert table.loc["classic:classic", "decision"] == D.DECISION_LONGER
    assert {table.loc["universal:fewest", "decision"], table.loc["universal:tfidf", "decision"]} == {
        D.DECISION_BEST, D.DECISION_TIED}
    # effect vs the reference: ln 0.8, its interval around it (every unit has exactly 0.8)
    assert table.loc["universal:tfidf", "log_ratio"] == pytest.approx(math.log(0.8))
    assert table.loc["universal:tfidf", "ci_low"] == pytest.approx(math.log(0.8))
    assert table.loc["llama:native", "log_ratio"] == pytest.approx(math.log(0.5))
    assert table.loc["classic:classic", "log_ratio"] == 0


def test_decide_claims_nothing_with_too_few_units():
    documents, metrics = _frames({"classic:classic": [10.0, 12, 9], "universal:tfidf": [5.0, 6, 4]})
    table = D.decide(documents, metrics, "classic:classic")
    assert set(table["decision"]) == {D.DECISION_FEW}


def test_decide_sums_documents_per_unit_and_averages_seeds():
    documents, metrics = _frames({"classic:classic": [10.0, 10, 20, 20, 30, 30, 40, 40],
                                  "universal:tfidf": [5.0, 5, 10, 10, 15, 15, 20, 20]},
                                 units=["a", "a", "b", "b", "c", "c", "d", "d"])
    seeded = documents[documents["encoder"] == "universal:tfidf"].assign(seed=1, n_tokens=lambda f: f["n_tokens"] * 3)
    documents = pd.concat([documents.assign(seed=documents["seed"].where(documents["encoder"] != "universal:tfidf", 0)),
                           seeded], ignore_index=True)
    per_unit = D.unit_tokens(documents)
    tfidf = per_unit[per_unit["encoder"] == "universal:tfidf"].set_index("unit")["n_tokens"]
    assert tfidf.to_dict() == {"a": 20.0, "b": 40.0, "c": 60.0, "d": 80.0}  # mean of x and 3x, summed


def test_meta_analysis_pools_the_datasets_of_a_kind():
    rng = np.random.default_rng(5)
    frames = []
    for dataset, effect in (("one", 0.7), ("two", 0.75), ("three", 0.8)):
        base = rng.integers(200, 400, 12).astype(float)
        documents, metrics = _frames({"classic:classic": base, "universal:tfidf": base * effect * rng.uniform(0.95, 1.05, 12)})
        frames.append((documents.assign(dataset=dataset), metrics.assign(dataset=dataset)))
    decisions = D.decide(pd.concat([f[0] for f in frames]), pd.concat([f[1] for f in frames]), "classic:classic")
    meta = D.meta_analysis(decisions)
    assert len(meta) == 1 and meta.iloc[0]["k"] == 3 and meta.iloc[0]["encoder"] == "universal:tfidf"
    rows = decisions[decisions["encoder"] == "universal:tfidf"]
    pooled = S.dersimonian_laird(rows["log_ratio"].to_numpy(), rows["log_ratio_var"].to_numpy())
    assert meta.iloc[0]["estimate"] == pytest.approx(pooled["estimate"])
    assert meta.iloc[0]["low"] < math.log(0.75) < meta.iloc[0]["high"]


def test_primary_contrasts_are_their_own_holm_family():
    rng = np.random.default_rng(1)
    differences = [rng.normal(-0.2, 0.1, 12) for _ in range(4)]
    rows = []
    for i, d in enumerate(differences):
        result = S.unit_comparison(np.exp(d) * 100, np.full(d.size, 100.0))
        rows.append({**result, "by_construction": "", "docs_a_longer": 0.0, "docs_a_shorter": 1.0,
                     "family": PRIMARY if i < 2 else EXPLORATORY})
    table = with_verdicts(pd.DataFrame(rows), differences, 0.05)
    p = table["p_value"].to_numpy()
    assert np.allclose(table["p_holm"][:2], S.holm(p[:2]))       # Holm over the 2 primaries only
    assert np.allclose(table["p_holm"][2:], p[2:])               # exploratory: its own p
    assert all(v.endswith("(exploratory)") for v in table["verdict"][2:])
    assert not any(v.endswith("(exploratory)") for v in table["verdict"][:2])
