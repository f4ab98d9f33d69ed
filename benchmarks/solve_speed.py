"""The double-dummy solver's speed on positions from real play (docs/solve.md "Speed").

    python benchmarks/solve_speed.py [--deals 400] [--cards 7 9] [--ablation 6]

Positions: greedy plays seeded deals (seed 20261203, the compiled loop); from each deal the first
trick start at which every hand holds exactly K cards (deals where pair tricks skip K have
none). Each position is solved on one core by a fresh ``sim.solve.Solver`` (an empty table):
its exact value (``value``: one MTD(f) search) and every legal play's exact value
(``choices``, what ``shuangkou solve`` prints). Times are CPU seconds of this process
(``time.process_time``). ``--ablation K`` solves the K-card positions with each piece of the
toolkit switched off in turn (the node cap counts a position that hits it as unsolved).
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

import numpy as np

from sim.core import state as S
from sim.loops.runner import iter_records
from sim.loops.steps import decisions
from sim.rules import as_rules
from sim.solve import Solver
from sim.solve import kernels as K
from strategies.registry import make

SEED = 20261203


def cpu_model() -> str:
    try:
        for line in open("/proc/cpuinfo", encoding="utf-8"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def positions(deals: int, cards: int) -> list[tuple[np.ndarray, np.ndarray]]:
    out = []
    for rec in iter_records(SEED, 0, deals, [make("greedy") for _ in range(4)]):
        for dec in decisions(rec):
            if dec.kind == "play" and dec.st[S.S_POS] == 0 and dec.st[S.S_LEFT] <= cards:
                if dec.st[S.S_LEFT] == cards:
                    out.append((dec.st.copy(), dec.u.copy()))
                break
    return out


def solve_one(st, u, rules, mode: str, options: int, cap: int) -> tuple[float, int, bool]:
    s = Solver(max_nodes=cap, options=options)
    s._prepare(st, rules)
    t = time.process_time()
    if mode == "value":
        K.value(st, u, rules, s.tst, s.hands, s.mv, s.keys, s.tt_k, s.tt_v, s.stats, -1, K.INF)
    else:
        K.choices(st, u, rules, s.tst, s.hands, s.mv, s.keys, s.tt_k, s.tt_v, s.stats,
                  s.codes, s.values)
    return time.process_time() - t, int(s.stats[K.ST_NODES]), not s.stats[K.ST_ABORT]


def distribution(xs: list[float]) -> str:
    xs = sorted(xs)
    p90 = xs[min(len(xs) - 1, int(0.9 * len(xs)))]
    return (f"median {statistics.median(xs):.4f} s, p90 {p90:.4f} s, "
            f"max {xs[-1]:.4f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--deals", type=int, default=400)
    ap.add_argument("--cards", type=int, nargs="*", default=[7, 9])
    ap.add_argument("--ablation", type=int, default=0)
    ap.add_argument("--cap", type=int, default=50_000_000)
    a = ap.parse_args()
    rules = as_rules(None).array()
    print(f"CPU: {cpu_model()}; seed {SEED}, {a.deals} greedy deals")
    warm = positions(2, 5)  # compile outside the timings
    if warm:
        solve_one(*warm[0], rules, "value", K.OPT_ALL, a.cap)
        solve_one(*warm[0], rules, "choices", K.OPT_ALL, a.cap)
    for cards in a.cards:
        ps = positions(a.deals, cards)
        for mode in ("value", "choices"):
            rows = [solve_one(st, u, rules, mode, K.OPT_ALL, a.cap) for st, u in ps]
            solved = [r for r in rows if r[2]]
            print(f"{cards} cards per hand, {len(ps)} positions, {mode}: "
                  f"{distribution([r[0] for r in rows])}; unsolved within {a.cap:,} nodes: "
                  f"{len(rows) - len(solved)}; nodes median "
                  f"{statistics.median(r[1] for r in rows):,.0f}")
    if a.ablation:
        ps = positions(a.deals, a.ablation)
        cap = 5_000_000
        print(f"ablation: {len(ps)} positions of {a.ablation} cards per hand, every choice, "
              f"cap {cap:,} nodes")
        names = {"table": K.OPT_TT, "ordering": K.OPT_ORDER, "equivalent cards": K.OPT_EQUIV,
                 "bound": K.OPT_BOUND, "relative keys": K.OPT_RELATIVE,
                 "history": K.OPT_HISTORY, "transposition cut-offs": K.OPT_ETC}
        for name, bit in [("all", 0), *names.items()]:
            rows = [solve_one(st, u, rules, "choices", K.OPT_ALL & ~bit, cap) for st, u in ps]
            print(f"  {'without ' + name if bit else 'all on':<32} nodes "
                  f"{sum(r[1] for r in rows):>13,}  CPU {sum(r[0] for r in rows):8.2f} s  "
                  f"unsolved {sum(not r[2] for r in rows)}")


if __name__ == "__main__":
    main()
