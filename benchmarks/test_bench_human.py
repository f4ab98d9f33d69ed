"""How long ``shuangkou human``'s ``hint`` and review take at the defaults (128 worlds per
decision; docs/human.md): every decision of seat 0 with a choice, on ``DEALS`` deals of seed
``SEED`` (seat 0 answering as greedy would, greedy partner, random opponents), timed as CPU
time of this process (other load on a shared machine does not count), kernels compiled.

Target: a hint in <= 2 s (the person waits for it); a review well under its 60 s bound.

    python -m pytest benchmarks/test_bench_human.py -q -s
    python benchmarks/test_bench_human.py [DEALS] [SEED]
"""

from __future__ import annotations

import sys
import time

from sim.deal import Deal
from sim.observation import Observation
from sim.tools import analyze as A
from strategies.registry import make

SPECS = ["greedy", "random", "greedy", "random"]


def measure(deals: int = 4, seed: int = 1) -> dict[str, list[float]]:
    settings = A.Settings()
    out: dict[str, list[float]] = {"show": [], "giveback": [], "play": [], "review": []}
    for d in range(deals):
        deal = Deal(seed, d, seats=SPECS)
        bots = [make(s) for s in SPECS]
        for s, b in enumerate(bots):
            b.begin_deal(s, seed, d)
        step = 0
        while not deal.done:
            seat, kind = deal.to_act
            codes = list(deal.legal_codes())
            if seat == 0 and len(codes) > 1:
                dec = A.Decision(d, step, 0, kind, deal._st.copy(), deal._u.copy(), codes,
                                 codes[0], 0, 0, 0)
                t = time.process_time()
                A.choice_values(dec, deal.rules.array(), settings)
                out[kind].append(time.process_time() - t)
            deal.apply(bots[seat].choose(Observation(deal, seat), deal.legal()))
            step += 1
        rec = deal.record()
        t = time.process_time()
        A.analyze_tasks(A.tasks_of([rec], [0]), settings)
        if not rec["void"]:
            out["review"].append(time.process_time() - t)
    return out


def report(out: dict[str, list[float]]) -> str:
    return "\n".join(f"{k:<9} n={len(v):>3}  mean {sum(v) / len(v):.3f} s  max {max(v):.3f} s"
                     for k, v in out.items() if v)


def test_hint_and_review_time():
    measure(1)  # load (or compile) the kernels first
    out = measure(4)
    print("\n" + report(out))
    hints = out["show"] + out["giveback"] + out["play"]
    assert max(hints) <= 2.0
    assert max(out["review"]) <= 30.0


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    sd = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    measure(1, sd)
    print(report(measure(n, sd)))
