"""Speed targets of the built-in players (issue: strategies), with pytest-benchmark.

Targets on one core after compilation: greedy-vs-greedy whole deals >= 100,000 deals/s;
pimc(samples=64) <= 5 ms and ismcts(iterations=1000) <= 20 ms per decision (median over the
searched decisions, see ``sim.tools.bench.decision_times``); the Python-tier random player
(step API) >= 2,000 deals/s; the compiled plug-in ``cautious_c`` (strategies/example_compiled.py)
against itself >= 0.3x the deals/s of greedy vs greedy measured in the same run.

The plug-in's target was 0.5x greedy when greedy ran ~115,000 deals/s; since greedy decides
on the legal set's masks it runs ~1.6x faster while the plug-in did not change, so the same
bar (~57,000 deals/s then) is 0.3x today's greedy (docs/speed.md).
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from sim.deal import Deal
from sim.loops.loop import N_COLS, play_deals
from sim.loops.runner import Asker, compiled_tables, make_seats
from sim.rules import DEFAULT_RULES
from sim.tools import bench
from strategies.random import RandomStrategy

RULES = DEFAULT_RULES.array()


def test_greedy_deals_per_second(benchmark):
    kinds, params = compiled_tables(make_seats("greedy"))
    n = 20_000
    out = np.zeros((n, N_COLS), dtype=np.int64)
    play_deals(np.uint64(1), np.uint64(0), 10, RULES, kinds, params, out)
    benchmark.pedantic(play_deals, args=(np.uint64(1), np.uint64(0), n, RULES, kinds, params,
                                         out), rounds=5)
    rate = n / benchmark.stats.stats.min
    benchmark.extra_info["deals_per_s"] = rate
    assert rate >= 100_000, f"greedy vs greedy {rate:,.0f} deals/s, target 100,000"


@pytest.mark.parametrize("spec, target_ms", [("pimc(samples=64)", 5.0),
                                             ("ismcts(iterations=1000)", 20.0)])
def test_search_decision_time(benchmark, spec, target_ms):
    bench.decision_times(spec, 1, 7)  # compile and warm up
    times = {}
    benchmark.pedantic(lambda: times.update(t=bench.decision_times(spec, 2, 1)), rounds=1)
    med = float(np.median(times["t"]) * 1e3)
    benchmark.extra_info.update(median_ms=med, decisions=len(times["t"]),
                                p90_ms=float(np.quantile(times["t"], 0.9) * 1e3))
    assert med <= target_ms, f"{spec}: median {med:.2f} ms per decision, target {target_ms}"


def test_python_tier_random_deals_per_second(benchmark):
    asker = Asker([RandomStrategy() for _ in range(4)], DEFAULT_RULES, None,
                   python_tier=True)  # RandomStrategy.choose, not its compiled twin
    asker.play(Deal(1, 0))
    n = 300
    benchmark.pedantic(lambda: [asker.play(Deal(1, d)) for d in range(n)], rounds=3)
    rate = n / benchmark.stats.stats.min
    benchmark.extra_info["deals_per_s"] = rate
    assert rate >= 2_000, f"Python-tier random {rate:,.0f} deals/s, target 2,000"


def test_compiled_plugin_vs_greedy_deals_per_second(benchmark):
    n = 20_000
    out = np.zeros((n, N_COLS), dtype=np.int64)
    greedy = compiled_tables(make_seats("greedy"))
    twin = compiled_tables(make_seats("strategies.example_compiled:CautiousC"))
    rates = {}
    for name, t in (("greedy", greedy), ("twin", twin)):
        t.loops.play_deals(np.uint64(1), np.uint64(0), 10, RULES, *t, out)  # compile / load
    for _ in range(3):  # interleaved, best of three each: the machine is shared
        for name, t in (("greedy", greedy), ("twin", twin)):
            s = time.perf_counter()
            t.loops.play_deals(np.uint64(1), np.uint64(0), n, RULES, *t, out)
            rates[name] = max(rates.get(name, 0.0), n / (time.perf_counter() - s))
    benchmark.pedantic(lambda: twin.loops.play_deals(np.uint64(1), np.uint64(0), n, RULES,
                                                     *twin, out), rounds=1)
    ratio = rates["twin"] / rates["greedy"]
    benchmark.extra_info.update(twin_deals_per_s=rates["twin"],
                                greedy_deals_per_s=rates["greedy"], ratio=ratio)
    assert ratio >= 0.3, f"compiled cautious twin at {ratio:.2f}x greedy vs greedy, target 0.3"
