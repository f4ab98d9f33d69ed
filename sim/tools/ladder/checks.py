"""A received ladder database checked before anything of it is used: the file's header, its
version, its schema, its pages and every value of the columns the product reads.
"""

from __future__ import annotations

import re
import sqlite3
import sys
from collections.abc import Sequence
from typing import Annotated, Any, Literal

from sim.bots.spec import FAULT_KINDS, NAME_RE
from sim.core.files import decode_json, open_received
from sim.core.limits import MAX_DEAL, MAX_SEED
from sim.errors import LadderError, ShuangkouError
from sim.rules import Rules
from sim.tools.ladder.schema import (
    APP_ID,
    MAX_CHUNK_N,
    MAX_PLAYERS,
    MAX_SPEC,
    MAX_TEXT,
    SCHEMA,
    SCHEMA_SQL,
)


def check_header(path: str) -> None:
    """A file that is not SQLite at all is named as such before sqlite3 sees it."""
    try:
        with open_received(path, 1 << 50, "ladder database") as f:  # never a FIFO's wait
            head = f.read(100)
    except OSError as e:
        raise LadderError(f"ladder database {path!r} cannot be read: {e.strerror or e}") \
            from None
    if head and not head.startswith(b"SQLite format 3\x00"):
        raise LadderError(f"{path!r} is not a ladder database (not an SQLite file): give "
                          f"another --db")


def check_version(path: str, app: int, ver: int) -> None:
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
# ``trusted_schema`` off, and a file whose schema is not exactly the one ``SCHEMA_SQL`` writes
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
            for statement in SCHEMA_SQL.split(";"):
                if statement.strip():
                    con.execute(statement)
            _REFERENCE.extend(sorted((t, n, tb, _norm(q)) for t, n, tb, q in con.execute(
                "SELECT type, name, tbl_name, sql FROM sqlite_master")))
        finally:
            con.close()
    return _REFERENCE


def check_schema(path: str, con: sqlite3.Connection) -> None:
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
                              f"ladder's ({quote_value(q, 120)}): refused ({way})")
    for t, n in sorted(set(want) - set(got), key=lambda k: (k[0] == "index", k)):
        raise LadderError(f"ladder database {path!r} lacks the {t} {n!r} of a ladder: "
                          f"restore it from a copy")


def quote_value(text: Any, most: int = 80) -> str:
    """``repr`` of a value from the file, cut short with its length (one readable line)."""
    r = repr(text)
    if len(r) <= most:
        return r
    size = f"{len(text):,} characters" if isinstance(text, (str, bytes)) else "long"
    return f"{r[:most - 20]}… ({size})"


def check_integrity(path: str, con: sqlite3.Connection) -> None:
    """``PRAGMA quick_check``: every page and b-tree of the file whole (a truncated or
    overwritten file is one line here, before any of its rows is read)."""
    rows = [r[0] for r in con.execute("PRAGMA quick_check(3)")]
    if rows != ["ok"]:
        raise LadderError(f"ladder database {path!r} is corrupt (quick_check: "
                          f"{quote_value('; '.join(map(str, rows)), 160)}): restore it from a copy")


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
# optional: the bots in other processes the ladder has seated, by name: the hash of the program
# each ran and its faults (docs/bots.md; a command is never stored)
META_BOTS = "bots"
MAX_BOTS = 1000


def check_columns(path: str, con: sqlite3.Connection) -> None:
    """Every value of every column the product reads has its type and range (one scan per
    table, a few thousand rows for millions of pairs), else one line naming the table, the
    row, the column and what was expected."""
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
                     f"{value[0]} {quote_value(value[1])}")
            raise LadderError(f"ladder database {path!r}: {table}.{col} of row "
                              f"{quote_value(row[0])} is {shown}, expected "
                              f"{expected.format(**fill)}: restore it from a copy")
    rows = con.execute("SELECT key, typeof(value), value FROM meta").fetchall()
    keys = [r[0] for r in rows]
    for k, kind, v in rows:
        if k not in _META_KEYS and k != META_BOTS:
            raise LadderError(f"ladder database {path!r}: meta has the key {quote_value(k)}, not "
                              f"one of a ladder's ({', '.join(_META_KEYS + (META_BOTS,))}): "
                              f"refused")
        if kind != "text" or len(v) > (1 << 16):
            raise LadderError(f"ladder database {path!r}: meta.{k} is {kind}"
                              f"{'' if kind != 'text' else ' of ' + format(len(v), ',')}"
                              f"{' characters' if kind == 'text' else ''}, expected text "
                              f"(at most 65,536 characters): restore it from a copy")
    for k in _META_KEYS:
        if k not in keys:
            raise LadderError(f"ladder database {path!r} is corrupt (its meta table lacks "
                              f"{k!r}): restore it from a copy")


def meta_bots(path: str, text: str | None) -> dict[str, dict[str, Any]]:
    """``meta.bots`` read as data through the bounded JSON reader and its declared schema:
    ``{name: {"program": 16 hex digits, "faults": {kind: n}}}`` (at most ``MAX_BOTS``)."""
    if not text:
        return {}
    import msgspec  # (as meta_values: read only when a ladder holds bots)

    count = Annotated[int, msgspec.Meta(ge=0, lt=2**62)]
    kind = Literal[FAULT_KINDS + ("forfeits", "fallbacks")]  # type: ignore[valid-type]
    bot = msgspec.defstruct("LadderBot", [
        ("program", Annotated[str, msgspec.Meta(pattern="^[0-9a-f]{16}$")]),
        ("faults", dict[kind, count], {})], forbid_unknown_fields=True)
    name = Annotated[str, msgspec.Meta(pattern=f"^{NAME_RE.pattern}$")]
    schema = Annotated[dict[name, bot], msgspec.Meta(max_length=MAX_BOTS)]
    where = (f"ladder database {path!r}: meta.bots is not a table of bots (name: program hash "
             f"and fault counts)")
    try:
        return msgspec.to_builtins(decode_json(text, schema, where=where))
    except ValueError as e:
        raise LadderError(f"{e}: restore it from a copy") from None


def meta_values(path: str, meta: dict[str, str]) -> tuple[int, dict[str, int]]:
    """The ladder's seed and rules from its (type-checked) meta table."""
    if meta["application"] != "shuangkou-ladder" or meta["schema"] != str(SCHEMA):
        raise LadderError(f"ladder database {path!r}: meta.application/meta.schema are "
                          f"{quote_value(meta['application'])}/{quote_value(meta['schema'])}, "
                          f"expected 'shuangkou-ladder'/'{SCHEMA}': restore it from a copy")
    seed = meta["seed"]
    if not (seed.isascii() and seed.isdigit() and len(seed) <= 20 and int(seed) <= MAX_SEED):
        raise LadderError(f"ladder database {path!r}: meta.seed is {quote_value(seed)}, expected "
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
                raise LadderError(f"ladder database {path!r}: player {quote_value(spec)} names "
                                  f"module {m!r}, and a ladder database does not load "
                                  f"modules: load it with --plugin {m}")
