"""``shuangkou compile``: warm the kernel cache for some players, or every built-in one.

Each player is compiled once (``sim.core.calls``): the deal loops (random and greedy are
written into them), then each other built-in player's kernel and each compiled plug-in's
entry, alone. A step that finds its kernel in the cache only loads it. Each step shows a bar
of the seconds it has taken against the time measured for it on this machine before (or
docs/speed.md's figure), and ends with the time it took; the times are recorded for the next
estimate (``sim.core._cache``).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sim.core._cache import (
    CACHE_DIR,
    KERNEL_SECONDS,
    NOTICE_ENV,
    compile_watch,
    is_tty,
    measured_seconds,
    prune_after_compile,
)
from sim.core.tables import N_COLS
from sim.loops.loop import play_deals
from sim.loops.plugins import plugin_address, plugin_kernel
from sim.loops.runner import compiled_tables, make_seats
from sim.rules import DEFAULT_RULES
from strategies.compiled import KERNEL_NAMES, player_address
from strategies.kinds import BUILTIN_NAMES
from strategies.params import param_table
from strategies.registry import make


@dataclass
class Step:
    """One kernel to compile (or load): ``what`` for the terminal, ``key`` its measured time's
    name (``sim.core._cache.kernel_of``), ``run`` compiles or loads it."""

    what: str
    key: str
    run: Callable[[], Any]


def _loop_step() -> Step:
    def run() -> None:
        out = np.zeros((1, N_COLS), dtype=np.int64)
        play_deals(np.uint64(1), np.uint64(0), 1, DEFAULT_RULES.array(),
                   np.array([0, 1, 0, 1], dtype=np.int64), param_table(), out)

    return Step("the deal loop (random and greedy inside)", "sim.loops.loop.run_deals", run)


def _plugin_loop_step(seat: Any) -> Step:
    def run() -> None:
        seats = make_seats([seat, "random"])
        tables = compiled_tables(seats)
        assert tables is not None
        out = np.zeros((1, N_COLS), dtype=np.int64)
        tables.loops.play_deals(np.uint64(1), np.uint64(0), 1, DEFAULT_RULES.array(), *tables,
                                out)

    return Step("the deal loop with compiled plug-ins", "sim.loops.plugin_loop.play_deals",
                run)


def plan(specs: Sequence[str]) -> tuple[list[Step], list[str]]:
    """The steps that compile the players ``specs`` (every built-in when empty), and the
    players that need nothing compiled (Python bots)."""
    specs = list(specs) or list(BUILTIN_NAMES)
    steps = [_loop_step()]
    python: list[str] = []
    kinds: list[int] = []
    plugins: list[Any] = []
    for spec in specs:
        s = make(spec)
        cls = type(s)
        if plugin_kernel(cls) is not None and s.runs_compiled():
            if cls not in [type(p) for p in plugins]:
                plugins.append(s)
        elif s.compiled_kind is not None and s.runs_compiled():
            if s.compiled_kind in KERNEL_NAMES and s.compiled_kind not in kinds:
                kinds.append(s.compiled_kind)
        else:
            python.append(s.spec())
    for k in sorted(kinds):
        module, fn = KERNEL_NAMES[k]
        steps.append(Step(f"the {BUILTIN_NAMES[k]} player", f"{module}.{fn}",
                          lambda k=k: player_address(k)))
    for s in plugins:
        cls = type(s)
        k = plugin_kernel(cls)
        who = f"{k.py_func.__module__}.{k.py_func.__qualname__}"
        steps.append(Step(f"the plug-in {cls.name}", f"plugin {who}",
                          lambda cls=cls: plugin_address(cls)))
    if plugins:
        steps.append(_plugin_loop_step(plugins[0]))
    return steps, python


def _bar(step: Step, estimate: float | None, stream: Any) -> Any:
    from tqdm import tqdm

    total = max(1.0, round(estimate or 10.0))
    return tqdm(total=total, desc=step.what, file=stream, leave=False, dynamic_ncols=True,
                bar_format="{desc}: {bar} {elapsed} of ~{total:.0f} s")


def run(specs: Sequence[str], out: Any = None, err: Any = None,
        progress: bool | None = None) -> list[dict[str, Any]]:
    """Compile (or load) the kernels of ``specs``; one line per kernel on ``out`` with the
    time it took, a bar per kernel on ``err`` (a terminal only, unless ``progress``).
    Returns the steps' figures."""
    out = out or sys.stdout
    err = err or sys.stderr
    steps, python = plan(specs)
    if progress is None:
        progress = is_tty(err)
    w = compile_watch()
    rows = []
    quiet = os.environ.get(NOTICE_ENV)
    os.environ[NOTICE_ENV] = "0"  # the bars and lines below say it all
    try:
        t_all, c_all = time.perf_counter(), time.process_time()
        for step in steps:
            estimate = measured_seconds(f"kernel {step.key}")
            if estimate is None:
                estimate = KERNEL_SECONDS.get(step.key)
            n0 = w.count
            t0, c0 = time.perf_counter(), time.process_time()
            bar = _bar(step, estimate, err) if progress else None
            stop = threading.Event()
            if bar is not None:
                def tick(bar: Any = bar, t0: float = t0) -> None:
                    while not stop.wait(0.5):
                        bar.n = min(bar.total, time.perf_counter() - t0)
                        bar.refresh()

                ticker = threading.Thread(target=tick, daemon=True)
                ticker.start()
            try:
                step.run()
            finally:
                stop.set()
                if bar is not None:
                    ticker.join(2.0)
                    bar.close()
            took, cpu = time.perf_counter() - t0, time.process_time() - c0
            compiled = w.count > n0
            rows.append({"kernel": step.key, "what": step.what, "seconds": round(took, 2),
                         "cpu_seconds": round(cpu, 2), "compiled": compiled})
            how = "compiled" if compiled else "already compiled: loaded from the cache"
            print(f"{step.what:<42} {took:6.1f} s  ({how})", file=out, flush=True)
        took, cpu = time.perf_counter() - t_all, time.process_time() - c_all
    finally:
        if quiet is None:
            os.environ.pop(NOTICE_ENV, None)
        else:
            os.environ[NOTICE_ENV] = quiet
    for name in python:
        print(f"{name:<42}      -    (a Python bot: nothing to compile)", file=out)
    n = sum(r["compiled"] for r in rows)
    if n:
        prune_after_compile()  # new kernels written: stale cache folders go (a size cap)
    print(f"{n} of {len(rows)} kernels compiled in {took:.1f} s ({cpu:.1f} s of CPU); the "
          f"kernel cache is {CACHE_DIR}", file=out, flush=True)
    return rows
