"""Sequential tests of a head-to-head: ``sprt_llr``, ``sprt_bounds`` and ``SPRT`` (part of
``sim.analysis.stats``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from sim.analysis.stats.moments import Moments, as_values, centred_ss, check_type
from sim.analysis.stats.quantiles import check_prob
from sim.errors import StatsError

# --------------------------------------------------------------------------------------------
# SPRT
# --------------------------------------------------------------------------------------------

def sprt_llr(n: int, total: float, total_sq: float, mu0: float, mu1: float) -> float:
    """Log-likelihood ratio of H1 (mean ``mu1``) against H0 (mean ``mu0``) from sums.

    Parameters
    ----------
    n, total, total_sq : count, sum and sum of squares of the i.i.d. per-pair results.
    mu0, mu1 : the means under H0 and H1.

    Returns
    -------
    float
        ``(mu1 - mu0) * (total - n * (mu0 + mu1) / 2) / var`` with ``var`` the maximum-
        likelihood variance ``sum((x - mean)^2) / n``; 0 while ``n < 2`` or ``var`` is 0 up
        to the rounding of the float sums (``var <= 64 n eps total_sq / n``: all results
        equal, no evidence about the spread yet), instead of a huge ratio over rounding noise.

    Notes
    -----
    This is the log of ``prod N(x_i; mu1, var) / N(x_i; mu0, var)``: the ``x_i^2`` terms
    cancel, leaving ``sum(2 x_i (mu1 - mu0) - (mu1^2 - mu0^2)) / (2 var)``. The unknown
    variance is plugged in from the data, which is the Brownian-motion approximation of the
    generalized SPRT that fishtest uses (``LLR_alt2`` in fishtest's ``LLRcalc.py``, after
    M. Van den Bergh, "GSPRT approximation"): ``N * (s1 - s0) * (2 s - s0 - s1) / (2 var)``
    with the empirical (ddof=0) variance. It is valid for any distribution with finite
    variance (by the CLT), including the heavily tied per-pair results, as long as
    ``|mu1 - mu0|`` is small against the standard deviation, which is the case of interest.
    """
    if n < 2:
        return 0.0
    var = float(centred_ss(int(n), float(total), float(total_sq)) / int(n))
    if var <= 64.0 * n * _EPS * (float(total_sq) / n):  # zero up to rounding of the sums
        return 0.0
    return (mu1 - mu0) * (total - n * (mu0 + mu1) / 2.0) / var


_EPS = 2.0 ** -52  # float64 machine epsilon

SPRT_MIN_PAIRS = 200  # default: no decision before this many pairs (see SPRT)

# The fewest pairs before a decision that keep the error rates near alpha, beta with a look
# after every pair (simulated on per-pair results resampled from 400,000 real pairs of
# configs/sprt.toml's matchup, sd 1.69, 4,000 runs per cell, alpha = beta = 0.05):
#   mu1 - mu0 (in sd)   min_pairs 2      10          20          30
#   0.15                0.100/0.083   0.063/0.052  0.059/0.048  0.058/0.047
#   0.30                0.124/0.139   0.064/0.064  0.050/0.050  0.044/0.041
#   0.59                0.130/0.142   0.044/0.050  0.022/0.025  0.011/0.013
#   1.01                0.105/0.108   0.018/0.014  0.004/0.003  0.002/0.001
# (at 0.06 sd, the shipped config, 0.059/0.052 at 2 and 0.056/0.048 from 20 to 200: the
# ~0.056 left is the plug-in variance's, not the minimum's). Tournament configs refuse less.
# Reproduce: python benchmarks/sprt_asn.py rates 0.5 4000 2,10,20,30 (and 0.25, 1.0, 1.7).
SPRT_SAFE_MIN_PAIRS = 30


def sprt_bounds(alpha: float = 0.05, beta: float = 0.05) -> tuple[float, float]:
    """Wald's bounds ``(log(beta / (1 - alpha)), log((1 - beta) / alpha))`` on the LLR.

    Crossing the lower bound accepts H0, the upper H1; ``alpha`` is the false-positive rate
    (accept H1 when H0 holds), ``beta`` the false-negative rate. Wald's bounds ignore the
    overshoot, which lowers the realised error rates, while the plug-in variance of
    ``sprt_llr`` raises them a little early on; in simulation (tests/test_stats.py) they come
    out close to nominal.
    """
    alpha, beta = check_prob(alpha, "alpha"), check_prob(beta, "beta")
    if alpha + beta >= 1.0:
        raise StatsError(f"alpha + beta = {alpha + beta!r} must be < 1")
    return (math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha))


class SPRT:
    """Sequential probability ratio test of H0: mean = ``mu0`` against H1: mean = ``mu1``.

    Parameters
    ----------
    mu0, mu1 : the two hypothesised means of the per-pair result (``mu0 != mu1``); e.g.
        ``SPRT(0.0, 0.2)`` asks "is A at least 0.2 points per deal better than B, or no
        better than B?".
    alpha, beta : error rates, see ``sprt_bounds``.
    min_pairs : looks before this many pairs never decide (default ``SPRT_MIN_PAIRS``).

    Notes
    -----
    The LLR is ``sprt_llr`` of all data so far and is compared with the bounds after each
    ``update``/``update_stats`` call (a "look") once at least ``min_pairs`` pairs are in: the
    plug-in variance of a handful of pairs can be tiny, and with a look after every pair the
    huge early LLRs pushed both error rates to 12–19% instead of 5% (mu1 - mu0 = 0.5 against
    per-pair results of standard deviation ~1.7). The first look that crosses a bound fixes
    ``state``; later updates still accumulate (for reporting) but do not change the decision,
    as the sequential test's error rates require. ``update_pairs`` looks after each pair of
    its argument and adds nothing past the deciding pair (what a tournament uses, so that its
    decision does not depend on the chunk size); ``update``/``update_stats`` look once per
    call, which only adds overshoot (lowering the error rates, but costing pairs: 2.4x as many
    at configs/sprt.toml's chunks of 2,000). ``SPRT_SAFE_MIN_PAIRS`` gives the simulated
    error rates of small ``min_pairs``.
    """

    def __init__(self, mu0: float, mu1: float, alpha: float = 0.05, beta: float = 0.05,
                 min_pairs: int = SPRT_MIN_PAIRS) -> None:
        mu0, mu1 = float(mu0), float(mu1)
        if not (math.isfinite(mu0) and math.isfinite(mu1)) or mu0 == mu1:
            raise StatsError(f"SPRT means mu0={mu0!r}, mu1={mu1!r} must be finite and differ")
        if isinstance(min_pairs, bool) or not isinstance(min_pairs, (int, np.integer)) \
                or min_pairs < 1:
            raise StatsError(f"SPRT min_pairs {min_pairs!r} must be an integer >= 1")
        self.min_pairs = int(min_pairs)
        self.mu0, self.mu1 = mu0, mu1
        self.alpha, self.beta = float(alpha), float(beta)
        self._bounds = sprt_bounds(self.alpha, self.beta)
        self.moments = Moments()
        self._state = "continue"
        self.decided_at: int | None = None  # number of pairs at the deciding look

    @property
    def bounds(self) -> tuple[float, float]:
        """``(lower, upper)`` from ``sprt_bounds(alpha, beta)``."""
        return self._bounds

    @property
    def llr(self) -> float:
        """Current log-likelihood ratio of all data."""
        m = self.moments
        return sprt_llr(m.n, m.total, m.total_sq, self.mu0, self.mu1)

    @property
    def state(self) -> str:
        """``'continue'``, ``'H0'`` or ``'H1'``."""
        return self._state

    def _look(self) -> str:
        if self._state == "continue" and self.moments.n >= self.min_pairs:
            llr = self.llr
            lower, upper = self._bounds
            if llr >= upper:
                self._state = "H1"
            elif llr <= lower:
                self._state = "H0"
            if self._state != "continue":
                self.decided_at = self.moments.n
        return self._state

    def update_pairs(self, values: ArrayLike) -> int:
        """Add per-pair results in order with a look after each, up to the first look that
        decides; return how many were added.

        All of ``values`` are added while no look decides; the pair whose look crosses a bound
        is the last one added, so ``moments`` (and ``decided_at``) then cover exactly the pairs
        up to the decision. Once decided, nothing more is added (returns 0). The looks are
        those of ``update`` called with one value at a time (the same exact ``sprt_llr`` at
        every candidate crossing), so the decision does not depend on how the pairs are cut
        into calls.
        """
        v = as_values(values)
        if self._state != "continue" or not v.size:
            return 0
        m = self.moments
        n = m.n + np.arange(1, v.size + 1)
        total = np.cumsum(np.concatenate(([m.total], v)))[1:]  # as one update per pair adds
        total_sq = np.cumsum(np.concatenate(([m.total_sq], v * v)))[1:]
        # a float path finds the candidates: every look within rounding of a bound, or whose
        # variance is near zero; the exact scalar LLR decides each, in order
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            var = (total_sq - total * (total / n)) / n
            near0 = var <= 128.0 * n * _EPS * (total_sq / n)
            llr = np.where(near0, 0.0, (self.mu1 - self.mu0)
                           * (total - n * (self.mu0 + self.mu1) / 2.0) / var)
        lower, upper = self._bounds
        slack = 1e-6 * (1.0 + np.abs(llr))
        cand = np.flatnonzero((n >= self.min_pairs)
                              & ((llr >= upper - slack) | (llr <= lower + slack) | near0))
        for k in cand.tolist():
            exact = sprt_llr(int(n[k]), float(total[k]), float(total_sq[k]), self.mu0,
                             self.mu1)
            if exact >= upper or exact <= lower:
                self.moments = Moments(int(n[k]), float(total[k]), float(total_sq[k]))
                self._state = "H1" if exact >= upper else "H0"
                self.decided_at = self.moments.n
                return k + 1
        self.moments = Moments(int(n[-1]), float(total[-1]), float(total_sq[-1]))
        return int(v.size)

    def update(self, values: ArrayLike) -> str:
        """Add per-pair results, look, and return ``state``."""
        self.moments.add(values)
        return self._look()

    def update_stats(self, n: int, total: float, total_sq: float) -> str:
        """Add a chunk given by its sufficient statistics, look, and return ``state``."""
        self.moments += Moments(n, total, total_sq)
        return self._look()

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable state, including the decision."""
        return {"type": "SPRT", "mu0": self.mu0, "mu1": self.mu1, "alpha": self.alpha,
                "beta": self.beta, "min_pairs": self.min_pairs,
                "moments": self.moments.to_dict(), "state": self._state,
                "decided_at": self.decided_at, "llr": self.llr, "bounds": list(self._bounds)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SPRT:
        """Inverse of ``to_dict`` (``llr`` and ``bounds`` there are informative only)."""
        check_type(d, "SPRT")
        s = cls(d["mu0"], d["mu1"], d["alpha"], d["beta"], d.get("min_pairs", SPRT_MIN_PAIRS))
        s.moments = Moments.from_dict(d["moments"])
        if d["state"] not in ("continue", "H0", "H1"):
            raise StatsError(f"SPRT state {d['state']!r} must be 'continue', 'H0' or 'H1'")
        s._state, s.decided_at = d["state"], d["decided_at"]
        return s

    def __repr__(self) -> str:
        return (f"SPRT(mu0={self.mu0}, mu1={self.mu1}, min_pairs={self.min_pairs}, "
                f"n={self.moments.n}, "
                f"llr={self.llr:.3f}, bounds=({self._bounds[0]:.3f}, {self._bounds[1]:.3f}), "
                f"state={self._state!r})")
