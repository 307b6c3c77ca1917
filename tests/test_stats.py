"""`experiments.stats` on inputs with known answers."""

import math

import numpy as np
import pytest

from experiments import stats as S

# scipy.stats.wilcoxon's documentation example (Cushny & Peebles' hours of sleep, as
# differences): W = 24, exact two-sided p = 0.041259765625
SCIPY_DOCS_DIFFERENCES = [6, 8, 14, 16, 23, 24, 28, 29, 41, -48, 49, 56, 60, -67, 75]


def test_wilcoxon_matches_the_scipy_documentation():
    w, p = S.wilcoxon_signed_rank(SCIPY_DOCS_DIFFERENCES)
    assert w == 24.0
    assert p == pytest.approx(0.041259765625)


def test_wilcoxon_all_zero_differences_is_clean():
    assert S.wilcoxon_signed_rank([0, 0, 0, 0]) == (0.0, 1.0)
    result = S.paired_comparison([3, 4, 5], [3, 4, 5], resamples=100)
    assert result["p_value"] == 1.0
    assert result["rank_biserial"] == 0.0
    assert result["n_nonzero"] == 0
    assert (result["ci_low"], result["ci_high"]) == (0.0, 0.0)


def test_wilcoxon_drops_zero_differences():
    # zeros dropped: the same as the test on the nonzero differences alone
    assert S.wilcoxon_signed_rank([0, 0, *SCIPY_DOCS_DIFFERENCES]) == S.wilcoxon_signed_rank(
        SCIPY_DOCS_DIFFERENCES)


def test_rank_biserial_simple_cases():
    assert S.rank_biserial([-3, -1, -2]) == -1.0
    assert S.rank_biserial([1, 5, 0]) == 1.0
    # |d| = 1, 2, 3, 4 ranks 1..4; R+ = 1 + 4 = 5, R- = 2 + 3 = 5
    assert S.rank_biserial([1, -2, -3, 4]) == 0.0
    # ties: |d| = 1, 1, 2 -> ranks 1.5, 1.5, 3; R+ = 1.5 + 3, R- = 1.5: (4.5 - 1.5) / 6
    assert S.rank_biserial([1, -1, 2]) == pytest.approx(0.5)
    # the scipy example: R- = 24 (ranks of 48 and 67: 10 + 14), R+ = 120 - 24 = 96
    assert S.rank_biserial(SCIPY_DOCS_DIFFERENCES) == pytest.approx((96 - 24) / 120)


def test_bootstrap_is_deterministic_for_a_seed():
    d = np.arange(20) - 7.0
    assert S.bootstrap_mean_ci(d, resamples=500, seed=3) == S.bootstrap_mean_ci(d, resamples=500, seed=3)
    assert S.bootstrap_mean_ci(d, resamples=500, seed=3) != S.bootstrap_mean_ci(d, resamples=500, seed=4)
    low, high = S.bootstrap_mean_ci(d, resamples=2_000, seed=1)
    assert low < d.mean() < high


def test_bootstrap_interval_covers_the_true_mean_about_95_percent():
    rng = np.random.default_rng(12345)
    trials, covered = 200, 0
    for trial in range(trials):
        sample = rng.normal(loc=1.0, scale=2.0, size=60)
        low, high = S.bootstrap_mean_ci(sample, resamples=1_000, confidence=0.95, seed=trial)
        covered += low <= 1.0 <= high
    # binomial(200, 0.95) lies in [180, 198] with probability > 0.99; the percentile
    # bootstrap under-covers a little at n = 60
    assert 180 <= covered <= 198


def test_bootstrap_of_an_empty_sample_is_nan():
    assert all(math.isnan(v) for v in S.bootstrap_mean_ci([], resamples=10))


def test_holm_by_hand():
    adjusted = S.holm([0.01, 0.04, 0.03, 0.005])
    # sorted 0.005 * 4, 0.01 * 3, 0.03 * 2, 0.04 * 1 -> running maximum
    assert adjusted.tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02])
    with_nan = S.holm([0.2, math.nan, 0.9])
    assert with_nan[0] == pytest.approx(0.4) and math.isnan(with_nan[1]) and with_nan[2] == pytest.approx(0.9)
    assert S.holm([0.6, 0.7]).tolist() == [1.0, 1.0]


def test_paired_comparison_summaries():
    a, b = [10, 12, 9, 8], [12, 12, 10, 11]
    result = S.paired_comparison(a, b, resamples=500, seed=0)
    assert result["mean_diff"] == -1.5
    assert result["relative_diff"] == pytest.approx(39 / 45 - 1)
    assert result["share_a_shorter"] == 0.75 and result["share_a_longer"] == 0.0
    assert result["rank_biserial"] == -1.0
    assert result["ci_low"] <= -1.5 <= result["ci_high"]
    with pytest.raises(ValueError):
        S.paired_comparison([1, 2], [1, 2, 3])


def test_derive_seed_is_stable_and_distinct():
    assert S.derive_seed(7, "dna", "+256") == S.derive_seed(7, "dna", "+256")
    assert S.derive_seed(7, "dna", "+256") != S.derive_seed(7, "dna", "+1024")


def test_docstring_examples():
    import doctest

    assert doctest.testmod(S).failed == 0
