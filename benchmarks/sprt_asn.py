"""The SPRT's figures in docs/tournaments.md ("SPRT") and sim/analysis/stats/sprt.py
(``SPRT_SAFE_MIN_PAIRS``), from a faithful model of configs/sprt.toml's test.

The model: per-pair results drawn with replacement from 400,000 real duplicate pairs of
configs/sprt.toml's matchup (random(show_prob=1.0) vs random, seed 12345, played here first:
about 10 s), fed to Wald's SPRT with the plug-in variance of ``sim.analysis.stats.sprt_llr``.

    python benchmarks/sprt_asn.py asn              # mean pairs to a decision, 4,000 runs:
                                                   # looks at 2,000-pair chunk ends vs per pair
    python benchmarks/sprt_asn.py rates 0.5 4000 2,10,20,30   # alpha/beta by min_pairs at
                                                   # mu1 - mu0 = 0.5 (0.3 SD), 4,000 runs each

Measured (2026-12-02): asn 6,045 (median 4,000) at chunk ends, 2,469 (median 1,854) per pair;
rates in sprt.py's table.
"""

from __future__ import annotations

import math
import os
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


def real_pairs(deals: int = 400_000, seed: int = 12345) -> np.ndarray:
    """Per-pair results ``x`` of configs/sprt.toml's matchup over ``deals`` duplicate deals."""
    from sim.tournament.config import from_dict
    from sim.tournament.results import load_deals
    from sim.tournament.run import run_tournament

    with tempfile.TemporaryDirectory() as tmp:
        cfg = from_dict({"name": "pool", "players": ["random(show_prob=1.0)", "random"],
                         "deals": deals, "seed": seed,
                         "run": {"chunk_size": 50_000, "progress": False},
                         "output": {"dir": os.path.join(tmp, "pool"), "plots": False}})
        run_tournament(cfg)
        t = load_deals(cfg.out, ["orientation", "settle0", "settle1"])
    a = np.where(t["orientation"] == 0, t["settle0"], t["settle1"]).astype(np.int64)
    return (a[0::2] + a[1::2]) / 2.0


def simulate(pool: np.ndarray, mu0: float, mu1: float, alpha: float = 0.05,
             beta: float = 0.05, min_pairs: int = 200, look_every: int = 1, runs: int = 2000,
             shift: float | None = None, block: int = 4000, max_n: int = 1_000_000,
             seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``(pairs at the decision, +1 H1 / -1 H0)`` of ``runs`` SPRTs on resampled ``pool``
    (shifted to mean ``shift`` if given), looking every ``look_every`` pairs."""
    rng = np.random.default_rng(seed)
    if shift is not None:
        pool = pool - pool.mean() + shift
    lo, hi = math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)
    d, mid = mu1 - mu0, (mu0 + mu1) / 2
    n_stop = np.full(runs, -1, dtype=np.int64)
    dec = np.zeros(runs, dtype=np.int8)
    s, q = np.zeros(runs), np.zeros(runs)
    active, n0 = np.arange(runs), 0
    while active.size and n0 < max_n:
        x = rng.choice(pool, size=(active.size, block))
        cs = s[active, None] + np.cumsum(x, axis=1)
        cq = q[active, None] + np.cumsum(x * x, axis=1)
        n = n0 + np.arange(1, block + 1)
        var = (cq - cs * cs / n) / n
        with np.errstate(divide="ignore", invalid="ignore"):
            llr = np.where(var > 1e-12, d * (cs - n * mid) / var, 0.0)
        look = (n >= min_pairs) & (n % look_every == 0)
        up, dn = (llr >= hi) & look, (llr <= lo) & look
        hit = up | dn
        first = np.where(hit.any(1), hit.argmax(1), -1)
        done = first >= 0
        f = first[done]
        n_stop[active[done]] = n0 + f + 1
        dec[active[done]] = np.where(up[done, f], 1, -1)
        s[active], q[active] = cs[:, -1], cq[:, -1]
        active = active[~done]
        n0 += block
    return n_stop, dec


def main(argv: list[str]) -> None:
    pool = real_pairs()
    print(f"{pool.size:,} real pairs: mean {pool.mean():+.4f}, sd {pool.std():.3f}")
    if argv[:1] == ["rates"]:
        d, runs = float(argv[1]), int(argv[2])
        for mp in (int(v) for v in argv[3].split(",")):
            n0, dec0 = simulate(pool, 0.0, d, min_pairs=mp, runs=runs, shift=0.0, seed=2)
            n1, dec1 = simulate(pool, 0.0, d, min_pairs=mp, runs=runs, shift=d, seed=3)
            print(f"mu1 - mu0 = {d} ({d / pool.std():.2f} sd), min_pairs {mp}: alpha "
                  f"{np.mean(dec0 == 1):.3f}, beta {np.mean(dec1 == -1):.3f} (SE "
                  f"{math.sqrt(0.05 * 0.95 / runs):.3f}); mean pairs {n0[n0 > 0].mean():.0f} "
                  f"(H0), {n1[n1 > 0].mean():.0f} (H1)", flush=True)
        return
    for look in (2000, 1):  # configs/sprt.toml: mu1 = 0.1, min_pairs 200, chunks of 2,000
        n, dec = simulate(pool, 0.0, 0.1, min_pairs=200, look_every=look, runs=4000, seed=1)
        ok = n > 0
        print(f"looks every {look:,} pair(s): mean pairs to a decision {n[ok].mean():,.0f} "
              f"(SE {n[ok].std() / math.sqrt(ok.sum()):.0f}, median {np.median(n[ok]):,.0f}),"
              f" H1 accepted {np.mean(dec[ok] == 1):.3f}, undecided {np.sum(~ok)}")


if __name__ == "__main__":
    main(sys.argv[1:])
