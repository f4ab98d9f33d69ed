"""``shuangkou bench``: throughput of the compiled core, measured in one run, with ratios.

Every figure is the best of several repeats (these machines are shared and noisy), and every
speed is also given as a ratio to a baseline measured in the same run. ``limit`` names an
outside yardstick: a native program playing the same random deals (any program that takes
``-n N -t SECONDS -r REPEATS`` and prints a JSON line with ``deals_per_s`` last); it is run
interleaved with the random and greedy measurements, so the ratios come from the same
minutes on the same core (run the whole bench under ``taskset -c 0``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numba import njit

from sim.core import state as S
from sim.core._cache import NOTICE_ENV
from sim.core.engine import advance, apply_code, init_deal
from sim.core.movegen import MAX_CHOICES, gen_plays
from sim.core.trick import trick_winner
from sim.deal import Deal
from sim.errors import ConfigError
from sim.loops import precompile
from sim.loops.batch import Batch
from sim.loops.loop import C_DECISIONS, N_COLS, play_deals
from sim.loops.runner import Asker, compiled_tables, make_seats
from sim.observation import Observation
from sim.reference import oracle as reference
from sim.rules import DEFAULT_RULES
from sim.spaces import O_HAND, O_TRICK, OBS_SIZE
from strategies.compiled import (
    FLOAT_SCRATCH,
    INT_SCRATCH,
    UINT_SCRATCH,
    decide,
    entries,
    new_scratch,
)
from strategies.params import param_table
from strategies.random import RandomStrategy

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

@njit(cache=True)
def collect_situations(seed, n_deals, rules, kinds, entries, params, once, twice, la, lb, tricks):
    """Play random deals and keep every play decision's (hand, lead) and every trick.

    Returns (situations kept, tricks kept); stops when the output arrays are full.
    """
    st = np.zeros(S.ST_SIZE, dtype=np.int64)
    u = np.zeros(S.U_SIZE, dtype=np.uint64)
    buf = np.zeros(INT_SCRATCH, dtype=np.int64)
    fws = np.zeros(FLOAT_SCRATCH, dtype=np.float64)
    uws = np.zeros(UINT_SCRATCH, dtype=np.uint64)
    m = 0
    t = 0
    for d in range(n_deals):
        init_deal(st, u, seed, np.uint64(d))
        advance(st, u, rules)
        while st[S.S_PHASE] != S.DONE:
            seat = st[S.S_TO_ACT]
            if st[S.S_PHASE] == S.PLAY and m < once.shape[0]:
                once[m] = u[S.U_ONCE + seat]
                twice[m] = u[S.U_TWICE + seat]
                la[m] = st[S.S_TRICK_A] if st[S.S_POS] > 0 else -1
                lb[m] = st[S.S_TRICK_B] if st[S.S_POS] > 0 else -1
                m += 1
            apply_code(st, u, rules, decide(kinds[seat], entries, params, st, u, rules, seat, buf,
                                            fws, uws))
        for i in range(st[S.S_NTRICKS]):
            if t < tricks.shape[0]:
                for k in range(8):
                    tricks[t, k] = st[S.S_TRICKS + i * S.TRICK_W + S.TRICK_A + k]
                t += 1
    return m, t


@njit(cache=True)
def bench_legal(once, twice, la, lb, reps):
    """Generate the legal plays of every situation ``reps`` times; returns plays generated."""
    buf = np.empty(MAX_CHOICES, dtype=np.int64)
    total = 0
    for _ in range(reps):
        for i in range(once.shape[0]):
            total += gen_plays(once[i], twice[i], la[i], lb[i], buf)
    return total


@njit(cache=True)
def bench_tricks(tricks, reps):
    """Evaluate the winner of every trick ``reps`` times; returns a checksum of winners."""
    total = 0
    flat = tricks.ravel()
    for _ in range(reps):
        for i in range(tricks.shape[0]):
            total += trick_winner(flat, i * 8, i * 8 + 4, 4)
    return total


def _best(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    best, out = float("inf"), None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def limit_rate(path: str, seconds: float = 0.5) -> float:
    """Deals/s of the yardstick program ``path`` over about ``seconds`` (its best of 2)."""
    try:
        proc = subprocess.run([path, "-n", "1000", "-t", f"{seconds:g}", "-r", "2"],
                              capture_output=True, text=True, check=False,
                              timeout=60 + 10 * seconds)
    except (OSError, subprocess.SubprocessError) as e:
        raise ConfigError(f"--limit {path!r} cannot be run: {e}") from None
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    try:
        if proc.returncode != 0:
            raise ValueError(f"exit code {proc.returncode}")
        return float(json.loads(lines[-1])["deals_per_s"])
    except (ValueError, KeyError, IndexError, TypeError) as e:
        raise ConfigError(f"--limit {path!r} printed no JSON line with deals_per_s ({e}): "
                          "give the built shuangkou_limit binary") from None


def limit_cpu_rate(path: str, deals: int) -> float:
    """Deals per CPU second of the yardstick playing ``deals`` deals (its fixed-seed run,
    ``-n DEALS -t 0``), from the CPU time its process used: a busy machine's time slicing, which
    wall-time rates cannot escape, leaves it alone (the compiled loops are timed the same way,
    with ``time.thread_time``)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        proc = subprocess.run([path, "-n", str(deals), "-t", "0"], capture_output=True,
                              text=True, check=False, timeout=60 + deals / 10_000)
    except (OSError, subprocess.SubprocessError) as e:
        raise ConfigError(f"--limit {path!r} cannot be run: {e}") from None
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise ConfigError(f"--limit {path!r} failed (exit code {proc.returncode}): give the "
                          "built shuangkou_limit binary")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return deals / max(cpu, 1e-6)


def check_limit(path: str) -> None:
    """Refuse a yardstick path that is not an executable file, before measuring anything."""
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise ConfigError(f"--limit {path!r} is not an executable file: give the built "
                          "yardstick, e.g. gcc -O3 -march=native -o /tmp/shuangkou_limit "
                          "shuangkou_limit.c")


def _interleaved(fn: Callable[[], Any], repeats: int, limit: str | None,
                 limit_rates: list[float]) -> tuple[float, float]:
    """Best wall and best CPU time of ``fn`` over ``repeats``; with ``limit``, the yardstick
    runs before each repeat and its rates are appended to ``limit_rates``."""
    best = best_cpu = float("inf")
    for _ in range(repeats):
        if limit:
            limit_rates.append(limit_rate(limit))
        t, c = time.perf_counter(), time.thread_time()
        fn()
        best = min(best, time.perf_counter() - t)
        best_cpu = min(best_cpu, time.thread_time() - c)
    return best, best_cpu


def _random_tables() -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(4, dtype=np.int64), param_table([[0.25]] * 4)


# upper bounds of the counts (docs/cli.md): a request past one is refused before anything runs
MAX_DEALS = 2_000_000  # --deals: compiled random deals per repeat (their results: 300 MB)
MAX_REPEATS = 100  # --repeats
MAX_SIDE_DEALS = 1_000_000  # --reference-deals, --python-deals, --openspiel-games, greedy deals


def check_counts(deals: int = 1, repeats: int = 1, reference_deals: int = 0,
                 python_deals: int = 0, openspiel_games: int = 0, greedy_deals: int = 0) -> None:
    """Each count an integer within its bounds, or a one-line ConfigError naming the bound."""
    for what, v, lo, hi in (("--deals", deals, 1, MAX_DEALS),
                            ("--repeats", repeats, 1, MAX_REPEATS),
                            ("--reference-deals", reference_deals, 0, MAX_SIDE_DEALS),
                            ("--python-deals", python_deals, 0, MAX_SIDE_DEALS),
                            ("--openspiel-games", openspiel_games, 0, MAX_SIDE_DEALS),
                            ("greedy deals", greedy_deals, 0, MAX_SIDE_DEALS)):
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
            shown = v if not isinstance(v, int) or abs(v) < 10 ** 12 else f"{v:.3g}"
            raise ConfigError(f"{what} {shown!r} must be an integer in {lo} … {hi:,}")


def cpu_model(cpuinfo: str = "/proc/cpuinfo") -> str:
    """The processor's model name (``/proc/cpuinfo``'s ``model name``, else
    ``platform.processor()``): every speed figure names the CPU it was measured on."""
    try:
        with open(cpuinfo, encoding="utf-8", errors="replace") as f:
            for line in f:
                key, sep, value = line.partition(":")
                if sep and key.strip() == "model name" and value.strip():
                    return " ".join(value.split())
    except OSError:
        pass
    import platform

    return platform.processor() or platform.machine() or "unknown CPU"


def run(deals: int = 200_000, repeats: int = 3, reference_deals: int = 200,
        python_deals: int = 300, openspiel_games: int = 2000, seed: int = 1,
        strategies: bool = True, echo: Callable[[str], None] = print,
        limit: str | None = None, greedy_deals: int = 50_000) -> dict[str, Any]:
    """Measure everything; returns the figures (also printed through ``echo``).

    ``limit``: path of the native yardstick (module docstring), run interleaved with the
    random and greedy deals; the ratios to it are reported.
    """
    check_counts(deals, repeats, reference_deals, python_deals, openspiel_games, greedy_deals)
    if limit:
        check_limit(limit)
    res: dict[str, Any] = {"deals": deals, "repeats": repeats, "cpu": cpu_model(),
                           "cpus": os.cpu_count()}
    echo(f"CPU: {res['cpu']} ({res['cpus']} logical CPUs)")
    limit_rates: list[float] = []
    rules = DEFAULT_RULES.array()
    kinds, params = _random_tables()

    t0 = time.perf_counter()
    warm = np.zeros((2, N_COLS), dtype=np.int64)
    play_deals(np.uint64(seed), np.uint64(0), 2, rules, kinds, params, warm)
    res["load_s"] = time.perf_counter() - t0
    echo(f"kernels ready in {res['load_s']:.2f} s (compiled on first run, then cached)")

    out = np.zeros((deals, N_COLS), dtype=np.int64)
    dt, cpu_dt = _interleaved(lambda: play_deals(np.uint64(seed), np.uint64(0), deals, rules,
                                                 kinds, params, out), repeats, limit, limit_rates)
    res["deals_per_s"] = deals / dt
    res["cpu_deals_per_s"] = deals / max(cpu_dt, 1e-9)
    res["decisions_per_deal"] = float(out[:, C_DECISIONS].mean())
    res["decisions_per_s"] = float(out[:, C_DECISIONS].sum()) / dt
    echo(f"compiled random deals      {res['deals_per_s']:>14,.0f} deals/s   "
         f"({res['decisions_per_deal']:.1f} decisions/deal, "
         f"{res['decisions_per_s']:,.0f} decisions/s)")

    if greedy_deals:
        gk, gp = compiled_tables(make_seats("greedy"))
        gout = np.zeros((greedy_deals, N_COLS), dtype=np.int64)
        play_deals(np.uint64(seed), np.uint64(0), 2, rules, gk, gp, gout)
        dt, cpu_dt = _interleaved(lambda: play_deals(np.uint64(seed), np.uint64(0), greedy_deals,
                                                     rules, gk, gp, gout), repeats, limit,
                                  limit_rates)
        res["greedy_deals_per_s"] = greedy_deals / dt
        res["greedy_cpu_deals_per_s"] = greedy_deals / max(cpu_dt, 1e-9)
        echo(f"greedy vs greedy deals     {res['greedy_deals_per_s']:>14,.0f} deals/s")

    if limit:
        res["limit_deals_per_s"] = max(limit_rates)
        res["random_ratio_vs_limit"] = res["deals_per_s"] / res["limit_deals_per_s"]
        echo(f"native yardstick (--limit) {res['limit_deals_per_s']:>14,.0f} random deals/s "
             f"(best of {len(limit_rates)} runs interleaved with the above)")
        line = f"  -> compiled random deals are {res['random_ratio_vs_limit']:.2f}x its speed"
        if "greedy_deals_per_s" in res:
            res["greedy_ratio_vs_limit"] = res["greedy_deals_per_s"] / res["limit_deals_per_s"]
            line += f", greedy deals {res['greedy_ratio_vs_limit']:.2f}x"
        echo(line)
        cpu_rate = max(limit_cpu_rate(limit, deals) for _ in range(repeats))
        res["limit_cpu_deals_per_s"] = cpu_rate
        res["random_cpu_ratio_vs_limit"] = res["cpu_deals_per_s"] / cpu_rate
        line = (f"  -> in CPU time (left alone by a busy machine's time slicing): random "
                f"{res['random_cpu_ratio_vs_limit']:.2f}x")
        if "greedy_cpu_deals_per_s" in res:
            res["greedy_cpu_ratio_vs_limit"] = res["greedy_cpu_deals_per_s"] / cpu_rate
            line += f", greedy {res['greedy_cpu_ratio_vs_limit']:.2f}x"
        echo(line + f" (yardstick: {cpu_rate:,.0f} deals per CPU second, best of {repeats})")

    m = 200_000
    once = np.zeros(m, np.uint64)
    twice = np.zeros(m, np.uint64)
    la = np.zeros(m, np.int64)
    lb = np.zeros(m, np.int64)
    tricks = np.zeros((50_000, 8), np.int64)
    nm, nt = collect_situations(np.uint64(seed + 1), 4000, rules, kinds, entries(kinds), params,
                                once, twice, la, lb, tricks)
    once, twice, la, lb, tricks = once[:nm], twice[:nm], la[:nm], lb[:nm], tricks[:nt]
    reps = 20
    dt, _ = _best(lambda: bench_legal(once, twice, la, lb, reps), repeats)
    res["legal_generations_per_s"] = nm * reps / dt
    echo(f"legal-play generations     {res['legal_generations_per_s']:>14,.0f} /s       "
         f"(over {nm:,} situations from real deals)")
    dt, _ = _best(lambda: bench_tricks(tricks, reps * 4), repeats)
    res["trick_evaluations_per_s"] = nt * reps * 4 / dt
    echo(f"trick evaluations          {res['trick_evaluations_per_s']:>14,.0f} /s       "
         f"(over {nt:,} tricks from real deals)")

    if python_deals:
        asker = Asker([RandomStrategy() for _ in range(4)], DEFAULT_RULES, None,
                       python_tier=True)  # RandomStrategy.choose, not its compiled twin

        def py() -> None:
            for d in range(python_deals):
                asker.play(Deal(seed, d))
        dt, _ = _best(py, max(1, repeats - 1))
        res["python_tier_deals_per_s"] = python_deals / dt
        echo(f"python-tier random deals   {res['python_tier_deals_per_s']:>14,.0f} deals/s   "
             f"(step API, Python strategy objects)")

    if reference_deals:
        dt, _ = _best(lambda: [reference.play_deal(seed, d) for d in range(reference_deals)], 1)
        res["reference_deals_per_s"] = reference_deals / dt
        res["speedup_vs_reference"] = res["deals_per_s"] / res["reference_deals_per_s"]
        echo(f"reference engine deals     {res['reference_deals_per_s']:>14,.0f} deals/s   "
             f"-> compiled is {res['speedup_vs_reference']:,.0f}x the reference")

    if strategies:
        res.update(strategy_speeds(repeats, seed, echo))

    if python_deals:
        res.update(fast_tier_speeds(repeats, seed, echo,
                                    openspiel_games=openspiel_games // 4 if openspiel_games else 0))
        res.update(batch_speeds(repeats, seed, echo))

    if openspiel_games:
        os_res = openspiel_hearts(openspiel_games, repeats)
        if os_res is None:
            echo("openspiel hearts           not measured (pip install 'shuangkou[openspiel]')")
        else:
            res.update(os_res)
            res["decisions_ratio_vs_openspiel"] = (res["decisions_per_s"]
                                                   / os_res["openspiel_decisions_per_s"])
            echo(f"openspiel hearts (C++)     {os_res['openspiel_decisions_per_s']:>14,.0f} "
                 f"decisions/s ({os_res['openspiel_games_per_s']:,.0f} games/s, uniform random"
                 f" bots via evaluate_bots)")
            echo(f"  -> shuangkou decisions/s are {res['decisions_ratio_vs_openspiel']:.1f}x "
                 f"OpenSpiel's")
    return res


def decision_times(spec: str, deals: int, seed: int = 1) -> np.ndarray:
    """Seconds per searched decision of ``spec`` in seat 0 (greedy elsewhere).

    Timed one by one around the kernel call: trick-play decisions with at least two legal
    plays (forced plays and calling decisions, which the search players leave to greedy,
    take microseconds and would flatter the median).
    """
    seats = make_seats([spec, "greedy", "greedy", "greedy"])
    kinds, params = compiled_tables(seats)
    table = entries(kinds)
    scratch = new_scratch()
    times = []
    for d in range(deals):
        deal = Deal(seed, d)
        st, u, r = deal.engine
        while not deal.done:
            seat = int(st[S.S_TO_ACT])
            searched = seat == 0 and st[S.S_PHASE] == S.PLAY and len(deal.legal_codes()) > 1
            t = time.perf_counter()
            code = decide(kinds[seat], table, params, st, u, r, seat, *scratch)
            if searched:
                times.append(time.perf_counter() - t)
            deal.apply_code(int(code))
    return np.array(times)


def strategy_speeds(repeats: int, seed: int, echo: Callable[[str], None]) -> dict[str, Any]:
    """The median decision time of the search players (greedy deals/s: ``run``)."""
    res: dict[str, Any] = {}
    res.update(plugin_speed(repeats, seed, 50_000, echo))
    res.update(plugin_process_speed(repeats, echo))
    res.update(new_combination_speed(echo))
    res.update(learned_speed(repeats, seed, 2_000, echo))
    for spec, deals in (("pimc", 3), ("ismcts", 2)):
        decision_times(spec, 1, seed + 99)  # compile / warm up
        t = decision_times(spec, deals, seed)
        res[f"{spec}_median_ms"] = float(np.median(t) * 1e3)
        res[f"{spec}_p90_ms"] = float(np.quantile(t, 0.9) * 1e3)
        echo(f"{spec + ' (defaults)':<27} {res[f'{spec}_median_ms']:>13.2f} ms per decision "
             f"(median of {len(t)} searched decisions; 90th percentile "
             f"{res[f'{spec}_p90_ms']:.2f} ms)")
    return res


def plugin_speed(repeats: int, seed: int, n: int, echo: Callable[[str], None]) -> dict[str, Any]:
    """Deals/s of the compiled plug-in ``strategies.example_compiled:CautiousC`` against
    itself (docs/strategies.md, "Compiled bots") and its ratio to ``greedy`` vs ``greedy``,
    the two measured in turns in this run (the machine's speed drifts); also the time to make
    the plug-in's loops ready (compiled on first use, then loaded from the cache)."""
    rules = DEFAULT_RULES.array()
    out = np.zeros((n, N_COLS), dtype=np.int64)
    t0 = time.perf_counter()
    twin = compiled_tables(make_seats("strategies.example_compiled:CautiousC"))
    twin.loops.play_deals(np.uint64(seed), np.uint64(0), 2, rules, *twin, out)
    ready = time.perf_counter() - t0
    greedy = compiled_tables(make_seats("greedy"))
    best = {"twin": np.inf, "greedy": np.inf}
    for _ in range(repeats):
        for name, t in (("greedy", greedy), ("twin", twin)):
            dt, _ = _best(lambda t=t: t.loops.play_deals(np.uint64(seed), np.uint64(0), n,
                                                         rules, *t, out), 1)
            best[name] = min(best[name], dt)
    res = {"plugin_cautious_deals_per_s": n / best["twin"], "plugin_ready_s": ready,
           "plugin_ratio_vs_greedy": best["greedy"] / best["twin"]}
    echo(f"compiled plug-in cautious_c {res['plugin_cautious_deals_per_s']:>13,.0f} deals/s   "
         f"(in loop, start-up excluded: {res['plugin_ratio_vs_greedy']:.2f}x greedy vs greedy "
         f"in turns with it, target >= 0.3; loops ready in {ready:.1f} s)")
    return res


def play_process(seats: str, deals: int, plugins: Sequence[str] = (),
                 timeout: float = 900.0) -> dict[str, Any]:
    """One whole ``python -m sim.cli play --deals DEALS --seats SEATS`` process (start-up,
    imports, loading or compiling kernels, the deals, exit), in this environment (the same
    kernel cache), with ``SHUANGKOU_COMPILE_NOTICE=1``: its wall seconds, its CPU seconds
    (user + system, from ``RUSAGE_CHILDREN``) and whether it compiled anything (its stderr
    says "compiling")."""
    import resource

    cmd = [sys.executable, "-m", "sim.cli", "play", "--deals", str(deals), "--seats", seats]
    for p in plugins:
        cmd += ["--plugin", p]
    env = dict(os.environ, **{NOTICE_ENV: "1"})
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env,
                          timeout=timeout, cwd=_ROOT)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise RuntimeError(f"play --seats {seats} failed (exit code {proc.returncode}): {last}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": wall, "cpu_s": cpu, "compiled": "compiling" in proc.stderr}


PLUGIN_PROCESS_DEALS = 200_000  # deals of each whole-process plug-in / greedy run


def plugin_process_speed(repeats: int, echo: Callable[[str], None],
                         deals: int = PLUGIN_PROCESS_DEALS) -> dict[str, Any]:
    """The compiled plug-in ``cautious_c`` (strategies/example_compiled.py) against itself
    and greedy against itself, each a whole ``play`` process of ``deals`` deals (start-up
    included), in turns ``repeats`` times (the bench's default: 3) after one warm-up each:
    deals per CPU second of each (the child's user + system time: one core) and the ratio of
    their medians (issue 33's target: >= 0.5x)."""
    runs = {"twin": ("cautious_c", ["strategies.example_compiled"]), "greedy": ("greedy", [])}
    for seats, plugins in runs.values():  # compile or load, and warm the file cache
        play_process(seats, 10, plugins)
    rates: dict[str, list[float]] = {"twin": [], "greedy": []}
    for _ in range(repeats):
        for name in ("greedy", "twin"):
            r = play_process(runs[name][0], deals, runs[name][1])
            rates[name].append(deals / max(r["cpu_s"], 1e-9))
    twin, greedy = float(np.median(rates["twin"])), float(np.median(rates["greedy"]))
    res = {"plugin_process_deals_per_cpu_s": twin, "greedy_process_deals_per_cpu_s": greedy,
           "plugin_process_ratio_vs_greedy": twin / greedy}
    echo(f"  whole process, start-up in {twin:>11,.0f} deals per CPU s ("
         f"{res['plugin_process_ratio_vs_greedy']:.2f}x greedy's {greedy:,.0f}: play --deals "
         f"{deals:,}, medians of {len(rates['twin'])} runs each in turns, target >= 0.5)")
    return res


# pairs of players never seated together in the process that plays them (cheap searches, so
# the 10 deals are short): each player has run (is compiled) before, the pair is new
NEW_COMBINATIONS = (("expert(samples=2)", "learned"),
                    ("pimc(samples=2)", "ismcts(iterations=20)"),
                    ("oracle(samples=2)", "greedy"))


def new_combination_speed(echo: Callable[[str], None], deals: int = 10,
                          pairs: Sequence[tuple[str, str]] = NEW_COMBINATIONS
                          ) -> dict[str, Any]:
    """Whole ``play --deals 10`` processes seating a new combination of players that have
    each been compiled before (``shuangkou compile`` of them first, here): the median wall
    and CPU seconds over ``pairs`` (issue 33's target: <= 3 s), and whether any compiled."""
    import io

    specs = list(dict.fromkeys(s for pair in pairs for s in pair))
    rows = precompile.run(specs, out=io.StringIO(), progress=False)
    runs = [play_process(",".join(pair), deals) for pair in pairs]
    wall = float(np.median([r["wall_s"] for r in runs]))
    cpu = float(np.median([r["cpu_s"] for r in runs]))
    compiled = [",".join(p) for p, r in zip(pairs, runs, strict=True) if r["compiled"]]
    res = {"new_combination_s": wall, "new_combination_cpu_s": cpu,
           "new_combination_max_s": max(r["wall_s"] for r in runs),
           "new_combination_compiled": compiled,
           "new_combination_precompiled": sum(r["compiled"] for r in rows)}
    echo(f"{'new combination, 10 deals':<27} {wall:>13.2f} s whole process, median of "
         f"{len(runs)} pairs ({cpu:.2f} s of CPU; slowest {res['new_combination_max_s']:.2f} s;"
         f" {'compiled: ' + '; '.join(compiled) if compiled else 'nothing compiled'}), "
         f"target <= 3 s")
    return res


def learned_speed(repeats: int, seed: int, n: int, echo: Callable[[str], None],
                  spec: str = "learned") -> dict[str, Any]:
    """The learned player against itself in the compiled loop on one core: deals per CPU
    second and CPU microseconds per decision, the mean over every decision of the deals
    (calling chances and forced plays included, as a tournament meets them; the
    ``decisions`` column counts them), best of ``repeats``."""
    rules = DEFAULT_RULES.array()
    out = np.zeros((n, N_COLS), dtype=np.int64)
    t = compiled_tables(make_seats(spec))
    t.loops.play_deals(np.uint64(seed), np.uint64(0), 2, rules, *t, out[:2])  # load / compile
    best = np.inf
    for _ in range(repeats):
        c0 = time.process_time()
        t.loops.play_deals(np.uint64(seed), np.uint64(0), n, rules, *t, out)
        best = min(best, time.process_time() - c0)
    decisions = int(out[:, C_DECISIONS].sum())
    res = {"learned_deals_per_cpu_s": n / best,
           "learned_us_per_decision": best / max(decisions, 1) * 1e6,
           "learned_decisions_per_deal": decisions / n}
    echo(f"{'learned vs itself':<27} {res['learned_deals_per_cpu_s']:>13,.0f} deals per CPU s "
         f"({res['learned_us_per_decision']:.1f} us per decision, the mean over all "
         f"{res['learned_decisions_per_deal']:.0f} decisions of a deal; targets >= 300 deals/s, "
         f"<= 25 us)")
    return res


def openspiel_hearts(games: int, repeats: int) -> dict[str, float] | None:
    """OpenSpiel's C++ hearts with uniform random bots, if ``pyspiel`` is installed."""
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("hearts")
    bots = [pyspiel.make_uniform_random_bot(i, 1234 + i) for i in range(4)]

    def count_decisions() -> int:
        # decisions per game: hearts is fixed-length (pass 3 cards x 4 seats, 52 plays)
        rng = np.random.default_rng(0)
        s = game.new_initial_state()
        n = 0
        while not s.is_terminal():
            if s.is_chance_node():
                outcomes = s.chance_outcomes()
                s.apply_action(outcomes[rng.integers(len(outcomes))][0])
            else:
                s.apply_action(rng.choice(s.legal_actions()))
                n += 1
        return n

    per_game = count_decisions()

    def run_games() -> None:
        for i in range(games):
            pyspiel.evaluate_bots(game.new_initial_state(), bots, i)
    dt, _ = _best(run_games, repeats)
    return {"openspiel_games_per_s": games / dt,
            "openspiel_decisions_per_s": games * per_game / dt,
            "openspiel_decisions_per_game": per_game}


# --- the fast Python tier (issue "your own bots at engine speed", part 2) --------------------
def python_random_codes(deals: int, seed: int = 1) -> tuple[int, float]:
    """A Python random bot on integer codes (``Deal.legal_codes``/``apply_code``), all four
    seats; returns (decisions, seconds)."""
    import random

    rng = random.Random(seed)
    rnd = rng.random
    n = 0
    t = time.perf_counter()
    for d in range(deals):
        deal = Deal(seed, d)
        while not deal.done:
            codes = deal.legal_codes()
            deal.apply_code(codes[int(rnd() * len(codes))])
            n += 1
    return n, time.perf_counter() - t


def python_reader_codes(deals: int, seed: int = 1, use_observation: bool = False
                        ) -> tuple[int, float]:
    """A Python bot that reads its hand and the current trick at every decision, then plays
    on codes: through the numpy vector ``Deal.obs_array`` (default; the fast path) or, with
    ``use_observation``, through ``Observation.hand`` and ``Observation.trick``. It leads its
    first legal play and otherwise plays at random. Returns (decisions, seconds)."""
    import random

    rng = random.Random(seed)
    rnd = rng.random
    buf = np.empty(OBS_SIZE, dtype=np.int16)
    n = 0
    t = time.perf_counter()
    for d in range(deals):
        deal = Deal(seed, d)
        while not deal.done:
            if use_observation:
                obs = Observation(deal, deal.seat_to_act)
                hand = obs.hand
                leading = not obs.trick
            else:
                v = deal.obs_array(None, buf)
                hand = v[O_HAND:O_HAND + 54]
                leading = v[O_TRICK] < 0
            codes = deal.legal_codes()
            deal.apply_code(codes[0] if leading and hand is not None
                            else codes[int(rnd() * len(codes))])
            n += 1
    return n, time.perf_counter() - t


def openspiel_python_hearts(games: int, seed: int = 1) -> dict[str, float] | None:
    """OpenSpiel's hearts through its Python API (``legal_actions``/``apply_action``), uniform
    random choices made in Python; None if ``pyspiel`` is not installed."""
    try:
        import pyspiel
    except ImportError:
        return None
    import random

    game = pyspiel.load_game("hearts")
    rng = random.Random(seed)
    rnd = rng.random
    n = 0
    t = time.perf_counter()
    for _ in range(games):
        s = game.new_initial_state()
        while not s.is_terminal():
            if s.is_chance_node():
                outcomes = s.chance_outcomes()
                s.apply_action(outcomes[int(rnd() * len(outcomes))][0])
            else:
                la = s.legal_actions()
                s.apply_action(la[int(rnd() * len(la))])
                n += 1
    dt = time.perf_counter() - t
    return {"openspiel_python_decisions_per_s": n / dt, "openspiel_python_games_per_s": games / dt}


def fast_tier_speeds(repeats: int, seed: int, echo: Callable[[str], None],
                     deals: int = 1000, openspiel_games: int = 500) -> dict[str, Any]:
    """The fast Python tier's figures, with OpenSpiel's Python API in the same run."""
    res: dict[str, Any] = {}
    python_random_codes(3, seed)
    python_reader_codes(3, seed)
    python_reader_codes(3, seed, use_observation=True)
    if openspiel_games:
        openspiel_python_hearts(5, seed)

    def rate(fn: Callable[[], tuple[int, float]]) -> float:
        return max(n / dt for n, dt in (fn() for _ in range(repeats)))

    # the random bot on codes and OpenSpiel's Python API alternate, so that both see the same
    # machine (these machines are shared and their speed drifts)
    ours, os_res = 0.0, None
    for _ in range(max(repeats, 5)):
        n, dt = python_random_codes(deals, seed)
        ours = max(ours, n / dt)
        r = openspiel_python_hearts(openspiel_games, seed) if openspiel_games else None
        if r is not None and (os_res is None or r["openspiel_python_decisions_per_s"]
                              > os_res["openspiel_python_decisions_per_s"]):
            os_res = r
    res["python_codes_decisions_per_s"] = ours
    echo(f"python random bot on codes {res['python_codes_decisions_per_s']:>14,.0f} "
         f"decisions/s (Deal.legal_codes / apply_code)")
    res["python_reader_decisions_per_s"] = rate(lambda: python_reader_codes(deals, seed))
    echo(f"python bot reading obs     {res['python_reader_decisions_per_s']:>14,.0f} "
         f"decisions/s (hand + trick from Deal.obs_array at every decision)")
    res["python_observation_reader_decisions_per_s"] = rate(
        lambda: python_reader_codes(deals // 2, seed, use_observation=True))
    echo(f"  same via Observation     {res['python_observation_reader_decisions_per_s']:>14,.0f}"
         f" decisions/s (obs.hand + obs.trick)")
    if openspiel_games:
        if os_res is None:
            echo("openspiel python API       not measured (pip install 'shuangkou[openspiel]')")
        else:
            res.update(os_res)
            ratio = res["python_codes_decisions_per_s"] / os_res["openspiel_python_decisions_per_s"]
            res["python_codes_ratio_vs_openspiel_python"] = ratio
            echo(f"openspiel hearts, Python   {os_res['openspiel_python_decisions_per_s']:>14,.0f}"
                 f" decisions/s (legal_actions/apply_action, random in Python)")
            echo(f"  -> the Python random bot on codes makes {ratio:.1f}x OpenSpiel's Python-API "
                 f"decisions/s")
    return res


# --- the batched environment (part 3) ----------------------------------------------------------
def batch_random(n: int, steps: int, seed: int = 1, masked: bool = False) -> tuple[int, float]:
    """A numpy-vectorised uniform-random policy on ``sim.Batch(n)`` (the policy plays all four
    seats): ``step_index`` with ``floor(u * n_legal)``; with ``masked``, the way a neural
    policy would play: ``observe()`` (vectors and legal masks) every step and the argmax of
    random scores over the legal actions. Returns (decisions, seconds)."""
    b = Batch(n, seed)
    rng = np.random.default_rng(seed)
    rand = rng.random
    n_legal = b.n_legal
    decisions = 0
    t = time.perf_counter()
    if masked:
        for _ in range(steps):
            o = b.observe()
            scores = np.where(o.legal_mask, rand(o.legal_mask.shape, dtype=np.float32), -1.0)
            b.step(scores.argmax(axis=1))
        decisions = n * steps
    else:
        for _ in range(steps):
            b.step_index((rand(n) * n_legal).astype(np.int64))
        decisions = n * steps
    return decisions, time.perf_counter() - t


def batch_speeds(repeats: int, seed: int, echo: Callable[[str], None]) -> dict[str, Any]:
    """Decisions/s of sim.Batch with a vectorised random policy at n = 256 and n = 16."""
    res: dict[str, Any] = {}
    batch_random(4, 10, seed)
    batch_random(4, 10, seed, masked=True)
    for n, steps in ((256, 2000), (16, 20000)):
        rate = max(d / dt for d, dt in (batch_random(n, steps, seed) for _ in range(repeats)))
        res[f"batch{n}_decisions_per_s"] = rate
        echo(f"Batch n={n:<4} random policy {rate:>12,.0f} decisions/s (step_index, numpy)")
    rate = max(d / dt for d, dt in (batch_random(256, 100, seed, True) for _ in range(repeats)))
    res["batch256_masked_decisions_per_s"] = rate
    echo(f"Batch n=256  observe + mask {rate:>12,.0f} decisions/s (obs, legal_mask, masked "
         f"argmax, step)")
    return res


def to_json(res: dict[str, Any]) -> str:
    return json.dumps(res, indent=2, sort_keys=True)
