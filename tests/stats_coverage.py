"""Coverage figures of the tournament statistics (issue 19 items 1.1-1.3), printed.

Not a test (pytest collects only test_*.py): the tests in tests/test_stats.py assert bounds
on smaller versions of these; this prints the figures quoted in docs/tournaments.md.

    python tests/stats_coverage.py elo            # 1.1: head-to-head Elo interval, exact
    python tests/stats_coverage.py draws          # issue 32: the same with most pairs drawn
    python tests/stats_coverage.py holm [REPS]    # issue 32: Holm's family-wise error, 30 pairs
    python tests/stats_coverage.py players [REPS] # 1.2: players' intervals, simulated
    python tests/stats_coverage.py ratings [REPS] # 1.2/1.3: ratings and the fit's false alarms
    python tests/stats_coverage.py blocks RUN_DIR BLOCK  # 1.2/1.3 on blocks of a real run

``blocks`` needs a finished round robin of 4 players with its per-deal table (e.g. random,
greedy, random(show_prob=0.05), random(show_prob=1.0), 40,000 deals, seed 1919).
"""

from __future__ import annotations

import math
import sys

import numpy as np
from scipy.special import ndtr
from scipy.stats import multinomial

from sim.analysis.stats import (
    ELO_PER_NAT,
    WDL,
    ClusterMoments,
    Moments,
    score_interval,
    stratified_ci,
)
from sim.analysis.stats.quantiles import critical
from sim.analysis.stats.ratings import _beta_ppf, _wdl_profile_draws
from sim.analysis.summary import _cross, _ratings, deal_clustering

TAU, SIGMA = 1.0, 0.88  # a player's results against two opponents correlate 0.36


def pairs_of(k: int) -> list[tuple[int, int]]:
    return [(i, j) for i in range(k) for j in range(i + 1, k)]


def state_of(k: int, x2: np.ndarray) -> dict:
    """A run's state from twice the pair results, ``(deals, matchups)``."""
    ms = []
    for m, (a, b) in enumerate(pairs_of(k)):
        v = x2[:, m]
        x = v / 2
        ms.append({"index": m, "a": a, "b": b, "tally": {
            "pairs": Moments(v.size, float(x.sum()), float((x * x).sum())).to_dict(),
            "wdl": WDL(int((v > 0).sum()), int((v == 0).sum()), int((v < 0).sum())).to_dict()}})
    return {"players": [f"p{i}" for i in range(k)], "matchups": ms,
            "deal_moments": ClusterMoments(len(ms)).add(x2).to_dict()}


def latent(rng: np.random.Generator, k: int, deals: int) -> np.ndarray:
    pairs = pairs_of(k)
    a, b = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    u = rng.standard_normal((deals, k)) * TAU
    return u[:, a] - u[:, b] + rng.standard_normal((deals, len(pairs))) * SIGMA


def player_cis(st: dict, k: int, clustered: bool) -> list[tuple[float, float, float]]:
    cross_var, _, clusters = deal_clustering(st)
    out = []
    for i in range(k):
        strata = []
        for m in st["matchups"]:
            p = Moments.from_dict(m["tally"]["pairs"])
            if i in (m["a"], m["b"]):
                strata.append(p if m["a"] == i else Moments(p.n, -p.total, p.total_sq))
        kw = {"cross_var": cross_var[i], "clusters": clusters} if clustered else {}
        out.append(stratified_ci(strata, **kw))
    return out


def bt_sim(rng: np.random.Generator, k: int, deals: int, theta: np.ndarray,
           draw: float = 0.25) -> np.ndarray:
    """Scores with exact Bradley-Terry marginals, correlated through a Gaussian copula."""
    pairs = pairs_of(k)
    a, b = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    s = 1.0 / (1.0 + np.exp(theta[b] - theta[a]))
    d = draw * np.minimum(1.0, np.minimum(2 * s, 2 * (1 - s)))
    w = s - d / 2
    g = latent(rng, k, deals) / math.sqrt(2 * TAU ** 2 + SIGMA ** 2)
    u = ndtr(g)
    sign = np.where(u > 1 - w, 1, np.where(u < 1 - w - d, -1, 0))
    return sign * (1 + np.rint(2 * np.abs(g))).astype(np.int64)


def elo() -> None:
    """Exact coverage of ``score_interval`` (every outcome of the trinomial enumerated), and
    its mean width against the likelihood-ratio interval it replaced (issue 32)."""
    rows = []
    widths: dict[int, list[tuple[float, float]]] = {}
    for n in (30, 50, 100, 200, 300, 500, 700, 1000):
        w, d, l_ = outcomes(n)
        lo, hi = score_interval(w, d, l_)
        lo0, hi0 = lr_interval_before(w, d, l_)
        for mu in np.geomspace(0.004, 0.5, 25):
            for share in (0.0, 0.5, 1.0):
                p_d = share * min(mu, 0.3)
                probs = [mu - p_d / 2, p_d, 1 - mu - p_d / 2]
                cover, width = exact_coverage(lo, hi, w, d, l_, mu, probs)
                width0 = exact_coverage(lo0, hi0, w, d, l_, mu, probs)[1]
                rows.append((cover, n, mu, share))
                widths.setdefault(n, []).append((width0, width))
    rows.sort()
    print(f"exact coverage over {len(rows)} cases (30-1,000 pairs, pair score 0.004-0.5, "
          f"draws none/half/all of the non-loss mass up to 0.3): min {rows[0][0]:.4f} "
          f"(n={rows[0][1]}, score={rows[0][2]:.4f}), max {rows[-1][0]:.4f}")
    for n, v in widths.items():
        b, a = np.mean(v, axis=0)
        print(f"  {n} pairs: mean width {b:.5f} before (likelihood ratio), {a:.5f} now "
              f"({100 * (a / b - 1):+.1f}%)")


def outcomes(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every (wins, draws, losses) with ``wins + draws + losses = n``."""
    w, d = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    keep = w + d <= n
    return w[keep], d[keep], n - w[keep] - d[keep]


def draw_heavy(mu: float, r: float) -> list[float]:
    """Win/draw/loss probabilities of mean score ``mu`` whose draws are ``r`` of their
    maximum, ``1 - |2 mu - 1|``."""
    p_d = r * (1.0 - abs(2.0 * mu - 1.0))
    return [mu - p_d / 2, p_d, 1.0 - mu - p_d / 2]


def exact_coverage(lo: np.ndarray, hi: np.ndarray, w: np.ndarray, d: np.ndarray,
                   l_: np.ndarray, mu: float, probs: list[float]) -> tuple[float, float]:
    """Exact coverage of ``mu`` and mean width of intervals ``(lo, hi)`` given for every
    outcome ``(w, d, l_)`` of ``n`` results drawn with ``probs`` (multinomial pmf)."""
    pmf = multinomial.pmf(np.stack([w, d, l_], 1), w[0] + d[0] + l_[0], probs)
    return float(pmf[(lo <= mu) & (mu <= hi)].sum()), float(pmf @ (hi - lo))


def lr_interval_before(w: np.ndarray, d: np.ndarray, l_: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray]:
    """``score_interval`` as it was before issue 32 (for the before/after table): the profile
    likelihood-ratio interval, widened to Clopper-Pearson on the side of at most 20 wins plus
    draws (upper bound) or losses plus draws (lower bound)."""
    def xlogy(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            out = x * np.log(np.where(y > 0.0, y, 1.0))
        return np.where(x > 0.0, np.where(y > 0.0, out, -np.inf), 0.0)

    def lr(mu: np.ndarray) -> np.ndarray:
        u = _wdl_profile_draws(w, d, l_, mu)
        n = w + d + l_
        return 2.0 * (xlogy(w, w / n) + xlogy(d, d / n) + xlogy(l_, l_ / n)
                      - xlogy(w, mu - u) - xlogy(d, 2.0 * u) - xlogy(l_, 1.0 - mu - u))

    w, d, l_ = (np.asarray(v, dtype=np.float64) for v in (w, d, l_))
    crit, n = critical(0.95) ** 2, w + d + l_
    s = (w + 0.5 * d) / n
    bounds = []
    for side in (0, 1):
        near, far = s.copy(), np.full_like(s, float(side))
        for _ in range(64):
            mid = 0.5 * (near + far)
            inside = lr(mid) <= crit
            near, far = np.where(inside, mid, near), np.where(inside, far, mid)
        bounds.append(np.where(lr(np.full_like(s, float(side))) <= crit, float(side), near))
    lo, hi = bounds
    x = w + 0.5 * d
    for i in np.nonzero((l_ + d <= 20) | (w + d <= 20))[0]:
        if l_[i] + d[i] <= 20 and x[i] > 0:
            lo[i] = min(lo[i], _beta_ppf(0.025, x[i], n[i] - x[i] + 1.0))
        if w[i] + d[i] <= 20 and x[i] < n[i]:
            hi[i] = max(hi[i], _beta_ppf(0.975, x[i] + 1.0, n[i] - x[i]))
    return lo, hi


DRAW_NS = (40, 100, 300)
DRAW_MUS = np.round(np.arange(0.30, 0.70001, 0.01), 2)
DRAW_SHARES = np.round(np.arange(0.80, 0.97001, 0.01), 2)


def draws() -> None:
    """Exact coverage of the head-to-head interval when most pairs are drawn, before (the
    likelihood-ratio interval) and after issue 32 (the score interval)."""
    shown_mu = (0.3, 0.4, 0.45, 0.5)
    for name, fn in (("before (likelihood ratio)", lr_interval_before),
                     ("after (score, continuity-corrected)", score_interval)):
        print(f"{name}: exact coverage, mean score 0.30-0.70 by 0.01, draws 80-97% of their "
              f"maximum by 1%")
        print("| pairs | min coverage | at (score, draw share) | mean width | "
              + " | ".join(f"{m:.2f}/{r:.2f}" for m in shown_mu for r in (0.8, 0.97)) + " |")
        for n in DRAW_NS:
            w, d, l_ = outcomes(n)
            lo, hi = fn(w, d, l_)
            cells = {(mu, r): exact_coverage(lo, hi, w, d, l_, mu, draw_heavy(mu, r))
                     for mu in DRAW_MUS for r in DRAW_SHARES}
            (mu0, r0), (c0, _) = min(cells.items(), key=lambda kv: kv[1][0])
            width = np.mean([v[1] for v in cells.values()])
            print(f"| {n} | {c0:.4f} | {mu0:.2f}, {r0:.2f} | {width:.4f} | "
                  + " | ".join(f"{cells[(m, r)][0]:.3f}" for m in shown_mu for r in (0.8, 0.97))
                  + " |")


def null_round_robin(rng: np.random.Generator, k: int, pairs: int, shape: str) -> np.ndarray:
    """Twice the pair results of a round robin of ``k`` equal players (mean 0 in every
    matchup), correlated by deal: ``bt`` results of 1/2 to 5/2 points and about 25% drawn
    pairs (``bt_sim``); ``round``, the rounded latent results (about 24% drawn); ``heavy``,
    heavy-tailed ones (its square, about 45% drawn)."""
    if shape == "bt":
        return bt_sim(rng, k, pairs, np.zeros(k))
    g = latent(rng, k, pairs)
    return (np.rint(g) if shape == "round" else np.sign(g) * np.floor(g * g)).astype(np.int64)


def holm_fwer(rng: np.random.Generator, k: int, pairs: int, shape: str,
              reps: int) -> dict[str, float]:
    """Family-wise error of the cross table's Holm marks over ``reps`` null round robins:
    ``now`` (the summary's marks, ``Moments.p_value``), and Student's t with ``n - 1``
    degrees of freedom or the normal as the reference of the t statistic."""
    from scipy.stats import norm, t

    hits = {"now": 0, "student t": 0, "normal (before)": 0}
    m = k * (k - 1) // 2
    for _ in range(reps):
        x2 = null_round_robin(rng, k, pairs, shape)
        cross = _cross(state_of(k, x2), k)
        hits["now"] += any(c["holm"] for row in cross for c in row if c)
        x = x2 / 2.0
        sd = x.std(0, ddof=1)
        tt = np.where(sd > 0, np.abs(x.mean(0)) * math.sqrt(pairs) / np.where(sd > 0, sd, 1), 0)
        hits["student t"] += bool((2 * t.sf(tt, pairs - 1) <= 0.05 / m).any())
        hits["normal (before)"] += bool((2 * norm.sf(tt) <= 0.05 / m).any())
    return {key: v / reps for key, v in hits.items()}


def holm_table(reps: int) -> None:
    rng = np.random.default_rng(32)
    print(f"family-wise error of the Holm marks, 30 pairs a matchup, {reps} null round robins "
          f"a row (standard error <= {math.sqrt(0.06 * 0.94 / reps):.4f})")
    print("| players | results | now (score statistic) | Student t | normal (before) |")
    print("|---|---|---|---|---|")
    for shape in ("bt", "round", "heavy"):
        for k in (4, 5, 6):
            f = holm_fwer(rng, k, 30, shape, reps)
            print(f"| {k} | {shape} | {f['now']:.4f} | {f['student t']:.4f} | "
                  f"{f['normal (before)']:.4f} |")


def players(reps: int) -> None:
    rng = np.random.default_rng(19)
    for k, deals in ((4, 30), (4, 200), (5, 500), (5, 2000)):
        mu = np.linspace(-0.6, 0.6, k)
        pairs = pairs_of(k)
        a, b = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
        truth = [np.mean([(mu[p] - mu[q]) / 2 * (1 if p == i else -1)
                          for p, q in pairs if i in (p, q)]) for i in range(k)]
        hits = {True: [], False: []}
        for _ in range(reps):
            st = state_of(k, np.rint(mu[a] - mu[b] + latent(rng, k, deals)).astype(np.int64))
            for c in hits:
                hits[c] += [lo <= t <= hi for (_, lo, hi), t in
                            zip(player_cis(st, k, c), truth, strict=True)]
        print(f"players, {k} players, {deals} deals: clustered {np.mean(hits[True]):.4f}, "
              f"independent strata {np.mean(hits[False]):.4f} ({len(hits[True])} intervals)")


def ratings(reps: int) -> None:
    rng = np.random.default_rng(19)
    for k, deals in ((4, 200), (5, 500), (5, 2000)):
        theta = np.linspace(-1.0, 1.0, k)
        truth = ELO_PER_NAT * (theta - theta.mean())
        hc, hu, alarms, ps = [], [], 0, []
        for _ in range(reps):
            st = state_of(k, bt_sim(rng, k, deals, theta))
            _, cov_y, _ = deal_clustering(st)
            r, fit = _ratings(st, k, cov_y)
            r0, _ = _ratings(st, k, None)
            hc += [e["lo"] <= t <= e["hi"] for e, t in zip(r, truth, strict=True)]
            hu += [e["lo"] <= t <= e["hi"] for e, t in zip(r0, truth, strict=True)]
            alarms += fit["misfit"]
            ps.append(fit["p"])
        print(f"ratings, {k} players, {deals} deals: clustered {np.mean(hc):.4f}, unclustered "
              f"{np.mean(hu):.4f}; fit warnings (p < 0.01) {alarms / reps:.4f}, "
              f"P(p < 0.05) {np.mean(np.array(ps) < 0.05):.4f} ({reps} round robins)")


def blocks(run_dir: str, block: int) -> None:
    from sim.tournament.results import load_deals

    t = load_deals(run_dir, ["matchup", "deal", "orientation", "settle0", "settle1"])
    own = np.where(t["orientation"] == 0, t["settle0"], t["settle1"]).astype(np.int64)
    x2, mu, deal = own[0::2] + own[1::2], t["matchup"][0::2], t["deal"][0::2]
    m_count = int(mu.max()) + 1
    k = next(k for k in range(2, 50) if k * (k - 1) // 2 == m_count)
    x = np.stack([x2[mu == m][np.argsort(deal[mu == m])] for m in range(m_count)], axis=1)
    full = state_of(k, x)
    _, cov_y, _ = deal_clustering(full)
    truth_p = [c[0] for c in player_cis(full, k, True)]
    truth_r = [e["elo"] for e in _ratings(full, k, cov_y)[0]]
    hp = {True: [], False: []}
    hr = {True: [], False: []}
    alarms = 0
    n_blocks = x.shape[0] // block
    for j in range(n_blocks):
        st = state_of(k, x[j * block:(j + 1) * block])
        for c in hp:
            hp[c] += [lo <= v <= hi for (_, lo, hi), v in
                      zip(player_cis(st, k, c), truth_p, strict=True)]
        _, cy, _ = deal_clustering(st)
        for c in hr:
            r, fit = _ratings(st, k, cy if c else None)
            hr[c] += [e["lo"] <= v <= e["hi"] for e, v in zip(r, truth_r, strict=True)]
            alarms += bool(c and fit and fit["misfit"])
    print(f"{n_blocks} blocks of {block} deals: players clustered {np.mean(hp[True]):.4f} "
          f"(independent strata {np.mean(hp[False]):.4f}); ratings clustered "
          f"{np.mean(hr[True]):.4f} (unclustered {np.mean(hr[False]):.4f}); fit warnings in "
          f"{alarms} blocks")


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "elo"
    if what == "elo":
        elo()
    elif what == "draws":
        draws()
    elif what == "holm":
        holm_table(int(sys.argv[2]) if len(sys.argv) > 2 else 20000)
    elif what == "players":
        players(int(sys.argv[2]) if len(sys.argv) > 2 else 2000)
    elif what == "ratings":
        ratings(int(sys.argv[2]) if len(sys.argv) > 2 else 1000)
    elif what == "blocks":
        blocks(sys.argv[2], int(sys.argv[3]))
    else:
        sys.exit(f"unknown figure {what!r}: elo, draws, holm, players, ratings or blocks")
