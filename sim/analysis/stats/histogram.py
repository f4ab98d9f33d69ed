"""``Histogram``: a fixed-bin histogram of a distribution (part of ``sim.analysis.stats``)."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from sim.analysis.stats.moments import Moments, as_values, check_type
from sim.errors import StatsError

# --------------------------------------------------------------------------------------------
# Histogram
# --------------------------------------------------------------------------------------------

class Histogram:
    """Counts in fixed-width bins ``[lo + k*width, lo + (k+1)*width)`` over ``[lo, hi)``, with
    underflow (``< lo``) and overflow (``>= hi``) counts, the exact min, max and ``Moments``.

    Parameters
    ----------
    lo, hi : integer range; ``hi - lo`` must be a positive multiple of ``width``.
    width : integer bin width, >= 1.

    Notes
    -----
    Queries treat every value ``v`` as the lower edge of its bin, ``L(v) <= v`` (the minimum
    seen for underflow, ``hi`` for overflow), except where min/max settle the answer. Since
    ``L`` is monotone, ``percentile`` is the exact inverse-CDF quantile of ``L(X)``, hence a
    lower bound of that of ``X`` (off by less than one bin); ``prob_ge`` is a lower and
    ``prob_le`` an upper bound.

    Exactness. ``prob_ge(x)`` is exact at every bin edge ``x`` in ``[lo, hi]``. Everything is
    exact when ``lattice`` is true (every in-range value equals its bin's lower edge: integer
    data with ``width=1``, or card-point scores, all multiples of 5, in 5-wide bins from 0) and
    the query does not fall into under/overflow: then ``P(score >= 120)``, ``P(score <= 80)``
    and the percentiles are the empirical ones. ``mean()`` is always exact (from the sums).
    """

    def __init__(self, lo: int, hi: int, width: int = 1) -> None:
        for name, val in (("lo", lo), ("hi", hi), ("width", width)):
            if isinstance(val, bool) or not isinstance(val, (int, np.integer)):
                raise StatsError(f"histogram {name} {val!r} must be an integer")
        lo, hi, width = int(lo), int(hi), int(width)
        if width < 1 or hi <= lo or (hi - lo) % width:
            raise StatsError(f"histogram range [{lo}, {hi}) must be a positive multiple of "
                             f"width {width} >= 1")
        self.lo, self.hi, self.width = lo, hi, width
        self.counts = np.zeros((hi - lo) // width, dtype=np.int64)
        self.underflow = 0
        self.overflow = 0
        self.min = math.inf
        self.max = -math.inf
        self.lattice = True
        self.moments = Moments()

    @property
    def n(self) -> int:
        """Number of values, under/overflow included."""
        return self.moments.n

    @property
    def edges(self) -> np.ndarray:
        """Lower edges of the bins (``len(counts)`` integers)."""
        return self.lo + self.width * np.arange(self.counts.size, dtype=np.int64)

    def add(self, values: ArrayLike) -> Histogram:
        """Add values (number or array-like); returns ``self``."""
        v = as_values(values)
        if not v.size:
            return self
        self.moments.add(v)
        self.min = min(self.min, float(v.min()))
        self.max = max(self.max, float(v.max()))
        under, over = v < self.lo, v >= self.hi
        self.underflow += int(under.sum())
        self.overflow += int(over.sum())
        inside = v[~(under | over)]
        k = np.floor_divide(inside - self.lo, self.width)  # exact for floats (fmod-based)
        self.counts += np.bincount(k.astype(np.int64), minlength=self.counts.size)
        if self.lattice:
            self.lattice = bool(np.all(inside == self.lo + k * self.width))
        return self

    def _check_same(self, other: Histogram) -> None:
        if not isinstance(other, Histogram):
            raise StatsError(f"cannot merge a Histogram with {other!r}")
        if (self.lo, self.hi, self.width) != (other.lo, other.hi, other.width):
            raise StatsError(f"cannot merge histograms with bins {(self.lo, self.hi, self.width)}"
                             f" and {(other.lo, other.hi, other.width)} (lo, hi, width)")

    def __iadd__(self, other: Histogram) -> Histogram:
        self._check_same(other)
        self.counts += other.counts
        self.underflow += other.underflow
        self.overflow += other.overflow
        self.min, self.max = min(self.min, other.min), max(self.max, other.max)
        self.lattice = self.lattice and other.lattice
        self.moments += other.moments
        return self

    def merge(self, other: Histogram) -> Histogram:
        """A new histogram holding the values of both."""
        self._check_same(other)
        return Histogram.from_dict(self.to_dict()).__iadd__(other)

    def mean(self) -> float:
        """Exact mean of all values added (NaN if empty)."""
        return self.moments.mean

    def _masses(self) -> tuple[np.ndarray, np.ndarray]:
        """(representative values ``L``, counts): underflow at min, bins, overflow at hi."""
        values = np.concatenate(([self.min], self.edges.astype(np.float64), [float(self.hi)]))
        counts = np.concatenate(([self.underflow], self.counts, [self.overflow]))
        return values, counts

    def percentile(self, q: float) -> float:
        """Inverse-CDF percentile: the smallest ``L(v)`` whose cumulative share is >= ``q``%.

        Parameters
        ----------
        q : percent in ``[0, 100]``.

        Returns
        -------
        float
            The lower edge of the bin that holds the ``ceil(n*q/100)``-th smallest value (rank
            at least 1, computed in exact arithmetic), raised to ``min`` if below it; NaN if
            empty. No interpolation: for integer data in width-1 bins (or any lattice data)
            this is exactly numpy's ``percentile(..., method="inverted_cdf")``.
        """
        q = float(q)
        if not 0.0 <= q <= 100.0:
            raise StatsError(f"percentile {q!r} must be in [0, 100]")
        n = self.n
        if n == 0:
            return math.nan
        rank = max(1, math.ceil(Fraction(q) * n / 100))  # exact: no 0.3*10 = 3.0000000000000004
        values, counts = self._masses()
        i = int(np.searchsorted(np.cumsum(counts), rank, side="left"))
        return max(float(values[i]), self.min)

    def prob_ge(self, x: float) -> float:
        """Share of values ``>= x``: exact at bin edges in ``[lo, hi]``, else a lower bound."""
        if self.n == 0:
            return math.nan
        if x <= self.min:
            return 1.0
        if x > self.max:
            return 0.0
        values, counts = self._masses()
        return int(counts[values >= x].sum()) / self.n

    def prob_le(self, x: float) -> float:
        """Share of values ``<= x``: exact for lattice data (see class notes), else an upper
        bound (values in ``x``'s bin above ``x`` are counted)."""
        if self.n == 0:
            return math.nan
        if x >= self.max:
            return 1.0
        if x < self.min:
            return 0.0
        values, counts = self._masses()
        return int(counts[values <= x].sum()) / self.n

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable state (``min``/``max`` are ``None`` while empty)."""
        empty = self.n == 0
        return {"type": "Histogram", "lo": self.lo, "hi": self.hi, "width": self.width,
                "counts": [int(c) for c in self.counts], "underflow": self.underflow,
                "overflow": self.overflow, "min": None if empty else self.min,
                "max": None if empty else self.max, "lattice": self.lattice,
                "moments": self.moments.to_dict()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Histogram:
        """Inverse of ``to_dict``."""
        check_type(d, "Histogram")
        h = cls(d["lo"], d["hi"], d["width"])
        counts = np.asarray(d["counts"], dtype=np.int64)
        if counts.shape != h.counts.shape or (counts < 0).any():
            raise StatsError(f"histogram counts {d['counts']!r} do not fit bins "
                             f"{(h.lo, h.hi, h.width)}")
        h.counts = counts
        h.underflow, h.overflow = int(d["underflow"]), int(d["overflow"])
        h.moments = Moments.from_dict(d["moments"])
        if h.underflow + h.overflow + int(counts.sum()) != h.moments.n:
            raise StatsError(f"histogram counts do not add up to n = {h.moments.n}")
        if h.moments.n:
            h.min, h.max = float(d["min"]), float(d["max"])
        h.lattice = bool(d["lattice"])
        return h

    def __repr__(self) -> str:
        return (f"Histogram(lo={self.lo}, hi={self.hi}, width={self.width}, n={self.n}, "
                f"underflow={self.underflow}, overflow={self.overflow})")
