"""Cost of the OpenSpiel state (``sim.openspiel``, docs/frameworks.md) per decision against
``sim.Deal``'s, in one run: whole deals played by the same uniform random policy over the
fixed action space (``legal_actions`` then ``apply_action``); the OpenSpiel state also deals
its 108 cards per attempt at chance nodes (``chance_outcomes``, then ``apply_action``), and
that time is counted too; the caller's own pick among the chance outcomes (the same for any
game) is not. Target: at most 4x ``sim.Deal`` per decision.

Run: ``python -m pytest benchmarks/test_bench_openspiel.py -q`` or ``python
benchmarks/test_bench_openspiel.py [ROUNDS]`` (prints the figures). The two alternate round
by round so that both see the same machine; the best round of each is compared.
"""

from __future__ import annotations

import bisect
import os
import random
import sys
import time
from itertools import accumulate

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

DEALS = 40
TARGET = 4.0


def deal_cost(deals: int, first: int = 0) -> float:
    """``sim.Deal``: seconds per decision over ``deals`` random deals."""
    from sim.deal import Deal

    rng = random.Random(first)
    decisions = 0
    t = time.perf_counter()
    for d in range(first, first + deals):
        deal = Deal(seed=1, deal=d)
        while not deal.done:
            acts = deal.legal_actions()
            deal.apply_action(acts[int(rng.random() * len(acts))])
            decisions += 1
    return (time.perf_counter() - t) / decisions


def openspiel_cost(deals: int, first: int = 0, chance: bool = True) -> float:
    """The OpenSpiel state: seconds per (player) decision over ``deals`` random deals, its
    chance nodes included (``chance=False``: their time left out); the pick of a chance
    outcome (cumulative probabilities, bisect) is left out of both."""
    import pyspiel

    import sim.openspiel  # noqa: F401 - registers the game

    game = pyspiel.load_game("python_shuangkou")
    rng = random.Random(first)
    decisions = 0
    spent = 0.0
    clock = time.perf_counter
    for _ in range(deals):
        state = game.new_initial_state()
        t = clock()
        while not state.is_terminal():
            if state.is_chance_node():
                outs = state.chance_outcomes()
                t1 = clock()
                i = bisect.bisect(list(accumulate(p for _, p in outs)), rng.random())
                t2 = clock()
                state.apply_action(outs[min(i, len(outs) - 1)][0])
                t3 = clock()
                spent += (t1 - t + t3 - t2) if chance else 0.0
                t = t3
                continue
            acts = state.legal_actions()
            state.apply_action(acts[int(rng.random() * len(acts))])
            decisions += 1
            t1 = clock()
            spent += t1 - t
            t = t1
        spent += clock() - t
    return spent / decisions


def measure(rounds: int = 5) -> dict[str, float]:
    deal_cost(3)
    openspiel_cost(3)  # compiled and warm
    d, o, oc = [], [], []
    for r in range(rounds):
        d.append(deal_cost(DEALS, 100 * r))
        o.append(openspiel_cost(DEALS, 100 * r))
        oc.append(openspiel_cost(DEALS, 100 * r, chance=False))
    return {"deal_us_per_decision": min(d) * 1e6, "openspiel_us_per_decision": min(o) * 1e6,
            "openspiel_us_per_decision_no_chance": min(oc) * 1e6,
            "ratio": min(o) / min(d), "ratio_no_chance": min(oc) / min(d)}


def test_openspiel_state_vs_deal_per_decision(benchmark):
    pytest.importorskip("pyspiel")
    out = {}
    benchmark.pedantic(lambda: out.update(measure(3)), rounds=1, iterations=1)
    benchmark.extra_info.update(out)
    assert out["ratio"] <= TARGET, (
        f"the OpenSpiel state costs {out['openspiel_us_per_decision']:.1f} us per decision, "
        f"{out['ratio']:.2f}x sim.Deal's {out['deal_us_per_decision']:.1f} us (target 4x)")


if __name__ == "__main__":
    r = measure(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
    print(f"sim.Deal {r['deal_us_per_decision']:.1f} us/decision; OpenSpiel state "
          f"{r['openspiel_us_per_decision']:.1f} us/decision with its chance nodes "
          f"({r['ratio']:.2f}x), {r['openspiel_us_per_decision_no_chance']:.1f} without "
          f"({r['ratio_no_chance']:.2f}x)")
