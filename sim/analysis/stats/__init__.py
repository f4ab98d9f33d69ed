"""Statistics for tournaments: streamed moments, histograms, W/D/L, SPRT and ratings.

Pure functions and small accumulators over plain numbers and numpy arrays; this package imports
numpy and the standard library only, never the engine, so it can be used on any results. Its
modules, one per kind of figure, each importing only the ones before it in this list:

- ``quantiles``: the normal and Student t quantiles (``norm_ppf``, ``t_ppf``);
- ``moments``: ``Moments``, ``ClusterMoments``, ``stratified_ci``, ``cross_cov``, ``holm``,
  ``mean_ci``;
- ``histogram``: ``Histogram``;
- ``ratings``: ``bradley_terry`` and its fit's checks, Elo (``elo_from_bt``, ``elo_from_wdl``,
  ``elo_from_score``, ``score_interval``);
- ``win_draw_loss``: ``WDL``, ``wdl``;
- ``sprt``: ``sprt_llr``, ``sprt_bounds``, ``SPRT``;
- ``swings``: ``Swings``;
- ``partners``: team strengths, compatibility and individual strengths of mixed teams on shared
  deals (``team_types``, ``partner_pairings``, ``pairing_means``, ``partners_fit``,
  ``partners_from_deals``).

Every public name is also here, ``from sim.analysis.stats import Moments``.

Duplicate deals
---------------
A head-to-head between strategies A and B is played as duplicate pairs: each deal twice with the
teams swapped. The unit of observation is one pair and its result is one real number ``x`` (A's
mean settlement points per deal per player over the two deals; B gets ``-x``). Pairs are
independent, so every estimate here treats the ``x`` values as i.i.d.; never feed the single
deals of a pair as two observations (they are strongly correlated by the shared cards).

- mean with a confidence interval: ``Moments().add(x).ci()`` or ``mean_ci(x)``;
- distribution of ``x`` or of raw card-point scores: ``Histogram``;
- share of pairs won / tied / lost: ``WDL`` or ``wdl(x)``;
- early stopping of a head-to-head: ``SPRT``;
- ratings of a round robin: ``bradley_terry`` then ``elo_from_bt``.

Streaming
---------
Tournaments may run 10 million deals, so every accumulator keeps only sufficient statistics
(counts and sums), ``merge``s exactly across chunks or workers and round-trips through JSON with
``to_dict`` / ``from_dict`` for resumable runs.

Errors
------
Bad input raises ``sim.errors.StatsError`` (a ``ShuangkouError``, so a ``ValueError``) whose
message quotes the input; ``sim.errors`` is the one module of the package it imports (no
engine, no numba).
"""

from __future__ import annotations

from sim.analysis.stats.histogram import Histogram
from sim.analysis.stats.moments import (
    T_NORMAL_FROM,
    ClusterMoments,
    Moments,
    cross_cov,
    holm,
    mean_ci,
    stratified_ci,  # noqa: F401 (public, outside __all__ as before the split)
)
from sim.analysis.stats.partners import (
    pairing_means,
    partner_pairings,
    partners_fit,
    partners_from_deals,
    team_types,
)
from sim.analysis.stats.quantiles import norm_ppf, t_ppf
from sim.analysis.stats.ratings import (
    ELO_PER_NAT,
    WDL_CONTINUITY,  # noqa: F401 (likewise)
    WDL_EXACT_UPTO,  # noqa: F401
    bradley_terry,
    bt_cluster_meat,
    bt_firth_draws,
    bt_goodness_of_fit,
    chi2_sf,
    elo_from_bt,
    elo_from_score,
    elo_from_wdl,
    newton_ascent,  # noqa: F401
    score_interval,
)
from sim.analysis.stats.sprt import (
    SPRT,
    SPRT_MIN_PAIRS,  # noqa: F401
    SPRT_SAFE_MIN_PAIRS,  # noqa: F401
    sprt_bounds,
    sprt_llr,
)
from sim.analysis.stats.swings import SWINGS_KEPT, SWINGS_SHOWN, Swings
from sim.analysis.stats.win_draw_loss import WDL, wdl

__all__ = [
    "ELO_PER_NAT", "SPRT", "SWINGS_KEPT", "SWINGS_SHOWN", "T_NORMAL_FROM", "WDL",
    "ClusterMoments", "Histogram", "Moments", "Swings",
    "bradley_terry", "bt_cluster_meat", "bt_firth_draws", "bt_goodness_of_fit", "chi2_sf",
    "cross_cov",
    "elo_from_bt", "elo_from_score", "elo_from_wdl", "holm", "mean_ci", "norm_ppf",
    "pairing_means", "partner_pairings", "partners_fit", "partners_from_deals",
    "score_interval", "sprt_bounds", "sprt_llr", "t_ppf", "team_types", "wdl",
]
