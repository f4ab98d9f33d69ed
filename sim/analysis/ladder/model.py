"""The ladder's model: one Bradley-Terry fit over every duplicate pair ever played
(``fit``), the next matchups (``schedule``) and one player's rating over time (``history``).
numpy only; no engine. docs/ladder.md describes the model, the anchor, the interval, the
scheduling rule and the goodness-of-fit test.
The model
---------
Each pair of matchup ``(i, j)`` scores ``s`` = 1, 1/2, 0 for ``i`` (a win, draw, loss of the
pair: the sign of ``i``'s duplicate margin), with ``E[s] = p_ij = 1 / (1 + 10^((R_j - R_i) /
400))``: Bradley-Terry on the Elo scale, a draw counting as half a win. The ratings solve the
score equations ``sum over pairs (s - p) (e_i - e_j) = 0`` (the Bernoulli quasi-likelihood;
exactly the Bradley-Terry MLE for win/loss results), by Newton's method on the counts
aggregated per matchup (``np.bincount``), so 10 million pairs fit in a fraction of a second.

The interval
------------
Pairs of different matchups on the same deal are not independent (the same cards favour the
same kind of play), so the covariance is the sandwich ``H+ B H+`` with ``H`` the information
and ``B = G/(G-1) sum over deals g_d g_d'`` where ``g_d`` sums the score residuals of every pair
played on deal ``d`` (one cluster per deal number, ``G`` of them). It conditions on the deals
played and the matchups chosen, not on a model of the draws: it stays honest at any draw rate
and however strongly one deal's cards correlate the matchups.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sim.analysis.stats.quantiles import norm_ppf
from sim.analysis.stats.ratings import ELO_PER_NAT, chi2_sf, newton_ascent
from sim.errors import ConfigError, UsageError

CONF = 0.95  # the intervals' confidence level
BAD_FIT_P = 0.01  # goodness of fit: warn below this p-value
GOF_MAX_MATCHUPS = 300  # above this many matchups the fit test is the plain Pearson sum
GOF_MAX_WORK = 4e9  # ... and above this many deals x matchups^2 (the clustered test's cost)
GUARD_PAIRS = 10.0  # virtual pairs of variance p (1 - p) added to each matchup's meat
DOUBT_SE = 4.0  # schedule: a neighbours' gap counts fully up to this many SEs, then fades
MISFITS_SHOWN = 5  # matchups named by the goodness-of-fit line
_MEAT_CELLS = 1 << 25  # deal-by-matchup cells summed at once for the clustered covariance

# statuses of a player's rating
RATED, ABOVE, BELOW, UNRATED = "rated", "above", "below", "unrated"


@dataclass
class LadderData:
    """Everything ``show`` needs, as arrays (the core fills it from the database)."""

    names: list[str]  # player i's spec, i = 0..P-1
    a: np.ndarray  # int32[n] player index of the pair's first player
    b: np.ndarray  # int32[n] second player
    deal: np.ndarray  # int64[n] the pair's deal number (shared across matchups: cluster key)
    score2: np.ndarray  # int8[n] a's pair result in half points: 2 win, 1 draw, 0 loss
    margin: np.ndarray  # float32[n] a's duplicate margin (points per deal, a minus b)
    incidents: np.ndarray  # int64[P, 3] crashes, timeouts, illegal moves per player
    last_time: list[str | None]  # ISO time of each player's last pair
    times: np.ndarray | None = None  # float64[n] commit time per pair (history), optional
    # team entrants (docs/ladder.md "Partners"): entrant index -> its two members' indices,
    # both plain players; a team is rated as an entrant of its own and left out of the mean
    # that anchors the ratings (empty: a ladder of plain players, as before)
    teams: dict[int, tuple[int, int]] = field(default_factory=dict)


@dataclass
class LadderFit:
    """The joint fit: per player ``rating`` (Elo), ``se``, ``lo``/``hi`` (95%) and ``status``.

    ``status[i]``: ``"rated"`` (a number with an interval), ``"above"`` (the results put it
    above the rated group without bound, e.g. it won every pair: only ``lo`` is a number,
    ``rating`` is nan; shown ``> lo``), ``"below"`` (only ``hi``; ``< hi``) or ``"unrated"``
    (no pairs, or no path of games to the rated group: every value nan). ``cov`` is the
    clustered covariance of the ratings (Elo^2; nan rows for players not rated),
    ``cov_naive`` the same with every pair independent. ``anchor``: the player held at 0, or
    None (the mean rating of the rated players is 0). ``info``: the Fisher information of the
    rated players (natural-log units), which ``schedule`` reads.
    """

    names: list[str]
    rating: np.ndarray
    se: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    status: list[str]
    cov: np.ndarray
    cov_naive: np.ndarray
    anchor: str | None
    pairs: np.ndarray  # int64[P] pairs played
    wdl: np.ndarray  # int64[P, 3] pairs won, drawn, lost
    margin: np.ndarray  # float64[P] mean duplicate margin against the field (nan: no pairs)
    cross: np.ndarray  # int64[P, P, 3] W-D-L of row i against column j
    gof: dict[str, Any]
    misfits: list[dict[str, Any]]
    clusters: int  # deals (clusters) behind the covariance
    conf: float = CONF
    info: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))  # Fisher info (nats)
    anchor_elo: float = 0.0  # the anchor's rating (the mean's without an anchor)
    anchor_asked: str | None = None  # the anchor asked for (``anchor`` is None if not rated)

    def order(self) -> list[int]:
        """Player indices in ranking order: the bounded-above, the rated by rating, the
        bounded-below, then the unrated."""
        st = self.status
        above = sorted((i for i in range(len(st)) if st[i] == ABOVE), key=lambda i: -self.lo[i])
        rated = sorted((i for i in range(len(st)) if st[i] == RATED),
                       key=lambda i: (-self.rating[i], i))
        below = sorted((i for i in range(len(st)) if st[i] == BELOW), key=lambda i: -self.hi[i])
        unrated = [i for i in range(len(st)) if st[i] == UNRATED]
        return above + rated + below + unrated

    def diff(self, i: int, j: int, naive: bool = False) -> tuple[float, float, float]:
        """Rating difference ``R_i - R_j`` with its 95% interval (nan unless both rated)."""
        if self.status[i] != RATED or self.status[j] != RATED:
            return (math.nan, math.nan, math.nan)
        c = self.cov_naive if naive else self.cov
        d = float(self.rating[i] - self.rating[j])
        v = max(0.0, float(c[i, i] + c[j, j] - 2.0 * c[i, j]))
        h = z_value(self.conf) * math.sqrt(v)
        return (d, d - h, d + h)


def z_value(conf: float) -> float:
    return -norm_ppf(0.5 * (1.0 - conf))


# --------------------------------------------------------------------------------------------
# checks and aggregation
# --------------------------------------------------------------------------------------------

def _check(data: LadderData) -> int:
    p = len(data.names)
    n = np.asarray(data.a).size
    for name in ("b", "deal", "score2", "margin"):
        if np.asarray(getattr(data, name)).shape != (n,):
            raise UsageError(f"LadderData.{name} has shape {np.asarray(getattr(data, name)).shape}"
                             f"; every per-pair array must have shape ({n},) like a")
    if data.times is not None and np.asarray(data.times).shape != (n,):
        raise UsageError(f"LadderData.times has shape {np.asarray(data.times).shape}, "
                         f"not ({n},)")
    if n:
        a, b = np.asarray(data.a), np.asarray(data.b)
        if min(a.min(), b.min()) < 0 or max(a.max(), b.max()) >= p:
            raise UsageError(f"LadderData.a and .b must be player indices 0..{p - 1}")
        s = np.asarray(data.score2)
        if s.min() < 0 or s.max() > 2:
            raise UsageError("LadderData.score2 must be 0 (loss), 1 (draw) or 2 (win)")
    if np.asarray(data.incidents).shape != (p, 3):
        raise UsageError(f"LadderData.incidents has shape {np.asarray(data.incidents).shape}, "
                         f"not ({p}, 3)")
    if len(data.last_time) != p:
        raise UsageError(f"LadderData.last_time has {len(data.last_time)} entries, not {p}")
    for t, (x, y) in data.teams.items():
        if not (0 <= t < p and 0 <= x < p and 0 <= y < p) or x == y \
                or x in data.teams or y in data.teams or t in (x, y):
            raise UsageError(f"LadderData.teams[{t!r}] = {(x, y)!r}: a team is an entrant "
                             f"whose two members are two other entrants, plain players")
    return p


@dataclass
class _Agg:
    """Pairs aggregated per matchup ``(i, j)``, ``i < j``, results from ``i``'s side."""

    lo: np.ndarray  # int[M] i
    hi: np.ndarray  # int[M] j
    n: np.ndarray  # float[M] pairs
    w: np.ndarray  # float[M] i's wins
    d: np.ndarray  # float[M] draws
    code3: np.ndarray  # int[n] per pair: (a * P + b) * 3 + score2


def _aggregate(p: int, a: np.ndarray, b: np.ndarray,
               score2: np.ndarray) -> tuple[_Agg, np.ndarray]:
    """The matchups played and the W-D-L table ``cross[i, j]`` (row i's wins, draws, losses
    against j), from one ``np.bincount`` over the pairs."""
    code3 = (a.astype(np.int64) * p + b) * 3 + score2
    cnt = np.bincount(code3, minlength=p * p * 3).reshape(p, p, 3)
    if np.trace(cnt.sum(axis=2)):
        raise UsageError("LadderData has a pair of a player against itself (a == b)")
    cross = cnt[:, :, ::-1] + cnt.transpose(1, 0, 2)  # a's (W, D, L) plus b's side of it
    iu, ju = np.triu_indices(p, 1)
    c = cross[iu, ju].astype(np.float64)
    n = c.sum(axis=1)
    played = n > 0
    agg = _Agg(lo=iu[played], hi=ju[played], n=n[played], w=c[played, 0], d=c[played, 1],
               code3=code3)
    return agg, cross.astype(np.int64)


def _reach(adj: np.ndarray) -> np.ndarray:
    """Transitive closure (``r[i, j]``: a path ``i -> ... -> j``; every node reaches itself)."""
    r = adj | np.eye(adj.shape[0], dtype=bool)
    while True:
        nxt = (r.astype(np.float32) @ r.astype(np.float32)) > 0
        if np.array_equal(nxt, r):
            return r
        r = nxt


# --------------------------------------------------------------------------------------------
# the fit
# --------------------------------------------------------------------------------------------

def _laplacian(k: int, ui: np.ndarray, uj: np.ndarray, wt: np.ndarray) -> np.ndarray:
    """``U' diag(wt) U`` for the matchup incidence ``U`` (+1 at ui, -1 at uj)."""
    h = np.zeros((k, k))
    np.add.at(h, (ui, uj), -wt)
    h = h + h.T
    h[np.diag_indices(k)] = np.bincount(ui, wt, k) + np.bincount(uj, wt, k)
    return h


def _newton(k: int, ui: np.ndarray, uj: np.ndarray, n: np.ndarray, score: np.ndarray,
            max_iter: int = 200, tol: float = 1e-10) -> tuple[np.ndarray, np.ndarray]:
    """Bradley-Terry (log-strengths, mean 0) of ``k`` players from matchups ``(ui, uj)`` with
    ``n`` pairs and ``score`` (ui's score total); also returns the information matrix."""
    theta = np.zeros(k)
    jk = np.full((k, k), 1.0 / k)

    def loglik(th: np.ndarray) -> float:
        d = th[ui] - th[uj]
        return float(-(score * np.logaddexp(0.0, -d) + (n - score) * np.logaddexp(0.0, d)).sum())

    def grad_info(th: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        pr = 1.0 / (1.0 + np.exp(th[uj] - th[ui]))
        r = score - n * pr
        g = np.bincount(ui, r, k) - np.bincount(uj, r, k)
        return g, _laplacian(k, ui, uj, n * pr * (1.0 - pr))

    theta = newton_ascent(theta, loglik, grad_info, jk, max_iter, tol,
                          "the ladder's Bradley-Terry fit")
    _, h = grad_info(theta)
    return theta, h


def deal_index(deal: np.ndarray) -> tuple[np.ndarray, int]:
    """Deal numbers as cluster indices 0..D-1 over the deals played (D of them)."""
    if deal.size == 0:
        return deal.astype(np.int64), 0
    lo, hi = int(deal.min()), int(deal.max())
    if lo >= 0 and hi < 4 * deal.size + (1 << 20):  # a table over the range: no sort
        seen = np.bincount(deal, minlength=hi + 1) > 0
        remap = np.cumsum(seen) - 1
        return remap[deal], int(remap[-1]) + 1
    uniq, inv = np.unique(deal, return_inverse=True)
    return inv.astype(np.int64).ravel(), uniq.size


def deal_sums(di: np.ndarray, nd: int, ca: np.ndarray, cb: np.ndarray | None, ncol: int,
              r: np.ndarray) -> tuple[np.ndarray, int]:
    """``sum over deals h_d h_d'`` where ``h_d[c]`` sums ``r`` over the deal's pairs with
    column ``ca == c``, less ``r`` over those with ``cb == c`` (``ncol`` columns; column
    ``ncol`` collects pairs left out), and the number of deals with a pair counted."""
    width = ncol + 1
    out = np.zeros((width, width))
    inc = ca < ncol
    used = int(np.count_nonzero(np.bincount(di if inc.all() else di[inc], minlength=nd)))
    step = max(1, _MEAT_CELLS // width)
    nb = -(-nd // step)  # blocks of deals, each summed in one table
    if nb > 1:  # group the pairs by block once (a radix sort of small block numbers)
        blk = (di // step).astype(np.int16 if nb < 32767 else np.int32)
        order = np.argsort(blk, kind="stable")
        ends = np.concatenate([[0], np.cumsum(np.bincount(blk, minlength=nb))])
    for bi, d0 in enumerate(range(0, nd, step)):
        rows = min(step, nd - d0)
        if nb == 1:
            sd, sa, sb, sr = di, ca, cb, r
        else:
            sel = order[ends[bi]:ends[bi + 1]]
            sd, sa, sr = di[sel] - d0, ca[sel], r[sel]
            sb = None if cb is None else cb[sel]
        base = sd * width
        g = np.bincount(base + sa, sr, rows * width)
        if sb is not None:
            g -= np.bincount(base + sb, sr, rows * width)
        out += _gram(g.reshape(rows, width))
    return out[:ncol, :ncol], used


def _gram(g: np.ndarray, rows: int = 128) -> np.ndarray:
    """``g' g`` as a sum over blocks of ``rows`` rows: small products run on one thread, where
    one tall product spreads over every core, which on a busy machine costs several times
    more (0.31 s CPU against 0.08 s for 690,000 x 29 on 2 shared cores)."""
    n, w = g.shape
    pad = (-n) % rows
    if pad:
        g = np.concatenate([g, np.zeros((pad, w))])
    h = g.reshape(-1, rows, w)
    return np.matmul(h.transpose(0, 2, 1), h).sum(axis=0)


def _components(p: int, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Connected component label per player of the graph of matchups played."""
    lab = np.arange(p)
    while True:  # label propagation: the smallest index in each component
        m = np.minimum(lab[lo], lab[hi])
        new = lab.copy()
        np.minimum.at(new, lo, m)
        np.minimum.at(new, hi, m)
        new = new[new]
        if np.array_equal(new, lab):
            return lab
        lab = new


def _check_anchor(data: LadderData, anchor: str | None, anchor_elo: float) -> None:
    """``anchor`` a player of ``data`` (or None) and ``anchor_elo`` a finite number."""
    if anchor is not None and anchor not in data.names:
        raise ConfigError(f"anchor {anchor!r} is not a player of the ladder; players: "
                          f"{', '.join(data.names) or '(none)'}")
    if isinstance(anchor_elo, bool) or not isinstance(anchor_elo, (int, float, np.number)) \
            or not math.isfinite(anchor_elo):
        raise ConfigError(f"anchor Elo {anchor_elo!r} must be a finite number")


def _rated_group(data: LadderData, p: int, agg: _Agg, a: np.ndarray, pairs: np.ndarray,
                 anchor: str | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Which players can be rated: each player's component (``comp``), which players' results
    reach which (``reach``), and the rated group ``main`` (all False below two players)."""
    m_n, m_w, m_d = agg.n, agg.w, agg.d
    comp = _components(p, agg.lo, agg.hi)
    score_lo = m_w + 0.5 * m_d  # the lower index's score total per matchup
    adj = np.zeros((p, p), dtype=bool)  # adj[i, j]: i scored against j
    adj[agg.lo[score_lo > 0], agg.hi[score_lo > 0]] = True
    adj[agg.hi[score_lo < m_n], agg.lo[score_lo < m_n]] = True
    reach = _reach(adj)
    strong = reach & reach.T
    seed = -1
    if a.size:  # the strongly connected group holding the most pairs (in the anchor's
        best = -1.0  # component when there is an anchor)
        for i in np.argsort(-pairs, kind="stable"):
            if pairs[i] == 0:
                break
            if anchor is not None and comp[i] != comp[data.names.index(anchor)] \
                    and pairs[data.names.index(anchor)] > 0:
                continue
            grp = strong[i]
            tot = float(m_n[grp[agg.lo] & grp[agg.hi]].sum())
            if tot > best:
                best, seed = tot, int(i)
    main = strong[seed].copy() if seed >= 0 else np.zeros(p, dtype=bool)
    if main.sum() < 2:
        main[:] = False
    return comp, reach, main


def _clustered_meat(data: LadderData, p: int, agg: _Agg, a: np.ndarray, b: np.ndarray, k: int,
                    idx: np.ndarray, pos: np.ndarray, ui: np.ndarray, uj: np.ndarray,
                    pm: np.ndarray, mm: int) -> tuple[np.ndarray, np.ndarray | None, int]:
    """The clustered meat of the rated players' sandwich (``k`` of them, ``mm`` matchups),
    the matchups' residual totals' covariance ``S`` for the goodness-of-fit test (None above
    ``GOF_MAX_MATCHUPS`` or ``GOF_MAX_WORK``) and the number of deals (clusters) behind them."""
    # clustered meat: the residuals of all pairs on one deal summed. Per pair, the
    # residual of the matchup's lower index, score - p, and the matchup's column come from
    # tables indexed by (a * P + b) * 3 + score2
    row = np.full(p * p, mm, dtype=np.int64)  # column of the matchup (mm: left out)
    res = np.zeros((p * p, 3))
    lo_c, hi_c = idx[ui] * p + idx[uj], idx[uj] * p + idx[ui]
    row[lo_c] = row[hi_c] = np.arange(mm)
    res[lo_c] = np.array([0.0, 0.5, 1.0])[None, :] - pm[:, None]  # a is the lower index
    res[hi_c] = np.array([1.0, 0.5, 0.0])[None, :] - pm[:, None]  # a is the higher one
    di, nd = deal_index(np.asarray(data.deal))
    r = res.ravel()[agg.code3]
    col = np.repeat(row, 3)[agg.code3]
    if mm <= GOF_MAX_MATCHUPS and nd * (mm + 1) ** 2 <= GOF_MAX_WORK:
        s_mat, clusters = deal_sums(di, nd, col, None, mm, r)
        u = np.zeros((mm, k))
        u[np.arange(mm), ui] = 1.0
        u[np.arange(mm), uj] = -1.0
        meat_c = u.T @ s_mat @ u
    else:  # many matchups: sum per deal and player directly
        s_mat = None
        keep = col < mm
        pa_, pb_ = pos[a], pos[b]
        plo = np.where(keep, np.minimum(pa_, pb_), k)
        phi = np.where(keep, np.maximum(pa_, pb_), k)
        meat_c, clusters = deal_sums(di, nd, plo, phi, k, r)
    if clusters > 1:
        meat_c = meat_c * (clusters / (clusters - 1.0))
        if s_mat is not None:
            s_mat = s_mat * (clusters / (clusters - 1.0))
    # small-sample guard: GUARD_PAIRS virtual pairs of the largest per-pair variance
    # p (1 - p) per matchup, so that a few pairs that happen to agree (all drawn) do not
    # claim certainty; negligible once a matchup has hundreds of pairs
    meat_c = meat_c + _laplacian(k, ui, uj, GUARD_PAIRS * pm * (1.0 - pm))
    return meat_c, s_mat, clusters


def fit(data: LadderData, anchor: str | None = None, conf: float = CONF,
        anchor_elo: float = 0.0) -> LadderFit:
    """The joint Bradley-Terry fit of every pair in ``data`` (module docstring).

    ``anchor``: a player's spec held at rating ``anchor_elo`` (its interval is then empty and
    every other interval is the one of the difference to it); default None: the mean rating
    of the rated players is ``anchor_elo`` (intervals are against that mean). ``anchor_elo``
    moves every number by the same amount: differences and their intervals do not change.
    An anchor that is not rated itself (no pairs yet, or a one-sided bound) falls back to the
    mean (``LadderFit.anchor`` is then None). Players with no path of games to the rated
    group are ``"unrated"``; a player that every path of results puts above (below) the rated
    group without bound, e.g. one that won (lost) every pair, gets a one-sided bound.
    """
    p = _check(data)
    _check_anchor(data, anchor, anchor_elo)
    a = np.asarray(data.a)
    b = np.asarray(data.b)
    s2 = np.asarray(data.score2)
    agg, cross = _aggregate(p, a, b, s2)
    wdl = cross.sum(axis=1)
    pairs = wdl.sum(axis=1)
    mg = np.bincount(agg.code3 // 3, np.asarray(data.margin), p * p).reshape(p, p)
    msum = mg.sum(axis=1) - mg.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        margin = np.where(pairs > 0, msum / np.maximum(pairs, 1), np.nan)

    comp, reach, main = _rated_group(data, p, agg, a, pairs, anchor)
    k = int(main.sum())
    status = [UNRATED] * p
    rating, lo, hi, se = (np.full(p, np.nan) for _ in range(4))
    cov = np.full((p, p), np.nan)
    cov_n = np.full((p, p), np.nan)
    info = np.zeros((p, p))
    gof: dict[str, Any] = {"chi2": math.nan, "df": 0, "p": math.nan, "method": "none",
                           "matchups": 0, "clusters": 0, "warning": None}
    misfits: list[dict[str, Any]] = []
    clusters = 0
    held = None  # the anchor, when it is among the rated players (else the mean is 0)
    z = z_value(conf)
    if k >= 2:
        idx = np.flatnonzero(main)
        pos = np.full(p, -1)
        pos[idx] = np.arange(k)
        inm = main[agg.lo] & main[agg.hi]
        mm = int(inm.sum())
        ui, uj = pos[agg.lo[inm]], pos[agg.hi[inm]]
        mn, mw, md = agg.n[inm], agg.w[inm], agg.d[inm]
        theta, h = _newton(k, ui, uj, mn, mw + 0.5 * md)
        jk = np.full((k, k), 1.0 / k)
        hinv = np.linalg.inv(h + jk) - jk  # inverse information, mean-0 constraint
        pm = 1.0 / (1.0 + np.exp(theta[uj] - theta[ui]))
        # naive meat: pairs independent (per matchup sum of squared score residuals)
        var_m = mw * (1.0 - pm) ** 2 + md * (0.5 - pm) ** 2 + (mn - mw - md) * pm ** 2
        meat_n = _laplacian(k, ui, uj, var_m)
        meat_c, s_mat, clusters = _clustered_meat(data, p, agg, a, b, k, idx, pos, ui, uj,
                                                   pm, mm)
        c_cl = hinv @ meat_c @ hinv
        c_nv = hinv @ meat_n @ hinv
        t_mat = np.eye(k)
        if anchor is not None and main[data.names.index(anchor)]:
            held = anchor
            t_mat[:, pos[data.names.index(anchor)]] -= 1.0  # ratings minus the anchor's
        elif data.teams:  # the mean of the rated plain players at 0 (teams left out)
            plain = [pos[i] for i in idx if i not in data.teams]
            if plain:
                t_mat[:, plain] -= 1.0 / len(plain)
        c_cl = t_mat @ c_cl @ t_mat.T
        c_nv = t_mat @ c_nv @ t_mat.T
        e2 = ELO_PER_NAT ** 2
        rating[idx] = ELO_PER_NAT * (t_mat @ theta)
        cov[np.ix_(idx, idx)] = e2 * 0.5 * (c_cl + c_cl.T)
        cov_n[np.ix_(idx, idx)] = e2 * 0.5 * (c_nv + c_nv.T)
        info[np.ix_(idx, idx)] = h
        se[idx] = np.sqrt(np.maximum(np.diag(cov)[idx], 0.0))
        lo[idx] = rating[idx] - z * se[idx]
        hi[idx] = rating[idx] + z * se[idx]
        for i in idx:
            status[i] = RATED
        gof, misfits = _goodness(data.names, idx, ui, uj, mn, mw, md, pm, hinv, var_m, s_mat,
                                 clusters)
        # one-sided bounds for players above or below the rated group without bound
        ci = comp[idx[0]]
        up = [i for i in range(p) if comp[i] == ci and not main[i]
              and reach[i, idx[0]] and not reach[idx[0], i]]
        down = [i for i in range(p) if comp[i] == ci and not main[i]
                and reach[idx[0], i] and not reach[i, idx[0]]]
        if up or down:
            _bounds(p, agg, comp == ci, main, rating, up, down, lo, hi, status, z)
    if anchor_elo:  # the anchor (or the mean) at anchor_elo: every number moves alike
        for v in (rating, lo, hi):
            v += float(anchor_elo)
    return LadderFit(names=list(data.names), rating=rating, se=se, lo=lo, hi=hi, status=status,
                     cov=cov, cov_naive=cov_n, anchor=held, pairs=pairs, wdl=wdl,
                     margin=margin, cross=cross, gof=gof, misfits=misfits, clusters=clusters,
                     conf=conf, info=info, anchor_elo=float(anchor_elo), anchor_asked=anchor)


def _bounds(p: int, agg: _Agg, comp: np.ndarray, main: np.ndarray, rating: np.ndarray,
            up: list[int], down: list[int], lo: np.ndarray, hi: np.ndarray,
            status: list[str], z: float) -> None:
    """One-sided bounds: a fit of the whole component with one virtual drawn pair added to
    every matchup played (finite for everyone), shifted so the rated players keep their mean;
    a player above gets that fit's lower 95% end as ``> lo``, one below its upper end."""
    idx = np.flatnonzero(comp)
    k = idx.size
    pos = np.full(p, -1)
    pos[idx] = np.arange(k)
    inc = comp[agg.lo] & comp[agg.hi]
    ui, uj = pos[agg.lo[inc]], pos[agg.hi[inc]]
    n = agg.n[inc] + 1.0
    sc = agg.w[inc] + 0.5 * agg.d[inc] + 0.5
    theta, h = _newton(k, ui, uj, n, sc)
    jk = np.full((k, k), 1.0 / k)
    hinv = np.linalg.inv(h + jk) - jk
    mpos = pos[np.flatnonzero(main)]
    elo = ELO_PER_NAT * theta
    off = float(np.nanmean(rating[main]) - elo[mpos].mean())
    c = np.zeros(k)
    for i in up + down:  # each against the rated group's mean
        c[:] = 0.0
        c[pos[i]] = 1.0
        c[mpos] -= 1.0 / mpos.size
        sd = ELO_PER_NAT * math.sqrt(max(float(c @ hinv @ c), 0.0))
        if i in up:
            lo[i], status[i] = elo[pos[i]] + off - z * sd, ABOVE
        else:
            hi[i], status[i] = elo[pos[i]] + off + z * sd, BELOW


def _goodness(names: list[str], idx: np.ndarray, ui: np.ndarray, uj: np.ndarray,
              n: np.ndarray, w: np.ndarray, d: np.ndarray, pm: np.ndarray, hinv: np.ndarray,
              var_m: np.ndarray, s_mat: np.ndarray | None,
              clusters: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Do the ratings explain each matchup's score? A Wald chi-square of the matchups'
    residuals (observed less expected score total) on the ``M - (k - 1)`` dimensions the fit
    leaves, with their covariance ``A S A'`` (``A = I - W U H+ U'`` takes out what the fit
    absorbed; ``S`` the residual totals' covariance clustered by deal). Above
    ``GOF_MAX_MATCHUPS`` matchups (``s_mat`` None): the Pearson sum of squared standardised
    residuals with pairs taken as independent."""
    mm, k = n.size, hinv.shape[0]
    r = (w + 0.5 * d) - n * pm
    df = mm - (k - 1)
    wt = n * pm * (1.0 - pm)
    u = np.zeros((mm, k))
    u[np.arange(mm), ui] = 1.0
    u[np.arange(mm), uj] = -1.0
    chi2, used = 0.0, 0
    if s_mat is not None:
        a_mat = np.eye(mm) - (wt[:, None] * u) @ hinv @ u.T
        cov_r = a_mat @ s_mat @ a_mat.T
        cov_r = 0.5 * (cov_r + cov_r.T)
        sd = np.sqrt(np.maximum(np.diag(cov_r), 0.0))
        method = "Wald, clustered by deal"
        if df > 0:
            vals, vecs = np.linalg.eigh(cov_r)
            order = np.argsort(vals)[::-1][:df]
            vals, vecs = vals[order], vecs[:, order]
            ok = vals > 1e-10 * max(float(vals.max(initial=0.0)), 1e-300)
            proj = vecs[:, ok].T @ r
            chi2, used = float(np.sum(proj * proj / vals[ok])), int(ok.sum())
    else:
        lev = np.einsum("mk,kl,ml->m", u, hinv, u) * wt  # the fit's leverage per matchup
        sd = np.sqrt(np.maximum(var_m * (1.0 - lev), 0.0))
        method = "Pearson, pairs independent"
        used = max(df, 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.where(sd > 0, r / np.where(sd > 0, sd, 1.0), 0.0)
    if s_mat is None:
        chi2 = float(np.sum(z * z))
    pval = chi2_sf(chi2, used) if used > 0 else math.nan
    misfits = []
    if df > 0:
        for m in np.argsort(-np.abs(z), kind="stable")[:MISFITS_SHOWN]:
            i, j = int(idx[ui[m]]), int(idx[uj[m]])
            misfits.append({"a": i, "b": j, "player_a": names[i], "player_b": names[j],
                            "pairs": int(n[m]), "observed": float((w[m] + 0.5 * d[m]) / n[m]),
                            "expected": float(pm[m]), "z": float(z[m])})
    warning = None
    if used > 0 and pval < BAD_FIT_P:
        worst = "; ".join(f"{x['player_a']} vs {x['player_b']} scored {x['observed']:.3f}, "
                          f"the ratings expect {x['expected']:.3f} (z {x['z']:+.1f})"
                          for x in misfits if abs(x["z"]) >= 2.0) or "none stands out alone"
        warning = (f"the ratings do not explain the results (p = {pval:.2g} < {BAD_FIT_P}): "
                   f"some results are not transitive; the matchups that disagree most: {worst}")
    gof = {"chi2": chi2, "df": used, "p": pval, "method": method, "matchups": mm,
           "clusters": clusters, "warning": warning}
    return gof, misfits


# --------------------------------------------------------------------------------------------
# scheduling
# --------------------------------------------------------------------------------------------

def schedule(data: LadderData, fit: LadderFit, k: int = 1,
             pairs: int = 1) -> list[tuple[int, int]]:
    """The next ``k`` matchups (index pairs into ``data.names``), most informative first, each
    for a chunk of ``pairs`` pairs.

    The rule (docs/ladder.md "Scheduling"): first, each player that is not rated (no pairs, or
    no path of games to the rated group) is paired with the rated player nearest the middle of
    the ranking that it has played least; each player with a one-sided bound with the rated
    player nearest it (the top for one above, the bottom for one below). Then, one at a time,
    the matchup ``(i, j)`` whose next pair most reduces the sum of the variances of the rating
    differences between neighbours in the ranking, each weighted by whether their order is
    still in play: 1 while their gap ``D`` is within ``DOUBT_SE`` = 4 of its clustered standard
    errors, then ``exp(-(D / SE - 4)^2 / 2)`` (0.6 at 5 SE, 0.14 at 6, ~0 beyond 8, e.g. a
    random player 700 Elo below greedy ones): with ``S`` the inverse information of the rated
    players and ``w = p_ij (1 - p_ij)`` the Fisher information of one pair, adding it
    reduces ``Var(c' theta)`` by ``w (c' S x)^2 / (1 + w x' S x)`` (``x = e_i - e_j``,
    Sherman-Morrison); ``S`` is updated after each pick (by the information of its ``pairs``
    pairs, ``pairs * w``), so ``k`` picks spread as they should.
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise UsageError(f"k {k!r} must be an integer >= 1 (matchups to schedule)")
    if isinstance(pairs, bool) or not isinstance(pairs, (int, np.integer)) or pairs < 1:
        raise UsageError(f"pairs {pairs!r} must be an integer >= 1 (pairs per matchup picked)")
    p = len(data.names)
    if p < 2:
        return []
    out: list[tuple[int, int]] = []
    rated = [i for i in range(p) if fit.status[i] == RATED]
    order = [i for i in fit.order() if fit.status[i] == RATED]
    if not rated:  # nothing rated yet: the least played matchups, round robin style
        cnt = fit.cross.sum(axis=2)
        cand = sorted(((int(cnt[i, j]), i, j) for i in range(p) for j in range(i + 1, p)))
        while len(out) < k:
            for _, i, j in cand:
                out.append((i, j))
                if len(out) == k:
                    break
        return out
    games = fit.cross.sum(axis=2)
    mid = order[len(order) // 2]
    for i in range(p):
        if len(out) >= k:
            break
        st = fit.status[i]
        if st == UNRATED:
            ref = fit.rating[mid]
            opp = min(rated, key=lambda j: (games[i, j], abs(fit.rating[j] - ref), j))
        elif st == ABOVE:
            opp = order[0]
        elif st == BELOW:
            opp = order[-1]
        else:
            continue
        out.append((i, opp))
    if len(out) >= k or len(rated) < 2:
        base = list(out)
        while len(out) < k and base:
            out.append(base[len(out) % len(base)])
        return out[:k]
    idx = np.array(rated)
    kk = idx.size
    pos = {int(i): n for n, i in enumerate(idx)}
    h = fit.info[np.ix_(idx, idx)]
    jk = np.full((kk, kk), 1.0 / kk)
    s = np.linalg.inv(h + jk) - jk
    c = np.zeros((len(order) - 1, kk))
    doubt = np.zeros(len(order) - 1)  # how much each neighbours' order is in doubt
    for n in range(len(order) - 1):
        i, j = order[n], order[n + 1]
        c[n, pos[i]], c[n, pos[j]] = 1.0, -1.0
        gap = fit.rating[i] - fit.rating[j]
        var = max(float(fit.cov[i, i] + fit.cov[j, j] - 2.0 * fit.cov[i, j]), 1e-12)
        doubt[n] = math.exp(-0.5 * max(0.0, abs(gap) / math.sqrt(var) - DOUBT_SE) ** 2)
    ci, cj = np.triu_indices(kk, 1)
    theta = fit.rating[idx] / ELO_PER_NAT
    pr = 1.0 / (1.0 + np.exp(theta[cj] - theta[ci]))
    wt = pairs * pr * (1.0 - pr)
    while len(out) < k:
        cs = c @ s
        q = cs[:, ci] - cs[:, cj]  # c' S x for every candidate x = e_i - e_j
        quad = s[ci, ci] + s[cj, cj] - 2.0 * s[ci, cj]  # x' S x
        gain = wt * (doubt[:, None] * q * q).sum(axis=0) / (1.0 + wt * quad)
        m = int(np.argmax(gain))
        out.append((int(idx[ci[m]]), int(idx[cj[m]])))
        v = s[:, ci[m]] - s[:, cj[m]]
        s = s - wt[m] * np.outer(v, v) / (1.0 + wt[m] * quad[m])
    return out


# --------------------------------------------------------------------------------------------
# history
# --------------------------------------------------------------------------------------------

def _subset(data: LadderData, keep: np.ndarray) -> LadderData:
    return LadderData(names=data.names, a=np.asarray(data.a)[keep], b=np.asarray(data.b)[keep],
                      deal=np.asarray(data.deal)[keep], score2=np.asarray(data.score2)[keep],
                      margin=np.asarray(data.margin)[keep], incidents=data.incidents,
                      last_time=data.last_time, times=None, teams=data.teams)


def history(data: LadderData, player: int, points: int = 20,
            anchor: str | None = None, anchor_elo: float = 0.0) -> list[dict[str, Any]]:
    """``player``'s rating over time: refits on growing prefixes of the pairs in time order
    (``data.times``; without them, the arrays' order), from its first pair on (``[]`` for a
    player with no pairs). The ``points`` cut-offs are about equal numbers of pairs apart (a
    run commits many chunks in one second: cutting the clock evenly would repeat points),
    each moved to the end of its time, so a point holds every pair up to its time; repeated
    cut-offs are dropped. Each point: ``time`` (of its last pair; the pair count without
    times), ``pairs`` (the ladder's), ``player_pairs``, ``status``, ``rating``, ``lo``,
    ``hi`` (nan where not rated)."""
    p = _check(data)
    if isinstance(player, bool) or not isinstance(player, (int, np.integer)) \
            or not 0 <= player < p:
        raise UsageError(f"player {player!r} must be an index 0..{p - 1}")
    if isinstance(points, bool) or not isinstance(points, (int, np.integer)) or points < 1:
        raise UsageError(f"points {points!r} must be an integer >= 1")
    n = np.asarray(data.a).size
    if n == 0:
        return []
    t = (np.asarray(data.times, dtype=np.float64) if data.times is not None
         else np.arange(1, n + 1, dtype=np.float64))
    order = np.argsort(t, kind="stable")
    ts = t[order]
    mine = np.flatnonzero((np.asarray(data.a)[order] == player)
                          | (np.asarray(data.b)[order] == player))
    if mine.size == 0:
        return []
    first = int(mine[0])  # from the player's first pair on
    cuts = sorted({int(np.searchsorted(ts, ts[first + -(-(n - first) * q // points) - 1],
                                       side="right")) for q in range(1, points + 1)})
    out = []
    for c in cuts:
        f = fit(_subset(data, order[:c]), anchor=anchor, anchor_elo=anchor_elo)
        out.append({"time": float(ts[c - 1]), "pairs": c, "player_pairs": int(f.pairs[player]),
                    "status": f.status[player], "rating": float(f.rating[player]),
                    "lo": float(f.lo[player]), "hi": float(f.hi[player])})
    return out
