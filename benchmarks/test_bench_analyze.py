"""Targets of ``shuangkou analyze`` (issue 20, docs/analysis.md), at the default settings:

* speed: <= 10 s per deal, all four seats, one core (CPU time of this process: other load on
  a shared machine does not count), kernels compiled;
* ``--jobs 2`` near 2x, with the same rows: asserted as ``2 x`` (CPU of one job) / (CPU of
  two workers in all) >= 1.8, the ratio two free cores give (``cpu_split``); the wall-clock
  ratio is printed beside it (on a shared machine it measures the other load too);
* the median 95% half-width of a ``play`` decision's loss <= 0.3 points (forced plays, with
  no interval, left out);
* calibrated: on the same deals, mean loss per decision of the player in seats 0 and 2
  orders random > greedy > pimc >= expert (the expert in seats 1 and 3 each time), and the
  expert's own decisions get ``??`` in <= 2% of cases.

    python -m pytest benchmarks/test_bench_analyze.py -q -s
    python benchmarks/test_bench_analyze.py [DEALS] [SEED]     # the figures docs/analysis.md
                                                              # quotes, with greedy's summed
                                                              # loss in duplicate deals
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from functools import lru_cache

import numpy as np

from sim.loops.runner import iter_records, make_seats
from sim.tools import analyze as A

PLAYERS = ("random", "greedy", "pimc", "expert")
SEED = 2026


@lru_cache(maxsize=None)
def records(seats: str, deals: int, seed: int = SEED) -> tuple[dict, ...]:
    return tuple(r for r in iter_records(seed, 0, deals, make_seats(seats)) if not r["void"])


def rows_of(recs, seats=None, jobs=1, settings=None):
    return A.analyze_tasks(A.tasks_of(recs, seats), settings or A.Settings(), jobs)


def _stats(rows, seats):
    g = [r for r in rows if r["seat"] in seats]
    return {"decisions": len(g), "mean_loss": float(np.mean([r["loss"] for r in g])),
            "qq_rate": sum(r["mark"] == "??" for r in g) / len(g),
            "q_rate": sum(r["mark"] == "?" for r in g) / len(g),
            "loss_per_deal": sum(r["loss"] for r in g) / len({r["deal"] for r in g})}


def test_analyze_speed_and_interval(benchmark):
    recs = records("greedy,expert", 4)
    rows_of(recs[:1])  # compile and warm up
    got = {}

    def run():
        t = time.thread_time()
        got["rows"] = rows_of(recs)
        got["cpu"] = time.thread_time() - t

    benchmark.pedantic(run, rounds=1)
    per_deal = got["cpu"] / len(recs)
    plays = [r for r in got["rows"] if r["kind"] == "play" and not r["forced"]]
    half = float(np.median([r["half_width"] for r in plays]))
    benchmark.extra_info.update(seconds_per_deal=per_deal, median_half_width=half,
                                decisions_per_deal=len(got["rows"]) / len(recs))
    print(f"\n{per_deal:.2f} s per deal (one core, {len(got['rows']) / len(recs):.0f} "
          f"decisions), median half-width {half:.3f}")
    assert per_deal <= 10.0, f"{per_deal:.2f} s per deal, target 10"
    assert half <= 0.3, f"median half-width {half:.3f}, target 0.3"


def _timed(arg):
    import os

    t = time.thread_time()
    A.run_task(arg)
    return os.getpid(), time.thread_time() - t


def cpu_split(recs) -> tuple[float, dict[int, float]]:
    """CPU seconds of one job, and of each of two forked workers on the same tasks. Two
    workers that together spend what one job spends, handed ~8 ms tasks one by one, finish
    in half the time on two free cores: ``2 x one / (sum of the workers)`` is the ratio two
    free cores give, whatever else a shared machine runs (its wall-clock ratio measures the
    other load as much as the scaling)."""
    from sim.tournament.forkpool import ForkPool

    work = [(t, A.Settings()) for t in A.tasks_of(recs, None)]
    t = time.thread_time()
    for w in work:
        A.run_task(w)
    one = time.thread_time() - t
    per: dict[int, float] = {}
    with ForkPool(2, lambda parent: None) as pool:
        for pid, dt in pool.map_unordered(_timed, work, ahead=8):
            per[pid] = per.get(pid, 0.0) + dt
    return one, per


def test_analyze_two_jobs(benchmark):
    recs = records("greedy,expert", 4)
    rows_of(recs[:1])
    walls: dict[int, list[float]] = {}
    out = {}

    def run():
        for jobs in (1, 2, 1, 2):
            t = time.perf_counter()
            out[jobs] = rows_of(recs, jobs=jobs)
            walls.setdefault(jobs, []).append(time.perf_counter() - t)

    benchmark.pedantic(run, rounds=1)
    ratio = min(walls[1]) / min(walls[2])
    one, per = cpu_split(recs)
    cpu_ratio = 2 * one / sum(per.values())
    benchmark.extra_info.update(ratio=ratio, cpu_ratio=cpu_ratio)
    print(f"\n--jobs 1 {min(walls[1]):.2f} s, --jobs 2 {min(walls[2]):.2f} s: {ratio:.2f}x wall "
          f"(load average {os.getloadavg()[0]:.1f}); CPU one job {one:.2f} s, two workers "
          f"{sum(per.values()):.2f} s in all: {cpu_ratio:.2f}x on two free cores")
    assert out[1] == out[2]  # deterministic for any --jobs
    assert cpu_ratio >= 1.8, f"--jobs 2 would give {cpu_ratio:.2f}x on two free cores"


def calibration(deals: int, seed: int = SEED) -> dict[str, dict]:
    """Mean loss per decision of each player in seats 0 and 2 against the expert, on the same
    deals, and the expert's (seats 1 and 3) ``??`` rate over all of them."""
    out = {}
    experts = []
    for p in PLAYERS:
        rows = rows_of(records(f"{p},expert", deals, seed))
        out[p] = _stats(rows, (0, 2))
        experts += [r for r in rows if r["seat"] in (1, 3)]
        if p == "expert":
            experts += [r for r in rows if r["seat"] in (0, 2)]
    out["expert (all seats)"] = _stats(experts, (0, 1, 2, 3))
    return out


def test_analyze_calibration(benchmark):
    got = {}
    benchmark.pedantic(lambda: got.update(calibration(8)), rounds=1)
    m = {p: got[p]["mean_loss"] for p in PLAYERS}
    benchmark.extra_info.update(mean_loss=m, expert_qq=got["expert (all seats)"]["qq_rate"])
    print("\n" + ", ".join(f"{p} {v:.3f}" for p, v in m.items()))
    assert m["random"] > m["greedy"] > m["pimc"] >= m["expert"], m
    assert got["expert (all seats)"]["qq_rate"] <= 0.02


def duplicate_gap(deals: int, seed: int = SEED) -> float:
    """Greedy's summed loss per deal (both greedy seats: a loss is per player of the team) in
    greedy-vs-expert duplicate deals: both tables, teams swapped."""
    a = rows_of(records("greedy,expert", deals, seed), (0, 2))
    b = rows_of(records("expert,greedy", deals, seed), (1, 3))
    return (sum(r["loss"] for r in a) + sum(r["loss"] for r in b)) / (
        len({r["deal"] for r in a}) + len({r["deal"] for r in b}))


def pair_gap(deals: int, seed: int = SEED) -> tuple[float, float, int]:
    """The expert's measured gap over greedy on the same duplicate pairs (mean settlement per
    deal per player of the pairs both tables of which are not void), its 95% half-width and
    the number of pairs: what the summed loss is set beside."""
    a = {r["deal"]: r["settlement"][0] for r in records("greedy,expert", deals, seed)}
    b = {r["deal"]: r["settlement"][1] for r in records("expert,greedy", deals, seed)}
    g = np.array([-(a[d] + b[d]) / 2 for d in sorted(set(a) & set(b))])
    half = 1.96 * g.std(ddof=1) / np.sqrt(len(g)) if len(g) > 1 else float("nan")
    return float(g.mean()), float(half), len(g)


if __name__ == "__main__":
    deals = int(sys.argv[1]) if len(sys.argv) > 1 else 16
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else SEED
    recs = records("greedy,expert", deals, seed)
    rows_of(recs[:1])
    t = time.thread_time()
    rows = rows_of(recs)
    cpu = time.thread_time() - t
    plays = [r for r in rows if r["kind"] == "play" and not r["forced"]]
    print(f"{deals} deals, seed {seed}: {cpu / len(recs):.2f} s per deal (one core), "
          f"{len(rows) / len(recs):.0f} decisions per deal; median half-width of a play "
          f"decision's loss {statistics.median(r['half_width'] for r in plays):.3f}")
    one, per = cpu_split(recs)
    print(f"--jobs 2: CPU one job {one:.2f} s, two workers {sum(per.values()):.2f} s in all: "
          f"{2 * one / sum(per.values()):.2f}x on two free cores")
    for p, s in calibration(deals, seed).items():
        print(f"  {p:<18} mean loss per decision {s['mean_loss']:.4f}  ? {s['q_rate']:.1%}"
              f"  ?? {s['qq_rate']:.1%}  decisions {s['decisions']}")
    loss = duplicate_gap(deals, seed)
    gap, half, pairs = pair_gap(deals, seed)
    print(f"greedy's summed loss per deal in greedy-vs-expert duplicate deals: "
          f"{loss:.2f} points per player; the expert's gap on those {pairs} pairs "
          f"{gap:+.2f} ± {half:.2f} (ratio {loss / gap:.2f}), the tournament's +4.07 over "
          f"2,000 pairs (ratio {loss / 4.07:.2f})")
