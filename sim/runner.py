"""Play deals with any mix of compiled and Python strategies.

All seats compiled: the compiled loop (``sim.loop``). Otherwise each deal runs through the
step API and compiled seats are asked through their kernel on the same state, so one deal can
mix both tiers and a deal's record never depends on which path played it.

A Python strategy that raises, times out or returns an illegal choice stops the run with a
:class:`StrategyError` naming the strategy, seat, seed and deal; deals finished before it are
already in the caller's hands (the iterators yield deal by deal).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from sim.deal import Deal, Observation
from sim.engine import DONE, new_state
from sim.errors import ConfigError, IllegalPlayError, StrategyError
from sim.loop import N_COLS, summarize
from sim.plugins import Loops
from sim.record import build_record
from sim.rng import check_deal, check_seed
from sim.rules import DEFAULT_RULES, Rules
from strategies.base import Strategy
from strategies.compiled import new_scratch
from strategies.params import param_table
from strategies.registry import make


def make_seats(specs: Sequence[str | Strategy] | str) -> list[Strategy]:
    """Four strategies from one, two (alternating: teams A and B) or four specs."""
    if isinstance(specs, str):
        specs = split_specs(specs)
    specs = list(specs)
    if len(specs) == 1:
        specs = specs * 4
    elif len(specs) == 2:
        specs = [specs[0], specs[1], specs[0], specs[1]]
    if len(specs) != 4:
        raise ConfigError(f"seats {specs!r}: give 1, 2 (team A, team B) or 4 strategy specs")
    return [make(s) for s in specs]


def split_specs(text: str) -> list[str]:
    """Split ``'pimc(samples=8, rollout=greedy),random'`` at top-level commas."""
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    out.append(cur.strip())
    return [s for s in out if s]


class Tables(tuple):
    """``(kinds, params)`` for the compiled loop; ``.loops`` (``sim.plugins.Loops``) runs them,
    with the generated loops when a seat is a compiled plug-in."""

    loops: Any


def compiled_tables(seats: Sequence[Strategy]) -> Tables | None:
    """(kinds, params) for the compiled loop, or None if some seat is Python-only."""
    if not all(s.runs_compiled() for s in seats):
        return None
    loops = Loops(seats)
    t = Tables((loops.kinds, param_table([s.compiled_params() for s in seats])))
    t.loops = loops
    return t


class _Asker:
    """Asks each seat's strategy for its choice on a ``Deal``, tier by tier."""

    def __init__(self, seats: Sequence[Strategy], rules: Rules, timeout: float | None,
                 python_tier: bool = False) -> None:
        self.seats = list(seats)
        self.rules = rules
        self.timeout = timeout
        self.loops = Loops(seats)
        self.kinds = self.loops.kinds
        self.params = param_table([s.compiled_params() if s.runs_compiled() else []
                                   for s in seats])
        self.python = [python_tier or not s.runs_compiled() for s in seats]
        self.scratch = new_scratch()

    def play(self, deal: Deal) -> None:
        for s, strat in enumerate(self.seats):
            if self.python[s]:
                self._guard(strat, s, deal, "begin_deal", strat.begin_deal, s, deal.seed,
                            deal.deal)
        st, u, r = deal._st, deal._u, deal._rules
        while deal._ph != DONE:
            seat = deal._seat
            if not self.python[seat]:
                deal._codes = None
                code = self.loops.decide(self.kinds[seat], self.params, st, u, r, seat,
                                         *self.scratch, seed=deal.seed, deal=deal.deal)
                deal.apply_code(int(code))
                continue
            strat = self.seats[seat]
            obs = Observation(deal, seat)
            legal = deal.legal()
            t0 = time.perf_counter() if self.timeout is not None else 0.0
            try:  # inline rather than through _guard: this is the Python tier's hot loop
                choice = strat.choose(obs, legal)
            except StrategyError:
                raise
            except Exception as e:
                raise self._raised(strat, seat, deal, "choose", e) from e
            if self.timeout is not None and time.perf_counter() - t0 > self.timeout:
                raise StrategyError(
                    f"strategy {strat.spec()!r} in seat {seat} took "
                    f"{time.perf_counter() - t0:.2f} s for one decision, over the "
                    f"{self.timeout} s limit (seed {deal.seed}, deal {deal.deal})")
            try:
                deal.apply(choice)
            except IllegalPlayError as e:
                raise StrategyError(f"strategy {strat.spec()!r} in seat {seat} returned an "
                                    f"illegal choice (seed {deal.seed}, deal {deal.deal}): {e}") \
                    from None

    @staticmethod
    def _guard(strat: Strategy, seat: int, deal: Deal, what: str, fn: Any, *args: Any) -> Any:
        try:
            return fn(*args)
        except StrategyError:
            raise
        except Exception as e:
            raise _Asker._raised(strat, seat, deal, what, e) from e

    @staticmethod
    def _raised(strat: Strategy, seat: int, deal: Deal, what: str,
                e: Exception) -> StrategyError:
        return StrategyError(f"strategy {strat.spec()!r} in seat {seat} raised "
                             f"{type(e).__name__}: {e} in {what} (seed {deal.seed}, "
                             f"deal {deal.deal}; replay with shuangkou play --seed "
                             f"{deal.seed} --first-deal {deal.deal} --deals 1)")


def iter_records(seed: int, first: int, n: int, seats: Sequence[Strategy],
                 rules: Rules | None = None, timeout: float | None = None,
                 python_tier: bool = False) -> Iterator[dict[str, Any]]:
    """Records of deals ``first … first+n-1``, one at a time. ``python_tier`` asks every
    strategy through ``choose`` (observations), even those with a kernel."""
    seed, first = check_seed(seed), check_deal(first, "first deal")
    rules = rules or DEFAULT_RULES
    names = [s.spec() for s in seats]
    extra = {"oracle_seats": [i for i, s in enumerate(seats) if s.oracle]} \
        if any(s.oracle for s in seats) else None
    tables = None if python_tier else compiled_tables(seats)
    if tables is not None:
        kinds, params = tables
        st, u = new_state()
        scratch = new_scratch()
        r = rules.array()
        for d in range(first, first + n):
            tables.loops.play_deal(st, u, r, np.uint64(seed), np.uint64(d), kinds, params,
                                   *scratch)
            yield build_record(st, u, seed, d, rules, names, extra)
        return
    asker = _Asker(seats, rules, timeout, python_tier)
    for d in range(first, first + n):
        deal = Deal(seed, d, rules, names)
        asker.play(deal)
        rec = deal.record()
        if extra:
            rec.update(extra)
        yield rec


def summaries(seed: int, first: int, n: int, seats: Sequence[Strategy],
              rules: Rules | None = None, timeout: float | None = None) -> np.ndarray:
    """Summary rows (``sim.loop.COLUMN_NAMES``) of deals ``first … first+n-1``."""
    seed, first = check_seed(seed), check_deal(first, "first deal")
    rules = rules or DEFAULT_RULES
    out = np.zeros((n, N_COLS), dtype=np.int64)
    tables = compiled_tables(seats)
    if tables is not None:
        tables.loops.play_deals(np.uint64(seed), np.uint64(first), n, rules.array(), *tables,
                                out)
        return out
    asker = _Asker(seats, rules, timeout)
    for i in range(n):
        deal = Deal(seed, first + i, rules)
        asker.play(deal)
        summarize(deal._st, deal._u, out[i])
    return out
