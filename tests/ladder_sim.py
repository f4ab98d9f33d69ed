"""Simulated ladders for sim/analysis/ladder (issue 22): coverage and adaptive scheduling.

Not a test (pytest collects only test_*.py): tests/test_ladder.py asserts bounds on small
versions of these; this prints the figures quoted in docs/ladder.md.

    python tests/ladder_sim.py coverage [REPS] [DRAW]  # coverage of rating differences
    python tests/ladder_sim.py adaptive [SEEDS] [NEW]  # a new player: adaptive vs round robin
    python tests/ladder_sim.py speed [PAIRS]           # fit time: PAIRS pairs, 8/30/100 players

Pairs are simulated with a per-deal shared effect: on deal ``d`` player ``i`` draws
``u[d, i] ~ N(0, TAU^2)`` (how well these cards suit it), a pair of ``(i, j)`` has the latent
``(u[d, i] - u[d, j] + e) / sqrt(2 TAU^2 + SIGMA^2)`` with ``e ~ N(0, SIGMA^2)`` and its result
is cut from the latent's normal quantile so that win, draw and loss have exactly the matchup's
probabilities. Two matchups sharing a player correlate about 0.3 on one deal, as greedy-family
matchups do in a real round robin (measured: 0.29 mean signed correlation in REAL's run).
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np
from scipy.special import ndtr

from sim.analysis.ladder import LadderData, fit, schedule

TAU, SIGMA = 1.0, 1.0  # latent correlation of two matchups sharing a player: 1/3

# Real pair outcomes: a round robin of 8 built-in players, 4,000 duplicate pairs per matchup
# (seed 2222; `shuangkou tournament` with deals = 4000, players as below). Per matchup
# (A index, B index): A's pair wins, draws, losses.
REAL_PLAYERS = ["random", "greedy", "greedy(show_at=0.7)", "greedy(min_cards=20)",
                "greedy(contest_at=100)", "greedy(show_at=0.25)", "greedy(keep_pair_from=0)",
                "greedy(partner_margin=0.4)"]
REAL = {
    (0, 1): (2, 19, 3979), (0, 2): (23, 57, 3920), (0, 3): (9, 27, 3964),
    (0, 4): (20, 74, 3906), (0, 5): (1, 22, 3977), (0, 6): (2, 20, 3978),
    (0, 7): (2, 26, 3972), (1, 2): (1691, 1484, 825), (1, 3): (853, 1805, 1342),
    (1, 4): (1609, 1423, 968), (1, 5): (335, 3350, 315), (1, 6): (92, 3892, 16),
    (1, 7): (387, 3266, 347), (2, 3): (771, 1412, 1817), (2, 4): (936, 1270, 1794),
    (2, 5): (880, 1442, 1678), (2, 6): (858, 1509, 1633), (2, 7): (813, 1575, 1612),
    (3, 4): (1818, 1297, 885), (3, 5): (1347, 1724, 929), (3, 6): (1378, 1816, 806),
    (3, 7): (1401, 1777, 822), (4, 5): (988, 1366, 1646), (4, 6): (1021, 1467, 1512),
    (4, 7): (1016, 1366, 1618), (5, 6): (384, 3284, 332), (5, 7): (601, 2823, 576),
    (6, 7): (418, 3190, 392),
}


def real_probs(players: list[int]) -> dict[tuple[int, int], tuple[float, float]]:
    """(win, draw) probabilities of the first player, per matchup of ``players`` renumbered
    0..len-1, from the real round robin."""
    out = {}
    for x, i in enumerate(players):
        for y, j in enumerate(players):
            if x < y:
                w, d, l_ = REAL[(min(i, j), max(i, j))]
                if i > j:
                    w, l_ = l_, w
                n = w + d + l_
                out[(x, y)] = (w / n, d / n)
    return out


def bt_probs(elo: np.ndarray, draw: float | np.ndarray = 0.25
             ) -> dict[tuple[int, int], tuple[float, float]]:
    """(win, draw) probabilities with Bradley-Terry expected scores and ``draw`` draws (cut
    down where a score near 0 or 1 leaves no room for them)."""
    k = elo.size
    out = {}
    dr = np.broadcast_to(np.asarray(draw, dtype=float), (k, k))
    for i in range(k):
        for j in range(i + 1, k):
            p = 1.0 / (1.0 + 10.0 ** ((elo[j] - elo[i]) / 400.0))
            d = min(float(dr[i, j]), 2 * p, 2 * (1 - p))
            out[(i, j)] = (p - d / 2, d)
    return out


def simulate(rng: np.random.Generator, k: int, probs: dict[tuple[int, int], tuple[float, float]],
             counts: dict[tuple[int, int], int], first: dict[tuple[int, int], int] | None = None,
             u: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
    """Pairs ``(a, b, deal, score2)``: ``counts[m]`` pairs of matchup ``m`` on its deals
    ``first[m], first[m] + 1, ...`` (0 by default: every matchup plays the same deals).
    ``u``: the per-deal player effects (deals x k), drawn here when not given."""
    first = first or {}
    ends = [first.get(m, 0) + c for m, c in counts.items() if c > 0]
    if not ends:
        z = np.zeros(0, dtype=np.int64)
        return z.astype(np.int32), z.astype(np.int32), z, z.astype(np.int8)
    if u is None:
        u = rng.standard_normal((max(ends), k)) * TAU
    out_a, out_b, out_d, out_s = [], [], [], []
    scale = math.sqrt(2 * TAU ** 2 + SIGMA ** 2)
    for (i, j), c in counts.items():
        if c <= 0:
            continue
        deals = np.arange(first.get((i, j), 0), first.get((i, j), 0) + c)
        lat = (u[deals, i] - u[deals, j] + rng.standard_normal(c) * SIGMA) / scale
        q = ndtr(lat)
        pw, pd = probs[(i, j)]
        s2 = np.where(q > 1.0 - pw, 2, np.where(q > 1.0 - pw - pd, 1, 0))
        out_a.append(np.full(c, i, np.int32))
        out_b.append(np.full(c, j, np.int32))
        out_d.append(deals)
        out_s.append(s2.astype(np.int8))
    return (np.concatenate(out_a), np.concatenate(out_b), np.concatenate(out_d),
            np.concatenate(out_s))


def ladder(k: int, a: np.ndarray, b: np.ndarray, deal: np.ndarray,
           s2: np.ndarray) -> LadderData:
    return LadderData(names=[f"p{i}" for i in range(k)], a=a, b=b, deal=deal, score2=s2,
                      margin=(s2.astype(np.float32) - 1.0), incidents=np.zeros((k, 3), np.int64),
                      last_time=[None] * k)


# --------------------------------------------------------------------------------------------
# coverage
# --------------------------------------------------------------------------------------------

COV_ELO = np.array([0.0, 40.0, 90.0, 150.0, 230.0])  # true ratings of the coverage ladder
COV_DRAW = 0.25


def coverage(reps: int, seed: int = 1, deals: int = 400, elo: np.ndarray = COV_ELO,
             draw: float = COV_DRAW) -> dict[str, float]:
    """Share of rating differences (every pair of players) whose clustered (and naive) 95%
    interval covers the true difference, over ``reps`` ladders where every matchup plays the
    same ``deals`` deals."""
    rng = np.random.default_rng(seed)
    k = elo.size
    probs = bt_probs(elo, draw)
    counts = {m: deals for m in probs}
    hit_c = hit_n = tot = 0
    draws = 0.0
    per = np.zeros((k, k))
    for _ in range(reps):
        a, b, d, s2 = simulate(rng, k, probs, counts)
        draws += float((s2 == 1).mean())
        f = fit(ladder(k, a, b, d, s2))
        for i in range(k):
            for j in range(i + 1, k):
                true = elo[i] - elo[j]
                _, lo, hi = f.diff(i, j)
                hit_c += lo <= true <= hi
                per[i, j] += lo <= true <= hi
                _, lo, hi = f.diff(i, j, naive=True)
                hit_n += lo <= true <= hi
                tot += 1
    cell = per[np.triu_indices(k, 1)] / reps
    return {"clustered": hit_c / tot, "naive": hit_n / tot, "differences": tot,
            "draw_rate": draws / reps, "per_difference": (float(cell.min()), float(cell.max()))}


# --------------------------------------------------------------------------------------------
# adaptive scheduling against a round robin
# --------------------------------------------------------------------------------------------

GREEDY = [1, 2, 3, 4, 5, 6, 7]  # REAL's greedy family
ADAPT_NEW = 4  # the new player: greedy(contest_at=100), 32-37% draws against the others
ADAPT_FIELD = [i for i in GREEDY if i != ADAPT_NEW]  # the rated field
TARGET = 15.0  # Elo: half-width of the new player's 95% interval


def _half(f, i: int) -> float:
    return (f.hi[i] - f.lo[i]) / 2 if f.status[i] == "rated" else math.inf


def new_player(seed: int, mode: str, field: list[int] = ADAPT_FIELD, new: int = ADAPT_NEW,
               base: int = 3000, batch: int = 100, target: float = TARGET,
               limit: int = 200_000) -> int:
    """Pairs played after adding the new player (the last index) to a ladder whose matchups
    among the field already have ``base`` pairs each, until its 95% half-width is at most
    ``target`` Elo. ``mode``: "adaptive" (``schedule`` picks each batch of ``batch`` pairs,
    in chunks of 10 pairs), "round-robin" (every matchup gets an equal share) or "gauntlet"
    (the new player's matchups only, equal shares). Matchups play
    their deals in order from 0, as the ladder does."""
    rng = np.random.default_rng(seed)
    players = field + [new]
    k = len(players)
    probs = real_probs(players)
    u = rng.standard_normal((limit + base + 1, k)) * TAU  # per-deal effects, shared
    nxt = {m: 0 for m in probs}
    counts = {m: (base if m[1] < k - 1 else 0) for m in probs}
    parts = [simulate(rng, k, probs, counts, first=nxt, u=u)]
    for m in counts:
        nxt[m] += counts[m]
    played = 0
    cur = ladder(k, *parts[0])
    f = fit(cur)
    chunk = 10
    while _half(f, k - 1) > target and played < limit:
        if mode == "adaptive":
            want: dict[tuple[int, int], int] = {}
            for i, j in schedule(cur, f, batch // chunk, pairs=chunk):
                m = (min(i, j), max(i, j))
                want[m] = want.get(m, 0) + chunk
        else:  # equal shares: of every matchup, or of the new player's only ("gauntlet")
            ms = [m for m in probs if mode == "round-robin" or m[1] == k - 1]
            share = -(-batch // len(ms))
            want = {m: share for m in ms}
        parts.append(simulate(rng, k, probs, want, first=dict(nxt), u=u))
        for m, c in want.items():
            nxt[m] += c
            played += c
        cur = ladder(k, *(np.concatenate([p[x] for p in parts]) for x in range(4)))
        f = fit(cur)
    return played


def speed(pairs: int = 10_000_000, k: int = 8, seed: int = 3,
          repeat: int = 3) -> dict[str, float]:
    """Seconds to fit a ladder of ``pairs`` pairs among ``k`` players (every matchup on deals
    0, 1, 2, ...)."""
    rng = np.random.default_rng(seed)
    elo = np.linspace(0.0, 300.0, k)
    probs = bt_probs(elo)
    per = pairs // len(probs)
    a = np.repeat(np.array([m[0] for m in probs], np.int32), per)
    b = np.repeat(np.array([m[1] for m in probs], np.int32), per)
    deal = np.tile(np.arange(per, dtype=np.int64), len(probs))
    pw = np.repeat(np.array([probs[m][0] for m in probs]), per)
    pd = np.repeat(np.array([probs[m][1] for m in probs]), per)
    q = rng.random(a.size)
    s2 = np.where(q < pw, 2, np.where(q < pw + pd, 1, 0)).astype(np.int8)
    data = ladder(k, a, b, deal, s2)
    best = (math.inf, math.inf)
    for _ in range(repeat):  # the least of a few: the machine may be shared
        t, c = time.perf_counter(), time.process_time()
        f = fit(data)
        best = min(best, (time.perf_counter() - t, time.process_time() - c))
    t = time.perf_counter()
    schedule(data, f, 8)
    return {"pairs": float(a.size), "players": k, "fit_s": best[0], "fit_cpu_s": best[1],
            "schedule_s": time.perf_counter() - t}


def main(argv: list[str]) -> None:
    what = argv[0] if argv else "coverage"
    if what == "coverage":
        reps = int(argv[1]) if len(argv) > 1 else 2000
        draw = float(argv[2]) if len(argv) > 2 else COV_DRAW
        r = coverage(reps, draw=draw)
        n = r["differences"]
        print(f"{reps} ladders of {COV_ELO.size} players, every matchup on the same 400 deals, "
              f"draw rate {r['draw_rate']:.3f}: coverage of the {n} rating differences: "
              f"clustered {r['clustered']:.4f} (+/- {1.96 * math.sqrt(0.95 * 0.05 / n):.4f} "
              f"binomial, differences of one ladder correlate; each difference alone "
              f"{r['per_difference'][0]:.4f}-{r['per_difference'][1]:.4f}), "
              f"naive {r['naive']:.4f}")
    elif what == "adaptive":
        seeds = int(argv[1]) if len(argv) > 1 else 5
        new = int(argv[2]) if len(argv) > 2 else ADAPT_NEW
        field = [i for i in GREEDY if i != new]
        dr = [REAL[(min(i, new), max(i, new))][1] / 4000 for i in field]
        print(f"new player {REAL_PLAYERS[new]} (draws {min(dr):.0%}-{max(dr):.0%} against the "
              f"field), field {', '.join(REAL_PLAYERS[i] for i in field)}")
        ratios = []
        for s in range(seeds):
            ad = new_player(s, "adaptive", field=field, new=new)
            rr = new_player(s, "round-robin", field=field, new=new)
            ga = new_player(s, "gauntlet", field=field, new=new)
            ratios.append((ad / rr, ad / ga))
            print(f"seed {s}: adaptive {ad:,} pairs, round robin {rr:,} pairs (ratio "
                  f"{ad / rr:.3f}), the new player's matchups in equal shares {ga:,} "
                  f"(ratio {ad / ga:.3f})", flush=True)
        r = np.array(ratios)
        print(f"adaptive / round robin over {seeds} seeds: mean {r[:, 0].mean():.3f}, max "
              f"{r[:, 0].max():.3f}; adaptive / new player's equal shares: mean "
              f"{r[:, 1].mean():.3f}, max {r[:, 1].max():.3f}")
    elif what == "speed":
        pairs = int(argv[1]) if len(argv) > 1 else 10_000_000
        for k in (8, 30, 100):
            print(speed(pairs, k=k))
    else:
        raise SystemExit(f"unknown {what!r}: coverage, adaptive or speed")


if __name__ == "__main__":
    main(sys.argv[1:])
