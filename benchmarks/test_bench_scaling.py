"""Parallel scaling of whole runs (issue 10): ``shuangkou tournament`` of the same head-to-head
with ``--jobs 1`` and ``--jobs 2``, each a fresh process as a user runs it (worker start-up,
kernel loading and the summary included), the kernels already compiled.

Run on a quiet machine with at least two cores:

    python -m pytest benchmarks/test_bench_scaling.py -q -s
    SHUANGKOU_BENCH_DEALS=200000 python -m pytest benchmarks/test_bench_scaling.py -q -s

It prints, per job count, the best of ``SHUANGKOU_BENCH_ROUNDS`` (default 2) runs, interleaved:
the in-run deals/s (``run.json``: from the first chunk handed out to the last saved; the kernels
are loaded before it, by the run's process for one job and for forked workers alike) and the
whole process's wall time, and the two ratios of 2 jobs over 1. Target (issue 10): >= 1.9x in
the run and close to it for the whole process, here >= 1.8x: the whole process also holds
about 0.8 s that one process does alone in either case (Python start-up and imports before
the run, the summary after it), which caps a 16 s run's whole-process ratio near 1.9x.
The deals default to the issue's 1,000,000 duplicate deals (greedy vs random,
``configs/h2h_1m.toml``, no plots).
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIG = os.path.join(ROOT, "configs", "h2h_1m.toml")
DEALS = int(os.environ.get("SHUANGKOU_BENCH_DEALS", "1000000"))
ROUNDS = int(os.environ.get("SHUANGKOU_BENCH_ROUNDS", "2"))
TIMEOUT = 1800  # seconds for one run: a hung worker fails the benchmark instead of waiting


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _run(out: str, jobs: int, deals: int) -> tuple[float, float]:
    """One ``shuangkou tournament`` process; returns (in-run deals/s, whole wall seconds) and
    prints the CPU seconds of the process and its workers (a busy machine's time slicing
    leaves them alone: two jobs should take little more CPU than one)."""
    cmd = [sys.executable, "-c", "import sys; from sim.cli import main; sys.exit(main())",
           "tournament", CONFIG, "--jobs", str(jobs), "--deals", str(deals), "--out", out,
           "--force", "--no-plots", "--quiet"]
    t, c = time.perf_counter(), _cpu()
    subprocess.run(cmd, check=True, cwd=ROOT, timeout=TIMEOUT, stdout=subprocess.DEVNULL)
    wall, cpu = time.perf_counter() - t, _cpu() - c
    with open(os.path.join(out, "run.json"), encoding="utf-8") as f:
        rate = float(json.load(f)["deals_per_second"])
    print(f"\n--jobs {jobs}: {rate:,.0f} deals/s in the run, {wall:.2f} s whole process, "
          f"{cpu:.2f} s CPU (process and workers)")
    return rate, wall


def test_jobs_2_over_jobs_1(tmp_path):
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs two CPUs")
    _run(str(tmp_path / "warm"), 1, 1000)  # compiles the loops if they are not cached yet
    best: dict[int, list[float]] = {1: [0.0, float("inf")], 2: [0.0, float("inf")]}
    pairs = []  # the ratios of each round's two runs, a minute apart
    for r in range(ROUNDS):
        got = {}
        for jobs in (1, 2):
            got[jobs] = rate, wall = _run(str(tmp_path / f"j{jobs}r{r}"), jobs, DEALS)
            best[jobs] = [max(best[jobs][0], rate), min(best[jobs][1], wall)]
        pairs.append((got[2][0] / got[1][0], got[1][1] / got[2][1]))
    in_run = best[2][0] / best[1][0]
    whole = best[1][1] / best[2][1]
    med = [statistics.median(p[i] for p in pairs) for i in (0, 1)]
    print(f"{DEALS:,} duplicate deals: --jobs 2 is {in_run:.2f}x --jobs 1 in the run, "
          f"{whole:.2f}x for the whole process (best of {ROUNDS}); round by round: "
          + ", ".join(f"{a:.2f}x/{b:.2f}x" for a, b in pairs)
          + f" (median {med[0]:.2f}x/{med[1]:.2f}x)")
    assert in_run >= 1.9 and whole >= 1.8, (
        f"--jobs 2 over --jobs 1: {in_run:.2f}x in the run, {whole:.2f}x whole (targets 1.9x "
        f"and 1.8x)")
