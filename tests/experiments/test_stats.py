"""`experiments.stats` on inputs with known answers."""

import math

import numpy as np
import pytest

from ubpe.lab import stats as S

# scipy.stats.wilcoxon's documentation example (Cushny & Peebles' hours of sleep, as
# differences): W = 24, exact two-sided p = 0.041259765625
SCIPY_DOCS_DIFFERENCES = [6, 8, 14, 16, 23, 24, 28, 29, 41, -48, 49, 56, 60, -67, 75]


def test_wilcoxon_matches_the_scipy_documentation():
    w, p = S.wilcoxon_signed_rank(SCIPY_DOCS_DIFFERENCES)
    assert w == 24.0
    assert p == pytest.approx(0.041259765625)


def test_wilcoxon_all_zero_differences_is_clean():
    assert S.wilcoxon_signed_rank([0, 0, 0, 0]) == (0.0, 1.0)
    result = S.unit_comparison([3, 4, 5, 6, 7, 8], [3, 4, 5, 6, 7, 8])
    assert result["p_value"] == 1.0
    assert result["rank_biserial"] == 0.0
    assert result["n_nonzero"] == 0 and result["hl_log_ratio"] == 0.0


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


def test_holm_by_hand():
    adjusted = S.holm([0.01, 0.04, 0.03, 0.005])
    # sorted 0.005 * 4, 0.01 * 3, 0.03 * 2, 0.04 * 1 -> running maximum
    assert adjusted.tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02])
    with_nan = S.holm([0.2, math.nan, 0.9])
    assert with_nan[0] == pytest.approx(0.4) and math.isnan(with_nan[1]) and with_nan[2] == pytest.approx(0.9)
    assert S.holm([0.6, 0.7]).tolist() == [1.0, 1.0]


def test_unit_comparison_summaries():
    a, b = [10, 12, 9, 8, 20, 5], [12, 12, 10, 11, 25, 10]
    result = S.unit_comparison(a, b)
    assert result["n_units"] == 6 and result["n_nonzero"] == 5
    assert result["relative_diff"] == pytest.approx(64 / 80 - 1)
    assert result["units_a_shorter"] == pytest.approx(5 / 6) and result["units_a_longer"] == 0.0
    assert result["rank_biserial"] == -1.0
    assert result["mean_log_ratio"] == pytest.approx(np.mean(np.log(np.array(a) / np.array(b))))
    assert result["hl_log_ratio"] < 0
    # fewer than MIN_UNITS units: described, not tested
    few = S.unit_comparison(a[:5], b[:5])
    assert math.isnan(few["p_value"]) and few["n_units"] == 5
    with pytest.raises(ValueError):
        S.unit_comparison([1, 2], [1, 2, 3])
    with pytest.raises(ValueError):
        S.log_ratios([0, 1], [1, 1])  # a unit with tokens under one encoder only


def test_hodges_lehmann_is_the_median_of_walsh_averages():
    d = np.array([0.3, -1.2, 2.0, 0.0, 5.5])
    walsh = [(d[i] + d[j]) / 2 for i in range(5) for j in range(i, 5)]
    assert S.hodges_lehmann(d) == pytest.approx(np.median(walsh))
    assert S.walsh_averages(d).tolist() == sorted(walsh)


def test_interval_agrees_with_the_test_at_its_level():
    """0 is inside the inverted-test interval exactly when the test on d keeps H0."""
    rng = np.random.default_rng(2024)
    for _ in range(40):
        n = int(rng.integers(6, 70))
        d = np.round(rng.normal(rng.normal(0, 0.4), 1, n), 1)
        d[rng.random(n) < 0.2] = 0  # zeros and ties, as token counts give
        alpha = float(rng.choice([1e-4, 1e-3, 0.01, 0.05, 0.2]))
        low, high = S.wilcoxon_interval(d, alpha)
        assert low <= S.hodges_lehmann(d) <= high
        assert (low <= 0 <= high) == (S.wilcoxon_signed_rank(d)[1] >= alpha)


def test_interval_covers_the_true_shift_about_95_percent():
    rng = np.random.default_rng(12345)
    trials, covered = 100, 0
    for _ in range(trials):
        low, high = S.wilcoxon_interval(rng.normal(0.5, 1.0, 30), 0.05)
        covered += low <= 0.5 <= high
    # binomial(100, 0.95) lies in [88, 100] with probability > 0.99
    assert 88 <= covered


def test_holm_level_makes_intervals_agree_with_holm_verdicts():
    p = np.array([0.001, 0.02, 0.03, 0.2])
    adjusted = S.holm(p)
    for raw, holm_p in zip(p, adjusted):
        level = S.holm_level(0.05, raw, holm_p)
        assert (raw < level) == (holm_p < 0.05)


def test_docstring_examples():
    import doctest

    assert doctest.testmod(S).failed == 0
