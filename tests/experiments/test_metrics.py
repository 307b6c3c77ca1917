"""Every metric of `ubpe.lab.metrics` on small hand-computed examples."""

import math

import numpy as np
import pytest

from ubpe.lab import metrics as M


def test_tokens_per_symbol_and_compression_are_corpus_ratios():
    # 2 + 3 + 5 = 10 tokens for 4 + 6 + 10 = 20 symbols
    assert M.tokens_per_symbol([2, 3, 5], [4, 6, 10]) == 0.5
    assert M.compression_ratio([2, 3, 5], [4, 6, 10]) == 2.0
    assert M.corpus_tokens([2, 3, 5]) == 10


def test_ratios_of_an_empty_corpus_are_nan():
    assert math.isnan(M.tokens_per_symbol([], []))
    assert math.isnan(M.compression_ratio([0], [0]))


def test_renyi_entropy_by_hand():
    # p = (1/2, 1/4, 1/4): sum p^2 = 1/4 + 1/16 + 1/16 = 3/8, H_2 = -ln(3/8)
    assert M.renyi_entropy([2, 1, 1], alpha=2) == pytest.approx(-math.log(3 / 8))
    # alpha = 2.5: sum p^2.5 = 0.5^2.5 + 2 * 0.25^2.5, H = ln(that) / (1 - 2.5)
    expected = math.log(0.5**2.5 + 2 * 0.25**2.5) / (1 - 2.5)
    assert M.renyi_entropy([2, 1, 1]) == pytest.approx(expected)
    # alpha = 1 is Shannon: -(1/2 ln 1/2 + 2 * 1/4 ln 1/4) = 1.5 ln 2
    assert M.renyi_entropy([2, 1, 1], alpha=1) == pytest.approx(1.5 * math.log(2))
    # zero counts are ignored; one outcome has no uncertainty
    assert M.renyi_entropy([0, 5, 0]) == pytest.approx(0.0)


def test_renyi_efficiency_divides_by_log_vocabulary_size():
    # uniform over 2 of 8 ids: ln 2 / ln 8 = 1/3
    assert M.renyi_efficiency([4, 0, 4], vocab_size=8) == pytest.approx(1 / 3)
    assert M.renyi_efficiency(np.full(16, 3), vocab_size=16) == pytest.approx(1.0)
    assert math.isnan(M.renyi_efficiency([1], vocab_size=1))


def test_vocabulary_utilisation_counts_used_ids():
    assert M.vocabulary_utilisation([1, 0, 0, 7, 0], vocab_size=5) == 0.4
    assert M.vocabulary_utilisation(np.zeros(4), vocab_size=4) == 0.0


def test_length_summary_by_hand():
    summary = M.length_summary([2, 4, 4, 10])
    assert summary["mean"] == 5.0
    assert summary["median"] == 4.0
    # rank 0.95 * 3 = 2.85 between 4 and 10: 4 + 0.85 * 6 = 9.1
    assert summary["p95"] == pytest.approx(9.1)
    assert all(math.isnan(v) for v in M.length_summary([]).values())


def test_segmentation_key_compares_boundaries_not_ids():
    lengths = np.array([1, 1, 1, 2, 2, 3])  # ids 3, 4 are two symbols; 5 is three
    assert M.segmentation_key([3, 0], lengths) == M.segmentation_key([4, 1], lengths)
    assert M.segmentation_key([5], lengths) != M.segmentation_key([3, 0], lengths)
    assert M.segmentation_key([], lengths) == M.segmentation_key([], lengths)


def test_differ_share():
    assert M.differ_share([1, 2, 3], [1, 2, 3]) == 0.0
    assert M.differ_share([1, 2, 3, 4], [9, 2, 9, 4]) == 0.5
    with pytest.raises(ValueError):
        M.differ_share([1, 2], [1])


def test_throughput():
    assert M.throughput(3_000, 1.5) == 2_000.0
    assert math.isnan(M.throughput(10, 0.0))


def test_score_gaps_by_hand():
    scores = [[10.0, 7.0, 6.0], [4.0, 4.0, 1.0], [2.0, math.nan, math.nan]]
    gaps = M.score_gaps(scores, top_n=3)
    # 2nd gaps 3 and 0 (doc 3 has no alternative); n-th gaps 4 and 3
    assert gaps["gap_2nd_mean"] == 1.5
    assert gaps["gap_2nd_median"] == 1.5
    assert gaps["gap_nth_mean"] == 3.5
    assert gaps["share_with_n_alternatives"] == pytest.approx(2 / 3)


def test_score_gaps_of_a_top_1_encoder_are_nan():
    gaps = M.score_gaps([[1.0], [2.0]], top_n=1)
    assert all(math.isnan(v) for v in gaps.values())


def test_docstring_examples():
    import doctest

    assert doctest.testmod(M, optionflags=doctest.ELLIPSIS).failed == 0
