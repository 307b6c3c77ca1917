"""Paired statistics over independent units: two encoders on the same held-out units.

Documents of one unit (the chapters of a book, the windows of a recording, ...) are not
independent, so a comparison of encoders ``a`` and ``b`` works per unit: ``A_u`` and
``B_u`` are the unit's held-out token counts (summed over its documents) and the effect is
the per-unit log ratio ``d_u = ln(A_u / B_u)`` (negative: ``a`` shorter). `unit_comparison`
reports

- the Wilcoxon signed-rank test of "the ``d_u`` are symmetric about 0" (scipy, two-sided,
  zero differences dropped as in Wilcoxon's original test; all-zero differences give W = 0,
  p = 1 without calling scipy);
- the Hodges-Lehmann estimate of the shift (the median of the Walsh averages
  ``(d_i + d_j) / 2``, i <= j), the estimate that goes with this test;
- the matched-pairs rank-biserial correlation (Kerby 2014) of the ``d_u``.

`wilcoxon_interval` inverts the same test: the shifts ``t`` for which the test on
``d - t`` is not rejected at level ``alpha``. Across an experiment `holm` adjusts the
p-values and `holm_level` gives each comparison the level at which its interval excludes 0
exactly when its Holm-adjusted p is below alpha - so an interval never contradicts its
verdict.

`MIN_UNITS`: with fewer units the exact two-sided test cannot reach p < 0.05 at all
(n = 5: the smallest p is 2 / 2^5 = 0.0625); such comparisons are reported as not testable.

>>> r = unit_comparison([30, 40, 50, 50, 20, 10], [40, 60, 50, 60, 25, 20])
>>> r["n_units"], r["n_nonzero"], r["rank_biserial"]
(6, 5, -1.0)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import stats as scipy_stats

WILCOXON_TEST = ("Wilcoxon signed-rank on per-unit log ratios ln(A_u / B_u), two-sided, "
                 "zero differences dropped")
INTERVAL_METHOD = "Hodges-Lehmann estimate, interval by inverting the Wilcoxon test at the Holm-consistent level"
#: Fewest units a two-sided exact signed-rank test can reject with at alpha = 0.05.
MIN_UNITS = 6


def wilcoxon_signed_rank(differences: Sequence[float]) -> tuple[float, float]:
    """``(W, p)`` of the two-sided Wilcoxon signed-rank test on paired differences.

    W is scipy's statistic, the smaller of the positive and negative rank sums. Zero
    differences are dropped; with none left the samples are identical: ``(0.0, 1.0)``.

    >>> wilcoxon_signed_rank([6, 8, 14, 16, 23, 24, 28, 29, 41, -48, 49, 56, 60, -67, 75])
    (24.0, 0.041259765625)
    >>> wilcoxon_signed_rank([0, 0, 0])
    (0.0, 1.0)
    """
    d = np.asarray(differences, dtype=np.float64)
    # dropping the zeros here (not via zero_method) keeps scipy's exact null distribution
    # for small samples: with zeros in the input it would switch to the normal approximation
    d = d[d != 0]
    if d.size == 0:
        return 0.0, 1.0
    result = scipy_stats.wilcoxon(d, alternative="two-sided")
    return float(result.statistic), float(result.pvalue)


def rank_biserial(differences: Sequence[float]) -> float:
    """Matched-pairs rank-biserial correlation of paired differences, in [-1, 1].

    Ranks the nonzero ``|d|`` (ties get their average rank); ``(R+ - R-) / (R+ + R-)``.
    0 when every difference is zero.

    >>> rank_biserial([-1, -2, -3])
    -1.0
    >>> rank_biserial([1, -2, 0, 3])      # ranks 1, 2, 3: (1 + 3 - 2) / 6
    0.3333333333333333
    """
    d = np.asarray(differences, dtype=np.float64)
    d = d[d != 0]
    if d.size == 0:
        return 0.0
    ranks = scipy_stats.rankdata(np.abs(d))
    plus, minus = ranks[d > 0].sum(), ranks[d < 0].sum()
    return float((plus - minus) / (plus + minus))


def log_ratios(a: Sequence[float], b: Sequence[float]) -> np.ndarray:
    """Per-unit ``ln(a / b)``; 0 where both are 0 (an empty unit), an error where one is.

    >>> log_ratios([2, 0], [1, 0]).round(4).tolist()
    [0.6931, 0.0]
    """
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError("paired samples must be 1-D and of the same length")
    if np.any((x == 0) != (y == 0)) or np.any(x < 0) or np.any(y < 0):
        raise ValueError("token counts must be >= 0, and 0 for both encoders or neither")
    out = np.zeros_like(x)
    both = (x > 0) & (y > 0)
    out[both] = np.log(x[both] / y[both])
    return out


def walsh_averages(d: Sequence[float]) -> np.ndarray:
    """The sorted ``(d_i + d_j) / 2`` over ``i <= j`` (n (n + 1) / 2 of them).

    >>> walsh_averages([1.0, 3.0]).tolist()
    [1.0, 2.0, 3.0]
    """
    x = np.asarray(d, dtype=np.float64)
    i, j = np.triu_indices(x.size)
    return np.sort((x[i] + x[j]) / 2.0)


def hodges_lehmann(d: Sequence[float]) -> float:
    """The Hodges-Lehmann shift estimate: the median of the Walsh averages.

    >>> hodges_lehmann([1.0, 2.0, 10.0])     # Walsh averages 1, 1.5, 2, 5.5, 6, 10
    3.75
    """
    x = np.asarray(d, dtype=np.float64)
    return float(np.median(walsh_averages(x))) if x.size else math.nan


def _boundary(accepted, inside: int, outside: int) -> int:
    """Bisection from an accepted index towards a rejected one: the last accepted index."""
    while abs(outside - inside) > 1:
        mid = (inside + outside) // 2
        inside, outside = (mid, outside) if accepted(mid) else (inside, mid)
    return inside


def wilcoxon_interval(d: Sequence[float], alpha: float) -> tuple[float, float]:
    """The shifts ``t`` whose Wilcoxon test on ``d - t`` has ``p >= alpha`` (test inversion).

    The p-value only changes where ``t`` crosses a Walsh average, so it is evaluated at each
    Walsh average, at the midpoints between consecutive ones and at 0; each bound is the
    outermost accepted point, found by bisection between the Hodges-Lehmann estimate and a
    rejected point on that side. A bound is infinite when no shift on that side is rejected
    (too few units for ``alpha``).

    Dropping zero differences makes the p-value not quite monotone around a shift equal to
    some ``d_i``; so that the interval always agrees with the test on ``d`` itself (0 inside
    exactly when ``p >= alpha``), the bound on 0's side is searched beyond 0 when 0 is
    rejected, and moved to 0 when 0 is accepted but lies outside. NaN for an empty sample.

    >>> wilcoxon_interval([-3.0, -2.0, -1.0, -4.0, -5.0, -6.0], 0.05)   # p(0) = 0.03125
    (-6.0, -1.0)
    >>> wilcoxon_interval([-3.0, -2.0, -1.0, -4.0, -5.0, -6.0], 0.01)   # 6 units: never < 0.03
    (-inf, inf)
    """
    x = np.asarray(d, dtype=np.float64)
    if x.size == 0:
        return math.nan, math.nan
    walsh = np.unique(walsh_averages(x))
    # one point beyond each end, where every d - t has the same sign (the smallest p for n)
    grid = np.unique(np.concatenate([walsh, (walsh[:-1] + walsh[1:]) / 2.0, [0.0],
                                     [walsh[0] - 1.0, walsh[-1] + 1.0]]))

    def accepted(index: int) -> bool:
        return wilcoxon_signed_rank(x - grid[index])[1] >= alpha

    zero = int(np.searchsorted(grid, 0.0))
    zero_accepted = accepted(zero)
    centre = min(max(int(np.searchsorted(grid, hodges_lehmann(x))), 1), grid.size - 2)
    if not accepted(centre):
        if zero_accepted:  # only 0 is known to be accepted
            return 0.0, 0.0
        return float(grid[centre]), float(grid[centre])  # nothing accepted: a point
    start = zero if not zero_accepted and zero < centre else 0
    if accepted(start):  # the far end is accepted: unbounded below
        lower = -math.inf
    else:
        lower = float(grid[_boundary(accepted, centre, start)])
    end = zero if not zero_accepted and zero > centre else grid.size - 1
    if accepted(end):
        upper = math.inf
    else:
        upper = float(grid[_boundary(accepted, centre, end)])
    if zero_accepted:
        lower, upper = min(lower, 0.0), max(upper, 0.0)
    return lower, upper


def holm(pvalues: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjusted p-values (family-wise error control); NaN stays NaN.

    >>> holm([0.01, 0.04, 0.03]).tolist()      # sorted 0.01*3, 0.03*2, max(0.04*1, 0.06)
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(pvalues, dtype=np.float64)
    adjusted = np.full(p.shape, np.nan)
    valid = np.flatnonzero(~np.isnan(p))
    if valid.size == 0:
        return adjusted
    order = valid[np.argsort(p[valid], kind="stable")]
    m = order.size
    running = 0.0
    for i, index in enumerate(order):
        running = max(running, min(1.0, (m - i) * p[index]))
        adjusted[index] = running
    return adjusted


def holm_level(alpha: float, p: float, p_holm: float) -> float:
    """The level at which a comparison's interval must be computed to agree with Holm.

    ``alpha * p / p_holm``: ``p`` is below it exactly when ``p_holm < alpha``, so the
    inverted-test interval excludes 0 exactly when the Holm-adjusted verdict is significant.

    >>> holm_level(0.05, 0.01, 0.04)
    0.0125
    """
    if not p_holm > 0:
        return alpha
    return alpha * p / p_holm


def unit_comparison(a: Sequence[float], b: Sequence[float]) -> dict[str, float]:
    """The per-unit statistics of ``a`` vs ``b`` (token counts per unit, paired).

    Everything but the interval, which needs the Holm adjustment of the whole experiment
    (`wilcoxon_interval` at `holm_level`).
    """
    d = log_ratios(a, b)
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    w, p = wilcoxon_signed_rank(d) if d.size >= MIN_UNITS else (math.nan, math.nan)
    total_b = y.sum()
    return {
        "n_units": int(d.size),
        "n_nonzero": int(np.count_nonzero(d)),
        "hl_log_ratio": hodges_lehmann(d),
        "mean_log_ratio": float(d.mean()) if d.size else math.nan,
        "relative_diff": float(x.sum() / total_b - 1.0) if total_b else math.nan,
        "units_a_shorter": float(np.mean(d < 0)) if d.size else math.nan,
        "units_a_longer": float(np.mean(d > 0)) if d.size else math.nan,
        "wilcoxon_w": w,
        "p_value": p,
        "rank_biserial": rank_biserial(d),
    }


# -- decisions: bootstrap intervals over units, rank intervals, random-effects meta-analysis --

#: The confidence of every bootstrap and meta-analysis interval of the report.
CONFIDENCE = 0.95
#: Bootstrap resamples of the units (percentile intervals; 2,000 keeps the Monte Carlo error
#: of a 95 % bound near 0.5 percentage points of coverage) and their fixed seed.
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 0
BOOTSTRAP_METHOD = ("percentile bootstrap over units (the units resampled with replacement, the "
                    "same draws for every encoder of a setting)")
META_METHOD = ("DerSimonian-Laird random effects over the datasets of a kind: each dataset's mean "
               "per-unit log ratio, weighted by 1 / (its sampling variance + tau^2); normal interval")


def bootstrap_draws(n_units: int, resamples: int = BOOTSTRAP_RESAMPLES,
                    seed: int = BOOTSTRAP_SEED) -> np.ndarray:
    """``(resamples, n_units)`` unit indices drawn with replacement (numpy's PCG64, seeded).

    >>> bootstrap_draws(3, 2, seed=1).shape
    (2, 3)
    """
    return np.random.default_rng(seed).integers(0, n_units, size=(resamples, n_units))


def percentile_interval(values: np.ndarray, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The central ``confidence`` interval of bootstrap replicates (axis 0).

    >>> [round(end, 9) for end in percentile_interval(np.arange(101.0), 0.9)]
    [5.0, 95.0]
    """
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail], axis=0)
    return (float(low), float(high)) if np.ndim(low) == 0 else (low, high)


def bootstrap_mean(d: Sequence[float], *, draws: np.ndarray | None = None,
                   confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """``(mean, low, high)``: the mean of per-unit values and its percentile bootstrap
    interval over units. NaN for an empty sample; a point for one unit.

    >>> bootstrap_mean([-0.3, -0.2, -0.4, -0.3, -0.25, -0.35])[0]
    -0.3
    """
    x = np.asarray(d, dtype=np.float64)
    if x.size == 0:
        return math.nan, math.nan, math.nan
    draws = bootstrap_draws(x.size) if draws is None else draws
    low, high = percentile_interval(x[draws].mean(axis=1), confidence)
    return float(x.mean()), low, high


def bootstrap_ranks(values: np.ndarray, *, draws: np.ndarray | None = None,
                    confidence: float = CONFIDENCE) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ranks of the columns of ``values`` (units x encoders) by their mean, 1 = smallest, with
    percentile bootstrap intervals of each rank (ties share the lowest rank).

    >>> ranks, low, high = bootstrap_ranks(np.array([[1.0, 5.0], [1.5, 4.0], [0.5, 6.0]]))
    >>> ranks.tolist(), low.tolist(), high.tolist()
    ([1, 2], [1.0, 2.0], [1.0, 2.0])
    """
    x = np.asarray(values, dtype=np.float64)
    draws = bootstrap_draws(x.shape[0]) if draws is None else draws
    ranks = scipy_stats.rankdata(x.mean(axis=0), method="min").astype(int)
    replicate_means = x[draws].mean(axis=1)  # (resamples, encoders)
    replicate_ranks = scipy_stats.rankdata(replicate_means, method="min", axis=1)
    low, high = percentile_interval(replicate_ranks, confidence)
    return ranks, np.asarray(low, dtype=float), np.asarray(high, dtype=float)


def dersimonian_laird(estimates: Sequence[float], variances: Sequence[float],
                      confidence: float = CONFIDENCE) -> dict[str, float]:
    """The DerSimonian-Laird random-effects pooled estimate of ``estimates`` (one per study)
    with sampling ``variances``: the pooled estimate, its standard error and normal interval,
    tau^2 (between-study variance, moment estimator truncated at 0), Cochran's Q and I^2.

    >>> r = dersimonian_laird([0.1, 0.3, 0.2], [0.01, 0.01, 0.01])
    >>> round(r["estimate"], 6), round(r["tau2"], 6), round(r["q"], 6)
    (0.2, 0.0, 2.0)
    """
    y, v = np.asarray(estimates, dtype=np.float64), np.asarray(variances, dtype=np.float64)
    if y.size == 0 or y.shape != v.shape or np.any(v <= 0):
        raise ValueError("one estimate per study, each with a positive variance")
    w = 1.0 / v
    fixed = float(np.sum(w * y) / np.sum(w))
    q = float(np.sum(w * (y - fixed) ** 2))
    k = y.size
    c = float(np.sum(w) - np.sum(w ** 2) / np.sum(w))
    tau2 = max(0.0, (q - (k - 1)) / c) if k > 1 else 0.0
    w_star = 1.0 / (v + tau2)
    estimate = float(np.sum(w_star * y) / np.sum(w_star))
    se = float(math.sqrt(1.0 / np.sum(w_star)))
    z = float(scipy_stats.norm.ppf(0.5 + confidence / 2))
    return {"k": int(k), "estimate": estimate, "se": se, "low": estimate - z * se,
            "high": estimate + z * se, "tau2": tau2, "q": q,
            "i2": max(0.0, (q - (k - 1)) / q) if q > 0 else 0.0}
