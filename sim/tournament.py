"""Tournaments: matchups of strategies over seeded (duplicate) deals, run in parallel chunks.

How a run is organised
----------------------
- **Matchups.** A head-to-head is one matchup; a round robin every pair of players; a gauntlet
  the first player against each of the others. In matchup ``(A, B)`` *orientation* 0 seats A in
  0 and 2 and B in 1 and 3; orientation 1 swaps the teams.
- **Deals.** Every matchup plays deals ``first_deal … first_deal+deals-1`` of the config's seed:
  the same cards in every matchup and every run (counter-based RNG, docs/engine.md).
  *Duplicate* plays each deal in both orientations; the unit of statistics is the pair and its
  result ``x`` is A's mean settlement per deal per player over the two deals. Without
  duplicate, deal ``d`` is played once, in orientation ``d % 2``, and ``x`` is A's settlement.
- **Chunks.** The deals of a matchup are cut into chunks of ``chunk_size`` deals. Chunk ``k``
  of every matchup comes before chunk ``k+1`` of any (so a round robin progresses evenly).
  A chunk is the unit of work (joblib over chunks: loky, threading or dask), of storage
  (``chunks/c000123.npz`` and its table ``deals/c000123.parquet``, written atomically as soon
  as it finishes) and of the SPRT's looks.
- **Determinism.** Per-deal results depend only on seed, deal and seats; chunk statistics are
  exact sums and counts (``sim.stats``) merged in chunk order; so every table is identical for
  any ``--jobs``, backend and chunk size. The only chunk-size effect: an SPRT looks after each
  chunk *in chunk order* (whatever order they finish in), so it stops at the same chunk for a
  given chunk size, and at a chunk boundary.
- **Resume.** The finished chunk files are the run's state. ``--resume`` reads them, checks the
  stored config's hash and plays only the missing chunks; a killed run loses at most the chunks
  that were in flight.

The per-deal table
------------------
Each chunk's Parquet file holds the columns ``DEAL_COLUMNS`` for its deals (in deal order,
orientation 0 before 1), then the names ``LABEL_COLUMNS``. ``load_deals(run_dir)``
concatenates them into a dict of numpy arrays, so
``pandas.DataFrame(load_deals("results/quick"))`` is a data frame. ``seat0 … seat3`` are indices
into the players list of ``config.json`` (``summary.json`` "players"); ``attacker_team`` is 0
for seats 0+2, 1 for seats 1+3, -1 for a void deal; side A attacks when ``attacker_team ==
orientation``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import glob
import json
import math
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from sim.errors import ConfigError, WorkerError
from sim.stats import SPRT, WDL, Histogram, Moments
from sim.tables import DEAL_COLUMNS  # noqa: F401  (the per-deal table's columns)

# summary-row columns (sim.loop.COLUMN_NAMES) copied into the table under the same name
_FROM_ROWS = ("caller", "trump", "attacker_points", "multiplier", "redeals", "void", "calls",
              "overrides", "show_rank", "caller_trumps", "first_show_round")
# string columns of the Parquet table (dictionary-encoded: one copy of each name per file)
LABEL_COLUMNS = ("matchup_label", "player_a", "player_b")
SIDES = ("A", "B")
CHUNK_DIR = "chunks"
DEALS_DIR = "deals"  # the per-deal table: deals/c000123.parquet beside chunks/c000123.npz
LOCK_FILE = ".lock"  # held (flock) by the one process writing a results folder; holds its pid
FORMAT = "shuangkou-tournament/1"

# histogram ranges; values outside land in under/overflow and every mean stays exact
SCORE_BINS = (0, 600, 5)  # attacker score, 5-point bins (R22-R23)
SETTLE_BINS = (-400, 401, 1)  # per-player settlement of one deal (R24)


# --- plan ---------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Chunk:
    """``n`` deals from ``first`` of matchup ``matchup``; ``index`` is its place in run order."""

    index: int
    matchup: int
    first: int
    n: int

    @property
    def filename(self) -> str:
        return f"c{self.index:06d}.npz"


class ChunkPlan(Sequence[Chunk]):
    """The chunks of a run, in run order, computed on demand: chunk ``i`` is chunk
    ``i // matchups`` of matchup ``i % matchups``. Its size does not grow with the deals (a
    plan of 10**12 deals is a few integers), and nothing is built before the run starts."""

    def __init__(self, deals: int, chunk_size: int, first_deal: int, n_matchups: int) -> None:
        self.deals, self.chunk_size = deals, chunk_size
        self.first_deal, self.n_matchups = first_deal, n_matchups
        self._len = -(-deals // chunk_size) * n_matchups  # exact: no float for huge deals

    def __len__(self) -> int:
        return self._len

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._len))]
        if i < 0:
            i += self._len
        if not 0 <= i < self._len:
            raise IndexError(f"chunk {i} is outside the plan (0 … {self._len - 1})")
        k, m = divmod(i, self.n_matchups)
        n = min(self.chunk_size, self.deals - k * self.chunk_size)
        return Chunk(i, m, self.first_deal + k * self.chunk_size, n)

    def __iter__(self) -> Iterator[Chunk]:
        return (self[i] for i in range(self._len))


def plan_chunks(cfg: Any) -> ChunkPlan:
    """Every chunk of a run, in run order (chunk ``k`` of every matchup, then ``k + 1``)."""
    return ChunkPlan(cfg.deals, cfg.chunk_size, cfg.first_deal, len(cfg.matchups()))


def games_per_deal(cfg: Any) -> int:
    return 2 if cfg.duplicate else 1


# --- statistics of one chunk (pure: plain arrays in, sim.stats accumulators out) ------------
def new_tally() -> dict[str, Any]:
    """Empty accumulators of one matchup (see ``tally_games`` for their meaning)."""
    t: dict[str, Any] = {
        "games": 0, "void": 0, "redealt": 0, "pairs": Moments(), "wdl": WDL(),
        "score": Histogram(*SCORE_BINS), "redeals": Histogram(0, 16, 1),
        "mult": Histogram(0, 32, 1), "calls": Moments(), "overrides": Moments(),
        "first_show_round": Moments(),
    }
    for s in SIDES:
        t.update({
            f"{s}.settle": Histogram(*SETTLE_BINS), f"{s}.attacks": 0,
            f"{s}.att_settle": Moments(), f"{s}.def_settle": Moments(),
            f"{s}.att_score": Histogram(*SCORE_BINS), f"{s}.att_mult": Histogram(0, 32, 1),
            f"{s}.show_rank": Histogram(0, 13, 1), f"{s}.trump_len": Histogram(0, 55, 1),
            f"{s}.overrides": Moments(),
        })
    return t


def _moments(v: np.ndarray, halves: bool = False) -> Moments:
    """``Moments`` of integer values (of twice the values with ``halves``) from exact integer
    sums: the same numbers ``Moments.add`` keeps, without its float dot product, which costs
    more than the deals on some BLAS builds."""
    v = v.astype(np.int64, copy=False)
    total, total_sq = int(v.sum()), int(np.einsum("i,i->", v, v))
    if halves:
        return Moments(int(v.size), total / 2, total_sq / 4)  # powers of 2: still exact
    return Moments(int(v.size), float(total), float(total_sq))


def _hist(v: np.ndarray, bins: tuple[int, int, int]) -> Histogram:
    """``Histogram(*bins).add(v)`` for integer ``v``, in integer arithmetic (same result)."""
    h = Histogram(*bins)
    v = v.astype(np.int64, copy=False)
    if not v.size:
        return h
    lo, hi, width = bins
    under, over = v < lo, v >= hi
    inside = v[~(under | over)] - lo
    h.counts += np.bincount(inside // width, minlength=h.counts.size)
    h.underflow, h.overflow = int(under.sum()), int(over.sum())
    h.min, h.max = float(v.min()), float(v.max())
    h.lattice = bool(np.all(inside % width == 0))
    h.moments = _moments(v)
    return h


def tally_games(cols: Mapping[str, np.ndarray], duplicate: bool) -> dict[str, Any]:
    """Accumulators of one matchup's games, from per-deal table columns.

    Parameters
    ----------
    cols : ``DEAL_COLUMNS`` arrays of one matchup, shape ``(g,)``; with ``duplicate`` the games
        come in pairs (rows ``2i`` and ``2i + 1`` are the same deal in orientations 0 and 1).
    duplicate : whether the unit of observation is a pair of rows or a single row.

    Returns
    -------
    dict
        ``pairs``/``wdl``: the per-pair result ``x`` (A's mean settlement per deal per player);
        ``games``, ``void``, ``redealt`` (games with at least one redeal), ``redeals``;
        ``score`` (attacker score), ``mult`` (last-trick multiplier), ``calls``, ``overrides``,
        ``first_show_round`` over non-void games; per side ``S`` in A, B: ``S.settle`` (its
        per-player settlement, every game), ``S.attacks`` (games it attacked), ``S.att_settle``
        / ``S.def_settle`` (settlement when attacking / defending), ``S.att_score``,
        ``S.att_mult``, and calling statistics of the games it called: ``S.show_rank``
        (rank index of the winning show, A=0 … K=12), ``S.trump_len`` (trumps the caller held at
        the first lead), ``S.overrides``.
    """
    t = new_tally()
    o = cols["orientation"]
    g = o.size
    if g == 0:
        return t
    a0 = o == 0  # seat o is one of A's, seat 1 - o one of B's
    side_settle = {"A": np.where(a0, cols["settle0"], cols["settle1"]).astype(np.int64),
                   "B": np.where(a0, cols["settle1"], cols["settle0"]).astype(np.int64)}
    void = cols["void"] != 0
    played = ~void
    team = cols["attacker_team"].astype(np.int64)
    a_attacks = played & (team == o)
    attacks = {"A": a_attacks, "B": played & ~a_attacks}
    if duplicate:
        x2 = side_settle["A"][0::2] + side_settle["A"][1::2]  # twice the pair's mean
    else:
        x2 = 2 * side_settle["A"]
    score = cols["attacker_score"]
    mult = cols["multiplier"]
    overrides = cols["overrides"]
    redeals = cols["redeals"].astype(np.int64)
    t["games"] = int(g)
    t["void"] = int(void.sum())
    t["redealt"] = int((redeals > 0).sum())
    t["pairs"] = _moments(x2, halves=True)
    t["wdl"] = WDL(int((x2 > 0).sum()), int((x2 == 0).sum()), int((x2 < 0).sum()))
    t["score"] = _hist(score[played], SCORE_BINS)
    t["redeals"] = _hist(redeals, (0, 16, 1))
    t["mult"] = _hist(mult[played], (0, 32, 1))
    t["calls"] = _moments(cols["calls"][played])
    t["overrides"] = _moments(overrides[played])
    t["first_show_round"] = _moments(cols["first_show_round"][played])
    for s in SIDES:
        att, own = attacks[s], side_settle[s]
        t[f"{s}.settle"] = _hist(own, SETTLE_BINS)
        t[f"{s}.attacks"] = int(att.sum())
        t[f"{s}.att_settle"] = _moments(own[att])
        t[f"{s}.def_settle"] = _moments(own[played & ~att])
        t[f"{s}.att_score"] = _hist(score[att], SCORE_BINS)
        t[f"{s}.att_mult"] = _hist(mult[att], (0, 32, 1))
        # the caller's team attacks (R10), so the side that attacks is the side that called
        t[f"{s}.show_rank"] = _hist(cols["show_rank"][att], (0, 13, 1))
        t[f"{s}.trump_len"] = _hist(cols["caller_trumps"][att], (0, 55, 1))
        t[f"{s}.overrides"] = _moments(overrides[att])
    return t


def merge_tally(into: dict[str, Any], other: Mapping[str, Any]) -> dict[str, Any]:
    """Add ``other``'s accumulators to ``into`` (exact: counts and sums)."""
    for k, v in other.items():
        if isinstance(v, int):
            into[k] = into.get(k, 0) + v
        else:
            into[k] += v
    return into


def tally_to_json(t: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v if isinstance(v, int) else v.to_dict() for k, v in t.items()}


_TYPES = {"Moments": Moments, "Histogram": Histogram, "WDL": WDL}


def tally_from_json(d: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v if isinstance(v, int) else _TYPES[v["type"]].from_dict(v) for k, v in d.items()}


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


@dataclasses.dataclass
class ChunkResult:
    """A played chunk: its statistics (JSON-ready), table columns and records (JSONL bytes)."""

    chunk: Chunk
    tally: dict[str, Any]
    columns: dict[str, np.ndarray] | None
    records_first: bytes
    records_filter: bytes
    seconds: float
    players: tuple[str, str] = ("", "")  # A's and B's specs, for the table's name columns
    deals_parquet: bytes = b""  # the per-deal table as Parquet, encoded by the worker


_PREPARED: set[tuple[tuple[str, ...], tuple[str, ...]]] = set()


def _prepare(task: Task) -> None:
    """Make the config's plug-ins importable in this worker process (once per process)."""
    key = (task.sys_path, task.plugins)
    if key in _PREPARED:
        return
    from strategies.registry import add_paths, load_plugins

    add_paths(task.sys_path)  # also without plug-ins: module:Class players are found there
    load_plugins(task.plugins)
    _PREPARED.add(key)


def _rows(task: Task, deals: np.ndarray, specs: Sequence[str]) -> np.ndarray:
    """Summary rows of ``deals`` (ascending) with seats ``specs`` (team A, team B)."""
    from sim import runner
    from sim.rules import Rules
    from sim.tables import N_COLS

    rules = Rules.from_dict(dict(task.rules))
    seats = runner.make_seats(list(specs))
    timeout = task.timeout or None
    if deals.size and deals[-1] - deals[0] + 1 == deals.size:  # contiguous
        return runner.summaries(task.seed, int(deals[0]), int(deals.size), seats, rules,
                                timeout)
    out = np.zeros((deals.size, N_COLS), dtype=np.int64)
    tables = runner.compiled_tables(seats)
    if tables is None:
        for i, d in enumerate(deals):
            out[i] = runner.summaries(task.seed, int(d), 1, seats, rules, timeout)[0]
        return out
    r = rules.array()
    seed = np.uint64(task.seed)
    for i, d in enumerate(deals):  # one compiled call per deal costs well under a microsecond
        tables.loops.play_deals(seed, np.uint64(d), 1, r, *tables, out[i:i + 1])
    return out


def _columns(task: Task, deals: np.ndarray, orient: np.ndarray,
             parts: Sequence[tuple[Any, np.ndarray]]) -> dict[str, np.ndarray]:
    """The table columns of a chunk's games.

    ``parts`` are ``(where, rows)``: summary rows (``sim.loop.COLUMN_NAMES``) and the game
    positions they fill (a slice or index array); each column is cast and placed in one step,
    without an interleaved copy of the rows.
    """
    from sim.tables import COLUMN_NAMES

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
    from sim.config import parse_filter

    ops = {"==": np.equal, "!=": np.not_equal, ">=": np.greater_equal, "<=": np.less_equal,
           ">": np.greater, "<": np.less}
    mask = np.ones(cols["deal"].size, dtype=bool)
    for col, op, val in parse_filter(text):
        mask &= ops[op](cols[col].astype(np.int64), val)
    return mask


def _records(task: Task, picks: Sequence[tuple[int, int]]) -> bytes:
    """JSON Lines records of the (deal, orientation) games ``picks``."""
    from sim import runner
    from sim.record import dumps
    from sim.rules import Rules

    rules = Rules.from_dict(dict(task.rules))
    specs = ([task.a_spec, task.b_spec], [task.b_spec, task.a_spec])
    lines = []
    for d, o in picks:
        seats = runner.make_seats(specs[o])
        for rec in runner.iter_records(task.seed, d, 1, seats, rules, task.timeout or None):
            rec["tournament"] = {"matchup": task.chunk.matchup, "orientation": o}
            lines.append(dumps(rec))
    return "".join(line + "\n" for line in lines).encode()


def play_chunk(task: Task) -> ChunkResult:
    """Play one chunk (in a worker): rows, table columns, statistics and records."""
    t0 = time.perf_counter()
    _prepare(task)
    c = task.chunk
    deals = np.arange(c.first, c.first + c.n, dtype=np.int64)
    ab, ba = (task.a_spec, task.b_spec), (task.b_spec, task.a_spec)
    if task.duplicate:  # pairs are adjacent rows: (deal, orientation) order
        parts = [(slice(0, None, 2), _rows(task, deals, ab)),
                 (slice(1, None, 2), _rows(task, deals, ba))]
        game_deals = np.repeat(deals, 2)
        orient = np.tile(np.array([0, 1], dtype=np.int64), c.n)
    else:
        orient = deals % 2
        parts = [(np.flatnonzero(orient == o), _rows(task, deals[orient == o], specs))
                 for o, specs in ((0, ab), (1, ba)) if (orient == o).any()]
        game_deals = deals
    cols = _columns(task, game_deals, orient, parts)
    del parts
    tally = tally_to_json(tally_games(cols, task.duplicate))
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
    table = _parquet_bytes(cols, (task.a_spec, task.b_spec)) if task.deal_table else b""
    return ChunkResult(c, tally, None, _records(task, first_picks),
                       _records(task, filter_picks), time.perf_counter() - t0,
                       (task.a_spec, task.b_spec), table)


# --- chunk files --------------------------------------------------------------------------
def _atomic_write(path: str, write: Any, mode: str = "wb") -> None:
    """Write through a temporary file in the same folder, then ``os.replace`` it: a reader or
    a resumed run sees the whole file or none of it, even if this process is killed."""
    tmp = os.path.join(os.path.dirname(path), f".tmp-{os.getpid()}-{os.path.basename(path)}")
    try:
        with open(tmp, mode) as f:
            write(f)
        os.replace(tmp, path)
    except OSError:  # disk full, …: no partial file is left behind
        try:
            os.remove(tmp)
        except OSError:
            pass
        raise


def _deals_path(chunk_path: str) -> str:
    """``RUN/deals/c000123.parquet`` for the chunk file ``RUN/chunks/c000123.npz``."""
    folder, name = os.path.split(chunk_path)
    return os.path.join(os.path.dirname(folder), DEALS_DIR,
                        os.path.splitext(name)[0] + ".parquet")


def _write_deals(path: str, res: ChunkResult) -> None:
    """The chunk's per-deal table as Parquet (``_parquet_bytes``)."""
    data = res.deals_parquet or _parquet_bytes(res.columns or {}, res.players)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    _atomic_write(path, lambda f: f.write(data))


def _parquet_bytes(cols: Mapping[str, np.ndarray], players: tuple[str, str]) -> bytes:
    """A chunk's per-deal table as Parquet: ``DEAL_COLUMNS`` with their integer types, then
    ``LABEL_COLUMNS`` as dictionary-encoded strings; zstd-compressed column by column."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    def ints(x: np.ndarray) -> Any:  # pa.array(x) without its pandas check (imports pandas)
        x = np.ascontiguousarray(x)
        return pa.Array.from_buffers(pa.from_numpy_dtype(x.dtype), x.size, [None, pa.py_buffer(x)])

    def text(v: str) -> Any:  # pa.array([v], pa.string()), the same way
        data = v.encode()
        ends = np.array([0, len(data)], dtype=np.int32)
        return pa.Array.from_buffers(pa.string(), 1, [None, pa.py_buffer(ends),
                                                      pa.py_buffer(data)])

    g = cols["deal"].size
    a, b = players
    fields = {k: ints(cols[k]) for k in DEAL_COLUMNS}
    zeros = ints(np.zeros(g, dtype=np.int8))
    for k, v in zip(LABEL_COLUMNS, (f"{a} vs {b}", a, b)):
        fields[k] = pa.DictionaryArray.from_arrays(zeros, text(v))
    buf = io.BytesIO()
    pq.write_table(pa.table(fields), buf, compression="zstd")
    return buf.getvalue()


def _save_chunk(out: str, res: ChunkResult, config_hash: str) -> None:
    meta = {"format": FORMAT, "config_hash": config_hash,
            **dataclasses.asdict(res.chunk), "seconds": res.seconds}
    path = os.path.join(out, CHUNK_DIR, res.chunk.filename)
    if res.columns or res.deals_parquet:  # first: a chunk file means its table is complete
        _write_deals(_deals_path(path), res)
    arrays: dict[str, np.ndarray] = {}
    arrays["_meta"] = np.array(json.dumps(meta))
    arrays["_stats"] = np.array(json.dumps(res.tally))
    arrays["_records_first"] = np.frombuffer(res.records_first, dtype=np.uint8)
    arrays["_records_filter"] = np.frombuffer(res.records_filter, dtype=np.uint8)
    _atomic_write(path, lambda f: np.savez(f, **arrays))


def _chunk_files(run_dir: str) -> list[str]:
    return sorted(glob.glob(os.path.join(run_dir, CHUNK_DIR, "c[0-9]*.npz")))


def _read_meta(path: str) -> dict[str, Any]:
    with np.load(path) as z:
        return json.loads(str(z["_meta"]))


def _read_stats(path: str) -> dict[str, Any]:
    with np.load(path) as z:
        return tally_from_json(json.loads(str(z["_stats"])))


def _checked_chunks(run_dir: str, cfg: Any, chunks: Sequence[Chunk],
                    stats: bool = False) -> Iterator[tuple[str, Chunk, Any]]:
    """``(path, chunk, stats or None)`` of every chunk file, once each is checked to be
    readable, of this run (config hash and chunk plan) and named after the chunk it holds:
    one identity for the statistics, the per-deal table and the set of finished chunks. A
    file that fails is named in one line, with what to do about it."""
    h = cfg.hash()
    for path in _chunk_files(run_dir):
        try:
            meta = _read_meta(path)
            i = meta["index"]
            plan = {k: meta[k] for k in ("index", "matchup", "first", "n")}
            tally = _read_stats(path) if stats else None
        except Exception as e:  # a torn or foreign file: zip, npy, JSON or key errors
            raise ConfigError(f"chunk file {path!r} is corrupt ({type(e).__name__}: {e}): "
                              f"delete it, then --resume plays its chunk again") from None
        if meta.get("config_hash") != h or not isinstance(i, int) or not 0 <= i < len(chunks) \
                or dataclasses.asdict(chunks[i]) != plan:
            raise ConfigError(f"chunk file {path!r} belongs to another run (config hash or "
                              f"chunk plan differs): delete it, or choose another --out")
        if os.path.basename(path) != chunks[i].filename:
            raise ConfigError(f"chunk file {path!r} holds chunk {i}, whose file is "
                              f"{chunks[i].filename!r} (a renamed or stray copy): delete "
                              f"{path!r}, then --resume plays any missing chunk")
        yield path, chunks[i], tally


def iter_deals(run_dir: str, columns: Sequence[str] | None = None
               ) -> Iterator[dict[str, np.ndarray]]:
    """The per-deal table chunk by chunk (run order), as dicts of numpy arrays.

    Streams: only one chunk is in memory at a time. ``columns`` selects columns (default all
    ``DEAL_COLUMNS``; the name columns ``LABEL_COLUMNS`` come as arrays of str on request).
    """
    import pyarrow.parquet as pq

    cols = list(columns or DEAL_COLUMNS)
    bad = [c for c in cols if c not in DEAL_COLUMNS and c not in LABEL_COLUMNS]
    if bad:
        raise ConfigError(f"per-deal column {bad[0]!r} does not exist: allowed are "
                          f"{', '.join([*DEAL_COLUMNS, *LABEL_COLUMNS])}")
    files = _chunk_files(run_dir)
    if not files:
        raise ConfigError(f"{run_dir!r} holds no finished chunks ({CHUNK_DIR}/c*.npz): is it a "
                          f"tournament results folder?")
    cfg = _read_config(run_dir)
    games = games_per_deal(cfg)
    for path, chunk, _ in list(_checked_chunks(run_dir, cfg, plan_chunks(cfg))):
        dpath = _deals_path(path)
        if os.path.exists(dpath):
            try:
                table = pq.read_table(dpath, columns=list(dict.fromkeys([*cols, "deal"])))
                deal = table.column("deal").to_numpy()
            except Exception as e:  # a torn or foreign file
                raise ConfigError(f"per-deal file {dpath!r} is corrupt ({type(e).__name__}: "
                                  f"{e}): delete it and {path!r}, then --resume plays the "
                                  f"chunk again") from None
            # the same identity as the chunk file: its deal range, every game of it
            if deal.size != chunk.n * games or deal.size and (
                    deal.min() != chunk.first or deal.max() != chunk.first + chunk.n - 1):
                raise ConfigError(f"per-deal file {dpath!r} does not hold chunk {chunk.index} "
                                  f"(deals {chunk.first}-{chunk.first + chunk.n - 1}): delete "
                                  f"it and {path!r}, then --resume plays the chunk again")
            yield {c: table.column(c).to_numpy() for c in cols}
            continue
        with np.load(path) as z:  # a run written before the Parquet table: columns in here
            if "deal" not in z.files and cfg.deal_table:
                raise ConfigError(f"per-deal file {dpath!r} of chunk file {path!r} is "
                                  f"missing: delete {path!r}, then --resume plays the chunk "
                                  f"again")
            if "deal" not in z.files:
                raise ConfigError(f"{run_dir!r} has no per-deal table: the run was made with "
                                  f"output.deal_table = false")
            try:
                part = {c: z[c] for c in cols}
            except Exception as e:  # a damaged column: say which file
                raise ConfigError(f"chunk file {path!r} is corrupt ({type(e).__name__}: "
                                  f"{e}): delete it, then --resume plays its chunk again") \
                    from None
        yield part


def load_deals(run_dir: str, columns: Sequence[str] | None = None) -> dict[str, np.ndarray]:
    """The whole per-deal table of a run as a dict of numpy arrays (``DEAL_COLUMNS``).

    ``pandas.DataFrame(load_deals("results/quick"))`` gives a data frame. Rows come chunk by
    chunk in run order; within a matchup, in (deal, orientation) order. For runs too large for
    memory use ``iter_deals`` or pick ``columns``.
    """
    parts = list(iter_deals(run_dir, columns))
    return {c: np.concatenate([p[c] for p in parts]) for c in parts[0]}


# --- aggregation in run order -------------------------------------------------------------
class Aggregate:
    """Chunk statistics merged in run order, with the SPRT's looks after each chunk.

    Chunks may arrive in any order; they are merged only once every earlier chunk is in, so the
    SPRT sees the same sequence for any number of jobs and any backend.
    """

    def __init__(self, cfg: Any, chunks: Sequence[Chunk]) -> None:
        self.cfg = cfg
        self.chunks = chunks  # a ChunkPlan: not materialised
        self.tallies = [new_tally() for _ in cfg.matchups()]
        self.sprt = SPRT(cfg.sprt.mu0, cfg.sprt.mu1, cfg.sprt.alpha, cfg.sprt.beta,
                         cfg.sprt.min_pairs) if cfg.sprt else None
        self.pending: dict[int, dict[str, Any]] = {}
        self.next = 0  # chunks 0 … next-1 are merged
        self.stop_at: int | None = None  # last chunk of a run the SPRT decided

    @property
    def finished(self) -> bool:
        return self.stop_at is not None or self.next == len(self.chunks)

    def add(self, chunk: Chunk, tally: dict[str, Any]) -> None:
        if self.stop_at is not None and chunk.index > self.stop_at:
            return
        self.pending[chunk.index] = tally
        while self.next in self.pending and self.stop_at is None:
            t = self.pending.pop(self.next)
            merge_tally(self.tallies[self.chunks[self.next].matchup], t)
            if self.sprt is not None:
                p = t["pairs"]
                if self.sprt.update_stats(p.n, p.total, p.total_sq) != "continue":
                    self.stop_at = self.next
            self.next += 1
        if self.stop_at is not None:
            self.pending.clear()

    @property
    def merged_chunks(self) -> int:
        return self.next

    def state(self) -> dict[str, Any]:
        """Plain data for ``sim.report``: config, players, matchups with their tallies."""
        cfg = self.cfg
        ms = cfg.matchups()
        return {
            "format": FORMAT,
            "config": cfg.to_dict(),
            "config_hash": cfg.hash(),
            "players": list(cfg.players),
            "oracle": list(cfg.oracle),
            "matchups": [{"index": m, "a": a, "b": b, "tally": tally_to_json(self.tallies[m])}
                         for m, (a, b) in enumerate(ms)],
            "sprt": self.sprt.to_dict() if self.sprt else None,
            "chunks_merged": self.next,
            "chunks_total": len(self.chunks),
            "complete": self.finished,
            "stopped_by_sprt": self.stop_at is not None,
        }


# --- the run ------------------------------------------------------------------------------
def _read_config(run_dir: str) -> Any:
    from sim.config import from_dict

    path = os.path.join(run_dir, "config.json")
    try:
        with open(path, encoding="utf-8") as f:
            raw = json.load(f)
    except FileNotFoundError:
        raise ConfigError(f"{run_dir!r} is not a tournament results folder (no config.json)") \
            from None
    except (OSError, ValueError) as e:  # ValueError: bad JSON or bad UTF-8
        raise ConfigError(f"{path!r} cannot be read: {e}") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path!r} is corrupt: it holds a JSON {type(raw).__name__}, not the "
                          f"config object")
    raw.pop("_base_dir", None)  # written by older versions; never put on sys.path
    # a results folder is data: nothing it names is imported (plug-ins: --plugin)
    return from_dict(raw, source=path, imports=False)


def _write_config(out: str, cfg: Any) -> None:
    d = cfg.to_dict()
    d["_oracle"] = list(cfg.oracle)  # for reports, which import no strategy; not hashed
    text = json.dumps(d, indent=2, ensure_ascii=False) + "\n"
    _atomic_write(os.path.join(out, "config.json"), lambda f: f.write(text), "w")
    _atomic_write(os.path.join(out, "config.toml"), lambda f: f.write(cfg.to_toml()), "w")


def _load_done(out: str, cfg: Any, chunks: Sequence[Chunk], agg: Aggregate,
               clean: bool = False) -> int:
    """Feed finished chunk files to ``agg``; returns how many there were. ``clean`` (the
    writer, holding the lock): remove temporary files of dead processes."""
    tmps = glob.glob(os.path.join(out, CHUNK_DIR, ".tmp-*")) + \
        glob.glob(os.path.join(out, DEALS_DIR, ".tmp-*"))
    for tmp in tmps if clean else ():
        pid = os.path.basename(tmp)[5:].partition("-")[0]
        if not (pid.isdigit() and _pid_alive(int(pid))):
            os.remove(tmp)  # a write that a kill interrupted: its chunk is simply played again
    n = 0
    for _, chunk, tally in _checked_chunks(out, cfg, chunks, stats=True):
        agg.add(chunk, tally)
        n += 1
    return n


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # alive, another user's
        return True
    return True


def _lock_holder(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().strip() or "unknown"
    except OSError:
        return "unknown"


@contextlib.contextmanager
def _locked(out: str) -> Iterator[None]:
    """Hold ``out/.lock`` while writing ``out``: one writer per results folder. The lock is
    an flock, so the kernel drops it when its holder dies (a stale file is simply taken);
    where there is no fcntl, an O_EXCL file whose pid is checked for life."""
    path = os.path.join(out, LOCK_FILE)

    def busy(pid: str) -> ConfigError:
        return ConfigError(f"results folder {out!r} is being written by another shuangkou "
                           f"process (pid {pid}): wait for it to finish, or stop it and run "
                           f"again with --resume")

    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        fcntl = None
    while True:
        if fcntl is None:  # pragma: no cover - not POSIX
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
                break
            except FileExistsError:
                pid = _lock_holder(path)
                if pid.isdigit() and _pid_alive(int(pid)):
                    raise busy(pid) from None
                with contextlib.suppress(FileNotFoundError):
                    os.remove(path)  # stale: its process is gone
                continue
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise busy(_lock_holder(path)) from None
        try:
            if os.fstat(fd).st_ino == os.stat(path).st_ino:
                break
        except FileNotFoundError:
            pass
        os.close(fd)  # the holder removed the file between our open and flock: again
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        with contextlib.suppress(OSError):
            os.remove(path)
        os.close(fd)


def _drop_after(out: str, stop_at: int) -> None:
    """Remove chunk files past the SPRT's decision: they are not part of the result."""
    for path in _chunk_files(out):
        if int(os.path.basename(path)[1:7]) > stop_at:
            os.remove(path)
            with contextlib.suppress(FileNotFoundError):
                os.remove(_deals_path(path))


def _tasks(cfg: Any, chunks: Sequence[Chunk], plugins: Sequence[str] = ()) -> Iterator[Task]:
    ms = cfg.matchups()
    # the workers look for plug-ins where this process found them
    path = tuple(dict.fromkeys([os.getcwd(), cfg.base_dir, *sys.path]))
    # and import the config's plug-ins and those named with --plugin before resolving specs
    mods = tuple(dict.fromkeys([*cfg.plugins, *plugins]))
    for c in chunks:
        a, b = ms[c.matchup]
        yield Task(c, cfg.seed, a, b, cfg.players[a], cfg.players[b], cfg.duplicate,
                   cfg.rules, cfg.timeout, mods, path, cfg.deal_table, cfg.first_deal,
                   cfg.records, cfg.record_filter, cfg.record_limit)


WATCHDOG_POLL = 1.0  # seconds between a worker's checks that the run's process is alive
_WATCHDOG: list[Any] = []


def _play_in_worker(task: Task, parent: int) -> ChunkResult:
    """``play_chunk`` in a worker process that ends itself when ``parent`` (the process of
    the run) dies: a ``kill -9`` of the run must not leave loky workers running for ever."""
    if os.getpid() != parent and not _WATCHDOG:
        _watch_parent(parent)
    return play_chunk(task)


def _watch_parent(parent: int) -> None:
    """Start a daemon thread that exits this process once ``parent`` is gone."""
    import threading

    direct = os.getppid() == parent  # then a dead parent shows as a new parent pid

    def gone() -> bool:
        if direct:
            return os.getppid() != parent
        try:
            os.kill(parent, 0)
        except ProcessLookupError:
            return True
        except OSError:  # exists, owned by someone else
            pass
        return False

    def watch() -> None:
        while not gone():
            time.sleep(WATCHDOG_POLL)
        os._exit(1)

    t = threading.Thread(target=watch, name="shuangkou-parent-watchdog", daemon=True)
    t.start()
    _WATCHDOG.append(t)


def _kernels_cached(cfg: Any) -> bool:
    """Whether the loops of every matchup (one per set of strategy kinds) are compiled."""
    from sim import runner
    from sim._cache import kernels_cached

    for a, b in cfg.matchups():
        tables = runner.compiled_tables(runner.make_seats([cfg.players[a], cfg.players[b]]))
        if tables is not None and not kernels_cached(tables.loops.kernel_name()):
            return False
    return True


def _warm_up(cfg: Any) -> None:
    """Compile the kernels once here, before the workers start, so that each worker loads
    them from the on-disk cache instead of compiling its own copy (about 50 s each)."""
    from sim import runner
    from sim._cache import compile_first
    from sim.rules import Rules

    rules = Rules.from_dict(dict(cfg.rules))
    warm = set()
    for a, b in cfg.matchups():
        seats = runner.make_seats([cfg.players[a], cfg.players[b]])
        tables = runner.compiled_tables(seats)
        if tables is not None and tables.loops.key not in warm:
            warm.add(tables.loops.key)  # one loop per set of strategy kinds

            def play_one(seats: list[Any] = seats) -> None:
                runner.summaries(cfg.seed, cfg.first_deal, 1, seats, rules)

            if not compile_first(play_one, kernel=tables.loops.kernel_name()):  # cold: a notice
                play_one()  # load the kernels here before the workers start


def cpu_count() -> int:
    """CPUs this process may run on (its affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def cap_jobs(cfg: Any, force: bool = False) -> tuple[Any, str | None]:
    """``cfg`` with ``jobs`` cut to this machine's CPU count, and a line saying so.

    More workers than CPUs only add memory (each loky worker holds its own engine) and time;
    ``force`` keeps the number. A remote dask scheduler's workers are not on this machine:
    left alone."""
    cpus = cpu_count()
    if force or cfg.jobs <= cpus or (cfg.backend == "dask" and cfg.scheduler):
        return cfg, None
    return dataclasses.replace(cfg, jobs=cpus), (
        f"jobs {cfg.jobs} is more than the {cpus} CPUs of this machine: running {cpus} "
        f"(--force-jobs runs {cfg.jobs})")


SCHEDULER_TIMEOUT = 30.0  # seconds to wait for a dask scheduler's answer


def _connect(client_class: Any, address: str) -> Any:
    """A dask ``Client`` of ``address``, or a ``ConfigError`` within ``SCHEDULER_TIMEOUT``.

    ``Client(address, timeout=…)`` waits forever on a server that accepts the connection but
    never speaks (not a dask scheduler), so the connection is made in a daemon thread and
    abandoned when it takes too long."""
    import threading

    box: dict[str, Any] = {}

    def connect() -> None:
        try:
            box["client"] = client_class(address, timeout=SCHEDULER_TIMEOUT)
        except BaseException as e:  # noqa: BLE001 - handed to the caller
            box["error"] = e

    t = threading.Thread(target=connect, name="dask-connect", daemon=True)
    t.start()
    t.join(SCHEDULER_TIMEOUT * 1.2 + 1)  # room for the Client's own timeout error
    if "client" in box:
        return box["client"]
    e = box.get("error")
    why = f"{type(e).__name__}: {' '.join(str(e).split())}" if e is not None else \
        f"no answer within {SCHEDULER_TIMEOUT:g} s (is it a dask scheduler?)"
    raise ConfigError(f"dask scheduler {address!r} cannot be reached: {why}; the address is "
                      f"tcp://HOST:PORT of a running dask-scheduler")


@contextlib.contextmanager
def _executor(cfg: Any) -> Iterator[Callable[[Iterator[Task]], Iterator[ChunkResult]]]:
    """A function running tasks with joblib and yielding results as they complete; with the
    dask backend, connected to ``cfg.scheduler`` (or a cluster on this machine) meanwhile."""
    from joblib import Parallel, delayed, parallel_config

    def local(tasks: Iterator[Task]) -> Iterator[ChunkResult]:
        if cfg.jobs == 1:  # in this process: no worker start-up, easy to debug
            return (play_chunk(t) for t in tasks)
        return Parallel(n_jobs=cfg.jobs, backend=cfg.backend, batch_size=1,
                        return_as="generator_unordered", pre_dispatch="2*n_jobs")(
            delayed(_play_in_worker)(t, os.getpid()) for t in tasks)

    if cfg.backend != "dask":
        yield local
        return
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise ConfigError("backend 'dask' needs the dask extra: "
                          "pip install 'shuangkou[dask]'") from None
    cluster = None
    if cfg.scheduler:
        client = _connect(Client, cfg.scheduler)
    else:  # no address: a cluster on this machine, one process per job
        cluster = LocalCluster(n_workers=cfg.jobs, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)

    def distributed(tasks: Iterator[Task]) -> Iterator[ChunkResult]:
        with parallel_config(backend="dask"):
            yield from Parallel(n_jobs=-1, return_as="generator_unordered")(
                delayed(play_chunk)(t) for t in tasks)

    try:
        yield distributed
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def run_tournament(cfg: Any, resume: bool = False, progress: bool | None = None,
                   stop_after: int | None = None, echo: Any = None,
                   plugins: Sequence[str] = ()) -> dict[str, Any] | None:
    """Run (or finish, with ``resume``) a tournament and write its results folder.

    Parameters
    ----------
    cfg : a ``sim.config.TournamentConfig``; results go to ``cfg.out``.
    resume : finish the run in ``cfg.out``: play only chunks without a file there. Refused if
        the stored config differs from ``cfg`` in anything that changes results.
    progress : show the tqdm bar (default ``cfg.progress``).
    stop_after : testing hook: stop, as if killed, once this many chunks were written in
        this call (no summary is written); returns None.
    echo : called with the summary tables as markdown at the end (e.g. ``print``).
    plugins : modules the user named with ``--plugin`` (already imported here): the workers
        import them too. Nothing is imported from the results folder.

    Returns
    -------
    dict
        The ``summary.json`` contents (see ``sim.report``).
    """
    out = cfg.out
    chunks = plan_chunks(cfg)
    config_path = os.path.join(out, "config.json")
    if os.path.exists(config_path):
        if not resume:
            raise ConfigError(f"results folder {out!r} already holds a run: add --resume to "
                              f"finish it, or choose another --out")
        stored = _read_config(out)
        diffs = stored.differences(cfg)
        if diffs:
            raise ConfigError(f"cannot resume {out!r}: its config differs from this one in "
                              f"{'; '.join(diffs)} (stored -> now); run without --resume "
                              f"into another --out")
    os.makedirs(os.path.join(out, CHUNK_DIR), exist_ok=True)
    with _locked(out):  # one writer: a second run here would delete and redo this one's work
        return _run_locked(cfg, chunks, progress, stop_after, echo, plugins)


def _run_locked(cfg: Any, chunks: list[Chunk], progress: bool | None, stop_after: int | None,
                echo: Any, plugins: Sequence[str]) -> dict[str, Any] | None:
    """``run_tournament`` once it holds the results folder's lock."""
    from sim import report

    out = cfg.out
    _write_config(out, cfg)
    agg = Aggregate(cfg, chunks)
    done_before = _load_done(out, cfg, chunks, agg, clean=True)
    done = {int(os.path.basename(p)[1:7]) for p in _chunk_files(out)}
    per_deal = games_per_deal(cfg)
    # progress counts deals (a duplicate deal is two games), as the config does
    total_deals = cfg.deals * len(cfg.matchups())  # arithmetic: the plan stays lazy
    if not agg.finished and (cfg.backend == "dask" or not _kernels_cached(cfg)):
        _warm_up(cfg)  # before the clock and the bar: compile time is not deals/s
        # (compiled already: loky workers load the kernels themselves, nothing to do here)
    t0 = time.perf_counter()
    deals_now = written = 0
    bar = _progress(cfg, total_deals, sum(chunks[i].n for i in done),
                    cfg.progress if progress is None else progress)
    interrupted = False
    sent: set[int] = set()  # chunks handed to the workers and not saved yet
    try:
        if not agg.finished:
            # (set.add returns None: each chunk is noted in ``sent`` as it is handed out)
            todo = (t for t in _tasks(cfg, (c for c in chunks if c.index not in done), plugins)
                    if agg.stop_at is None and not sent.add(t.chunk.index))
            with _executor(cfg) as execute:
                results = execute(todo)
                for res in results:
                    if agg.stop_at is not None and res.chunk.index > agg.stop_at:
                        continue
                    _save_chunk(out, res, cfg.hash())
                    sent.discard(res.chunk.index)
                    written += 1
                    deals_now += res.chunk.n
                    agg.add(res.chunk, tally_from_json(res.tally))
                    bar.update(res.chunk.n)
                    if agg.sprt is not None:
                        bar.set_postfix_str(f"SPRT LLR {agg.sprt.llr:+.2f} "
                                            f"[{agg.sprt.bounds[0]:.2f}, "
                                            f"{agg.sprt.bounds[1]:.2f}]", refresh=False)
                    if stop_after is not None and written >= stop_after:
                        interrupted = True
                        break
                    if agg.stop_at is not None:
                        break
                close = getattr(results, "close", None)
                if close:
                    with warnings.catch_warnings():  # joblib warns about the unused results
                        warnings.filterwarnings("ignore", message=".*executed +but not used")
                        close()  # stop the workers early when the SPRT decided
    except KeyboardInterrupt:
        bar.close()
        print(f"interrupted: {len(_chunk_files(out))} of {len(chunks)} chunks are saved in "
              f"{out!r}; run the same command with --resume to finish", file=sys.stderr)
        raise
    except Exception as e:
        if not _worker_died(e):
            raise
        lost = ", ".join(f"{i} (matchup {chunks[i].matchup}, deals {chunks[i].first}-"
                         f"{chunks[i].first + chunks[i].n - 1})" for i in sorted(sent)) or "?"
        raise WorkerError(f"a worker process died ({_death(e)}) while playing one of chunks "
                          f"{lost}: {len(_chunk_files(out))} of {len(chunks)} chunks are saved "
                          f"in {out!r}; run the same command with --resume to finish") from None
    finally:
        bar.close()
    if interrupted:
        return None
    if agg.stop_at is not None:
        _drop_after(out, agg.stop_at)
    wall = time.perf_counter() - t0
    run_info = {"wall_seconds": wall, "deals_this_session": deals_now,
                "games_this_session": deals_now * per_deal,
                "deals_per_second": deals_now / wall if wall > 0 else math.nan,
                "games_per_second": deals_now * per_deal / wall if wall > 0 else math.nan,
                "chunks_this_session": written, "chunks_before": done_before,
                "jobs": cfg.jobs, "backend": cfg.backend,
                "finished": time.strftime("%Y-%m-%d %H:%M:%S")}
    _atomic_write(os.path.join(out, "run.json"),
                  lambda f: f.write(json.dumps(run_info, indent=2) + "\n"), "w")
    _write_records(out, cfg, agg)
    state = agg.state()
    state["run"] = run_info
    return report.write_all(state, out, plots=cfg.plots, echo=echo)


def _worker_died(e: BaseException) -> bool:
    """Whether ``e`` says a worker process ended abruptly (loky, a process pool, dask)."""
    from concurrent.futures import BrokenExecutor

    return isinstance(e, BrokenExecutor) or type(e).__name__ in ("TerminatedWorkerError",
                                                                 "KilledWorker")


def _death(e: BaseException) -> str:
    """The cause of a worker's death in a few words, e.g. ``exit codes {SIGSEGV(-11)}``."""
    import re

    m = re.search(r"exit codes? of the workers (?:are|is) (\{[^}]*\})", str(e))
    if m:
        return f"{type(e).__name__}, exit codes {m.group(1)}"
    first = str(e).strip().splitlines()
    return f"{type(e).__name__}: {first[0]}" if first else type(e).__name__


def _progress(cfg: Any, total: int, initial: int, enabled: bool) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, unit="deal", unit_scale=True, smoothing=0.1,
                desc=cfg.name, disable=not enabled, dynamic_ncols=True, file=sys.stderr)


def _write_records(out: str, cfg: Any, agg: Aggregate) -> None:
    """``records.jsonl``: the first-K records, then the filtered ones (``record_limit`` per
    matchup), gathered from the chunk files in run order."""
    if not cfg.records and not cfg.record_filter:
        return
    last = agg.merged_chunks - 1
    taken = [0] * len(cfg.matchups())
    path = os.path.join(out, "records.jsonl")

    def write(f: Any) -> None:
        for p in _chunk_files(out):
            i = int(os.path.basename(p)[1:7])
            if i > last:
                continue
            m = agg.chunks[i].matchup
            with np.load(p) as z:
                f.write(z["_records_first"].tobytes())
                lines = z["_records_filter"].tobytes().splitlines(keepends=True)
            keep = lines[:max(0, cfg.record_limit - taken[m])]
            taken[m] += len(keep)
            f.write(b"".join(keep))

    _atomic_write(path, write)


def load_state(run_dir: str) -> dict[str, Any]:
    """The statistics of a results folder, rebuilt from its chunk files (no replaying).

    Works for an unfinished run too (``complete`` is then false).
    """
    cfg = _read_config(run_dir)
    chunks = plan_chunks(cfg)
    agg = Aggregate(cfg, chunks)
    _load_done(run_dir, cfg, chunks, agg)
    state = agg.state()
    state["complete"] = agg.finished
    try:
        with open(os.path.join(run_dir, "run.json"), encoding="utf-8") as f:
            state["run"] = json.load(f)
    except (OSError, json.JSONDecodeError):
        state["run"] = None
    return state
