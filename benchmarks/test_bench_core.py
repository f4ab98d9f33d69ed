"""Speed targets of the rules engine (issue: rules engine), measured with pytest-benchmark.

Run: ``python -m pytest benchmarks -q`` (after ``pip install -e '.[test]'``). Each benchmark
records its throughput in ``extra_info`` and checks the target on the best round; speeds are
also compared with a baseline (the reference engine, OpenSpiel) measured in the same run.
Targets (one core, after compilation): >= 150,000 random deals/s, >= 10 million legal-play
generations/s, >= 5x OpenSpiel's C++ decisions/s on uniform-random hearts, and — when
``SHUANGKOU_LIMIT`` names a built native yardstick of the same random deals (``shuangkou bench
--limit``; nothing here builds or ships one) — random deals >= 0.75x its deals per CPU second and
greedy vs greedy deals >= 0.25x them (issue 21), measured interleaved.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from sim.loops.loop import C_DECISIONS, N_COLS, play_deals
from sim.rules import DEFAULT_RULES
from sim.tools import bench
from strategies.compiled import entries

RULES = DEFAULT_RULES.array()
KINDS, PARAMS = bench._random_tables()
N = 50_000
_shared: dict = {}


def _rate(benchmark, items):
    return items / benchmark.stats.stats.min


def test_compiled_random_deals(benchmark):
    out = np.zeros((N, N_COLS), dtype=np.int64)
    play_deals(np.uint64(1), np.uint64(0), 10, RULES, KINDS, PARAMS, out)
    benchmark.pedantic(play_deals, args=(np.uint64(1), np.uint64(0), N, RULES, KINDS, PARAMS,
                                         out), rounds=7, iterations=1)
    deals = _rate(benchmark, N)
    decisions = _rate(benchmark, float(out[:, C_DECISIONS].sum()))
    benchmark.extra_info.update(deals_per_s=deals, decisions_per_s=decisions)
    _shared["decisions_per_s"] = decisions
    _shared["deals_per_s"] = deals
    assert deals >= 150_000, f"{deals:,.0f} random deals/s is under the 150,000 target"


@pytest.fixture(scope="module")
def situations():
    m = 100_000
    once, twice = np.zeros(m, np.uint64), np.zeros(m, np.uint64)
    la, lb = np.zeros(m, np.int64), np.zeros(m, np.int64)
    tricks = np.zeros((20_000, 8), np.int64)
    nm, nt = bench.collect_situations(np.uint64(2), 2000, RULES, KINDS, entries(KINDS), PARAMS,
                                      once, twice, la, lb, tricks)
    return once[:nm], twice[:nm], la[:nm], lb[:nm], tricks[:nt]


def test_legal_play_generations(benchmark, situations):
    once, twice, la, lb, _ = situations
    bench.bench_legal(once[:10], twice[:10], la[:10], lb[:10], 1)
    benchmark.pedantic(bench.bench_legal, args=(once, twice, la, lb, 5), rounds=7)
    rate = _rate(benchmark, 5 * len(once))
    benchmark.extra_info["generations_per_s"] = rate
    assert rate >= 10_000_000, f"{rate:,.0f} legal-play generations/s is under 10 million"


def test_trick_evaluations(benchmark, situations):
    tricks = situations[4]
    bench.bench_tricks(tricks[:10], 1)
    benchmark.pedantic(bench.bench_tricks, args=(tricks, 20), rounds=7)
    rate = _rate(benchmark, 20 * len(tricks))
    benchmark.extra_info["evaluations_per_s"] = rate
    assert rate >= 10_000_000


def test_reference_engine_baseline(benchmark):
    from sim.reference import oracle as reference

    benchmark.pedantic(lambda: [reference.play_deal(1, d) for d in range(20)], rounds=2)
    rate = _rate(benchmark, 20)
    benchmark.extra_info["reference_deals_per_s"] = rate
    if "deals_per_s" in _shared:
        ratio = _shared["deals_per_s"] / rate
        benchmark.extra_info["compiled_over_reference"] = ratio
        assert ratio > 100


def test_openspiel_hearts_ratio(benchmark):
    pytest.importorskip("pyspiel")
    res = {}
    benchmark.pedantic(lambda: res.update(bench.openspiel_hearts(500, 1)), rounds=3)
    benchmark.extra_info.update(res)
    if "decisions_per_s" in _shared:
        ratio = _shared["decisions_per_s"] / res["openspiel_decisions_per_s"]
        benchmark.extra_info["decisions_ratio"] = ratio
        assert ratio >= 5, f"only {ratio:.1f}x OpenSpiel's decisions/s (target 5x)"


def _limit() -> str:
    limit = os.environ.get("SHUANGKOU_LIMIT")
    if not limit:
        pytest.skip("set SHUANGKOU_LIMIT to a built native yardstick (shuangkou bench --limit)")
    bench.check_limit(limit)
    return limit


def test_random_deals_vs_native_yardstick():
    limit = _limit()
    out = np.zeros((N, N_COLS), dtype=np.int64)
    play_deals(np.uint64(1), np.uint64(0), 10, RULES, KINDS, PARAMS, out)
    rates: list[float] = []  # interleaved: yardstick, then ours, 5 times; best of each
    dt, cpu_dt = bench._interleaved(lambda: play_deals(np.uint64(1), np.uint64(0), N, RULES,
                                                       KINDS, PARAMS, out), 5, limit, rates)
    ratio = N / dt / max(rates)
    cpu_ratio = N / cpu_dt / max(bench.limit_cpu_rate(limit, N) for _ in range(3))
    print(f"\nrandom deals: {ratio:.2f}x the native yardstick in wall time, {cpu_ratio:.2f}x in "
          f"CPU time")
    # issue 21: >= 0.75x in CPU time (a shared machine's time slicing leaves CPU time alone)
    assert cpu_ratio >= 0.75, f"random deals at {cpu_ratio:.2f}x the native yardstick in CPU " \
        "time (target 0.75x)"


def test_greedy_deals_vs_native_yardstick():
    """Greedy vs greedy deals per CPU second >= 0.25x the yardstick's random deals (issue 21)."""
    from sim.loops.runner import compiled_tables, make_seats

    limit = _limit()
    kinds, params = compiled_tables(make_seats("greedy"))
    n = N // 4
    out = np.zeros((n, N_COLS), dtype=np.int64)
    play_deals(np.uint64(1), np.uint64(0), 10, RULES, kinds, params, out)
    _, cpu_dt = bench._interleaved(lambda: play_deals(np.uint64(1), np.uint64(0), n, RULES,
                                                      kinds, params, out), 5, None, [])
    cpu_ratio = n / cpu_dt / max(bench.limit_cpu_rate(limit, N) for _ in range(3))
    print(f"\ngreedy vs greedy deals: {cpu_ratio:.2f}x the yardstick's random deals in CPU time")
    assert cpu_ratio >= 0.25, f"greedy deals at {cpu_ratio:.2f}x the native yardstick's random " \
        "deals in CPU time (target 0.25x)"
