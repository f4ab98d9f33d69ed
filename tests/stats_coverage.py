"""Coverage figures of the tournament statistics (issue 19 items 1.1-1.3), printed.

Not a test (pytest collects only test_*.py): the tests in tests/test_stats.py assert bounds
on smaller versions of these; this prints the figures quoted in docs/tournaments.md.

    python tests/stats_coverage.py elo            # 1.1: head-to-head Elo interval, exact
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
from sim.analysis.summary import _ratings, deal_clustering

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
    """Exact coverage of ``score_interval`` (every outcome of the trinomial enumerated)."""
    rows = []
    for n in (30, 50, 100, 200, 300, 500, 700, 1000):
        for mu in np.geomspace(0.004, 0.5, 25):
            for share in (0.0, 0.5, 1.0):
                p_d = share * min(mu, 0.3)
                probs = [mu - p_d / 2, p_d, 1 - mu - p_d / 2]
                w, d = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
                keep = w + d <= n
                w, d = w[keep], d[keep]
                l_ = n - w - d
                pmf = np.exp(multinomial.logpmf(np.stack([w, d, l_], 1), n, probs))
                big = pmf > 1e-12
                lo, hi = score_interval(w[big], d[big], l_[big])
                cover = pmf[big][(lo <= mu) & (mu <= hi)].sum() / pmf[big].sum()
                rows.append((cover, n, mu, share))
    rows.sort()
    print(f"exact coverage over {len(rows)} cases (30-1,000 pairs, pair score 0.004-0.5, "
          f"draws none/half/all of the non-loss mass up to 0.3): min {rows[0][0]:.4f} "
          f"(n={rows[0][1]}, score={rows[0][2]:.4f}), max {rows[-1][0]:.4f}")


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
    from sim.harness.results import load_deals

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
    elif what == "players":
        players(int(sys.argv[2]) if len(sys.argv) > 2 else 2000)
    elif what == "ratings":
        ratings(int(sys.argv[2]) if len(sys.argv) > 2 else 1000)
    elif what == "blocks":
        blocks(sys.argv[2], int(sys.argv[3]))
    else:
        sys.exit(f"unknown figure {what!r}: elo, players, ratings or blocks")
