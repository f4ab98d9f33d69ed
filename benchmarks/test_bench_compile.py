"""Speed targets of compiling each player once (issue 33), whole processes, pytest-benchmark.

- A new combination of players that have each run before: <= 3 s for a whole ``play --deals
  10`` process (start-up, imports, loading the kernels, the deals, exit), the median over the
  pairs of ``sim.tools.bench.NEW_COMBINATIONS`` after ``shuangkou compile`` of their players;
  no such process may compile anything (its compile notice is on).
- The compiled plug-in ``cautious_c`` (strategies/example_compiled.py) against itself >= 0.5x
  greedy vs greedy's deals per CPU second, each a whole ``play --deals 200000`` process (start-up
  included, one core: the child's user + system time), 3 runs each in turns. ``shuangkou
  bench`` reports the ratio of the medians; as the other benchmarks check their targets on the
  best round, this one asserts the ratio of the best runs against the target itself. Not met on
  2026-12-03 (AMD EPYC, 2 cores): 0.44-0.46x, about 0.43x before compile-once; the loop's own
  part of a plug-in decision is about 20 ns (the call through its address 5 ns, the masked
  copy 15 ns), the example's kernel 75-110 ns (it lists every legal play and values each)
  against about 35 ns for a whole greedy decision.
  The in-loop ratio (start-up excluded, target 0.3x) is benchmarks/test_bench_strategies.py's.
"""

from __future__ import annotations

import io

import numpy as np

from sim.loops import precompile
from sim.tools import bench


def test_new_combination_play_whole_process(benchmark):
    pairs = [",".join(p) for p in bench.NEW_COMBINATIONS]
    precompile.run([s for p in bench.NEW_COMBINATIONS for s in p], out=io.StringIO(),
                   progress=False)  # each player has run before: its kernel is in the cache
    runs = []
    benchmark.pedantic(lambda: runs.append(bench.play_process(pairs[len(runs)], 10)),
                       rounds=len(pairs), iterations=1)
    wall = float(np.median([r["wall_s"] for r in runs]))
    compiled = [p for p, r in zip(pairs, runs, strict=True) if r["compiled"]]
    benchmark.extra_info.update(median_s=wall, walls_s=[r["wall_s"] for r in runs],
                                cpus_s=[r["cpu_s"] for r in runs], compiled=compiled)
    print(f"\nnew combination, 10 deals: {wall:.2f} s whole process (median of {len(runs)} "
          f"pairs; CPU {[round(r['cpu_s'], 2) for r in runs]} s), target <= 3 s")
    assert not compiled, f"a new pair of compiled players compiled something: {compiled}"
    assert wall <= 3.0, f"new combination: median {wall:.2f} s per 10-deal play, target 3 s"


def test_compiled_plugin_vs_greedy_whole_process(benchmark):
    deals = bench.PLUGIN_PROCESS_DEALS
    runs = {"twin": ("cautious_c", ["strategies.example_compiled"]), "greedy": ("greedy", [])}
    for seats, plugins in runs.values():  # compile or load, and warm the file cache
        bench.play_process(seats, 10, plugins)
    rates: dict[str, list[float]] = {"greedy": [], "twin": []}

    def both() -> None:  # in turns: the machine's speed drifts
        for name in ("greedy", "twin"):
            r = bench.play_process(runs[name][0], deals, runs[name][1])
            rates[name].append(deals / max(r["cpu_s"], 1e-9))

    benchmark.pedantic(both, rounds=3, iterations=1)
    median = float(np.median(rates["twin"]) / np.median(rates["greedy"]))
    best = max(rates["twin"]) / max(rates["greedy"])
    benchmark.extra_info.update(twin_deals_per_cpu_s=rates["twin"],
                                greedy_deals_per_cpu_s=rates["greedy"], median_ratio=median,
                                best_ratio=best)
    print(f"\ncautious_c vs greedy, whole processes of {deals:,} deals: {median:.2f}x (medians),"
          f" {best:.2f}x (best runs), target 0.5x")
    assert best >= 0.5, f"compiled cautious_c at {best:.2f}x greedy's deals per CPU second " \
        f"(best runs; medians {median:.2f}x), target 0.5x"
