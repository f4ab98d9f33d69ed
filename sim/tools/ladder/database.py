"""An open ladder database (``Ladder``): its connection, transactions, players, matchups and
chunks; creating a new one; the run lock a run or an import holds.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import socket
import sqlite3
import time
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from sim.analysis.ladder import LadderData
from sim.core.limits import MAX_DEAL
from sim.errors import ConfigError, LadderError, ShuangkouError
from sim.rules import Rules
from sim.tools.ladder.checks import (
    META_BOTS,
    check_columns,
    check_header,
    check_integrity,
    check_schema,
    check_version,
    meta_bots,
    meta_values,
    quote_value,
)
from sim.tools.ladder.schema import (
    APP_ID,
    KINDS,
    SCHEMA,
    SCHEMA_SQL,
    decode,
    encode,
    iso_time,
    score2_of,
    utc_now,
)
from strategies.registry import make, team_members

BUSY_TIMEOUT = 10.0  # seconds a statement waits for another process's write transaction
LOCK_SUFFIX = ".lock"


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

    @property
    def team(self) -> bool:
        """Whether this entrant is a team ``a+b`` of two players (docs/ladder.md "Partners")."""
        return len(team_members(self.spec)) == 2


class Ladder:
    """An open ladder database. ``Ladder.open(path)`` checks it; ``create=True`` makes a new
    one (with ``seed`` and ``rules``) where there is no file."""

    def __init__(self, path: str, con: sqlite3.Connection, writable: bool) -> None:
        self.path = path
        self.con = con
        self.writable = writable
        meta = dict(con.execute("SELECT key, value FROM meta"))
        self.seed, self.rules = meta_values(path, meta)

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
            check_header(path)
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
                    check_version(path, app, ver)
                    check_schema(path, con)
                    if writable:  # before anything is written (a reader meets SQLite's
                        check_integrity(path, con)  # own "malformed" on a torn page)
                    check_columns(path, con)
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

    def entrants(self) -> list[Player]:
        """The active entrants in id order: the active players, and the active teams whose
        two players are both active (what ``data`` rates)."""
        players = self.players()
        plain = {p.spec for p in players if not p.team}
        return [p for p in players if not p.team
                or (all(m in plain for m in team_members(p.spec))
                    and len(set(team_members(p.spec))) == 2)]

    def team_spec(self, text: str) -> str:
        """The stored spec of the mixed team ``text`` (``a+b``): its two players as the
        ladder stores them, the one added first in front; one line for a team naming a player
        not on the ladder, the same player twice, or a single player."""
        try:
            members = team_members(text)
        except ConfigError as e:
            raise ConfigError(f"--teams: {e}") from None
        if len(members) != 2:
            raise ConfigError(f"team {text!r} is not a team: give two players, a+b")
        got = []
        for m in members:
            try:
                p = self.player(m)
            except ConfigError:
                raise ConfigError(f"team {text!r} names {m!r}, not a player of ladder "
                                  f"{self.path!r}: add it first with `shuangkou ladder add "
                                  f"SPEC`") from None
            if p.team:
                raise ConfigError(f"team {text!r}: {m!r} is a team; a team is two players")
            got.append(p)
        if got[0].id == got[1].id:
            raise ConfigError(f"team {text!r} is {got[0].spec!r} partnered with itself, its "
                              f"mirror team, which is the player {got[0].spec!r} on the "
                              f"ladder: name teams of two different players")
        got.sort(key=lambda p: p.id)
        return f"{got[0].spec}+{got[1].spec}"

    def add_teams(self, texts: Sequence[str]) -> list[tuple[str, str]]:
        """Register mixed teams ``a+b`` as entrants (``team_spec``; a removed one comes back
        with its pairs); returns ``(spec, what happened)`` for each."""
        specs = list(dict.fromkeys(self.team_spec(t) for t in texts))
        out = []
        t, _ = utc_now()
        with self.transaction() as con:
            for spec in specs:
                row = con.execute("SELECT id, removed FROM players WHERE spec = ?",
                                  (spec,)).fetchone()
                if row is None:
                    con.execute("INSERT INTO players(spec, plugin, added) VALUES (?, NULL, ?)",
                                (spec, t))
                    out.append((spec, "added"))
                elif row[1]:
                    con.execute("UPDATE players SET removed = 0 WHERE id = ?", (row[0],))
                    out.append((spec, "added again (its pairs count again)"))
                else:
                    out.append((spec, "already in the ladder"))
        return out

    def player(self, spec: str) -> Player:
        """The active player ``spec`` (as given, or its canonical spec; a team ``a+b`` in
        either order)."""
        players = self.players()
        for p in players:
            if p.spec == spec:
                return p
        if _is_team(spec):
            with contextlib.suppress(ConfigError):
                team = self.team_spec(spec)
                for p in players:
                    if p.spec == team:
                        return p
        canon = canonical(spec, quiet=True)
        for p in players:
            if p.spec == canon:
                return p
        names = ", ".join(p.spec for p in players) or "none yet"
        raise ConfigError(f"player {spec!r} is not in ladder {self.path!r}: its players are "
                          f"{names}")

    def add(self, specs: Sequence[str], plugin: str | None = None) -> list[tuple[str, str]]:
        """Register players (canonical specs; a removed one comes back); returns
        ``(spec, what happened)`` for each."""
        for s in specs:
            if _is_team(s):
                raise ConfigError(f"{s!r} is a team: add its players, then `shuangkou "
                                  f"ladder run --partners --teams {s} --pairs N` adds it")
        canon = [canonical(s) for s in specs]
        out = []
        t, _ = utc_now()
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

    # --- bots in other processes (docs/bots.md) -------------------------------------------
    def bots(self) -> dict[str, dict[str, Any]]:
        """The bots seated so far: ``{name: {"program": hash, "faults": {kind: n}}}``."""
        row = self.con.execute("SELECT value FROM meta WHERE key = ?", (META_BOTS,)).fetchone()
        return meta_bots(self.path, row[0] if row else None)

    def note_bots(self, programs: dict[str, str], faults: dict[str, dict[str, int]] | None = None
                  ) -> list[str]:
        """Remember each bot's program hash (and add its faults); returns a warning for each
        bot that comes back under a known name with another program."""
        if not programs and not faults:
            return []
        known = self.bots()
        warnings = []
        for name, h in programs.items():
            old = known.get(name)
            if old is not None and old["program"] != h:
                warnings.append(f"bot {name!r} comes back with another program (hash "
                                f"{old['program']} before, {h} now): its earlier pairs were "
                                f"played by the other one; add it under a new name to rate "
                                f"them apart")
            known.setdefault(name, {"program": h, "faults": {}})["program"] = h
        for name, c in (faults or {}).items():
            f = known.setdefault(name, {"program": programs.get(name, "0" * 16),
                                        "faults": {}}).setdefault("faults", {})
            for k, n in c.items():
                f[k] = f.get(k, 0) + n
        with self.transaction() as con:
            con.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                        (META_BOTS, json.dumps(known, sort_keys=True)))
        return warnings

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
        iso, unix = when or utc_now()
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
                        (player, kind, matchup, deal, utc_now()[0], message[:2000]))

    # --- reading --------------------------------------------------------------------------
    def data(self, times: bool = True) -> Any:
        """``sim.analysis.ladder.LadderData`` of the active players, from the chunks' arrays
        (their pairs in commit order); ``times=False`` leaves out each pair's commit time
        (only ``history`` needs it)."""
        players = self.entrants()
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
            dv, xv = self.decode_chunk(m, first, n, d, x)
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
        names = [p.spec for p in players]
        teams = {i: tuple(names.index(m) for m in team_members(p.spec))
                 for i, p in enumerate(players) if p.team}
        return LadderData(
            teams=teams,
            names=names, a=rep(parts_a, np.int32), b=rep(parts_b, np.int32),
            deal=np.concatenate(deals) if deals else np.zeros(0, np.int64),
            score2=score2_of(x2), margin=np.multiply(x2, 0.5, dtype=np.float32), incidents=inc,
            last_time=[iso_time(t) if np.isfinite(t) else None for t in last],
            times=rep(when, np.float64) if times else None)

    def decode_chunk(self, m: int, first: int | None, n: int, d: bytes, x: bytes
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
                              f"(matchup {quote_value(bad[0])}, deal {quote_value(bad[1])}) is not "
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


def _is_team(spec: str) -> bool:
    """Whether ``spec`` reads as a team ``a+b`` (a ``+`` outside parentheses and quotes)."""
    try:
        return len(team_members(spec)) == 2
    except ConfigError:
        return True  # a+b+c: refused as a team by team_spec


def canonical(spec: str, quiet: bool = False) -> str:
    """The canonical spec of a strategy spec (one ``ConfigError`` line if unknown)."""
    try:
        return make(spec).spec()
    except ShuangkouError as e:
        if quiet:
            return spec
        raise ConfigError(f"player {spec!r}: {e}") from None


def _from_plugin(spec: str) -> bool:
    """Whether ``spec``'s strategy comes from a plug-in (not from this package): only then is
    the ``--plugin`` file stored with the player."""
    return type(make(spec)).__module__.partition(".")[0] not in ("strategies", "sim")


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
    the first statement reads the schema (``check_schema`` then refuses any trigger or view
    a ladder does not have)."""
    con.execute("PRAGMA trusted_schema=OFF")
    with contextlib.suppress(AttributeError, sqlite3.Error):
        con.enable_load_extension(False)


def _create(con: sqlite3.Connection, seed: int, rules: dict[str, int]) -> None:
    full = Rules.from_dict(rules).to_dict()
    iso, _ = utc_now()
    con.execute("BEGIN IMMEDIATE")
    try:
        for statement in SCHEMA_SQL.split(";"):
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
                "since": utc_now()[0]}
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
