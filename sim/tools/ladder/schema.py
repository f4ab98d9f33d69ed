"""The ladder database's schema and its fixed values: the limits (docs/ladder.md "Limits"),
the tables' SQL, a chunk's arrays as BLOBs (``encode``/``decode``) and the times written.
"""

from __future__ import annotations

import datetime
import os
import time

import numpy as np

from sim.errors import LadderError

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

SCHEMA_SQL = """
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


def utc_now() -> tuple[str, float]:
    t = time.time()
    iso = datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ")
    return iso, t


def score2_of(x2: np.ndarray) -> np.ndarray:
    """Pair results in half points: 2 won (``x2 > 0``), 1 drawn, 0 lost."""
    x2 = np.asarray(x2)
    return np.add(x2 > 0, x2 >= 0, dtype=np.int8)  # 2 + 0, 1 + 1 … : (x2 > 0) + (x2 >= 0)


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
