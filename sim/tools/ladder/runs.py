"""A ladder run: pairs played in chunks where the ranking is least certain, each chunk
committed at once (``run``), and the pairs the scheduler sees during it (``RunState``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import shlex
import sqlite3
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from sim.analysis import ladder as model
from sim.analysis.summary import add_counts, side_faults
from sim.core.limits import MAX_DEAL, MAX_JOBS
from sim.errors import ConfigError, LadderError, ShuangkouError, StrategyError
from sim.tools.ladder.checks import check_received_specs, quote_value
from sim.tools.ladder.database import Ladder, canonical, run_lock
from sim.tools.ladder.schema import (
    CHUNK_FIRST,
    CHUNK_MAX,
    CHUNK_MIN,
    CHUNK_SECONDS,
    FIT_SHARE,
    KILL_IN_COMMIT,
    MAX_RUN_PAIRS,
    MAX_TIMEOUT,
    score2_of,
)
from strategies.registry import load_plugins, make


def _parameters(spec: str) -> None:
    """The compiled parameters of ``spec`` built once (a weights file read by its own checked
    loader, which refuses a FIFO or a device): a bad one is one line before the kernels
    compile or any chunk runs."""
    try:
        make(spec).compiled_params()
    except ShuangkouError as e:
        raise ConfigError(f"player {spec!r}: {e}") from None


# --- a run ------------------------------------------------------------------------------
def classify(e: StrategyError) -> str:
    text = str(e)
    if re.search(r" took [\d.]+ s in \w+, over the ", text):
        return "timeout"
    if re.search(r"returned (an|the) illegal", text):
        return "illegal"
    return "crash"


def culprit(e: BaseException, specs: Sequence[str]) -> int | None:
    m = re.search(r"strategy '((?:[^'\\]|\\.)*)'", str(e))
    if m is None:
        m = re.search(r'strategy "([^"]*)"', str(e))
    if m is None:
        return None
    name = m.group(1)
    return specs.index(name) if name in specs else None


def _check_sizes(pairs: int, chunk: int | None, jobs: int, timeout: float) -> None:
    """``--pairs``, ``--chunk``, ``--jobs`` and ``--timeout`` in their ranges, or one line."""
    if isinstance(pairs, bool) or not isinstance(pairs, int) or not 1 <= pairs <= MAX_RUN_PAIRS:
        raise ConfigError(f"--pairs {pairs!r}: a run plays 1 … {MAX_RUN_PAIRS:,} pairs (run "
                          f"again for more)")
    if chunk is not None and (isinstance(chunk, bool) or not isinstance(chunk, int)
                              or not 1 <= chunk <= CHUNK_MAX):
        raise ConfigError(f"--chunk {chunk!r}: a chunk is 1 … {CHUNK_MAX:,} pairs")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or not 1 <= jobs <= MAX_JOBS:
        raise ConfigError(f"--jobs {jobs!r}: a run has 1 … {MAX_JOBS:,} workers")
    if not 0 <= timeout <= MAX_TIMEOUT:
        raise ConfigError(f"--timeout {timeout!r}: seconds per decision are 0 (no limit) … "
                          f"{MAX_TIMEOUT:g}")


def _check_players(lad: Ladder, players: Sequence[Any], plugins: Sequence[str]
                   ) -> tuple[str, ...]:
    """Load ``plugins`` (returned without repeats) and check that every player is playable
    here and its parameters readable, before anything compiles or runs."""
    # the database names plug-ins, it never loads them: a module a spec names must be loaded
    # already (--plugin), and a plug-in player's file comes from --plugin, never from the file
    check_received_specs(lad.path, [p.spec for p in players])
    mods = tuple(dict.fromkeys(plugins))
    load_plugins(mods, [os.getcwd()])
    for p in players:  # every player must be playable here before anything runs
        try:
            canonical(p.spec)
        except ConfigError as e:
            named = [m for m in (p.plugin or "").split(os.pathsep) if m]
            if "unknown strategy" not in str(e):
                raise  # its spec's own error (a parameter, a weights file): as it is
            if not named:
                raise ConfigError(f"{e} (a plug-in player needs its file: pass --plugin FILE "
                                  f"to `ladder run`; a bot in another process needs --bot "
                                  f"{p.spec}=COMMAND)") from None
            flags = " ".join(f"--plugin {shlex.quote(m)}" for m in named)
            raise ConfigError(f"player {p.spec!r} comes from a plug-in, and a ladder database "
                              f"names plug-ins but never loads them: add {quote_value(flags, 300)} "
                              f"to `ladder run` (the file ladder add was given; check it is "
                              f"the bot you mean), or `shuangkou ladder remove "
                              f"{shlex.quote(p.spec)}`") from None
    for p in players:  # and its parameters readable (a weights file), before any compiling
        _parameters(p.spec)
    return mods


def _forced(lad: Ladder, specs: list[str], matchup: tuple[str, str] | None
            ) -> tuple[int, int] | None:
    """The players of ``--matchup`` as an index pair ``(i, j)``, ``i < j`` (None: none)."""
    if matchup is None:
        return None
    got = [lad.player(s).spec for s in matchup]
    for spec in got:
        if spec not in specs:  # a team one of whose players was removed
            raise ConfigError(f"--matchup {','.join(matchup)!r}: team {spec!r} is not rated "
                              f"while one of its players is removed: `ladder add` it again")
    i, j = (specs.index(spec) for spec in got)
    if i == j:
        raise ConfigError(f"--matchup {','.join(matchup)!r} names the same player twice: "
                          f"give two different players")
    return (min(i, j), max(i, j))


def _matchups(lad: Ladder, players: Sequence[Any], ijs: Sequence[tuple[int, int]], pairs: int
              ) -> tuple[dict[tuple[int, int], int], dict[int, int]]:
    """The matchup ids of the index pairs ``ijs`` (created where new) and every matchup's next
    deal; refused when ``pairs`` more would go past the last deal number."""
    mids: dict[tuple[int, int], int] = {}
    with lad.transaction() as con:
        for i, j in ijs:
            mids[(i, j)] = lad.matchup(players[i].id, players[j].id, con)
    nxt = lad.next_deals()
    last = max((nxt.get(m, 0) for m in mids.values()), default=0)
    if last + pairs - 1 > MAX_DEAL:
        raise LadderError(f"ladder database {lad.path!r}: a matchup's next_deal is "
                          f"{last:,}, and {pairs:,} more pairs would go past the last deal "
                          f"number 2**63-1")
    return mids, nxt


class _Feed:
    """The chunks of a run: handed to the workers (``tasks``, matchups from the scheduler or
    the forced one), and committed as they come back (``commit``)."""

    def __init__(self, state: RunState, cfg: Any, specs: list[str], mods: tuple[str, ...],
                 mids: dict[tuple[int, int], int], nxt: dict[int, int], pairs: int,
                 chunk: int | None, forced: tuple[int, int] | None) -> None:
        self.state, self.cfg, self.specs, self.mods = state, cfg, specs, mods
        self.mids, self.nxt, self.chunk, self.forced = mids, nxt, chunk, forced
        self.path = tuple(dict.fromkeys([os.getcwd(), *sys.path]))
        self.lock = threading.Lock()
        self.left = pairs
        self.order = 0
        self.sent: dict[int, tuple[int, int, int, int]] = {}  # chunk index: (i, j, first, n)
        self.cap = CHUNK_MAX  # the largest chunk sized by time (a partners run: a share)
        self.bots: tuple[Any, ...] = ()  # sim.bots.spec.BotSpec of the bot players
        self.faults: dict[str, dict[str, int]] = {}  # their faults in this run, by name

    def tasks(self) -> Iterator[Any]:
        # for `ladder run` only, as in run()
        from sim.tournament import run as tm
        from sim.tournament.chunks import Chunk

        cfg, specs = self.cfg, self.specs
        queue: list[tuple[int, int]] = []
        while True:
            with self.lock:
                if self.left <= 0:
                    return
                if self.forced:
                    ij = self.forced
                else:
                    if not queue:
                        queue = self.state.schedule(max(1, cfg.jobs), self.chunk)
                    if not queue:
                        return
                    ij = tuple(sorted(queue.pop(0)))
                if ij not in self.mids:  # (schedule() names matchups among these players)
                    raise LadderError(f"schedule() returned {ij!r}, not a matchup of "
                                      f"{len(specs)} players")
                m = self.mids[ij]
                n = min(self.chunk or min(self.state.size(m), self.cap), self.left)
                self.left -= n
                first = self.nxt.get(m, 0)
                self.nxt[m] = first + n
                k = self.order
                self.order += 1
                self.sent[k] = (ij[0], ij[1], first, n)
            yield tm.Task(Chunk(k, m, first, n), cfg.seed, ij[0], ij[1], specs[ij[0]],
                          specs[ij[1]], True, cfg.rules, cfg.timeout, self.mods, self.path,
                          False, 0, 0, "", 1, False, True, self.bots)

    def commit(self, lad: Ladder, res: Any, kill: bool) -> tuple[tuple[int, int], int, Any]:
        """Commit a finished chunk to the database in one transaction (``kill``: the testing
        hook, killed inside it) and hand its pairs to the scheduler; returns its matchup, its
        pairs and its tally."""
        # for `ladder run` only, as in run()
        from sim.tournament.chunks import DEAL_VALUES, DealValues, tally_from_json

        i, j, first, n = self.sent.pop(res.chunk.index)
        tally = tally_from_json(res.tally)
        x2 = DealValues.from_dict(res.tally[DEAL_VALUES]).values
        deals = np.arange(first, first + n, dtype=np.int64)
        if x2.size != n:
            raise LadderError(f"chunk of {self.specs[i]} vs {self.specs[j]} returned "
                              f"{x2.size} pair results for {n} pairs")
        with lad.transaction() as con:
            lad.insert_chunk(con, self.mids[(i, j)], deals, x2, seconds=res.seconds)
            if kill:
                os.kill(os.getpid(), 9)
        with self.lock:
            self.state.add(i, j, deals, x2)
            self.state.timed(self.mids[(i, j)], n, res.seconds)
        tally.pop(DEAL_VALUES, None)
        for side, k in (("A", i), ("B", j)):  # a bot's faults (docs/bots.md), by player
            add_counts(self.faults, self.specs[k], side_faults(tally, side))
        return (i, j), n, tally


def _incident(lad: Ladder, e: StrategyError, players: Sequence[Any], feed: _Feed
              ) -> StrategyError | None:
    """A bot's failure recorded as an incident of the player it names, and the error to raise
    instead (how to take it off the ladder); None when it names no player of the run."""
    specs = feed.specs
    k = culprit(e, specs)
    if k is None:
        return None
    m = re.search(r"deal (\d+)", str(e))
    pair = next(((i, j) for (i, j, _, _) in feed.sent.values() if k in (i, j)), feed.forced)
    with contextlib.suppress(ShuangkouError, sqlite3.Error):
        _ensure_open(lad)
        lad.record_incident(players[k].id, classify(e), str(e),
                            feed.mids.get(pair) if pair else None,
                            int(m.group(1)) if m else None)
    # the scheduler would pick it again: say how to take it off the ladder
    return StrategyError(f"{e}; counted in `ladder show`, and `shuangkou ladder "
                         f"remove {shlex.quote(specs[k])}` stops scheduling it")


def run(lad: Ladder, pairs: int, chunk: int | None = None, jobs: int = 1,
        backend: str = "auto", scheduler: str = "", matchup: tuple[str, str] | None = None,
        timeout: float = 0.0, progress: bool | None = None, plugins: Sequence[str] = (),
        stop_after: int | None = None, force_jobs: bool = False,
        say: Any = None, bots: Sequence[Any] = (), partners: bool = False,
        teams: Sequence[str] | None = None) -> dict[str, Any]:
    """Play ``pairs`` more duplicate pairs, in chunks of ``chunk`` pairs (None: sized by time,
    ``CHUNK_SECONDS``), each matchup chosen by ``sim.analysis.ladder.schedule`` (or
    ``matchup``: a pair of specs); every finished chunk is committed at once. With a fixed
    ``chunk`` and one job the pairs played depend only on the database (a killed run continued
    plays what an uninterrupted one would). ``stop_after``: testing hook, stop after this
    many chunks. ``bots``: the ``sim.bots.spec.BotSpec`` of ``--bot`` (registered already):
    the ladder remembers each one's program hash, warns when a name comes back with another
    program, and adds up their faults.

    ``partners`` (docs/ladder.md "Partners"): first register the mixed teams ``teams``
    (``a+b`` of players on the ladder; None: every pair of active players) as entrants, then
    play the pairings of a partners design, every two of the players (mirror teams) and those
    teams, each chunk to the pairing with the fewest pairs. Without it a run schedules the
    plain players only, whatever teams the ladder holds."""
    # the tournament machinery loads for `ladder run` only: the ladder's other commands
    # import this module (through sim.tools.ladder) and load no tournament code
    from sim.tournament import run as tm
    from sim.tournament.config import TournamentConfig
    from sim.tournament.standings import Progress, Standings

    say = say or (lambda text: print(text, file=sys.stderr))
    singles = [p for p in lad.entrants() if not p.team]
    if len(singles) < 2:
        raise ConfigError(f"ladder {lad.path!r} has {len(singles)} player(s): add at least two "
                          f"with `shuangkou ladder add SPEC ...`"
                          + (" (--partners pairs them into teams)" if partners else ""))
    if teams is not None and not partners:
        raise ConfigError("--teams needs --partners (it chooses the teams a partners run plays)")
    _check_sizes(pairs, chunk, jobs, timeout)
    chosen: list[str] = []
    if partners:  # the teams' specs checked before anything is written
        texts = list(teams) if teams else [f"{x.spec}+{y.spec}" for n, x in enumerate(singles)
                                           for y in singles[n + 1:]]
        if not texts:
            raise ConfigError("--teams names no team: give mixed teams, e.g. greedy+random")
        chosen = list(dict.fromkeys(lad.team_spec(t) for t in texts))
    mods = _check_players(lad, singles, plugins)
    if chosen:
        lad.add_teams(chosen)
    players = lad.entrants()
    specs = [p.spec for p in players]
    forced = _forced(lad, specs, matchup)
    # the matchups this run may play: every two plain players; with partners, every two of
    # the players (mirror teams) and the chosen teams
    pool = sorted([i for i, p in enumerate(players) if not p.team]
                  + [specs.index(t) for t in chosen])
    all_pairs = [(i, j) for n, i in enumerate(pool) for j in pool[n + 1:]]
    live_pairs = all_pairs + ([forced] if forced and forced not in all_pairs else [])
    cfg = TournamentConfig(
        name="ladder", format="round-robin", players=tuple(specs), deals=pairs,
        duplicate=True, seed=lad.seed, plugins=mods, timeout=timeout,
        rules=tuple(sorted(lad.rules.items())), jobs=jobs, backend=backend,
        scheduler=scheduler, chunk_size=chunk or CHUNK_FIRST, progress=True, deal_table=False,
        plots=False)
    cfg, capped = tm.cap_jobs(cfg, force=force_jobs)
    if capped:
        say(f"shuangkou ladder run: {capped}")
    # only the matchups this run may play are warmed up
    warm_cfg = dataclasses.replace(cfg, players=tuple(specs[k] for k in forced)
                                   if forced else tuple(specs[k] for k in pool))
    with run_lock(lad.path):
        lad.check_pairs()
        data = lad.data(times=False)  # the scheduler needs no times
        mids, nxt = _matchups(lad, players, [forced] if forced else all_pairs, pairs)
        backend_now = tm.resolve_backend(cfg)
        state = RunState(data, model, all_pairs if partners else None)
        feed = _Feed(state, cfg, specs, mods, mids, nxt, pairs, chunk, forced)
        if partners and not forced:  # chunks sized by time, at most an even share each, so
            feed.cap = max(1, -(-pairs // len(all_pairs)))  # one run evens the pairings out
        feed.bots = tuple(b for b in bots if b.name in specs)
        for w in lad.note_bots({b.name: b.program for b in feed.bots}):
            say(f"shuangkou ladder run: warning: {w}")
        live = Standings(specs, live_pairs)
        live_index = {ij: k for k, ij in enumerate(live_pairs)}
        done = committed_pairs = 0
        kill_at = int(os.environ.get(KILL_IN_COMMIT, "0") or 0)
        bar = None
        try:
            # the warm-up plays one deal of each matchup: a bot failing there is an incident too
            if backend_now in ("in-process", "fork", "dask") or not tm.loops_cached(warm_cfg):
                tm.warm_up(warm_cfg)
            t0 = time.perf_counter()
            lad.con.close()  # no SQLite connection open while workers are forked
            with tm.executor(cfg, backend_now) as execute:
                lad.reopen()
                bar = Progress("ladder", pairs, 0,
                               cfg.progress if progress is None else progress, live)
                for res in execute(feed.tasks()):
                    ij, n, tally = feed.commit(lad, res, kill_at == done + 1)
                    done += 1
                    committed_pairs += n
                    live.add(live_index[ij], tally)
                    bar.update(n)
                    if stop_after is not None and done >= stop_after:
                        break
        except StrategyError as e:
            instead = _incident(lad, e, players, feed)
            if instead is None:
                raise
            raise instead from None
        except KeyboardInterrupt:
            if bar is not None:
                bar.close()
                bar = None
            say(f"interrupted: {done} chunks ({committed_pairs} pairs) of this run are "
                f"committed to {lad.path!r}; run again to play more")
            raise
        finally:
            if bar is not None:
                bar.close()
            _ensure_open(lad)
            if feed.faults:  # (what was committed: the chunks' faults)
                lad.note_bots({}, feed.faults)
    wall = time.perf_counter() - t0
    return {"chunks": done, "pairs": committed_pairs, "seconds": wall, "backend": backend_now,
            "faults": feed.faults}


def _ensure_open(lad: Ladder) -> None:
    try:
        lad.con.execute("SELECT 1")
    except sqlite3.ProgrammingError:  # closed
        lad.reopen()


class RunState:
    """The ladder's pairs during a run (the stored ones and this run's), for ``schedule``."""

    def __init__(self, data: Any, model: Any,
                 candidates: Sequence[tuple[int, int]] | None = None) -> None:
        self.data, self.model = data, model
        self.candidates = candidates  # a partners run: these matchups, evened out
        self.parts: list[tuple[int, int, np.ndarray, np.ndarray]] = []
        self.rate: dict[int, float] = {}  # pairs per second of a worker, by matchup
        self.fit_seconds = 0.0

    def timed(self, m: int, n: int, seconds: float) -> None:
        self.rate[m] = n / max(seconds, 1e-4)

    def size(self, m: int) -> int:
        """The next chunk's pairs for matchup ``m`` (no ``--chunk``): about
        ``CHUNK_SECONDS`` of play, and at least ``FIT_SHARE`` fits' worth."""
        rate = self.rate.get(m)
        if rate is None:
            return CHUNK_FIRST
        want = rate * max(CHUNK_SECONDS, FIT_SHARE * self.fit_seconds)
        n = int(min(CHUNK_MAX, max(CHUNK_MIN, want)))
        digits = 10 ** max(0, len(str(n)) - 2)  # two significant digits: 1,200 not 1,237
        return max(CHUNK_MIN, n // digits * digits)

    def add(self, i: int, j: int, deals: np.ndarray, x2: np.ndarray) -> None:
        self.parts.append((i, j, deals, x2))

    def current(self) -> Any:
        if self.parts:
            d = self.data
            n = [p[2].size for p in self.parts]
            x2 = np.concatenate([p[3] for p in self.parts])
            now = time.time()
            self.data = dataclasses.replace(
                d, a=np.concatenate([d.a, np.repeat(np.array([p[0] for p in self.parts],
                                                             dtype=np.int32), n)]),
                b=np.concatenate([d.b, np.repeat(np.array([p[1] for p in self.parts],
                                                          dtype=np.int32), n)]),
                deal=np.concatenate([d.deal, *(p[2] for p in self.parts)]),
                score2=np.concatenate([d.score2, score2_of(x2)]),
                margin=np.concatenate([d.margin, np.multiply(x2, 0.5, dtype=np.float32)]),
                times=None if d.times is None else np.concatenate(
                    [d.times, np.full(x2.size, now)]))
            self.parts = []
        return self.data

    def schedule(self, k: int, chunk: int | None) -> list[tuple[int, int]]:
        """``k`` matchups for the next chunks, each counted by the model as a chunk's pairs
        (``chunk``, or the median size the measured speeds give)."""
        data = self.current()
        sizes = [self.size(m) for m in self.rate] or [CHUNK_FIRST]
        pairs = chunk or int(np.median(sizes))
        if self.candidates is not None:
            return self.model.balanced(data, self.candidates, k, pairs)
        t0 = time.perf_counter()
        fit = self.model.fit(data)
        self.fit_seconds = time.perf_counter() - t0
        # the plain players only (a ladder's team entrants are played by partners runs)
        shown, fit = self.model.plain(data, fit)
        back = [data.names.index(n) for n in shown.names]
        return [(back[int(i)], back[int(j)])
                for i, j in self.model.schedule(shown, fit, k, pairs=pairs)]
