"""Quantizers: continuous samples -> integer symbols ``0 .. bins-1``.

A quantizer is fitted on the training samples only and then applied unchanged to both splits,
so held-out data never shapes the symbols. All three share one binning rule over sorted edges
``e_1 <= ... <= e_{bins-1}``: a value ``x`` gets the number of edges strictly below it,

    symbol(x) = #{k : e_k < x}        (numpy ``searchsorted(edges, x, side="left")``)

so bin 0 holds everything up to and including ``e_1``, bin ``k`` holds ``(e_k, e_{k+1}]`` and
the last bin everything above ``e_{bins-1}``. Values outside the fitted range land in the end
bins; NaN or infinite input raises `QuantizerError`.

- `UniformQuantizer`: equal-width bins between the training minimum and maximum.
  ``UniformQuantizer(4).fit([0, 1])`` has edges 0.25, 0.5, 0.75: 0.1 -> 0, 0.5 -> 1, 0.9 -> 3.
- `QuantileQuantizer`: edges at the training quantiles ``k / bins`` (numpy's default linear
  interpolation), so symbols are about equally frequent. ``QuantileQuantizer(2).fit([1, 2, 3,
  4])`` has the edge 2.5: 1, 2 -> 0 and 3, 4 -> 1.
- `MuLawQuantizer`: centre on the training median, scale by the largest training deviation,
  compand with mu-law ``sign(z) ln(1 + mu |z|) / ln(1 + mu)`` and cut [-1, 1] into equal bins:
  fine steps near the centre, coarse ones in the tails (as in G.711 audio).

A constant training signal has all edges equal: every value equal to it maps to bin 0 for the
uniform and quantile quantizers (the mu-law one maps it to its centre bin ``(bins - 1) // 2``),
larger values to the last bin.

`make_quantizer` builds one from a short spec such as ``"uniform:64"`` or ``"mulaw:256"``, so
experiment configs can name them.
"""

from __future__ import annotations

import math
from typing import Any, Protocol

import numpy as np

#: The default for `MuLawQuantizer`'s mu, as in 8-bit G.711 mu-law.
DEFAULT_MU = 255.0
MIN_BINS = 2


class QuantizerError(ValueError):
    """Invalid quantizer parameters or input (NaN, infinity, empty, not fitted)."""


class Quantizer(Protocol):
    """What a dataset needs from a quantizer; any object with these methods can be plugged in."""

    bins: int

    def fit(self, values: Any) -> Quantizer: ...

    def transform(self, values: Any) -> np.ndarray: ...

    def describe(self) -> str: ...


def _finite_1d(values: Any, what: str) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64).ravel()
    if array.size == 0:
        raise QuantizerError(f"cannot {what} an empty signal")
    bad = ~np.isfinite(array)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise QuantizerError(
            f"cannot {what} a signal with NaN or infinite values "
            f"({int(bad.sum())} of {array.size}, first at index {first}); "
            "drop or interpolate them first")
    return array


def _check_bins(bins: int) -> int:
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < MIN_BINS:
        raise QuantizerError(f"bins must be an integer >= {MIN_BINS}, got {bins!r}")
    return int(bins)


def _fractions(bins: int) -> np.ndarray:
    """The interior cut points ``k / bins`` for k = 1 .. bins-1."""
    return np.arange(1, bins) / bins


class _EdgeQuantizer:
    """Shared part: fitted interior edges and the binning rule of the module docstring."""

    name = "edges"

    def __init__(self, bins: int):
        self.bins = _check_bins(bins)
        self.edges: np.ndarray | None = None

    def _fit_edges(self, values: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _prepare(self, values: np.ndarray) -> np.ndarray:
        return values

    def fit(self, values: Any) -> _EdgeQuantizer:
        """Fit the edges on training samples; returns self."""
        self.edges = self._fit_edges(_finite_1d(values, "fit a quantizer on"))
        return self

    def transform(self, values: Any) -> np.ndarray:
        """Symbols in ``0 .. bins-1`` (int64), one per sample."""
        if self.edges is None:
            raise QuantizerError(f"{type(self).__name__} is not fitted: call fit() first")
        array = self._prepare(_finite_1d(values, "quantize"))
        return np.searchsorted(self.edges, array, side="left").astype(np.int64)

    def fit_transform(self, values: Any) -> np.ndarray:
        return self.fit(values).transform(values)

    def describe(self) -> str:
        return f"{self.name}:{self.bins}"

    def __repr__(self) -> str:
        state = "fitted" if self.edges is not None else "unfitted"
        return f"{type(self).__name__}(bins={self.bins}, {state})"


class UniformQuantizer(_EdgeQuantizer):
    """Equal-width bins over the training range ``[min, max]``."""

    name = "uniform"

    def _fit_edges(self, values: np.ndarray) -> np.ndarray:
        low, high = float(values.min()), float(values.max())
        return low + (high - low) * _fractions(self.bins)


class QuantileQuantizer(_EdgeQuantizer):
    """Edges at the training quantiles, so each symbol covers about ``1 / bins`` of the samples.

    Heavily repeated values can make edges coincide; the bins between them stay empty.
    """

    name = "quantile"

    def _fit_edges(self, values: np.ndarray) -> np.ndarray:
        return np.quantile(values, _fractions(self.bins))


class MuLawQuantizer(_EdgeQuantizer):
    """Mu-law companding around the training median, then equal-width bins on [-1, 1].

    ``z = clip((x - centre) / scale, -1, 1)`` with ``centre`` the training median and ``scale``
    the largest absolute training deviation from it (1 for a constant signal);
    ``y = sign(z) * ln(1 + mu |z|) / ln(1 + mu)``.
    """

    name = "mulaw"

    def __init__(self, bins: int, mu: float = DEFAULT_MU):
        super().__init__(bins)
        if not (isinstance(mu, (int, float)) and math.isfinite(mu) and mu > 0):
            raise QuantizerError(f"mu must be a positive finite number, got {mu!r}")
        self.mu = float(mu)
        self.centre = 0.0
        self.scale = 1.0

    def _fit_edges(self, values: np.ndarray) -> np.ndarray:
        self.centre = float(np.median(values))
        deviation = float(np.max(np.abs(values - self.centre)))
        self.scale = deviation if deviation > 0 else 1.0
        # 2k/bins - 1 is exactly 0 at k = bins/2, so the centre sits on an edge for even bins.
        return 2.0 * _fractions(self.bins) - 1.0

    def compand(self, values: Any) -> np.ndarray:
        """The companded values ``y`` in [-1, 1] (before binning)."""
        z = np.clip((np.asarray(values, dtype=np.float64) - self.centre) / self.scale, -1.0, 1.0)
        return np.sign(z) * np.log1p(self.mu * np.abs(z)) / math.log1p(self.mu)

    def _prepare(self, values: np.ndarray) -> np.ndarray:
        return self.compand(values)

    def describe(self) -> str:
        return f"mulaw:{self.bins}:mu={self.mu:g}"


QUANTIZERS: dict[str, type[_EdgeQuantizer]] = {
    "uniform": UniformQuantizer,
    "quantile": QuantileQuantizer,
    "mulaw": MuLawQuantizer,
}


def make_quantizer(spec: str | Quantizer) -> Quantizer:
    """A fresh quantizer from ``"<name>:<bins>"`` (name in `QUANTIZERS`), or `spec` itself.

    >>> make_quantizer("quantile:16")
    QuantileQuantizer(bins=16, unfitted)
    """
    if not isinstance(spec, str):
        return spec
    name, _, bins = spec.partition(":")
    if name not in QUANTIZERS or not bins.isdigit():
        raise QuantizerError(
            f"quantizer spec must be '<name>:<bins>' with name in {sorted(QUANTIZERS)}, "
            f"got {spec!r}")
    return QUANTIZERS[name](int(bins))
