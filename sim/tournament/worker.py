"""A tournament's worker: play one chunk (``play_chunk``) from a ``Task``, plain data that
pickles anywhere, into its rows, per-deal table columns, statistics and records. The run that
hands out the tasks and keeps the results is ``sim.tournament.run``."""

from __future__ import annotations

import dataclasses
import json
import socket
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from sim.bots.seat import register_bots
from sim.bots.spec import not_runnable
from sim.core.tables import COLUMN_NAMES, DEAL_COLUMNS, N_COLS
from sim.errors import ConfigError
from sim.loops import runner
from sim.rules import Rules
from sim.tournament.chunks import (
    DEAL_VALUES,
    TALLY_COLUMNS,
    Chunk,
    ChunkResult,
    DealValues,
    pair_results,
    tally_games,
    tally_to_json,
)
from sim.tournament.config import parse_filter
from sim.tournament.results import parquet_bytes
from sim.tournament.swings import game_records
from strategies.registry import add_paths, load_plugins

# summary-row columns (sim.loops.loop.COLUMN_NAMES) copied into the table under the same name
_FROM_ROWS = ("caller", "trump", "attacker_points", "multiplier", "redeals", "void", "calls",
              "overrides", "show_rank", "caller_trumps", "first_show_round")


# --- a worker: play one chunk -------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Task:
    """Everything a worker needs to play a chunk; plain data, so it pickles anywhere."""

    chunk: Chunk
    seed: int
    a: int
    b: int
    a_spec: str
    b_spec: str
    duplicate: bool
    rules: tuple[tuple[str, int], ...]
    timeout: float
    plugins: tuple[str, ...]
    sys_path: tuple[str, ...]
    deal_table: bool
    first_deal: int
    records: int
    record_filter: str
    record_limit: int
    sprt: bool = False  # keep the per-game columns the SPRT's per-pair looks need
    deal_values: bool = False  # keep the per-pair results (runs of several matchups)
    bots: tuple[Any, ...] = ()  # sim.bots.spec.BotSpec of the bots in other processes


_PREPARED: set[tuple[tuple[str, ...], tuple[str, ...]]] = set()


def prepare(task: Task) -> None:
    """Make the config's plug-ins importable in this worker process (once per process)."""
    key = (task.sys_path, task.plugins, task.bots)
    if key in _PREPARED:
        return
    add_paths(task.sys_path)  # also without plug-ins: module:Class players are found there
    load_plugins(task.plugins)
    for b in task.bots:  # a worker on another machine (dask) checks it can run them
        why = not_runnable(b.argv[0])
        if why:
            raise ConfigError(f"bot {b.name} on worker {socket.gethostname()}: {why}")
    register_bots(task.bots)
    _PREPARED.add(key)


def _rows(task: Task, deals: np.ndarray, specs: Sequence[str], orient: int = 0,
          faults: list[dict[str, Any]] | None = None) -> np.ndarray:
    """Summary rows of ``deals`` (ascending) with seats ``specs`` (team A, team B) in
    orientation ``orient``; bots' faults are appended to ``faults``, each with its
    ``orientation``."""
    rules = Rules.from_dict(dict(task.rules))
    seats = runner.make_seats(list(specs))
    for s in seats:  # one process per bot, seat and table (R9; docs/bots.md)
        if getattr(s, "external", False):
            s.table = f"m{task.chunk.matchup}o{orient}"
    timeout = task.timeout or None
    got: list[dict[str, Any]] = []
    if deals.size and deals[-1] - deals[0] + 1 == deals.size:  # contiguous
        out = runner.summaries(task.seed, int(deals[0]), int(deals.size), seats, rules,
                               timeout, got)
    else:
        out = np.zeros((deals.size, N_COLS), dtype=np.int64)
        tables = runner.compiled_tables(seats)
        if tables is None:
            for i, d in enumerate(deals):
                out[i] = runner.summaries(task.seed, int(d), 1, seats, rules, timeout, got)[0]
        else:
            tables.loops.timeout = timeout  # a compiled plug-in's limit too
            r = rules.array()
            seed = np.uint64(task.seed)
            for i, d in enumerate(deals):  # one compiled call per deal: well under 1 µs
                tables.loops.play_deals(seed, np.uint64(d), 1, r, *tables, out[i:i + 1])
    if faults is not None:
        faults.extend({**f, "orientation": orient} for f in got)
    return out


def _columns(task: Task, deals: np.ndarray, orient: np.ndarray,
             parts: Sequence[tuple[Any, np.ndarray]]) -> dict[str, np.ndarray]:
    """The table columns of a chunk's games.

    ``parts`` are ``(where, rows)``: summary rows (``sim.loops.loop.COLUMN_NAMES``) and the game
    positions they fill (a slice or index array); each column is cast and placed in one step,
    without an interleaved copy of the rows.
    """
    pos = {name: i for i, name in enumerate(COLUMN_NAMES)}
    g = deals.size

    def gather(name: str, dtype: type) -> np.ndarray:
        out = np.empty(g, dtype=dtype)
        for where, rows in parts:
            out[where] = rows[:, pos[name]]
        return out

    cols: dict[str, np.ndarray] = {
        "seed": np.full(g, task.seed, dtype=np.uint64),
        "deal": deals.astype(np.int64),
        "matchup": np.full(g, task.chunk.matchup, dtype=np.int16),
        "orientation": orient.astype(np.int8),
    }
    ab = np.array([task.a, task.b], dtype=np.int16)
    for s in range(4):
        cols[f"seat{s}"] = ab[(s + orient) % 2]  # orientation 0: A in seats 0, 2
    for name in _FROM_ROWS + ("attacker_score", "settle0", "settle1", "settle2", "settle3"):
        cols[name] = gather(name, DEAL_COLUMNS[name])
    # the caller's team attacks (R10): team 0 is seats 0 and 2
    cols["attacker_team"] = np.where(cols["void"] != 0, -1, cols["caller"] % 2).astype(np.int8)
    return {k: cols[k] for k in DEAL_COLUMNS}


def _filter_mask(cols: Mapping[str, np.ndarray], text: str) -> np.ndarray:
    ops = {"==": np.equal, "!=": np.not_equal, ">=": np.greater_equal, "<=": np.less_equal,
           ">": np.greater, "<": np.less}
    mask = np.ones(cols["deal"].size, dtype=bool)
    for col, op, val in parse_filter(text):
        mask &= ops[op](cols[col].astype(np.int64), val)
    return mask


def _records(task: Task, picks: Sequence[tuple[int, int]]) -> bytes:
    """JSON Lines records of the (deal, orientation) games ``picks``."""
    return game_records(task.seed, task.rules, task.a_spec, task.b_spec, task.chunk.matchup,
                        picks, task.timeout)


def play_chunk(task: Task) -> ChunkResult:
    """Play one chunk (in a worker): rows, table columns, statistics and records."""
    t0 = time.perf_counter()
    prepare(task)
    c = task.chunk
    deals = np.arange(c.first, c.first + c.n, dtype=np.int64)
    ab, ba = (task.a_spec, task.b_spec), (task.b_spec, task.a_spec)
    faults: list[dict[str, Any]] = []
    if task.duplicate:  # pairs are adjacent rows: (deal, orientation) order
        parts = [(slice(0, None, 2), _rows(task, deals, ab, 0, faults)),
                 (slice(1, None, 2), _rows(task, deals, ba, 1, faults))]
        game_deals = np.repeat(deals, 2)
        orient = np.tile(np.array([0, 1], dtype=np.int64), c.n)
    else:
        orient = deals % 2
        parts = [(np.flatnonzero(orient == o), _rows(task, deals[orient == o], specs, o, faults))
                 for o, specs in ((0, ab), (1, ba)) if (orient == o).any()]
        game_deals = deals
    cols = _columns(task, game_deals, orient, parts)
    del parts
    t = tally_games(cols, task.duplicate)
    for f in faults:  # counted by side: A sits in seats o % 2, o % 2 + 2 (orientation o)
        side = "A" if (f["seat"] + f["orientation"]) % 2 == 0 else "B"
        if not f.get("again"):
            key = f"{side}.fault.{f['kind']}"
            t[key] = t.get(key, 0) + 1
        key = f"{side}.{f['scored']}s"
        t[key] = t.get(key, 0) + 1
    tally = tally_to_json(t)
    if task.deal_values:  # for the variance clustered by deal (chunks.Aggregate)
        tally[DEAL_VALUES] = DealValues(pair_results(cols, task.duplicate)).to_dict()
    first_picks: list[tuple[int, int]] = []
    if task.records:
        sel = cols["deal"] < task.first_deal + task.records
        first_picks = list(zip(cols["deal"][sel].tolist(), cols["orientation"][sel].tolist()))
    filter_picks: list[tuple[int, int]] = []
    if task.record_filter:
        sel = _filter_mask(cols, task.record_filter)
        taken = set(first_picks)
        filter_picks = [p for p in zip(cols["deal"][sel].tolist(),
                                       cols["orientation"][sel].tolist())
                        if p not in taken][:task.record_limit]
    # the table is encoded here, in parallel, and crosses to the run's process compressed
    table = parquet_bytes(cols, (task.a_spec, task.b_spec)) if task.deal_table else b""
    keep = {k: cols[k] for k in TALLY_COLUMNS} if task.sprt else None
    # every fault, attributed: bot, seat, deal, table (orientation), kind, what, how scored
    lines = [json.dumps({"matchup": c.matchup, "deal": f["deal"],
                         "orientation": f["orientation"], "bot": f["bot"], "seat": f["seat"],
                         "kind": f["kind"], "detail": f["detail"], "scored": f["scored"],
                         "counted": not f.get("again")}) + "\n"
             for f in faults]
    return ChunkResult(c, tally, _records(task, first_picks),
                       _records(task, filter_picks), time.perf_counter() - t0, table, keep,
                       "".join(lines).encode())
