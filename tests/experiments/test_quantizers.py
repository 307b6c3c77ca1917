"""Quantizers on hand-computed examples, edge cases and invalid input (no data files needed)."""

import math

import numpy as np
import pytest

from ubpe.lab.datasets.quantize import (
    DEFAULT_MU,
    QUANTIZERS,
    MuLawQuantizer,
    QuantileQuantizer,
    QuantizerError,
    UniformQuantizer,
    make_quantizer,
)


def test_uniform_bins_on_hand_computed_values():
    q = UniformQuantizer(4).fit([0.0, 1.0])
    np.testing.assert_allclose(q.edges, [0.25, 0.5, 0.75])
    # bin k holds (e_k, e_k+1]; bin 0 also the minimum, the last bin the maximum
    values = [0.0, 0.1, 0.25, 0.2500001, 0.5, 0.74, 0.75, 0.9, 1.0]
    assert q.transform(values).tolist() == [0, 0, 0, 1, 1, 2, 2, 3, 3]


def test_uniform_clips_values_outside_the_training_range():
    q = UniformQuantizer(8).fit([10.0, 20.0])
    assert q.transform([-1e9, 9.99, 20.01, 1e9]).tolist() == [0, 0, 7, 7]


def test_uniform_uses_training_range_only():
    train = np.array([0.0, 2.0, 4.0])
    q = UniformQuantizer(2).fit(train)
    assert q.edges.tolist() == [2.0]
    # held-out values are mapped with the training edge, not refitted
    assert q.transform([1.0, 3.0, 100.0]).tolist() == [0, 1, 1]


def test_quantile_bins_on_hand_computed_values():
    q = QuantileQuantizer(2).fit([1, 2, 3, 4])
    assert q.edges.tolist() == [2.5]
    assert q.transform([1, 2, 3, 4]).tolist() == [0, 0, 1, 1]
    q4 = QuantileQuantizer(4).fit(np.arange(1.0, 9.0))  # 1..8: quartiles 2.75, 4.5, 6.25
    np.testing.assert_allclose(q4.edges, [2.75, 4.5, 6.25])
    assert q4.transform(np.arange(1.0, 9.0)).tolist() == [0, 0, 1, 1, 2, 2, 3, 3]


def test_quantile_symbols_are_about_equally_frequent():
    rng = np.random.default_rng(0)
    train = rng.standard_normal(10_000)
    counts = np.bincount(QuantileQuantizer(10).fit_transform(train), minlength=10)
    assert counts.min() >= 990 and counts.max() <= 1010


def test_quantile_ties_leave_empty_bins_and_put_ties_low():
    # zero-inflated data: the first three quartile edges are all 0
    q = QuantileQuantizer(4).fit([0, 0, 0, 0, 0, 0, 5, 9])
    assert q.edges.tolist()[:2] == [0.0, 0.0]
    assert q.transform([0, 5, 9]).tolist() == [0, 3, 3]


@pytest.mark.parametrize("cls", [UniformQuantizer, QuantileQuantizer])
def test_constant_signal_maps_to_first_bin_and_larger_values_to_last(cls):
    q = cls(16).fit([3.5] * 10)
    assert q.transform([3.5, 3.5]).tolist() == [0, 0]
    assert q.transform([1.0, 3.5, 3.6]).tolist() == [0, 0, 15]


@pytest.mark.parametrize("bins", [2, 3, 4, 7, 64, 255, 256])
def test_mulaw_constant_signal_maps_to_centre_bin(bins):
    q = MuLawQuantizer(bins).fit([5.0, 5.0, 5.0])
    assert q.scale == 1.0
    assert q.transform([5.0]).tolist() == [(bins - 1) // 2]
    assert q.transform([4.0, 6.0]).tolist() == [0, bins - 1]


def test_mulaw_companding_formula():
    q = MuLawQuantizer(8).fit([-2.0, 0.0, 2.0])  # centre 0 (median), scale 2
    assert (q.centre, q.scale) == (0.0, 2.0)
    expected = math.log1p(DEFAULT_MU * 0.5) / math.log1p(DEFAULT_MU)  # z = 0.5
    np.testing.assert_allclose(q.compand([1.0, -1.0, 2.0, 4.0]), [expected, -expected, 1.0, 1.0])
    # 8 bins on [-1, 1]: edges -0.75, -0.5, ..., 0.75; y(0.5 of the range) ~ 0.876 -> bin 7
    assert q.transform([-2.0, -0.01, 0.0, 0.01, 1.0, 2.0]).tolist() == [0, 3, 3, 4, 7, 7]


def test_mulaw_gives_small_amplitudes_more_bins_than_uniform():
    signal = np.linspace(-1.0, 1.0, 2001)
    small = np.abs(signal) < 0.05
    mulaw_levels = len(set(MuLawQuantizer(16).fit_transform(signal)[small].tolist()))
    uniform_levels = len(set(UniformQuantizer(16).fit_transform(signal)[small].tolist()))
    assert mulaw_levels > uniform_levels


@pytest.mark.parametrize("name", sorted(QUANTIZERS))
def test_output_is_int64_in_range(name):
    rng = np.random.default_rng(1)
    train, heldout = rng.normal(size=500), rng.normal(scale=3.0, size=500)
    q = make_quantizer(f"{name}:12").fit(train)
    symbols = q.transform(heldout)
    assert symbols.dtype == np.int64 and symbols.shape == heldout.shape
    assert symbols.min() >= 0 and symbols.max() <= 11


@pytest.mark.parametrize("name", sorted(QUANTIZERS))
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_nan_and_infinity_raise_clear_errors(name, bad):
    q = make_quantizer(f"{name}:4")
    with pytest.raises(QuantizerError, match="NaN or infinite.*first at index 1"):
        q.fit([0.0, bad, 1.0])
    q.fit([0.0, 1.0])
    with pytest.raises(QuantizerError, match="NaN or infinite"):
        q.transform([0.5, bad])


@pytest.mark.parametrize("name", sorted(QUANTIZERS))
def test_empty_and_unfitted_raise(name):
    q = make_quantizer(f"{name}:4")
    with pytest.raises(QuantizerError, match="not fitted"):
        q.transform([1.0])
    with pytest.raises(QuantizerError, match="empty"):
        q.fit([])


@pytest.mark.parametrize("bins", [0, 1, -3, 2.5, True, "8"])
def test_invalid_bin_counts(bins):
    with pytest.raises(QuantizerError, match="bins must be an integer"):
        UniformQuantizer(bins)


@pytest.mark.parametrize("mu", [0, -1.0, math.nan, math.inf])
def test_invalid_mu(mu):
    with pytest.raises(QuantizerError, match="mu must be"):
        MuLawQuantizer(8, mu=mu)


def test_make_quantizer_specs():
    assert isinstance(make_quantizer("uniform:64"), UniformQuantizer)
    q = make_quantizer("mulaw:256")
    assert isinstance(q, MuLawQuantizer) and q.bins == 256
    assert q.describe() == "mulaw:256:mu=255"
    assert make_quantizer("quantile:8").describe() == "quantile:8"
    existing = QuantileQuantizer(3)
    assert make_quantizer(existing) is existing
    for bad in ["uniform", "gauss:8", "uniform:x", "uniform:-2", ""]:
        with pytest.raises(QuantizerError, match="spec"):
            make_quantizer(bad)


def test_fit_returns_self_and_refit_replaces_edges():
    q = UniformQuantizer(2)
    assert q.fit([0, 2]) is q and q.edges.tolist() == [1.0]
    q.fit([0, 10])
    assert q.edges.tolist() == [5.0]


def test_accepts_multidimensional_input_flattened():
    q = UniformQuantizer(2).fit(np.array([[0.0, 1.0], [2.0, 3.0]]))
    assert q.transform(np.array([[0.0, 3.0]])).tolist() == [0, 1]
