"""The chunks of a tournament: the plan that cuts a run into chunks, what a played chunk holds,
and its tallies (statistics of one chunk, merged in run order by ``Aggregate``).

Pure: plain arrays in, ``sim.analysis.stats`` accumulators out; no engine, no files (those
are ``sim.tournament.results``), no workers (``sim.tournament.run``).
"""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from sim.analysis.stats.histogram import Histogram
from sim.analysis.stats.moments import ClusterMoments, Moments
from sim.analysis.stats.sprt import SPRT
from sim.analysis.stats.swings import Swings
from sim.analysis.stats.win_draw_loss import WDL
from sim.bots.spec import FAULT_KINDS
from sim.errors import ConfigError
from strategies.registry import team_pair

FORMAT = "shuangkou-tournament/1"  # the format tag of chunk files and of summary.json


SIDES = ("A", "B")


# histogram ranges; values outside land in under/overflow and every mean stays exact
SCORE_BINS = (0, 600, 5)  # attacker score, 5-point bins (R22-R23)


SETTLE_BINS = (-400, 401, 1)  # per-player settlement of one deal (R24)


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


# optional counts of a chunk whose players include bots in other processes (docs/bots.md):
# faults by side and kind (a bot out of restarts is not counted again), and the deals they cost
FAULT_FIELDS = tuple([f"{s}.fault.{k}" for s in SIDES for k in FAULT_KINDS]
                     + [f"{s}.{w}" for s in SIDES for w in ("forfeits", "fallbacks")])


def new_tally() -> dict[str, Any]:
    """Empty accumulators of one matchup (see ``tally_games`` for their meaning)."""
    t: dict[str, Any] = {
        "games": 0, "void": 0, "redealt": 0, "pairs": Moments(), "wdl": WDL(),
        "score": Histogram(*SCORE_BINS), "redeals": Histogram(0, 16, 1),
        "mult": Histogram(0, 32, 1), "calls": Moments(), "overrides": Moments(),
        "first_show_round": Moments(), "swings": Swings(),
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


# the per-game columns ``tally_games`` reads: an SPRT run keeps them with each chunk, so that
# the chunk's per-pair results give the SPRT's path and any prefix of it can be tallied
TALLY_COLUMNS = ("deal", "orientation", "settle0", "settle1", "void", "attacker_team",
                 "attacker_score", "multiplier", "overrides", "redeals", "calls",
                 "first_show_round", "show_rank", "caller_trumps")


def pair_results(cols: Mapping[str, np.ndarray], duplicate: bool) -> np.ndarray:
    """Twice each pair's result ``x`` (A's mean settlement per deal per player), as integers,
    in deal order: with ``duplicate`` rows ``2i`` and ``2i + 1`` are pair ``i``."""
    o = cols["orientation"]
    a = np.where(o == 0, cols["settle0"], cols["settle1"]).astype(np.int64)
    return a[0::2] + a[1::2] if duplicate else 2 * a


def first_pairs(cols: Mapping[str, np.ndarray], pairs: int, duplicate: bool
                ) -> dict[str, np.ndarray]:
    """The columns of the first ``pairs`` pairs (``2 * pairs`` rows with ``duplicate``)."""
    rows = 2 * pairs if duplicate else pairs
    return {k: v[:rows] for k, v in cols.items()}


DEAL_VALUES = "deal_x2"  # a chunk tally's per-pair results, for ClusterMoments (not merged)


# ClusterMoments keeps M x M sums (2 MB each at config.MAX_MATCHUPS = 500): every run the
# config allows is clustered; a larger one (a foreign results folder) is not
CLUSTER_MAX_MATCHUPS = 500


class DealValues:
    """One chunk's per-pair results in deal order, as integers (twice A's mean settlement per
    deal per player): what the variance clustered by deal needs from each chunk, since a
    chunk plays one matchup and the deals are shared across matchups. Stored in the chunk's
    tally (compact: base64 of int16 or int32) and used by ``Aggregate``, never merged."""

    __slots__ = ("values",)

    def __init__(self, values: np.ndarray) -> None:
        self.values = np.asarray(values, dtype=np.int64)

    def to_dict(self) -> dict[str, Any]:
        v = self.values
        dt = "<i2" if v.size == 0 or (v.min() >= -2 ** 15 and v.max() < 2 ** 15) else "<i4"
        return {"type": "DealValues", "dtype": dt,
                "data": base64.b64encode(v.astype(dt).tobytes()).decode("ascii")}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> DealValues:
        if not isinstance(d, dict) or d.get("type") != "DealValues" \
                or d.get("dtype") not in ("<i2", "<i4"):
            raise ValueError(f"{str(d)[:80]!r} is not a serialised DealValues")
        return cls(np.frombuffer(base64.b64decode(d["data"], validate=True), dtype=d["dtype"]))


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
        the first lead), ``S.overrides``; ``swings``: with ``duplicate``, the pairs of largest
        swing (``sim.analysis.stats.Swings``).
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
    if duplicate and "deal" in cols:  # the largest swings (an old SPRT chunk has no deals)
        swing = x2 != 0  # a tie is no swing
        t["swings"].add(cols["deal"][0::2][swing], side_settle["A"][0::2][swing],
                        side_settle["A"][1::2][swing])
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


_TYPES = {"Moments": Moments, "Histogram": Histogram, "WDL": WDL, "DealValues": DealValues,
          "Swings": Swings}


def tally_from_json(d: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v if isinstance(v, int) else _TYPES[v["type"]].from_dict(v) for k, v in d.items()}


MAX_VALUE = 10**6  # |a value| any accumulator of a tally holds (settlements are <= 25,000, R24)


def tally_schema() -> Any:
    """The declared types of a chunk tally's JSON (``tally_to_json``): each field an integer
    count or one of the accumulators, tagged by its ``type``, with every field's type and range
    (msgspec); a field an accumulator never writes is refused."""
    from typing import Annotated, Literal, Optional, Union

    import msgspec

    global _TALLY_SCHEMA
    if _TALLY_SCHEMA is not None:
        return _TALLY_SCHEMA
    count = Annotated[int, msgspec.Meta(ge=0, le=2**62)]
    value = Annotated[int, msgspec.Meta(ge=-MAX_VALUE, le=MAX_VALUE)]
    num = Annotated[float, msgspec.Meta(ge=-1e300, le=1e300)]  # finite
    opts = {"tag_field": "type", "forbid_unknown_fields": True}
    moments = msgspec.defstruct("Moments", [("n", count), ("total", num), ("total_sq", num)],
                                tag="Moments", **opts)
    wdl = msgspec.defstruct("WDL", [("wins", count), ("draws", count), ("losses", count)],
                            tag="WDL", **opts)
    hist = msgspec.defstruct("Histogram", [
        ("lo", value), ("hi", value), ("width", Annotated[int, msgspec.Meta(ge=1, le=MAX_VALUE)]),
        ("counts", Annotated[list[count], msgspec.Meta(max_length=100_000)]),
        ("underflow", count), ("overflow", count),
        ("min", Optional[num]), ("max", Optional[num]),  # noqa: UP045 - null while empty
        ("lattice", bool), ("moments", moments)], tag="Histogram", **opts)
    swings = msgspec.defstruct("Swings", [
        ("k", Annotated[int, msgspec.Meta(ge=0, le=1000)]),
        ("deals", list[count]), ("a0", list[value]), ("a1", list[value])], tag="Swings", **opts)
    values = msgspec.defstruct("DealValues", [
        ("dtype", Literal["<i2", "<i4"]), ("data", str)], tag="DealValues", **opts)
    field = Union[count, moments, wdl, hist, swings, values]  # noqa: UP007
    _TALLY_SCHEMA = Annotated[dict[Annotated[str, msgspec.Meta(max_length=64)], field],
                              msgspec.Meta(max_length=256)]
    return _TALLY_SCHEMA


_TALLY_SCHEMA: Any = None


def check_tally(tally: Mapping[str, Any], chunk: Chunk, games_per_deal: int) -> None:
    """Raise ``ConfigError`` (the field and what was expected; the caller names the file)
    unless ``tally`` (``tally_from_json`` of a chunk file) is the tally of ``chunk``'s pairs:
    exactly the fields ``new_tally`` has, each of its type, and every count against the chunk's
    pairs and games — a received chunk file's statistics are checked before anything merges
    them."""
    want = new_tally()
    extra = sorted(set(tally) - set(want) - {DEAL_VALUES} - set(FAULT_FIELDS))
    missing = sorted(set(want) - set(tally))
    if extra or missing:
        what = [f"unknown field(s) {', '.join(extra)}"] if extra else []
        what += [f"missing field(s) {', '.join(missing)}"] if missing else []
        raise ConfigError("; ".join(what))
    games = chunk.n * games_per_deal
    for k, w in want.items():
        v = tally[k]
        if type(v) is not type(w):
            raise ConfigError(f"{k}: a {type(v).__name__}, expected a {type(w).__name__}")
        if isinstance(v, int) and not 0 <= v <= games:
            raise ConfigError(f"{k} = {v}: must be 0 … {games}, the chunk's games")
        if isinstance(v, Histogram) and v.n and not (
                v.min <= v.max and (v.underflow or v.min >= v.lo)
                and (v.overflow or v.max < v.hi)):
            raise ConfigError(f"{k}: min {v.min!r} and max {v.max!r} do not fit its counts in "
                             f"[{v.lo}, {v.hi})")
        m = v.moments if isinstance(v, Histogram) else v
        if isinstance(m, Moments):
            d = m.to_dict()
            total, sq = d["total"], d["total_sq"]
            if not 0 <= m.n <= games or not (abs(total) <= MAX_VALUE * max(m.n, 1)
                                             and 0 <= sq <= MAX_VALUE ** 2 * max(m.n, 1)):
                raise ConfigError(f"{k}: n = {m.n}, sums {total!r}, {sq!r}: n must be 0 … "
                                 f"{games} and every value within ±{MAX_VALUE:,}")
    for k in set(tally) & set(FAULT_FIELDS):  # a bot's faults: at most one a seat and game
        v = tally[k]
        if type(v) is not int or not 0 <= v <= 2 * games:
            raise ConfigError(f"{k} = {v!r}: must be an integer 0 … {2 * games}")
    if tally["games"] != games:
        raise ConfigError(f"games = {tally['games']}: the chunk's {chunk.n} deals are {games}")
    pairs, wdl = tally["pairs"], tally["wdl"]
    if pairs.n != chunk.n or wdl.wins + wdl.draws + wdl.losses != chunk.n:
        raise ConfigError(f"pairs (n = {pairs.n}) and wdl ({wdl.wins} + {wdl.draws} + "
                         f"{wdl.losses}) must count the chunk's {chunk.n} pairs")
    sw = tally["swings"]
    if sw.deals.size > sw.k or sw.k > 1000 or sw.deals.size and (
            sw.deals.min() < chunk.first or sw.deals.max() >= chunk.first + chunk.n
            or np.abs(sw.a0).max() > MAX_VALUE or np.abs(sw.a1).max() > MAX_VALUE):
        raise ConfigError(f"swings: {sw.deals.size} deals of {sw.k} kept, deals "
                         f"{chunk.first} … {chunk.first + chunk.n - 1} and values within "
                         f"±{MAX_VALUE:,} expected")
    vals = tally.get(DEAL_VALUES)
    if vals is not None and (not isinstance(vals, DealValues) or vals.values.size != chunk.n):
        raise ConfigError(f"{DEAL_VALUES}: {chunk.n} per-pair results expected")


@dataclasses.dataclass
class ChunkResult:
    """A played chunk: its statistics (JSON-ready), per-deal table (Parquet bytes, empty when
    the run keeps no table) and records (JSONL bytes)."""

    chunk: Chunk
    tally: dict[str, Any]
    records_first: bytes
    records_filter: bytes
    seconds: float
    deals_parquet: bytes = b""  # the per-deal table as Parquet, encoded by the worker
    tally_cols: dict[str, np.ndarray] | None = None  # TALLY_COLUMNS, kept by SPRT runs
    faults: bytes = b""  # JSON Lines: each fault of a bot in another process (docs/bots.md)


class Aggregate:
    """Chunk statistics merged in run order, with the SPRT's looks after each pair.

    Chunks may arrive in any order; they are merged only once every earlier chunk is in, so the
    SPRT sees the same sequence for any number of jobs and any backend. An SPRT run (one
    head-to-head matchup: run order is deal order) needs each chunk's ``TALLY_COLUMNS``: their
    per-pair results are fed to the SPRT one look per pair, and when a look decides inside a
    chunk, only that chunk's pairs up to the deciding one are tallied (``cut``); nothing after
    it counts, whatever the chunk size.
    """

    def __init__(self, cfg: Any, chunks: Sequence[Chunk]) -> None:
        self.cfg = cfg
        self.chunks = chunks  # a ChunkPlan: not materialised
        self.tallies = [new_tally() for _ in cfg.matchups()]
        self.sprt = SPRT(cfg.sprt.mu0, cfg.sprt.mu1, cfg.sprt.alpha, cfg.sprt.beta,
                         cfg.sprt.min_pairs) if cfg.sprt else None
        self.pending: dict[int, tuple[dict[str, Any], Any]] = {}
        self.next = 0  # chunks 0 … next-1 are merged
        self.stop_at: int | None = None  # last chunk of a run the SPRT decided
        # (chunk index, pairs kept) when the SPRT decided before the end of the chunk as
        # stored: its files still hold pairs past the decision (``results.cut_chunk``)
        self.cut: tuple[int, int] | None = None
        # deals shared by the matchups: chunk k of every matchup plays the same deals, and
        # those chunks are consecutive in run order; once all are merged, their per-pair
        # results go into the cross-moments (rows with a chunk lacking them are left out)
        m = len(self.tallies)
        self.cluster = ClusterMoments(m) if 1 < m <= CLUSTER_MAX_MATCHUPS else None
        self._row: list[np.ndarray | None] = []

    @property
    def finished(self) -> bool:
        return self.stop_at is not None or self.next == len(self.chunks)

    def add(self, chunk: Chunk, tally: dict[str, Any],
            cols: Mapping[str, np.ndarray] | None = None) -> None:
        """Add a finished chunk's tally (and, in an SPRT run, its ``TALLY_COLUMNS``)."""
        if self.stop_at is not None and chunk.index > self.stop_at:
            return
        if self.sprt is not None and cols is None:
            raise ValueError(f"chunk {chunk.index}: an SPRT run needs its per-pair results")
        self.pending[chunk.index] = (tally, cols)
        while self.next in self.pending and self.stop_at is None:
            t, c = self.pending.pop(self.next)
            vals = t.pop(DEAL_VALUES, None)  # (not a tally: never merged)
            if self.sprt is not None:
                t = self._look(self.chunks[self.next], t, c)
            if self.stop_at is None:  # a row the SPRT ended is incomplete: left out
                self._add_row(self.chunks[self.next].matchup, vals)
            merge_tally(self.tallies[self.chunks[self.next].matchup], t)
            self.next += 1
        if self.stop_at is not None:
            self.pending.clear()

    def _look(self, chunk: Chunk, tally: dict[str, Any], cols: Mapping[str, np.ndarray]
              ) -> dict[str, Any]:
        """Feed the chunk's pairs to the SPRT; the tally of the pairs that count."""
        dup = self.cfg.duplicate
        x2 = pair_results(cols, dup)
        if x2.size != tally["pairs"].n or x2.size > chunk.n:
            raise ValueError(f"chunk {chunk.index}: {x2.size} per-pair results for "
                             f"{tally['pairs'].n} pairs in its statistics")
        taken = self.sprt.update_pairs(x2 / 2.0)  # halves: exact
        decided = self.sprt.state != "continue"
        if x2.size < chunk.n and not (decided and taken == x2.size):
            raise ValueError(f"chunk {chunk.index} holds {x2.size} of its {chunk.n} pairs, "
                             f"but the SPRT does not decide at its last one")
        if decided:
            self.stop_at = chunk.index
            if taken < x2.size:
                self.cut = (chunk.index, taken)
                return tally_games(first_pairs(cols, taken, dup), dup)
        return tally

    def _add_row(self, matchup: int, vals: DealValues | None) -> None:
        """Collect chunk ``k`` of each matchup; when the last one is in, add the block."""
        if self.cluster is None:
            return
        if matchup == 0:
            self._row = []
        if len(self._row) != matchup:  # an earlier chunk of the row is missing: skip it
            return
        self._row.append(None if vals is None else vals.values)
        if matchup == self.cluster.m - 1:
            row, self._row = self._row, []
            if all(v is not None for v in row) and len({v.size for v in row}) == 1:
                self.cluster.add(np.stack(row, axis=1))

    @property
    def merged_chunks(self) -> int:
        return self.next

    def state(self) -> dict[str, Any]:
        """Plain data for ``sim.analysis.report``: config, players, matchups with their tallies."""
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
            "deal_moments": (self.cluster.to_dict()
                             if self.cluster is not None and self.cluster.deals else None),
            # partners: each entrant's two players (sim.analysis.summary reads the design)
            "teams": ([team_pair(t) for t in cfg.players]
                      if cfg.format == "partners" else None),
        }
