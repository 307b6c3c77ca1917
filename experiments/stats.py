"""Paired statistics: two encoders on the same held-out documents.

For per-document token counts ``a`` and ``b`` of the same documents, ``d = a - b`` (negative:
``a`` is shorter). `paired_comparison` reports

- the Wilcoxon signed-rank test of "the differences are symmetric about 0" (scipy, two-sided,
  zero differences dropped as in Wilcoxon's original test; all-zero differences give W = 0,
  p = 1 without calling scipy);
- a seeded percentile bootstrap confidence interval of the mean difference;
- the matched-pairs rank-biserial correlation (Kerby 2014), ``(R+ - R-) / (R+ + R-)`` over the
  ranks of the nonzero ``|d|``: -1 when ``a`` is shorter on every document that differs, +1 when
  longer, 0 when balanced;
- Holm's step-down adjustment (`holm`) across all comparisons of an experiment.

>>> r = paired_comparison([3, 4, 5, 5], [4, 6, 5, 6], resamples=1000, seed=0)
>>> r["mean_diff"], r["n_nonzero"], r["rank_biserial"]
(-1.0, 3, -1.0)
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

import numpy as np
from scipy import stats as scipy_stats

WILCOXON_TEST = "Wilcoxon signed-rank, two-sided, zero differences dropped"
BOOTSTRAP_METHOD = "percentile bootstrap"
# resamples drawn per block, so memory stays at block x n_docs indices
_BOOTSTRAP_BLOCK = 1_000
_SEED_BYTES = 8


def derive_seed(base: int, *parts: object) -> int:
    """A seed for one comparison, stable across runs, machines and Python versions.

    >>> derive_seed(1, "kjv", "+256") == derive_seed(1, "kjv", "+256")
    True
    >>> derive_seed(1, "kjv") == derive_seed(2, "kjv")
    False
    """
    text = "\x1f".join([str(base), *map(str, parts)])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:_SEED_BYTES], "little")


def _differences(a: Sequence[float], b: Sequence[float]) -> np.ndarray:
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError("paired samples must be 1-D and of the same length")
    return x - y


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


def bootstrap_mean_ci(differences: Sequence[float], *, resamples: int = 10_000,
                      confidence: float = 0.95, seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``differences`` (documents resampled).

    Deterministic for a given ``seed``; a constant sample gives a zero-width interval.

    >>> bootstrap_mean_ci([2.0, 2.0, 2.0], resamples=100)
    (2.0, 2.0)
    """
    d = np.asarray(differences, dtype=np.float64)
    if d.size == 0:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    means = np.empty(resamples, dtype=np.float64)
    for start in range(0, resamples, _BOOTSTRAP_BLOCK):
        stop = min(start + _BOOTSTRAP_BLOCK, resamples)
        idx = rng.integers(0, d.size, size=(stop - start, d.size))
        means[start:stop] = d[idx].mean(axis=1)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return float(low), float(high)


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


def paired_comparison(a: Sequence[float], b: Sequence[float], *, resamples: int = 10_000,
                      confidence: float = 0.95, seed: int = 0) -> dict[str, float]:
    """Every statistic of ``a - b`` per document (see the module docstring)."""
    d = _differences(a, b)
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    w, p = wilcoxon_signed_rank(d)
    low, high = bootstrap_mean_ci(d, resamples=resamples, confidence=confidence, seed=seed)
    total_b = y.sum()
    return {
        "n_docs": int(d.size),
        "n_nonzero": int(np.count_nonzero(d)),
        "mean_a": float(x.mean()) if d.size else math.nan,
        "mean_b": float(y.mean()) if d.size else math.nan,
        "mean_diff": float(d.mean()) if d.size else math.nan,
        "ci_low": low,
        "ci_high": high,
        "relative_diff": float(x.sum() / total_b - 1.0) if total_b else math.nan,
        "share_a_shorter": float(np.mean(d < 0)) if d.size else math.nan,
        "share_a_longer": float(np.mean(d > 0)) if d.size else math.nan,
        "wilcoxon_w": w,
        "p_value": p,
        "rank_biserial": rank_biserial(d),
    }
