"""The ladder: one SQLite database of every duplicate pair ever played between registered
players, rated together (``sim.analysis.ladder``), extended by runs that go where the ranking
is least certain (docs/ladder.md).

The database
------------
One file (default ``results/ladder.sqlite``), stdlib ``sqlite3``, WAL journal (readers never
wait for the writer). ``PRAGMA application_id`` is ``APP_ID`` and ``PRAGMA user_version`` the
schema version ``SCHEMA``; both are checked on every open, so a file that is not a ladder, a
newer schema, a corrupt, read-only or locked file is one ``LadderError`` line; so is a file
whose schema, pages or values are not what this code writes (``_check_schema``,
``_check_integrity``, ``_check_columns``: a received file is data). Tables:

- ``meta(key, value)``: ``application``, ``schema``, ``seed``, ``rules`` (JSON), ``created``;
- ``players(id, spec, plugin, added, removed)``: ``plugin`` is the file ``add --plugin`` was
  given, a name only (a run loads plug-ins from its own --plugin, never from the database);
  ``removed`` players are not scheduled, not shown and their pairs not rated (re-adding the
  spec brings them back, pairs included);
- ``matchups(id, a, b, next_deal)`` with ``a < b`` (player ids): ``next_deal`` is above every
  deal the matchup has stored, and a run plays its next pairs from there;
- ``chunks(id, matchup, first_deal, n, time, unix, source, source_chunk, seconds, deals, x2)``:
  one row per committed chunk; ``deals`` and ``x2`` are the chunk's pairs as little-endian
  numpy arrays (``encode``/``decode``, read with ``np.frombuffer``; ``deals`` empty when they
  run on from ``first_deal``, ``x2`` ``<i2`` or ``<i4`` by its length): what ``show`` reads,
  a few thousand rows for millions of pairs;
- ``pairs(matchup, deal, chunk, score2, x2)``, primary key ``(matchup, deal)`` (a deal is
  never stored twice for a matchup): the same pairs row by row, for SQL users;
- ``incidents(id, player, kind, matchup, deal, time, message)``: a bot's crash, timeout or
  illegal move (``kind`` ``crash``, ``timeout``, ``illegal``);
- ``imports(source, path, config_hash, time)``: each results folder imported (``source`` is
  ``import:RUNID``, the ``chunks.source`` of its chunks);
- the view ``pair_results``: each pair with both players' specs, ``margin`` (``x2 / 2.0``)
  and the chunk's time.

``x2`` is the exact integer sum of side A's per-player settlement over the pair's two games
(A the player with the lower id), so ``x2 / 2`` is the tournament's per-pair result ``x``;
``score2`` is 2 for a won pair (``x2 > 0``), 1 drawn, 0 lost.

Writing
-------
Every chunk a run finishes is committed in one transaction (its ``chunks`` row, its
``pairs`` rows, the matchup's ``next_deal``): a ``kill -9`` loses at most the chunks in
flight. A run holds an OS lock (``flock``) on ``DB.lock`` for its whole length; a second run
(or an import) stops at once with one line naming the holder (pid, host, start time). ``add``
and ``remove`` are single short transactions and may run beside a run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import json
import os
import re
import shlex
import socket
import sqlite3
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from sim.core.limits import MAX_JOBS
from sim.errors import ConfigError, LadderError, ShuangkouError, StrategyError

APP_ID = 0x53484C44  # "SHLD": PRAGMA application_id of a shuangkou ladder
SCHEMA = 1  # PRAGMA user_version: the schema this code writes and reads
DEFAULT_DB = os.path.join("results", "ladder.sqlite")
# pairs per chunk of a ladder run (the unit of scheduling and of commits) without --chunk:
# sized from each matchup's speed so that a chunk takes about CHUNK_SECONDS of a worker's
# time, and at least FIT_SHARE times the last fit (a fit of 10M pairs takes ~1 s), within
# CHUNK_MIN … CHUNK_MAX; a matchup's first chunk is CHUNK_FIRST pairs
CHUNK_FIRST, CHUNK_MIN, CHUNK_MAX = 100, 20, 1_000_000
CHUNK_SECONDS = 1.0
FIT_SHARE = 20
BUSY_TIMEOUT = 10.0  # seconds a statement waits for another process's write transaction
LOCK_SUFFIX = ".lock"
# testing hook: a run SIGKILLs itself inside its Nth commit, after writing the chunk's rows and
# before COMMIT (tests/test_ladder.py: a kill during a commit leaves the file as before it)
KILL_IN_COMMIT = "SHUANGKOU_LADDER_KILL_IN_COMMIT"
KINDS = ("crash", "timeout", "illegal")
# upper bounds of what a run may be asked for and of what a received database may hold
# (docs/ladder.md "Limits"): a request past one is refused up front, a value past one in a
# database is one LadderError line
MAX_RUN_PAIRS = 10**9  # pairs of one `ladder run` (the run keeps every pair in memory)
MAX_TIMEOUT = 86_400.0  # seconds per decision (a day)
MAX_POINTS = 1000  # points of `ladder history`
MAX_ANCHOR_ELO = 10_000  # |ELO| of `--anchor PLAYER=ELO`
MAX_PLAYERS = 1000  # players in one ladder (the fit is players x players)
MAX_SPEC = 2000  # characters of a player's spec
MAX_TEXT = 4096  # characters of any other text column (a path, a time, a source)
MAX_CHUNK_N = 2**31 - 1  # pairs in one stored chunk
DEFAULT_ANCHOR = "random"  # held at 0 when it is on the ladder (as rating lists fix an engine)

_SCHEMA_SQL = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE players(
    id INTEGER PRIMARY KEY,
    spec TEXT NOT NULL UNIQUE,
    plugin TEXT,
    added TEXT NOT NULL,
    removed INTEGER NOT NULL DEFAULT 0);
CREATE TABLE matchups(
    id INTEGER PRIMARY KEY,
    a INTEGER NOT NULL REFERENCES players(id),
    b INTEGER NOT NULL REFERENCES players(id),
    next_deal INTEGER NOT NULL DEFAULT 0,
    UNIQUE(a, b), CHECK(a < b));
CREATE TABLE chunks(
    id INTEGER PRIMARY KEY,
    matchup INTEGER NOT NULL REFERENCES matchups(id),
    first_deal INTEGER,
    n INTEGER NOT NULL,
    time TEXT NOT NULL,
    unix REAL NOT NULL,
    source TEXT NOT NULL,
    source_chunk INTEGER,
    seconds REAL,
    deals BLOB NOT NULL,
    x2 BLOB NOT NULL,
    UNIQUE(source, source_chunk));
CREATE TABLE pairs(
    matchup INTEGER NOT NULL,
    deal INTEGER NOT NULL,
    chunk INTEGER NOT NULL,
    score2 INTEGER NOT NULL,
    x2 INTEGER NOT NULL,
    PRIMARY KEY(matchup, deal)) WITHOUT ROWID;
CREATE TABLE incidents(
    id INTEGER PRIMARY KEY,
    player INTEGER NOT NULL REFERENCES players(id),
    kind TEXT NOT NULL CHECK(kind IN ('crash', 'timeout', 'illegal')),
    matchup INTEGER,
    deal INTEGER,
    time TEXT NOT NULL,
    message TEXT NOT NULL);
CREATE TABLE imports(
    source TEXT PRIMARY KEY,
    path TEXT NOT NULL,
    config_hash TEXT NOT NULL,
    time TEXT NOT NULL);
CREATE VIEW pair_results AS
    SELECT p.matchup AS matchup, pa.spec AS a, pb.spec AS b, p.deal AS deal,
           p.score2 AS score2, p.x2 / 2.0 AS margin, p.x2 AS x2, c.time AS time,
           p.chunk AS chunk, c.source AS source
    FROM pairs p JOIN matchups m ON m.id = p.matchup
         JOIN players pa ON pa.id = m.a JOIN players pb ON pb.id = m.b
         JOIN chunks c ON c.id = p.chunk;
"""


def _now() -> tuple[str, float]:
    t = time.time()
    iso = datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ")
    return iso, t


def score2_of(x2: np.ndarray) -> np.ndarray:
    """Pair results in half points: 2 won (``x2 > 0``), 1 drawn, 0 lost."""
    x2 = np.asarray(x2)
    return np.add(x2 > 0, x2 >= 0, dtype=np.int8)  # 2 + 0, 1 + 1 … : (x2 > 0) + (x2 >= 0)


def _sql_error(path: str, e: sqlite3.Error) -> LadderError:
    """One line for an SQLite error on the database ``path``."""
    text = str(e)
    low = text.lower()
    if "locked" in low or "busy" in low:
        return LadderError(f"ladder database {path!r} is locked by another process (waited "
                           f"{BUSY_TIMEOUT:g} s): try again once it is done")
    if "readonly" in low or "read-only" in low:
        return LadderError(f"ladder database {path!r} is read-only: give this user write "
                           f"access to it and its folder, or copy it")
    if "not a database" in low or "malformed" in low or "corrupt" in low:
        return LadderError(f"ladder database {path!r} is corrupt ({text}): restore it from a "
                           f"copy, or start a new one with --db")
    if "unable to open" in low or "disk i/o" in low:
        return LadderError(f"ladder database {path!r} cannot be opened ({text}): check the "
                           f"path and its folder's permissions")
    return LadderError(f"ladder database {path!r}: {type(e).__name__}: {text}")


@dataclasses.dataclass(frozen=True)
class Player:
    id: int
    spec: str
    plugin: str | None
    added: str
    removed: bool


class Ladder:
    """An open ladder database. ``Ladder.open(path)`` checks it; ``create=True`` makes a new
    one (with ``seed`` and ``rules``) where there is no file."""

    def __init__(self, path: str, con: sqlite3.Connection, writable: bool) -> None:
        self.path = path
        self.con = con
        self.writable = writable
        meta = dict(con.execute("SELECT key, value FROM meta"))
        self.seed, self.rules = _meta_values(path, meta)

    # --- opening --------------------------------------------------------------------------
    @classmethod
    def open(cls, path: str, create: bool = False, seed: int | None = None,
             rules: dict[str, int] | None = None, write: bool = True) -> Ladder:
        """Open (or, with ``create``, make) the ladder at ``path``; ``write=False`` opens it
        for reading (a read-only file is fine then)."""
        exists = os.path.lexists(path)
        if exists and not os.path.isfile(path):
            raise LadderError(f"ladder database {path!r} is not a regular file: give the path "
                              f"of a .sqlite file with --db")
        if not exists:
            if not create:
                raise LadderError(f"ladder database {path!r} does not exist: create it with "
                                  f"`shuangkou ladder --db {path} add SPEC ...`")
            folder = os.path.dirname(os.path.abspath(path))
            try:
                os.makedirs(folder, exist_ok=True)
            except OSError as e:
                raise LadderError(f"cannot create the folder of ladder database {path!r}: "
                                  f"{e.strerror or e}") from None
        else:
            _check_header(path)
        writable = write and (not exists or os.access(path, os.W_OK))
        if write and not writable:
            raise LadderError(f"ladder database {path!r} is read-only: give this user write "
                              f"access to it, or copy it")
        try:
            con = _connect(path, writable)
            try:
                app = con.execute("PRAGMA application_id").fetchone()[0]
                ver = con.execute("PRAGMA user_version").fetchone()[0]
                tables = con.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
                if app == 0 and ver == 0 and tables == 0:  # empty: new, or a torn creation
                    if not (create and writable):
                        raise LadderError(f"ladder database {path!r} is empty (not a ladder "
                                          f"yet): create it with `shuangkou ladder --db {path} "
                                          f"add SPEC ...`")
                    _create(con, seed or 0, rules or {})
                else:
                    _check_version(path, app, ver)
                    _check_schema(path, con)
                    if writable:  # before anything is written (a reader meets SQLite's
                        _check_integrity(path, con)  # own "malformed" on a torn page)
                    _check_columns(path, con)
                return cls(path, con, writable)
            except BaseException:
                con.close()
                raise
        except sqlite3.Error as e:
            raise _sql_error(path, e) from None

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> Ladder:
        return self

    def __exit__(self, kind: Any, e: Any, tb: Any) -> None:
        self.close()
        if isinstance(e, sqlite3.Error):  # a read of a torn page, a full disk: one line
            raise _sql_error(self.path, e) from None

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (``BEGIN IMMEDIATE``): all of it is committed or none."""
        if not self.writable:
            raise LadderError(f"ladder database {self.path!r} is open for reading only")
        con = self.con
        try:
            con.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as e:
            raise _sql_error(self.path, e) from None
        try:
            yield con
        except BaseException as e:
            with contextlib.suppress(sqlite3.Error):
                con.execute("ROLLBACK")
            if isinstance(e, sqlite3.Error):  # a constraint, a full disk: one line
                raise _sql_error(self.path, e) from None
            raise
        try:
            con.execute("COMMIT")
        except sqlite3.Error as e:
            with contextlib.suppress(sqlite3.Error):
                con.execute("ROLLBACK")
            raise _sql_error(self.path, e) from None

    def reopen(self) -> None:
        """Close and open the connection again (around forking workers: a forked child
        never holds this process's SQLite connection)."""
        self.con.close()
        self.con = _connect(self.path, self.writable)

    # --- players --------------------------------------------------------------------------
    def players(self, active: bool = True) -> list[Player]:
        rows = self.con.execute("SELECT id, spec, plugin, added, removed FROM players "
                                + ("WHERE removed = 0 " if active else "") + "ORDER BY id")
        return [Player(r[0], r[1], r[2], r[3], bool(r[4])) for r in rows]

    def player(self, spec: str) -> Player:
        """The active player ``spec`` (as given, or its canonical spec)."""
        players = self.players()
        for p in players:
            if p.spec == spec:
                return p
        canon = _canonical(spec, quiet=True)
        for p in players:
            if p.spec == canon:
                return p
        names = ", ".join(p.spec for p in players) or "none yet"
        raise ConfigError(f"player {spec!r} is not in ladder {self.path!r}: its players are "
                          f"{names}")

    def add(self, specs: Sequence[str], plugin: str | None = None) -> list[tuple[str, str]]:
        """Register players (canonical specs; a removed one comes back); returns
        ``(spec, what happened)`` for each."""
        canon = [_canonical(s) for s in specs]
        out = []
        t, _ = _now()
        with self.transaction() as con:
            for spec in canon:
                own = plugin if plugin and _from_plugin(spec) else None
                row = con.execute("SELECT id, removed FROM players WHERE spec = ?",
                                  (spec,)).fetchone()
                if row is None:
                    con.execute("INSERT INTO players(spec, plugin, added) VALUES (?, ?, ?)",
                                (spec, own, t))
                    out.append((spec, "added"))
                elif row[1]:
                    con.execute("UPDATE players SET removed = 0, plugin = coalesce(?, plugin) "
                                "WHERE id = ?", (own, row[0]))
                    out.append((spec, "added again (its pairs count again)"))
                else:
                    if own:
                        con.execute("UPDATE players SET plugin = ? WHERE id = ?",
                                    (own, row[0]))
                    out.append((spec, "already in the ladder"))
        return out

    def remove(self, spec: str) -> str:
        p = self.player(spec)
        with self.transaction() as con:
            con.execute("UPDATE players SET removed = 1 WHERE id = ?", (p.id,))
        return p.spec

    # --- matchups and chunks --------------------------------------------------------------
    def matchup(self, a: int, b: int, con: sqlite3.Connection | None = None) -> int:
        """The id of the matchup of players ``a < b`` (made if new)."""
        con = con or self.con
        row = con.execute("SELECT id FROM matchups WHERE a = ? AND b = ?", (a, b)).fetchone()
        if row is not None:
            return int(row[0])
        return int(con.execute("INSERT INTO matchups(a, b) VALUES (?, ?)", (a, b)).lastrowid)

    def next_deals(self) -> dict[int, int]:
        return dict(self.con.execute("SELECT id, next_deal FROM matchups"))

    def insert_chunk(self, con: sqlite3.Connection, matchup: int, deals: np.ndarray,
                     x2: np.ndarray, source: str = "run", source_chunk: int | None = None,
                     seconds: float | None = None, when: tuple[str, float] | None = None
                     ) -> int:
        """Store a chunk's pairs (inside ``transaction()``); returns the chunk id."""
        deals = np.ascontiguousarray(deals, dtype="<i8")
        x2 = np.ascontiguousarray(x2, dtype="<i4")
        iso, unix = when or _now()
        first = int(deals[0]) if deals.size else None
        cid = int(con.execute(
            "INSERT INTO chunks(matchup, first_deal, n, time, unix, source, source_chunk, "
            "seconds, deals, x2) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (matchup, first, int(deals.size), iso, unix, source, source_chunk, seconds,
             *encode(deals, x2))).lastrowid)
        if deals.size:
            s2 = score2_of(x2)
            con.executemany("INSERT INTO pairs(matchup, deal, chunk, score2, x2) "
                            "VALUES (?, ?, ?, ?, ?)",
                            zip([matchup] * deals.size, deals.tolist(), [cid] * deals.size,
                                s2.tolist(), x2.tolist()))
            con.execute("UPDATE matchups SET next_deal = max(next_deal, ?) WHERE id = ?",
                        (int(deals.max()) + 1, matchup))
        return cid

    def record_incident(self, player: int, kind: str, message: str,
                        matchup: int | None = None, deal: int | None = None) -> None:
        with self.transaction() as con:
            con.execute("INSERT INTO incidents(player, kind, matchup, deal, time, message) "
                        "VALUES (?, ?, ?, ?, ?, ?)",
                        (player, kind, matchup, deal, _now()[0], message[:2000]))

    # --- reading --------------------------------------------------------------------------
    def data(self, times: bool = True) -> Any:
        """``sim.analysis.ladder.LadderData`` of the active players, from the chunks' arrays
        (their pairs in commit order); ``times=False`` leaves out each pair's commit time
        (only ``history`` needs it)."""
        from sim.analysis.ladder import LadderData

        players = self.players()
        index = {p.id: i for i, p in enumerate(players)}
        ms = {m: (a, b) for m, a, b in self.con.execute("SELECT id, a, b FROM matchups")}
        keep = {m: (index[a], index[b]) for m, (a, b) in ms.items()
                if a in index and b in index}
        parts_a, parts_b, deals, x2s, when = [], [], [], [], []
        last = np.full(len(players), -np.inf)
        for m, first, n, unix, d, x in self.con.execute(
                "SELECT matchup, first_deal, n, unix, deals, x2 FROM chunks WHERE n > 0 "
                "ORDER BY id"):
            ij = keep.get(m)
            if ij is None:
                continue
            dv, xv = self._decode(m, first, n, d, x)
            parts_a.append((ij[0], n))
            parts_b.append((ij[1], n))
            deals.append(dv)
            x2s.append(xv)
            when.append((unix, n))
            last[ij[0]] = max(last[ij[0]], unix)
            last[ij[1]] = max(last[ij[1]], unix)

        def rep(parts: list[tuple[Any, int]], dtype: Any) -> np.ndarray:
            if not parts:
                return np.zeros(0, dtype=dtype)
            v, c = zip(*parts)
            return np.repeat(np.asarray(v, dtype=dtype), c)

        x2 = np.concatenate(x2s).astype(np.int32, copy=False) if x2s else \
            np.zeros(0, dtype=np.int32)
        inc = np.zeros((len(players), 3), dtype=np.int64)
        for pid, kind, cnt in self.con.execute(
                "SELECT player, kind, count(*) FROM incidents GROUP BY player, kind"):
            if pid in index and kind in KINDS:
                inc[index[pid], KINDS.index(kind)] = cnt
        return LadderData(
            names=[p.spec for p in players], a=rep(parts_a, np.int32), b=rep(parts_b, np.int32),
            deal=np.concatenate(deals) if deals else np.zeros(0, np.int64),
            score2=score2_of(x2), margin=np.multiply(x2, 0.5, dtype=np.float32), incidents=inc,
            last_time=[iso_time(t) if np.isfinite(t) else None for t in last],
            times=rep(when, np.float64) if times else None)

    def _decode(self, m: int, first: int | None, n: int, d: bytes, x: bytes
                ) -> tuple[np.ndarray, np.ndarray]:
        try:
            return decode(first, n, d, x)
        except LadderError as e:
            raise LadderError(f"ladder database {self.path!r} is corrupt (a chunk of matchup "
                              f"{m}: {e}): restore it from a copy") from None

    def check_pairs(self) -> None:
        """Before a run or an import writes: every row of ``pairs`` has its types and
        ranges, and there are as many rows as the chunks hold pairs (one scan of the table,
        about 0.3 s of CPU per million pairs; ``show`` reads the chunks' arrays only)."""
        from sim.core.limits import MAX_DEAL

        bad = self.con.execute(
            "SELECT matchup, deal, CASE "
            "WHEN typeof(matchup) != 'integer' THEN 'matchup' "
            f"WHEN typeof(deal) != 'integer' OR deal NOT BETWEEN 0 AND {MAX_DEAL} "
            "THEN 'deal' WHEN typeof(chunk) != 'integer' THEN 'chunk' "
            "WHEN typeof(score2) != 'integer' OR score2 NOT IN (0, 1, 2) THEN 'score2' "
            "WHEN typeof(x2) != 'integer' OR abs(x2) > 2147483647 THEN 'x2' END AS bad "
            "FROM pairs WHERE bad IS NOT NULL LIMIT 1").fetchone()
        if bad is not None:
            raise LadderError(f"ladder database {self.path!r}: pairs.{bad[2]} of the pair "
                              f"(matchup {_quote(bad[0])}, deal {_quote(bad[1])}) is not "
                              f"{'0, 1 or 2' if bad[2] == 'score2' else 'an integer in range'}"
                              f": restore it from a copy")
        rows = self.con.execute("SELECT count(*) FROM pairs").fetchone()[0]
        held = self.con.execute("SELECT coalesce(sum(n), 0) FROM chunks").fetchone()[0]
        if rows != held:
            raise LadderError(f"ladder database {self.path!r}: table pairs has {rows:,} rows "
                              f"and the chunks hold {held:,} pairs: restore it from a copy")

    def counts(self) -> dict[str, int]:
        q = self.con.execute
        return {"players": q("SELECT count(*) FROM players WHERE removed = 0").fetchone()[0],
                "chunks": q("SELECT count(*) FROM chunks").fetchone()[0],
                "pairs": q("SELECT coalesce(sum(n), 0) FROM chunks").fetchone()[0]}


def encode(deals: np.ndarray, x2: np.ndarray) -> tuple[bytes, bytes]:
    """A chunk's ``deals`` and ``x2`` BLOBs: ``deals`` empty when they are consecutive from
    ``first_deal`` (every run chunk), else ``<i8``; ``x2`` as ``<i2`` when it fits, else
    ``<i4`` (the width is the BLOB's length over ``n``)."""
    consecutive = deals.size == 0 or (deals[-1] - deals[0] + 1 == deals.size
                                      and bool((np.diff(deals) == 1).all()))
    d = b"" if consecutive else np.ascontiguousarray(deals, "<i8").tobytes()
    small = x2.size == 0 or (int(x2.min()) >= -2**15 and int(x2.max()) < 2**15)
    return d, np.ascontiguousarray(x2, "<i2" if small else "<i4").tobytes()


def decode(first: int | None, n: int, d: bytes, x: bytes) -> tuple[np.ndarray, np.ndarray]:
    """``encode``'s inverse: (deals int64, x2 as stored: int16 or int32) of a chunk of ``n``
    pairs."""
    if not d:
        if n and first is None:
            raise LadderError("no first deal")
        dv = np.arange(first or 0, (first or 0) + n, dtype=np.int64)
    elif len(d) == 8 * n:
        dv = np.frombuffer(d, dtype="<i8").astype(np.int64, copy=False)
    else:
        raise LadderError(f"{len(d)} bytes of deals for {n} pairs")
    if len(x) == 2 * n:
        xv = np.frombuffer(x, dtype="<i2")
    elif len(x) == 4 * n:
        xv = np.frombuffer(x, dtype="<i4")
    else:
        raise LadderError(f"{len(x)} bytes of results for {n} pairs")
    return dv, xv


def iso_time(unix: float) -> str:
    return datetime.datetime.fromtimestamp(unix, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ")


def _canonical(spec: str, quiet: bool = False) -> str:
    """The canonical spec of a strategy spec (one ``ConfigError`` line if unknown)."""
    from strategies.registry import make

    try:
        return make(spec).spec()
    except ShuangkouError as e:
        if quiet:
            return spec
        raise ConfigError(f"player {spec!r}: {e}") from None


def _parameters(spec: str) -> None:
    """The compiled parameters of ``spec`` built once (a weights file read by its own checked
    loader, which refuses a FIFO or a device): a bad one is one line before the kernels
    compile or any chunk runs."""
    from strategies.registry import make

    try:
        make(spec).compiled_params()
    except ShuangkouError as e:
        raise ConfigError(f"player {spec!r}: {e}") from None


def _from_plugin(spec: str) -> bool:
    """Whether ``spec``'s strategy comes from a plug-in (not from this package): only then is
    the ``--plugin`` file stored with the player."""
    from strategies.registry import make

    return type(make(spec)).__module__.partition(".")[0] not in ("strategies", "sim")


def _check_header(path: str) -> None:
    """A file that is not SQLite at all is named as such before sqlite3 sees it."""
    from sim.core.files import open_received

    try:
        with open_received(path, 1 << 50, "ladder database") as f:  # never a FIFO's wait
            head = f.read(100)
    except OSError as e:
        raise LadderError(f"ladder database {path!r} cannot be read: {e.strerror or e}") \
            from None
    if head and not head.startswith(b"SQLite format 3\x00"):
        raise LadderError(f"{path!r} is not a ladder database (not an SQLite file): give "
                          f"another --db")


def _check_version(path: str, app: int, ver: int) -> None:
    if app != APP_ID:
        raise LadderError(f"{path!r} is an SQLite database but not a shuangkou ladder "
                          f"(application id {app:#x}, a ladder's is {APP_ID:#x}): give "
                          f"another --db")
    if ver > SCHEMA:
        raise LadderError(f"ladder database {path!r} has schema version {ver}, newer than "
                          f"this shuangkou reads (up to {SCHEMA}): upgrade shuangkou")
    if ver < 1:
        raise LadderError(f"ladder database {path!r} is corrupt (schema version {ver}): "
                          f"restore it from a copy")


# --- a received database: checked before anything of it is used ----------------------------
# A ladder file may come from someone else. It names plug-ins but never loads them (``run``
# takes them from --plugin), and it never runs SQL of its own: every connection has
# ``trusted_schema`` off, and a file whose schema is not exactly the one ``_SCHEMA_SQL`` writes
# (a trigger, a view, a table, an index or a column more, fewer or changed) is refused before
# any statement touches its tables; then ``quick_check`` (the b-trees whole) and every column's
# type and range (``_COLUMNS``), so a wrong value is one line naming the table, the row and
# the column, never a traceback later.
_REFERENCE: list[tuple[str, str, str, str]] = []
_STAT_TABLES = ("sqlite_stat1", "sqlite_stat4")  # ANALYZE's statistics: harmless, allowed


def _norm(sql: str | None) -> str:
    return " ".join((sql or "").split())


def _reference_schema() -> list[tuple[str, str, str, str]]:
    """``(type, name, tbl_name, sql)`` of every schema entry a new ladder has."""
    if not _REFERENCE:
        con = sqlite3.connect(":memory:")
        try:
            for statement in _SCHEMA_SQL.split(";"):
                if statement.strip():
                    con.execute(statement)
            _REFERENCE.extend(sorted((t, n, tb, _norm(q)) for t, n, tb, q in con.execute(
                "SELECT type, name, tbl_name, sql FROM sqlite_master")))
        finally:
            con.close()
    return _REFERENCE


def _check_schema(path: str, con: sqlite3.Connection) -> None:
    """The file's schema is the one this code writes (no trigger, view, table, index or
    column of anyone else's), else one ``LadderError`` line naming the first difference."""
    got = {}
    for t, n, tb, q in con.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"):
        if not all(isinstance(v, str) for v in (t, n, tb)):
            raise LadderError(f"ladder database {path!r} is corrupt (a schema entry of "
                              f"non-text name): restore it from a copy")
        if t == "table" and n in _STAT_TABLES:
            continue
        got[(t, n)] = (tb, _norm(q))
    want = {(t, n): (tb, q) for t, n, tb, q in _reference_schema()}
    way = "a ladder database never runs SQL of its own: use a copy made by shuangkou"
    for (t, n), (tb, q) in sorted(got.items()):
        if (t, n) not in want:
            on = f" on table {tb!r}" if t in ("trigger", "index") else ""
            art = "an" if t[:1] in "aeiou" else "a"
            raise LadderError(f"ladder database {path!r} has {art} {t} {n!r}{on} that a ladder "
                              f"does not have: refused ({way})")
        if want[(t, n)] != (tb, q):
            raise LadderError(f"ladder database {path!r}: {t} {n!r} is not defined as a "
                              f"ladder's ({_quote(q, 120)}): refused ({way})")
    for t, n in sorted(set(want) - set(got), key=lambda k: (k[0] == "index", k)):
        raise LadderError(f"ladder database {path!r} lacks the {t} {n!r} of a ladder: "
                          f"restore it from a copy")


def _quote(text: Any, most: int = 80) -> str:
    """``repr`` of a value from the file, cut short with its length (one readable line)."""
    r = repr(text)
    if len(r) <= most:
        return r
    size = f"{len(text):,} characters" if isinstance(text, (str, bytes)) else "long"
    return f"{r[:most - 20]}… ({size})"


def _check_integrity(path: str, con: sqlite3.Connection) -> None:
    """``PRAGMA quick_check``: every page and b-tree of the file whole (a truncated or
    overwritten file is one line here, before any of its rows is read)."""
    rows = [r[0] for r in con.execute("PRAGMA quick_check(3)")]
    if rows != ["ok"]:
        raise LadderError(f"ladder database {path!r} is corrupt (quick_check: "
                          f"{_quote('; '.join(map(str, rows)), 160)}): restore it from a copy")


_INT, _REAL = "typeof({c}) = 'integer'", "typeof({c}) IN ('integer', 'real')"
_TEXT, _BLOB = "typeof({c}) = 'text' AND length({c}) <= {t}", "typeof({c}) = 'blob'"
_OR_NULL = "({c} IS NULL OR {x})"
# every column of every table the product reads: (column, SQL condition it must meet, what
# was expected). ``{c}`` is the column; ``{t}``, ``{s}``, ``{d}``, ``{n}``: MAX_TEXT,
# MAX_SPEC, MAX_DEAL, MAX_CHUNK_N. The ``pairs`` table is for SQL users (the product reads
# the chunks' arrays): its millions of rows are not scanned on every open.
_COLUMNS: dict[str, list[tuple[str, str, str]]] = {
    "players": [
        ("id", _INT + " AND {c} > 0", "a positive integer"),
        ("spec", "typeof({c}) = 'text' AND length({c}) BETWEEN 1 AND {s}",
         "text of 1 … {s} characters"),
        ("plugin", _OR_NULL.replace("{x}", _TEXT), "NULL or text (a file name)"),
        ("added", _TEXT, "text (an ISO time)"),
        ("removed", _INT + " AND {c} IN (0, 1)", "0 or 1")],
    "matchups": [
        ("id", _INT + " AND {c} > 0", "a positive integer"),
        ("a", _INT + " AND {c} IN (SELECT id FROM players)", "a player's id"),
        ("b", _INT + " AND {c} IN (SELECT id FROM players) AND {c} > a",
         "a player's id above a's"),
        ("next_deal", _INT + " AND {c} BETWEEN 0 AND {d}", "an integer 0 … 2**63-1")],
    "chunks": [
        ("id", _INT + " AND {c} > 0", "a positive integer"),
        ("matchup", _INT + " AND {c} IN (SELECT id FROM matchups)", "a matchup's id"),
        ("n", _INT + " AND {c} BETWEEN 0 AND {n}", "a pair count 0 … {n}"),
        ("first_deal", _OR_NULL.replace("{x}", _INT + " AND {c} BETWEEN 0 AND {d} - n"),
         "NULL or a deal number 0 … 2**63-1 - n"),
        ("time", _TEXT, "text (an ISO time)"),
        ("unix", _REAL + " AND {c} BETWEEN 0 AND 1e11", "seconds since 1970, 0 … 1e11"),
        ("source", _TEXT, "text ('run' or 'import:RUNID')"),
        ("source_chunk", _OR_NULL.replace("{x}", _INT + " AND {c} >= 0"),
         "NULL or an integer >= 0"),
        ("seconds", _OR_NULL.replace("{x}", _REAL + " AND {c} BETWEEN 0 AND 1e9"),
         "NULL or seconds 0 … 1e9"),
        ("deals", _BLOB + " AND (length({c}) = 0 OR length({c}) = 8 * n) AND "
         "(length({c}) > 0 OR n = 0 OR first_deal IS NOT NULL)",
         "a BLOB of 8 bytes a pair, or empty with first_deal set"),
        ("x2", _BLOB + " AND length({c}) IN (2 * n, 4 * n)", "a BLOB of 2 or 4 bytes a pair")],
    "incidents": [
        ("id", _INT, "an integer"),
        ("player", _INT + " AND {c} IN (SELECT id FROM players)", "a player's id"),
        ("kind", "{c} IN ('crash', 'timeout', 'illegal')", "'crash', 'timeout' or 'illegal'"),
        ("matchup", _OR_NULL.replace("{x}", _INT), "NULL or an integer"),
        ("deal", _OR_NULL.replace("{x}", _INT), "NULL or an integer"),
        ("time", _TEXT, "text (an ISO time)"),
        ("message", _TEXT, "text")],
    "imports": [(c, _TEXT, "text") for c in ("source", "path", "config_hash", "time")],
}
_META_KEYS = ("application", "schema", "seed", "rules", "created")


def _check_columns(path: str, con: sqlite3.Connection) -> None:
    """Every value of every column the product reads has its type and range (one scan per
    table, a few thousand rows for millions of pairs), else one line naming the table, the
    row, the column and what was expected."""
    from sim.core.limits import MAX_DEAL

    fill = {"t": MAX_TEXT, "s": MAX_SPEC, "d": MAX_DEAL, "n": MAX_CHUNK_N}
    n_players = con.execute("SELECT count(*) FROM players").fetchone()[0]
    if n_players > MAX_PLAYERS:
        raise LadderError(f"ladder database {path!r}: table players has {n_players:,} rows, "
                          f"more than the {MAX_PLAYERS:,} a ladder may hold")
    for table, cols in _COLUMNS.items():
        cases = " ".join(f"WHEN NOT coalesce({cond.format(c=c, **fill)}, 0) THEN {k}"
                         for k, (c, cond, _) in enumerate(cols))
        key = "rowid" if table != "imports" else "source"
        row = con.execute(f"SELECT {key}, bad FROM (SELECT {key}, CASE {cases} END AS bad "
                          f"FROM {table}) WHERE bad IS NOT NULL LIMIT 1").fetchone()
        if row is not None:
            col, _, expected = cols[row[1]]
            value = con.execute(f"SELECT typeof({col}), {col} FROM {table} WHERE {key} = ?",
                                (row[0],)).fetchone()
            shown = (f"a BLOB of {len(value[1]):,} bytes" if value[0] == "blob" and
                     col not in ("deals", "x2") else
                     f"{len(value[1]):,} bytes" if value[0] == "blob" else
                     f"{value[0]} {_quote(value[1])}")
            raise LadderError(f"ladder database {path!r}: {table}.{col} of row "
                              f"{_quote(row[0])} is {shown}, expected "
                              f"{expected.format(**fill)}: restore it from a copy")
    rows = con.execute("SELECT key, typeof(value), value FROM meta").fetchall()
    keys = [r[0] for r in rows]
    for k, kind, v in rows:
        if k not in _META_KEYS:
            raise LadderError(f"ladder database {path!r}: meta has the key {_quote(k)}, not "
                              f"one of a ladder's ({', '.join(_META_KEYS)}): refused")
        if kind != "text" or len(v) > (1 << 16):
            raise LadderError(f"ladder database {path!r}: meta.{k} is {kind}"
                              f"{'' if kind != 'text' else ' of ' + format(len(v), ',')}"
                              f"{' characters' if kind == 'text' else ''}, expected text "
                              f"(at most 65,536 characters): restore it from a copy")
    for k in _META_KEYS:
        if k not in keys:
            raise LadderError(f"ladder database {path!r} is corrupt (its meta table lacks "
                              f"{k!r}): restore it from a copy")


def _meta_values(path: str, meta: dict[str, str]) -> tuple[int, dict[str, int]]:
    """The ladder's seed and rules from its (type-checked) meta table."""
    from sim.core.files import decode_json
    from sim.core.limits import MAX_SEED
    from sim.rules import Rules

    if meta["application"] != "shuangkou-ladder" or meta["schema"] != str(SCHEMA):
        raise LadderError(f"ladder database {path!r}: meta.application/meta.schema are "
                          f"{_quote(meta['application'])}/{_quote(meta['schema'])}, expected "
                          f"'shuangkou-ladder'/'{SCHEMA}': restore it from a copy")
    seed = meta["seed"]
    if not (seed.isascii() and seed.isdigit() and len(seed) <= 20 and int(seed) <= MAX_SEED):
        raise LadderError(f"ladder database {path!r}: meta.seed is {_quote(seed)}, expected "
                          f"an integer 0 … 2**64-1: restore it from a copy")
    import msgspec

    # every variant, each an integer, nothing else (msgspec names the field that fails)
    schema = msgspec.defstruct("LadderRules", [(n, int) for n in Rules.names()],
                               forbid_unknown_fields=True)
    where = f"ladder database {path!r}: meta.rules"
    try:
        rules = msgspec.structs.asdict(decode_json(meta["rules"], schema, where=where))
    except ValueError as e:
        raise LadderError(f"{e}: restore it from a copy") from None
    try:
        Rules.from_dict(rules)  # each variant's range
    except ShuangkouError as e:
        raise LadderError(f"{where}: {e}: restore it from a copy") from None
    return int(seed), rules


def check_received_specs(path: str, specs: Sequence[str]) -> None:
    """A spec stored in the database naming a module (``module:Class``, nested specs too) is
    refused unless that module is imported already (by --plugin), as a config's is: reading a
    spec never imports anything. This package's own modules are named freely."""
    pattern = re.compile(r"([A-Za-z_][\w.]*):[A-Za-z_]")
    for spec in specs:
        for m in pattern.findall(spec):
            if m not in sys.modules and m.partition(".")[0] not in ("sim", "strategies"):
                raise LadderError(f"ladder database {path!r}: player {_quote(spec)} names "
                                  f"module {m!r}, and a ladder database does not load "
                                  f"modules: load it with --plugin {m}")


def _connect(path: str, writable: bool) -> sqlite3.Connection:
    if writable:
        con = sqlite3.connect(path, timeout=BUSY_TIMEOUT, isolation_level=None,
                              check_same_thread=False)
        _distrust(con)
        con.execute("PRAGMA journal_mode=WAL")
        con.execute("PRAGMA synchronous=NORMAL")
    else:
        from urllib.parse import quote

        uri = f"file:{quote(os.path.abspath(path))}?mode=ro"
        con = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT, isolation_level=None,
                              check_same_thread=False)
        _distrust(con)
        try:
            con.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.OperationalError:  # WAL without write access to -shm: a snapshot
            con.close()
            con = sqlite3.connect(uri + "&immutable=1", uri=True, isolation_level=None,
                                  check_same_thread=False)
        _distrust(con)
    con.execute("PRAGMA foreign_keys=ON")
    return con


def _distrust(con: sqlite3.Connection) -> None:
    """No SQL function with side effects may be called from the file's own schema (a view,
    a trigger, a CHECK or a default: ``trusted_schema``), and no extension loaded; set before
    the first statement reads the schema (``_check_schema`` then refuses any trigger or view
    a ladder does not have)."""
    con.execute("PRAGMA trusted_schema=OFF")
    with contextlib.suppress(AttributeError, sqlite3.Error):
        con.enable_load_extension(False)


def _create(con: sqlite3.Connection, seed: int, rules: dict[str, int]) -> None:
    from sim.rules import Rules

    full = Rules.from_dict(rules).to_dict()
    iso, _ = _now()
    con.execute("BEGIN IMMEDIATE")
    try:
        for statement in _SCHEMA_SQL.split(";"):
            if statement.strip():
                con.execute(statement)
        con.executemany("INSERT INTO meta(key, value) VALUES (?, ?)", [
            ("application", "shuangkou-ladder"), ("schema", str(SCHEMA)), ("seed", str(seed)),
            ("rules", json.dumps(full, sort_keys=True)), ("created", iso)])
        con.execute(f"PRAGMA application_id = {APP_ID}")
        con.execute(f"PRAGMA user_version = {SCHEMA}")
        con.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            con.execute("ROLLBACK")
        raise


# --- the run lock -----------------------------------------------------------------------
@contextlib.contextmanager
def run_lock(path: str, what: str = "ladder run") -> Iterator[None]:
    """Hold ``PATH.lock`` (an ``flock``: the kernel drops it when the holder dies) while a
    run or an import writes the ladder; a second one gets one line naming the holder."""
    import fcntl

    lock = path + LOCK_SUFFIX
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError as e:
        raise LadderError(f"lock file {lock!r} cannot be opened ({e.strerror}): remove it, "
                          f"then run again") from None
    deadline = time.monotonic() + 3.0
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except OSError:
            holder = _read_holder(fd)
            pid = holder.get("pid")
            # a holder killed a moment ago: its forked workers end within a second or two
            if isinstance(pid, int) and not _alive(pid) and \
                    holder.get("host") == socket.gethostname() and time.monotonic() < deadline:
                time.sleep(0.1)
                continue
            os.close(fd)
            who = (f"pid {holder.get('pid', '?')} on {holder.get('host', '?')}, "
                   f"{holder.get('what', 'a ladder run')} since {holder.get('since', '?')}")
            raise LadderError(f"ladder database {path!r} is being written by another process "
                              f"({who}): wait for it to finish, or stop it") from None
    try:
        info = {"pid": os.getpid(), "host": socket.gethostname(), "what": what,
                "since": _now()[0]}
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(info) + "\n").encode(), 0)
        yield
    finally:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
        os.close(fd)


def _read_holder(fd: int) -> dict[str, Any]:
    try:
        d = json.loads(os.pread(fd, 4096, 0).decode() or "{}")
        return d if isinstance(d, dict) else {}
    except (OSError, ValueError):
        return {}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


# --- a run ------------------------------------------------------------------------------
def _classify(e: StrategyError) -> str:
    text = str(e)
    if re.search(r" took [\d.]+ s in \w+, over the ", text):
        return "timeout"
    if re.search(r"returned (an|the) illegal", text):
        return "illegal"
    return "crash"


def _culprit(e: BaseException, specs: Sequence[str]) -> int | None:
    m = re.search(r"strategy '((?:[^'\\]|\\.)*)'", str(e))
    if m is None:
        m = re.search(r'strategy "([^"]*)"', str(e))
    if m is None:
        return None
    name = m.group(1)
    return specs.index(name) if name in specs else None


def run(lad: Ladder, pairs: int, chunk: int | None = None, jobs: int = 1,
        backend: str = "auto", scheduler: str = "", matchup: tuple[str, str] | None = None,
        timeout: float = 0.0, progress: bool | None = None, plugins: Sequence[str] = (),
        stop_after: int | None = None, force_jobs: bool = False,
        say: Any = None) -> dict[str, Any]:
    """Play ``pairs`` more duplicate pairs, in chunks of ``chunk`` pairs (None: sized by time,
    ``CHUNK_SECONDS``), each matchup chosen by ``sim.analysis.ladder.schedule`` (or
    ``matchup``: a pair of specs); every finished chunk is committed at once. With a fixed
    ``chunk`` and one job the pairs played depend only on the database (a killed run continued
    plays what an uninterrupted one would). ``stop_after``: testing hook, stop after this
    many chunks."""
    from sim.analysis import ladder as model
    from sim.tournament import run as tm
    from sim.tournament.chunks import DEAL_VALUES, Chunk, DealValues, tally_from_json
    from sim.tournament.config import TournamentConfig
    from sim.tournament.standings import Progress, Standings
    from strategies.registry import load_plugins

    say = say or (lambda text: print(text, file=sys.stderr))
    players = lad.players()
    if len(players) < 2:
        raise ConfigError(f"ladder {lad.path!r} has {len(players)} player(s): add at least two "
                          f"with `shuangkou ladder add SPEC ...`")
    specs = [p.spec for p in players]
    from sim.core.limits import MAX_DEAL

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
    # the database names plug-ins, it never loads them: a module a spec names must be loaded
    # already (--plugin), and a plug-in player's file comes from --plugin, never from the file
    check_received_specs(lad.path, specs)
    mods = tuple(dict.fromkeys(plugins))
    load_plugins(mods, [os.getcwd()])
    for p in players:  # every player must be playable here before anything runs
        try:
            _canonical(p.spec)
        except ConfigError as e:
            named = [m for m in (p.plugin or "").split(os.pathsep) if m]
            if "unknown strategy" not in str(e):
                raise  # its spec's own error (a parameter, a weights file): as it is
            if not named:
                raise ConfigError(f"{e} (a plug-in player needs its file: pass --plugin FILE "
                                  f"to `ladder run`)") from None
            flags = " ".join(f"--plugin {shlex.quote(m)}" for m in named)
            raise ConfigError(f"player {p.spec!r} comes from a plug-in, and a ladder database "
                              f"names plug-ins but never loads them: add {_quote(flags, 300)} "
                              f"to `ladder run` (the file ladder add was given; check it is "
                              f"the bot you mean), or `shuangkou ladder remove "
                              f"{shlex.quote(p.spec)}`") from None
    for p in players:  # and its parameters readable (a weights file), before any compiling
        _parameters(p.spec)
    forced = None
    if matchup is not None:
        i, j = (specs.index(lad.player(s).spec) for s in matchup)
        if i == j:
            raise ConfigError(f"--matchup {','.join(matchup)!r} names the same player twice: "
                              f"give two different players")
        forced = (min(i, j), max(i, j))
    all_pairs = [(i, j) for i in range(len(specs)) for j in range(i + 1, len(specs))]
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
                                   if forced else cfg.players)
    with run_lock(lad.path):
        lad.check_pairs()
        data = lad.data(times=False)  # the scheduler needs no times
        mids: dict[tuple[int, int], int] = {}
        with lad.transaction() as con:
            for i, j in ([forced] if forced else all_pairs):
                mids[(i, j)] = lad.matchup(players[i].id, players[j].id, con)
        nxt = lad.next_deals()
        last = max((nxt.get(m, 0) for m in mids.values()), default=0)
        if last + pairs - 1 > MAX_DEAL:
            raise LadderError(f"ladder database {lad.path!r}: a matchup's next_deal is "
                              f"{last:,}, and {pairs:,} more pairs would go past the last deal "
                              f"number 2**63-1")
        backend_now = tm.resolve_backend(cfg)
        path = tuple(dict.fromkeys([os.getcwd(), *sys.path]))
        state = _RunState(data, model)
        lock = threading.Lock()
        left = [pairs]
        order = [0]
        sent: dict[int, tuple[int, int, int, int]] = {}  # chunk index: (i, j, first, n)

        def tasks() -> Iterator[Any]:
            queue: list[tuple[int, int]] = []
            while True:
                with lock:
                    if left[0] <= 0:
                        return
                    if forced:
                        ij = forced
                    else:
                        if not queue:
                            queue = state.schedule(max(1, cfg.jobs), chunk)
                        if not queue:
                            return
                        ij = tuple(sorted(queue.pop(0)))
                    if ij not in mids:  # (schedule() names matchups among these players)
                        raise LadderError(f"schedule() returned {ij!r}, not a matchup of "
                                          f"{len(specs)} players")
                    m = mids[ij]
                    n = min(chunk or state.size(m), left[0])
                    left[0] -= n
                    first = nxt.get(m, 0)
                    nxt[m] = first + n
                    k = order[0]
                    order[0] += 1
                    sent[k] = (ij[0], ij[1], first, n)
                yield tm.Task(Chunk(k, m, first, n), cfg.seed, ij[0], ij[1], specs[ij[0]],
                              specs[ij[1]], True, cfg.rules, cfg.timeout, mods, path, False,
                              0, 0, "", 1, False, True)

        live = Standings(specs, all_pairs)
        live_index = {ij: k for k, ij in enumerate(all_pairs)}
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
                for res in execute(tasks()):
                    i, j, first, n = sent.pop(res.chunk.index)
                    tally = tally_from_json(res.tally)
                    x2 = DealValues.from_dict(res.tally[DEAL_VALUES]).values
                    deals = np.arange(first, first + n, dtype=np.int64)
                    if x2.size != n:
                        raise LadderError(f"chunk of {specs[i]} vs {specs[j]} returned "
                                          f"{x2.size} pair results for {n} pairs")
                    with lad.transaction() as con:
                        lad.insert_chunk(con, mids[(i, j)], deals, x2, seconds=res.seconds)
                        if kill_at == done + 1:
                            os.kill(os.getpid(), 9)
                    with lock:
                        state.add(i, j, deals, x2)
                        state.timed(mids[(i, j)], n, res.seconds)
                    done += 1
                    committed_pairs += n
                    tally.pop(DEAL_VALUES, None)
                    live.add(live_index[(i, j)], tally)
                    bar.update(n)
                    if stop_after is not None and done >= stop_after:
                        break
        except StrategyError as e:
            k = _culprit(e, specs)
            if k is not None:
                m = re.search(r"deal (\d+)", str(e))
                pair = next(((i, j) for (i, j, _, _) in sent.values() if k in (i, j)), forced)
                with contextlib.suppress(ShuangkouError, sqlite3.Error):
                    _ensure_open(lad)
                    lad.record_incident(players[k].id, _classify(e), str(e),
                                        mids.get(pair) if pair else None,
                                        int(m.group(1)) if m else None)
                # the scheduler would pick it again: say how to take it off the ladder
                raise StrategyError(f"{e}; counted in `ladder show`, and `shuangkou ladder "
                                    f"remove {shlex.quote(specs[k])}` stops scheduling it") \
                    from None
            raise
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
    wall = time.perf_counter() - t0
    return {"chunks": done, "pairs": committed_pairs, "seconds": wall, "backend": backend_now}


def _ensure_open(lad: Ladder) -> None:
    try:
        lad.con.execute("SELECT 1")
    except sqlite3.ProgrammingError:  # closed
        lad.reopen()


class _RunState:
    """The ladder's pairs during a run (the stored ones and this run's), for ``schedule``."""

    def __init__(self, data: Any, model: Any) -> None:
        self.data, self.model = data, model
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
        t0 = time.perf_counter()
        fit = self.model.fit(data)
        self.fit_seconds = time.perf_counter() - t0
        sizes = [self.size(m) for m in self.rate] or [CHUNK_FIRST]
        pairs = chunk or int(np.median(sizes))
        return [(int(i), int(j)) for i, j in self.model.schedule(data, fit, k, pairs=pairs)]


# --- import -------------------------------------------------------------------------------
def import_folder(lad: Ladder, folder: str) -> dict[str, Any]:
    """Add a tournament results folder's pairs (data only: nothing it names is imported).
    The same folder twice changes nothing (its run id and chunk indices are the key); its
    seed and rules must be the ladder's; a pair whose deal the matchup already holds is
    skipped. All of a folder's chunks go in one transaction."""
    from sim.tournament.chunks import DEAL_VALUES, pair_results, plan_chunks
    from sim.tournament.results import (
        checked_chunks,
        deals_path,
        read_config,
        read_meta,
        read_run_id,
        read_table_bytes,
        read_tally_cols,
    )

    if not os.path.isdir(folder):
        raise ConfigError(f"{folder!r} is not a tournament results folder (not a folder)")
    cfg = read_config(folder)
    if not cfg.duplicate:
        raise ConfigError(f"{folder!r} was played without duplicate (duplicate = false): the "
                          f"ladder keeps duplicate pairs only")
    if cfg.seed != lad.seed:
        raise ConfigError(f"{folder!r} was played with seed {cfg.seed}, the ladder's seed is "
                          f"{lad.seed}: its deal numbers are other cards, so its pairs cannot "
                          f"share deals with the ladder's (start a ladder with --seed "
                          f"{cfg.seed} in another --db)")
    rules = dict(cfg.rules)
    if rules != lad.rules:
        diff = "; ".join(f"{k}: {lad.rules.get(k)!r} (ladder) vs {rules.get(k)!r} (folder)"
                         for k in sorted(set(rules) | set(lad.rules))
                         if rules.get(k) != lad.rules.get(k))
        raise ConfigError(f"{folder!r} was played with other rules than the ladder's ({diff}): "
                          f"its pairs cannot be rated together with the ladder's")
    lad.check_pairs()
    source = "import:" + (read_run_id(folder) or cfg.hash())
    ms = cfg.matchups()
    chunks_done = {int(r[0]) for r in lad.con.execute(
        "SELECT source_chunk FROM chunks WHERE source = ?", (source,))}
    todo = []
    for path, chunk, tally in checked_chunks(folder, cfg, plan_chunks(cfg), stats=True):
        if chunk.index in chunks_done:
            continue
        vals = tally.get(DEAL_VALUES)
        if vals is not None:
            x2 = vals.values
        else:
            cols = read_tally_cols(path)
            if cols is None:
                cols = _table_cols(path, read_meta(path), deals_path, read_table_bytes)
            x2 = pair_results(cols, True)
        if x2.size < chunk.n or tally["pairs"].n != chunk.n:
            raise ConfigError(f"chunk file {path!r} is corrupt ({x2.size} per-pair results "
                              f"and {tally['pairs'].n} pairs in its statistics for "
                              f"{chunk.n} pairs): delete it, or import another folder")
        todo.append((chunk, np.asarray(x2[:chunk.n], dtype=np.int64)))
    new_pairs = skipped = 0
    with run_lock(lad.path, "ladder import"), lad.transaction() as con:
        ids = {}
        iso, unix = _now()
        for spec in cfg.players:
            row = con.execute("SELECT id FROM players WHERE spec = ?", (spec,)).fetchone()
            ids[spec] = int(row[0]) if row else int(con.execute(
                "INSERT INTO players(spec, plugin, added) VALUES (?, NULL, ?)",
                (spec, iso)).lastrowid)
        con.execute("INSERT OR IGNORE INTO imports(source, path, config_hash, time) "
                    "VALUES (?, ?, ?, ?)", (source, os.path.abspath(folder), cfg.hash(), iso))
        for chunk, x2 in todo:
            a, b = ms[chunk.matchup]
            ia, ib = ids[cfg.players[a]], ids[cfg.players[b]]
            if ia > ib:  # the ladder's side A is the player with the lower id
                ia, ib, x2 = ib, ia, -x2
            m = lad.matchup(ia, ib, con)
            deals = np.arange(chunk.first, chunk.first + chunk.n, dtype=np.int64)
            have = np.fromiter((r[0] for r in con.execute(
                "SELECT deal FROM pairs WHERE matchup = ? AND deal BETWEEN ? AND ?",
                (m, int(deals[0]), int(deals[-1])))), dtype=np.int64) if deals.size else \
                np.zeros(0, np.int64)
            if have.size:
                new = ~np.isin(deals, have)
                skipped += int((~new).sum())
                deals, x2 = deals[new], x2[new]
            lad.insert_chunk(con, m, deals, x2, source=source, source_chunk=chunk.index,
                             when=(iso, unix))
            new_pairs += int(deals.size)
    return {"source": source, "chunks": len(todo), "pairs": new_pairs, "skipped": skipped,
            "players": list(cfg.players)}


def _table_cols(path: str, meta: dict[str, Any], deals_path: Any, read_table_bytes: Any
                ) -> dict[str, np.ndarray]:
    """A chunk's ``orientation``, ``settle0``, ``settle1`` from its per-deal table."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    dpath = deals_path(path)
    data = read_table_bytes(dpath, path, meta)
    try:
        t = pq.read_table(pa.BufferReader(data), columns=["orientation", "settle0", "settle1"])
        return {c: t.column(c).to_numpy() for c in t.column_names}
    except Exception as e:  # noqa: BLE001 - a torn or foreign file: one line
        raise ConfigError(f"per-deal file {dpath!r} is corrupt ({type(e).__name__}: {e}): "
                          f"the folder cannot be imported") from None


# --- export -------------------------------------------------------------------------------
def export_parquet(lad: Ladder, out: str, anchor: str | None = None,
                   anchor_elo: float = 0.0) -> int:
    """Every stored pair (removed players' too) as a Parquet file: ``matchup, a, b, deal,
    score2, margin, x2, time, chunk, source``; returns the number of rows. The file's
    metadata key ``shuangkou.ladder.ratings`` holds the rating list of the active players
    (``show --json``'s ``anchor``, ``anchor_elo`` and per player ``player``, ``status``,
    ``rating``, ``se``, ``lo``, ``hi``), ``anchor`` held at ``anchor_elo``."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ConfigError("ladder export needs pyarrow: pip install 'shuangkou[parquet]'") \
            from None
    specs = dict(lad.con.execute("SELECT id, spec FROM players"))
    ms = {m: (a, b) for m, a, b in lad.con.execute("SELECT id, a, b FROM matchups")}
    cols: dict[str, list[Any]] = {k: [] for k in ("matchup", "deal", "x2", "chunk", "unix")}
    sources: list[str] = []
    src_index: dict[str, int] = {}
    src_codes = []
    for cid, m, first, n, unix, src, d, x in lad.con.execute(
            "SELECT id, matchup, first_deal, n, unix, source, deals, x2 FROM chunks "
            "WHERE n > 0 ORDER BY id"):
        dv, xv = lad._decode(m, first, n, d, x)
        cols["matchup"].append(np.full(n, m, np.int64))
        cols["deal"].append(dv)
        cols["x2"].append(xv)
        cols["chunk"].append(np.full(n, cid, np.int64))
        cols["unix"].append(np.full(n, unix))
        if src not in src_index:
            src_index[src] = len(sources)
            sources.append(src)
        src_codes.append(np.full(n, src_index[src], np.int32))
    cat = {k: np.concatenate(v) if v else np.zeros(0) for k, v in cols.items()}
    matchup = cat["matchup"].astype(np.int64)
    x2 = cat["x2"].astype(np.int32)
    names = sorted(specs)
    pos = {pid: k for k, pid in enumerate(names)}
    mid = np.array(sorted(ms), dtype=np.int64)  # ids as stored: looked up, never an index
    a_of = np.array([pos[ms[m][0]] for m in mid.tolist()], np.int32)
    b_of = np.array([pos[ms[m][1]] for m in mid.tolist()], np.int32)
    at = np.searchsorted(mid, matchup) if mid.size else np.zeros(0, np.int64)
    dict_names = pa.array([specs[p] for p in names], pa.string())
    table = pa.table({
        "matchup": pa.array(matchup),
        "a": pa.DictionaryArray.from_arrays(pa.array(a_of[at]), dict_names),
        "b": pa.DictionaryArray.from_arrays(pa.array(b_of[at]), dict_names),
        "deal": pa.array(cat["deal"].astype(np.int64)),
        "score2": pa.array(score2_of(x2)),
        "margin": pa.array(x2 / 2.0),
        "x2": pa.array(x2),
        "time": pa.array((cat["unix"] * 1e6).astype("datetime64[us]"), pa.timestamp("us",
                                                                                    tz="UTC")),
        "chunk": pa.array(cat["chunk"].astype(np.int64)),
        "source": pa.DictionaryArray.from_arrays(
            pa.array(np.concatenate(src_codes) if src_codes else np.zeros(0, np.int32)),
            pa.array(sources, pa.string())),
    })
    from sim.analysis import ladder as model

    data = lad.data(times=False)
    listed = model.show_json(data, model.fit(data, anchor=anchor, anchor_elo=anchor_elo))
    ratings = {"anchor": listed["anchor"], "anchor_elo": listed["anchor_elo"],
               "players": [{k: p[k] for k in ("player", "status", "rating", "se", "lo", "hi")}
                           for p in listed["players"]]}
    table = table.replace_schema_metadata({"shuangkou.ladder.ratings": json.dumps(ratings)})
    from sim.tournament.results import atomic_write

    folder = os.path.dirname(os.path.abspath(out))
    os.makedirs(folder, exist_ok=True)
    atomic_write(os.path.abspath(out), lambda f: pq.write_table(table, f, compression="zstd"))
    return table.num_rows
