"""Speed targets of the double-dummy solver (issue 37; docs/solve.md "Speed"), pytest-benchmark.

Positions from greedy play (``benchmarks/solve_speed.py``'s: seed 20261203, the first trick
start of a deal at which every hand holds exactly 7 cards), one core, a fresh solver (empty
table) per position. Targets: 7 cards per hand median <= 0.2 s and p90 <= 1 s for every
choice's exact value; ``benchmarks/solve_speed.py --cards 7 9`` prints the whole distribution
(2026-12-03, AMD EPYC: median 0.0149 s, p90 0.160 s for every choice).
"""

from __future__ import annotations

import statistics
import time

import pytest
from solve_speed import positions, solve_one

from sim.rules import as_rules
from sim.solve import kernels as K

CAP = 50_000_000


@pytest.fixture(scope="module")
def seven():
    ps = positions(60, 7)
    rules = as_rules(None).array()
    solve_one(*ps[0], rules, "choices", K.OPT_ALL, CAP)  # compile outside the timing
    return ps, rules


@pytest.mark.parametrize("mode", ["value", "choices"])
def test_seven_cards(benchmark, seven, mode) -> None:
    ps, rules = seven
    times: list[float] = []

    def run() -> None:
        times.clear()
        for st, u in ps:
            t0 = time.process_time()
            _, _, solved = solve_one(st, u, rules, mode, K.OPT_ALL, CAP)
            times.append(time.process_time() - t0)
            assert solved

    benchmark.pedantic(run, rounds=1, iterations=1)
    ts = sorted(times)
    median, p90 = statistics.median(ts), ts[int(0.9 * (len(ts) - 1))]
    benchmark.extra_info.update(positions=len(ts), median=median, p90=p90, worst=ts[-1])
    assert median <= 0.2 and p90 <= 1.0, (median, p90)
