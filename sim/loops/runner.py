"""Play deals with any mix of compiled and Python strategies.

All seats compiled: the compiled loop (``sim.loops.loop``). Otherwise each deal runs through the
step API and compiled seats are asked through their kernel on the same state, so one deal can
mix both tiers and a deal's record never depends on which path played it.

A Python strategy that raises, times out or returns an illegal choice stops the run with a
:class:`StrategyError` naming the strategy, seat, seed and deal; deals finished before it are
already in the caller's hands (the iterators yield deal by deal).

The time limit is enforced while the bot runs, so a bot that never returns is stopped too: in
a process's main thread a ``SIGALRM`` interval timer interrupts it (a busy loop or a sleep);
in any other thread (joblib's threading backend, dask workers) the bot runs on a helper thread
the caller waits for, and a bot over its limit is abandoned (and, if it runs Python code,
stopped with an asynchronous exception).
"""

from __future__ import annotations

import math
import signal
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np

from sim.bots.process import BotFault
from sim.bots.seat import forfeit_result
from sim.core import state as S
from sim.core.rng import check_deal, check_seed
from sim.core.state import DONE, new_state
from sim.core.tables import C_ATT_POINTS, C_CALLER, C_MULT, C_SCORE, C_SETTLE0, C_VOID
from sim.deal import Deal
from sim.errors import ConfigError, IllegalPlayError, StrategyError
from sim.loops.helper import HelperThread
from sim.loops.loop import N_COLS, summarize
from sim.loops.plugins import Loops
from sim.observation import Observation
from sim.record import build_record
from sim.rules import DEFAULT_RULES, Rules
from strategies.base import Strategy
from strategies.compiled import new_scratch
from strategies.params import param_table
from strategies.plugin import checked_params
from strategies.registry import make, split_specs, team_pair


def make_seats(specs: Sequence[str | Strategy] | str) -> list[Strategy]:
    """Four strategies from one, two (alternating: teams A and B) or four specs; with two, a
    team ``"a+b"`` seats ``a`` and ``b`` as partners (seats 0 and 2, or 1 and 3)."""
    if isinstance(specs, str):
        specs = split_specs(specs)
    specs = list(specs)
    if len(specs) == 1:
        specs = specs * 4
    elif len(specs) == 2:
        ta, tb = (team_pair(s) if isinstance(s, str) else [s, s] for s in specs)
        specs = [ta[0], tb[0], ta[1], tb[1]]
    if len(specs) != 4:
        raise ConfigError(f"seats {specs!r}: give 1, 2 (team A, team B) or 4 strategy specs")
    return [make(s) for s in specs]


class Tables(tuple):
    """``(kinds, params)`` for the compiled loop; ``.loops`` (``sim.loops.plugins.Loops``) runs
    them, with the generated loops when a seat is a compiled plug-in."""

    loops: Any


def compiled_tables(seats: Sequence[Strategy]) -> Tables | None:
    """(kinds, params) for the compiled loop, or None if some seat is Python-only."""
    if not all(s.runs_compiled() for s in seats):
        return None
    loops = Loops(seats)
    t = Tables((loops.kinds, param_table([checked_params(s) for s in seats])))
    t.loops = loops
    return t


def check_timeout(timeout: Any) -> float | None:
    """Seconds a Python strategy may take per call, or None (no limit) for None and 0."""
    if timeout is None:
        return None
    ok = (not isinstance(timeout, bool)
          and isinstance(timeout, (int, float, np.integer, np.floating))
          and math.isfinite(timeout) and timeout >= 0)
    if not ok:
        raise ConfigError(f"timeout {timeout!r} must be a number of seconds >= 0 "
                          f"(0: no limit)")
    return float(timeout) or None


class Forfeit(NamedTuple):
    """A deal a bot's side forfeited (sim.bots.seat.forfeit_result): the faulting seat, the
    caller, the attacker score and the settlement it is scored with."""

    seat: int
    caller: int
    score: int
    settlement: list[int]


class _Timeout(BaseException):
    """Raised inside a bot whose time is up (not an Exception: ``except Exception`` in the
    bot does not swallow it)."""


class _BotThread(HelperThread):
    """Plays deals for a thread that cannot use ``SIGALRM``, while that thread watches the
    time of each call into a bot and abandons this one when a bot overruns its limit."""

    def __init__(self) -> None:
        super().__init__("shuangkou-bot")

    def watch(self, asker: Asker, fn: Any, *args: Any) -> Any:
        """``fn(*args)`` on this thread; raises _Timeout once a call into a bot (started at
        ``asker._t0``) has run for ``asker.timeout`` seconds."""
        limit = asker.timeout
        assert limit is not None
        self.submit(fn, args)
        try:
            while True:
                t0 = asker._t0
                wait = limit if t0 is None else t0 + limit - time.perf_counter()
                if self.wait(max(wait, 1e-3)):
                    break
                t0 = asker._t0
                if t0 is not None and time.perf_counter() - t0 >= limit:
                    raise _Timeout
        except BaseException:  # over time, or Ctrl-C in the caller: leave the bot behind
            # _Timeout stops a bot running Python code (a busy loop); one blocked in C (a
            # sleep) stays blocked in this daemon thread
            self.abandon(_Timeout)
            raise
        return self.result()


def use_alarm() -> bool:
    """Whether this thread may time bots with ``SIGALRM`` (main thread, timer unused)."""
    return (hasattr(signal, "setitimer")
            and threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, signal.SIG_IGN)
            and signal.getitimer(signal.ITIMER_REAL)[0] == 0)


class Asker:
    """Asks each seat's strategy for its choice on a ``Deal``, tier by tier."""

    def __init__(self, seats: Sequence[Strategy], rules: Rules, timeout: float | None,
                 python_tier: bool = False) -> None:
        self.seats = list(seats)
        self.rules = rules
        self.timeout = check_timeout(timeout)
        self.loops = Loops(seats)
        self.loops.timeout = self.timeout  # also a compiled plug-in's (sim.loops.plugins)
        self.kinds = self.loops.kinds
        self.params = param_table([checked_params(s) if s.runs_compiled() else []
                                   for s in seats])
        self.python = [python_tier or not s.runs_compiled() for s in seats]
        # bots in other processes (sim.bots): their own clocks, faults scored by their rule
        self.external = [bool(getattr(s, "external", False)) for s in seats]
        for s, ext in zip(seats, self.external):
            if ext:
                s.rules = rules.to_dict()
        self.faults: list[dict[str, Any]] = []  # every bot fault, in order (sim.bots)
        self.forfeit: Forfeit | None = None  # the last deal's forfeit, if it was forfeited
        self.scratch = new_scratch()
        self._armed = False
        self.alarm = False  # timing with SIGALRM (else with a helper thread)
        self._thread: _BotThread | None = None
        self._t0: float | None = None  # when the running call into a bot started
        self._current: tuple[Strategy, int, str] | None = None  # and which call it is

    def play(self, deal: Deal) -> None:
        if self.timeout is None or not any(self.python):
            return self._play(deal)
        if not use_alarm():
            return self._play_watched(deal)
        old = signal.signal(signal.SIGALRM, self.on_alarm)
        self.alarm = True
        try:
            return self._play(deal)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            self._armed = self.alarm = False
            signal.signal(signal.SIGALRM, old)

    def close(self) -> None:
        """Let the helper thread (if any) end."""
        if self._thread is not None:
            self._thread.close()
            self._thread = None

    def _play_watched(self, deal: Deal) -> None:
        """The deal played on a helper thread while this one watches the time."""
        if self._thread is None:
            self._thread = _BotThread()
        try:
            self._thread.watch(self, self._play, deal)
        except _Timeout:
            t0, cur = self._t0, self._current
            assert cur is not None
            took = time.perf_counter() - t0 if t0 is not None else float(self.timeout or 0)
            raise self._late(cur[0], cur[1], deal, cur[2], took, True) from None
        finally:
            if self._thread is not None and self._thread.abandoned:
                self._thread = None

    def on_alarm(self, signum: int, frame: Any) -> None:
        if self._armed:
            raise _Timeout

    def _play(self, deal: Deal) -> None:
        self.forfeit = None
        bots = any(self.external)
        now = list(self.seats) if bots else self.seats  # a bot's fallback replaces it here
        for s, strat in enumerate(self.seats):
            if self.external[s]:
                try:
                    strat.begin_deal(s, deal.seed, deal.deal)
                except BotFault as f:
                    if self._bot_fault(deal, s, now, f):
                        return
            elif self.python[s]:
                self.guard(strat, s, deal, "begin_deal", strat.begin_deal, s, deal.seed,
                            deal.deal)
        st, u, r = deal.engine
        while deal.phase != DONE:
            seat = deal.seat_to_act
            if not self.python[seat]:
                code = self.loops.decide(self.kinds[seat], self.params, st, u, r, seat,
                                         *self.scratch, seed=deal.seed, deal=deal.deal)
                deal.apply_code(int(code))
                continue
            strat = now[seat]
            obs = Observation(deal, seat)
            legal = deal.legal()
            if bots and getattr(strat, "external", False):
                try:
                    choice = strat.choose(obs, legal)
                except BotFault as f:
                    if self._bot_fault(deal, seat, now, f):
                        return
                    continue  # the fallback plays the seat on
                deal.apply(choice)
                continue
            if self.timeout is not None:
                choice = self._timed(strat, seat, deal, "choose", strat.choose, obs, legal)
            else:
                try:  # inline rather than through guard: this is the Python tier's hot loop
                    choice = strat.choose(obs, legal)
                except StrategyError:
                    raise
                except (Exception, SystemExit) as e:
                    raise self._raised(strat, seat, deal, "choose", e) from e
            try:
                deal.apply(choice)
            except IllegalPlayError as e:
                raise StrategyError(f"strategy {strat.spec()!r} in seat {seat} returned an "
                                    f"illegal choice (seed {deal.seed}, deal {deal.deal}): {e}") \
                    from None
        if bots:
            self._end_bots(deal, None)

    # --- bots in other processes (sim.bots) -----------------------------------------------
    def _bot_fault(self, deal: Deal, seat: int, now: list[Strategy], f: BotFault) -> bool:
        """Score a bot's fault by its rule (``on_fault``): True when the deal is forfeited
        (``self.forfeit`` set, the other bots told), False when its fallback plays on; raises
        ``StrategyError`` for ``stop``."""
        strat = self.seats[seat]
        bot = strat.bot
        if f.kind != "illegal":
            strat.fault()  # ended; started again at its next deal
        rule = bot.on_fault
        self.faults.append({"bot": bot.name, "seat": seat, "deal": deal.deal,
                            "table": strat.table, "kind": f.kind, "detail": f.detail,
                            "scored": rule, "again": f.again})
        if rule == "stop":
            self._end_bots(deal, None, partial=True)
            raise StrategyError(
                f"bot {bot.name!r} in seat {seat}: {f.kind} fault, {f.detail} (seed "
                f"{deal.seed}, deal {deal.deal}); on_fault = stop: the run stops here")
        if rule == "fallback":
            fb = make(bot.fallback)
            fb.begin_deal(seat, deal.seed, deal.deal)
            now[seat] = fb
            return False
        st = deal.engine[0]
        self.forfeit = Forfeit(seat, *forfeit_result(int(st[S.S_CALLER]), seat, self.rules))
        self._end_bots(deal, self.forfeit)
        return True

    def _end_bots(self, deal: Deal, forfeit: Forfeit | None, partial: bool = False) -> None:
        """``deal_end`` (after the events left) to every bot of the deal."""
        st = deal.engine[0]
        if forfeit is not None:
            settlement, score, void = forfeit.settlement, forfeit.score, False
        elif partial:
            settlement, score, void = [0, 0, 0, 0], None, False
        else:
            void = bool(st[S.S_VOID])
            settlement = [int(x) for x in st[S.S_SETTLE:S.S_SETTLE + 4]]
            score = None if void else int(st[S.S_SCORE])
        for s, strat in enumerate(self.seats):
            if self.external[s] and strat.proc is not None:
                strat.end_deal(Observation(deal, s), settlement, score, void)

    def _timed(self, strat: Strategy, seat: int, deal: Deal, what: str, fn: Any,
               *args: Any) -> Any:
        """``fn(*args)`` stopped after ``self.timeout`` seconds."""
        limit = self.timeout
        assert limit is not None
        t0 = time.perf_counter()
        try:
            if self.alarm:
                self._armed = True
                try:
                    # fires again every ``limit`` s, should the bot swallow the first one
                    signal.setitimer(signal.ITIMER_REAL, limit, limit)
                    out = fn(*args)
                finally:
                    signal.setitimer(signal.ITIMER_REAL, 0)
                    self._armed = False
            else:  # on the helper thread: the caller watches _t0 (_BotThread.watch)
                self._current = (strat, seat, what)
                self._t0 = t0
                try:
                    out = fn(*args)
                finally:
                    self._t0 = None
        except _Timeout:
            raise self._late(strat, seat, deal, what, time.perf_counter() - t0, True) from None
        except StrategyError:
            raise
        except (Exception, SystemExit) as e:
            raise self._raised(strat, seat, deal, what, e) from e
        took = time.perf_counter() - t0
        if took > limit:  # a bot that caught the interruption and returned late
            raise self._late(strat, seat, deal, what, took, False)
        return out

    def _late(self, strat: Strategy, seat: int, deal: Deal, what: str, took: float,
              stopped: bool) -> StrategyError:
        how = " and was stopped" if stopped else ""
        return StrategyError(
            f"strategy {strat.spec()!r} in seat {seat} took {took:.2f} s in {what}, over the "
            f"{self.timeout:g} s limit{how} (seed {deal.seed}, deal {deal.deal}; replay with "
            f"shuangkou play --seed {deal.seed} --first-deal {deal.deal} --deals 1)")

    def guard(self, strat: Strategy, seat: int, deal: Deal, what: str, fn: Any,
               *args: Any) -> Any:
        if self.timeout is not None:
            return self._timed(strat, seat, deal, what, fn, *args)
        try:
            return fn(*args)
        except StrategyError:
            raise
        except (Exception, SystemExit) as e:
            raise Asker._raised(strat, seat, deal, what, e) from e

    @staticmethod
    def _raised(strat: Strategy, seat: int, deal: Deal, what: str,
                e: BaseException) -> StrategyError:
        text = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
        return StrategyError(f"strategy {strat.spec()!r} in seat {seat} raised "
                             f"{text} in {what} (seed {deal.seed}, "
                             f"deal {deal.deal}; replay with shuangkou play --seed "
                             f"{deal.seed} --first-deal {deal.deal} --deals 1)")


def iter_records(seed: int, first: int, n: int, seats: Sequence[Strategy],
                 rules: Rules | None = None, timeout: float | None = None,
                 python_tier: bool = False) -> Iterator[dict[str, Any]]:
    """Records of deals ``first … first+n-1``, one at a time. ``python_tier`` asks every
    strategy through ``choose`` (observations), even those with a kernel."""
    seed, first = check_seed(seed), check_deal(first, "first deal")
    timeout = check_timeout(timeout)  # now, not at the first record (before a file is made)
    return _iter_records(seed, first, n, seats, rules, timeout, python_tier)


def _iter_records(seed: int, first: int, n: int, seats: Sequence[Strategy],
                  rules: Rules | None, timeout: float | None,
                  python_tier: bool) -> Iterator[dict[str, Any]]:
    rules = rules or DEFAULT_RULES
    names = [s.spec() for s in seats]
    extra = {"oracle_seats": [i for i, s in enumerate(seats) if s.oracle]} \
        if any(s.oracle for s in seats) else None
    tables = None if python_tier else compiled_tables(seats)
    if tables is not None:
        tables.loops.timeout = timeout  # a compiled plug-in's limit (sim.loops.plugins)
        kinds, params = tables
        st, u = new_state()
        scratch = new_scratch()
        r = rules.array()
        for d in range(first, first + n):
            tables.loops.play_deal(st, u, r, np.uint64(seed), np.uint64(d), kinds, params,
                                   *scratch)
            yield build_record(st, u, seed, d, rules, names, extra)
        return
    asker = Asker(seats, rules, timeout, python_tier)
    try:
        for d in range(first, first + n):
            deal = Deal(seed, d, rules, names)
            asker.play(deal)
            if asker.forfeit is not None:  # a bot's forfeit: the deal has no full record
                continue
            rec = deal.record()
            if extra:
                rec.update(extra)
            yield rec
    finally:
        asker.close()


def summaries(seed: int, first: int, n: int, seats: Sequence[Strategy],
              rules: Rules | None = None, timeout: float | None = None,
              faults: list[dict[str, Any]] | None = None) -> np.ndarray:
    """Summary rows (``sim.loops.loop.COLUMN_NAMES``) of deals ``first … first+n-1``; the
    faults of bots in other processes are appended to ``faults`` (a deal a bot's side
    forfeited is summarised with its forfeit's caller, score and settlement)."""
    seed, first = check_seed(seed), check_deal(first, "first deal")
    timeout = check_timeout(timeout)
    rules = rules or DEFAULT_RULES
    out = np.zeros((n, N_COLS), dtype=np.int64)
    tables = compiled_tables(seats)
    if tables is not None:
        tables.loops.timeout = timeout  # a compiled plug-in's limit (sim.loops.plugins)
        tables.loops.play_deals(np.uint64(seed), np.uint64(first), n, rules.array(), *tables,
                                out)
        return out
    asker = Asker(seats, rules, timeout)
    try:
        for i in range(n):
            deal = Deal(seed, first + i, rules)
            asker.play(deal)
            summarize(*deal.engine[:2], out[i])
            if asker.forfeit is not None:
                forfeit_row(asker.forfeit, out[i])
    finally:
        asker.close()
        if faults is not None:
            faults.extend(asker.faults)
    return out


def forfeit_row(f: Forfeit, row: np.ndarray) -> None:
    """A forfeited deal's summary row: its caller, attacker score (the attackers' points
    too), multiplier 1, the forfeit's settlement (docs/bots.md, "Faults")."""
    row[C_VOID] = 0
    row[C_CALLER] = f.caller
    row[C_SCORE] = row[C_ATT_POINTS] = f.score
    row[C_MULT] = 1
    for s in range(4):
        row[C_SETTLE0 + s] = f.settlement[s]
