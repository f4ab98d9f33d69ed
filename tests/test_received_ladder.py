"""A ladder database received from someone else is data (issue 32): it never runs code and
never runs SQL of its own. Every table and column of a real small ladder is tampered with
(wrong type, negative, huge, missing, extra table/column/trigger/view/index, deep nesting,
a truncated, empty or foreign file, a FIFO) and each is, through the command line in a new
process: exit code 2, exactly one line on stderr naming the file and the field, no
traceback, and the file left as it was. A plug-in file, a ``module:Class`` spec or a trigger
planted in the file never gets a module imported (the module would write a marker file).
Numeric options past their documented bounds are refused up front."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_DEAL = 2**63 - 1

EVIL = '''
import os
open({marker!r}, "w").write("imported")
from strategies.random import RandomStrategy


class Evil(RandomStrategy):
    name = "evilbot"
'''


def cli(cwd, db, *args, timeout=120):
    """``shuangkou ladder --db DB ARGS`` in a new process: (exit code, stdout, stderr)."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    p = subprocess.run([sys.executable, "-m", "sim.cli", "ladder", "--db", str(db),
                        *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def refused(code, err, *parts):
    """Exit 2, one stderr line, no traceback, and each of ``parts`` in that line."""
    assert code == 2, err
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("shuangkou ladder") and "error:" in lines[0], err
    for p in parts:
        assert p in lines[0], (p, lines[0])


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    """A real ladder: three players, 30 pairs in 3 chunks per played matchup, and one row
    in each of the incidents and imports tables (as the product writes them)."""
    d = tmp_path_factory.mktemp("ladder")
    db = d / "base.sqlite"
    code, _, err = cli(d, db, "add", "greedy", "random", "random(show_prob=0.9)")
    assert code == 0, err
    code, _, err = cli(d, db, "run", "--pairs", 30, "--chunk", 10, "--no-progress", "--quiet")
    assert code == 0, err
    con = sqlite3.connect(db)
    with con:
        con.execute("INSERT INTO incidents(player, kind, matchup, deal, time, message) "
                    "VALUES (2, 'crash', 1, 3, '2026-12-03T00:00:00Z', 'boom')")
        con.execute("INSERT INTO imports(source, path, config_hash, time) VALUES "
                    "('import:abc', '/x/results', 'abc', '2026-12-03T00:00:00Z')")
    con.close()
    assert not os.path.exists(str(db) + "-wal")  # checkpointed: the file is the whole ladder
    return db


def copy(base, tmp_path):
    db = tmp_path / "l.sqlite"
    shutil.copyfile(base, db)
    return db


def tamper(db, *statements, params=()):
    con = sqlite3.connect(db, isolation_level=None)
    con.execute("PRAGMA ignore_check_constraints=ON")  # what a forger may do
    for s in statements:
        con.execute(s, params) if "?" in s else con.execute(s)
    con.close()


RULES = ('{"defender_cap": 10, "kou_di_pair": 4, "kou_di_single": 2, "max_redeals": 3, '
         '"settle_step": 20, "settle_unit": 2, "start_skill": 1600}')
DEEP = "[" * 100_000 + "]" * 100_000

# (case, SQL statements, the command, what the one line must name)
SQL_CASES = [
    ("meta.rules nested 100,000 deep", ["UPDATE meta SET value = ? WHERE key = 'rules'"],
     (DEEP,), ["show"], ["meta.rules", "200,000 characters"]),
    ("meta.rules nested 30,000 deep", ["UPDATE meta SET value = ? WHERE key = 'rules'"],
     (DEEP[:30_000] + DEEP[-30_000:],), ["show"], ["meta.rules", "nested 30000 deep"]),
    ("meta.rules wrong type", ["UPDATE meta SET value = ? WHERE key = 'rules'"],
     (RULES.replace("3,", '"3",'),), ["show"], ["meta.rules", "max_redeals", "int"]),
    ("meta.rules not JSON", ["UPDATE meta SET value = 'nope' WHERE key = 'rules'"], (),
     ["show"], ["meta.rules", "not valid JSON"]),
    ("meta.rules unknown variant", ["UPDATE meta SET value = ? WHERE key = 'rules'"],
     (RULES.replace("{", '{"zzz": 1, '),), ["show"], ["meta.rules", "zzz"]),
    ("meta.rules huge", ["UPDATE meta SET value = ? WHERE key = 'rules'"],
     (RULES.replace("3,", "1" + "0" * 30 + ","),), ["show"], ["meta.rules"]),
    ("meta.rules missing a variant", ["UPDATE meta SET value = '{}' WHERE key = 'rules'"],
     (), ["show"], ["meta.rules", "missing required field"]),
    ("meta.rules a BLOB", ["UPDATE meta SET value = x'00ff' WHERE key = 'rules'"], (),
     ["show"], ["meta.rules is blob"]),
    ("meta.seed text", ["UPDATE meta SET value = 'abc' WHERE key = 'seed'"], (), ["show"],
     ["meta.seed"]),
    ("meta.seed negative", ["UPDATE meta SET value = '-3' WHERE key = 'seed'"], (), ["show"],
     ["meta.seed"]),
    ("meta.seed huge", ["UPDATE meta SET value = ? WHERE key = 'seed'"], ("9" * 30,),
     ["show"], ["meta.seed"]),
    ("meta.seed missing", ["DELETE FROM meta WHERE key = 'seed'"], (), ["show"],
     ["lacks 'seed'"]),
    ("meta extra key", ["INSERT INTO meta VALUES ('evil', 'x')"], (), ["show"],
     ["meta has the key 'evil'"]),
    ("meta.created a BLOB", ["UPDATE meta SET value = x'00' WHERE key = 'created'"], (),
     ["show"], ["meta.created is blob"]),
    ("meta.application other", ["UPDATE meta SET value = 'x' WHERE key = 'application'"], (),
     ["show"], ["meta.application"]),
    ("players.plugin a BLOB", ["UPDATE players SET plugin = x'0102' WHERE id = 1"], (),
     ["show"], ["players.plugin of row 1", "BLOB", "NULL or text"]),
    ("players.spec a BLOB", ["UPDATE players SET spec = x'00' WHERE id = 1"], (), ["show"],
     ["players.spec of row 1"]),
    ("players.spec huge", ["UPDATE players SET spec = ? WHERE id = 1"], ("x" * 5000,),
     ["show"], ["players.spec of row 1", "5,000 characters"]),
    ("players.spec empty", ["UPDATE players SET spec = '' WHERE id = 1"], (), ["show"],
     ["players.spec of row 1"]),
    ("players.removed 7", ["UPDATE players SET removed = 7 WHERE id = 2"], (), ["show"],
     ["players.removed of row 2", "0 or 1"]),
    ("players.removed text", ["UPDATE players SET removed = 'yes' WHERE id = 2"], (),
     ["show"], ["players.removed of row 2"]),
    ("players.added a BLOB", ["UPDATE players SET added = x'00' WHERE id = 2"], (), ["show"],
     ["players.added of row 2"]),
    ("players.id negative", ["UPDATE players SET id = -1 WHERE id = 3"], (), ["show"],
     ["players.id of row -1"]),
    ("players table dropped", ["DROP TABLE players"], (), ["show"],
     ["lacks the table 'players'"]),
    ("matchups.next_deal text", ["UPDATE matchups SET next_deal = 'abc' WHERE id = 1"], (),
     ["show"], ["matchups.next_deal of row 1"]),
    ("matchups.next_deal negative", ["UPDATE matchups SET next_deal = -5 WHERE id = 1"], (),
     ["show"], ["matchups.next_deal of row 1"]),
    ("matchups.next_deal real", ["UPDATE matchups SET next_deal = 1.5 WHERE id = 1"], (),
     ["show"], ["matchups.next_deal of row 1"]),
    ("matchups.a not a player", ["UPDATE matchups SET a = 99 WHERE id = 1"], (), ["show"],
     ["matchups.a of row 1"]),
    ("matchups.b not above a", ["UPDATE matchups SET b = a WHERE id = 1"], (), ["show"],
     ["matchups.b of row 1"]),
    ("matchups.next_deal at the last deal",
     [f"UPDATE matchups SET next_deal = {MAX_DEAL}"], (),
     ["run", "--pairs", 10, "--no-progress"], ["2**63-1"]),
    ("chunks.unix text", ["UPDATE chunks SET unix = 'yesterday' WHERE id = 1"], (), ["show"],
     ["chunks.unix of row 1"]),
    ("chunks.unix huge", ["UPDATE chunks SET unix = 1e300 WHERE id = 1"], (), ["show"],
     ["chunks.unix of row 1"]),
    ("chunks.n negative", ["UPDATE chunks SET n = -3 WHERE id = 1"], (), ["show"],
     ["chunks.n of row 1", "integer -3"]),
    ("chunks.n huge", ["UPDATE chunks SET n = 1000000000000000 WHERE id = 1"], (), ["show"],
     ["chunks.n of row 1"]),
    ("chunks.n not its pairs", ["UPDATE chunks SET n = n + 1 WHERE id = 1"], (), ["show"],
     ["chunks.x2 of row 1"]),
    ("chunks.n text", ["UPDATE chunks SET n = 'ten' WHERE id = 1"], (), ["show"],
     ["chunks.n of row 1"]),
    ("chunks.first_deal text", ["UPDATE chunks SET first_deal = 'a' WHERE id = 1"], (),
     ["show"], ["chunks.first_deal of row 1"]),
    ("chunks.first_deal negative", ["UPDATE chunks SET first_deal = -1 WHERE id = 1"], (),
     ["show"], ["chunks.first_deal of row 1"]),
    ("chunks.first_deal missing", ["UPDATE chunks SET first_deal = NULL WHERE id = 1"], (),
     ["show"], ["chunks.deals of row 1"]),
    ("chunks.x2 truncated", ["UPDATE chunks SET x2 = substr(x2, 1, 3) WHERE id = 1"], (),
     ["show"], ["chunks.x2 of row 1", "3 bytes"]),
    ("chunks.x2 text", ["UPDATE chunks SET x2 = 'abc' WHERE id = 1"], (), ["show"],
     ["chunks.x2 of row 1"]),
    ("chunks.deals wrong length", ["UPDATE chunks SET deals = x'00' WHERE id = 1"], (),
     ["show"], ["chunks.deals of row 1"]),
    ("chunks.matchup not a matchup", ["UPDATE chunks SET matchup = 99 WHERE id = 1"], (),
     ["show"], ["chunks.matchup of row 1"]),
    ("chunks.source a BLOB", ["UPDATE chunks SET source = x'00' WHERE id = 1"], (), ["show"],
     ["chunks.source of row 1"]),
    ("chunks.seconds text", ["UPDATE chunks SET seconds = 'slow' WHERE id = 1"], (),
     ["show"], ["chunks.seconds of row 1"]),
    ("chunks.seconds negative", ["UPDATE chunks SET seconds = -1 WHERE id = 1"], (),
     ["show"], ["chunks.seconds of row 1"]),
    ("chunks.time a BLOB", ["UPDATE chunks SET time = x'00' WHERE id = 1"], (), ["show"],
     ["chunks.time of row 1"]),
    ("chunks.source_chunk negative", ["UPDATE chunks SET source_chunk = -1 WHERE id = 1"],
     (), ["show"], ["chunks.source_chunk of row 1"]),
    ("incidents.kind other", ["UPDATE incidents SET kind = 'evil'"], (), ["show"],
     ["incidents.kind"]),
    ("incidents.player not a player", ["UPDATE incidents SET player = 99"], (), ["show"],
     ["incidents.player"]),
    ("incidents.message a BLOB", ["UPDATE incidents SET message = x'00'"], (), ["show"],
     ["incidents.message"]),
    ("incidents.deal text", ["UPDATE incidents SET deal = 'x'"], (), ["show"],
     ["incidents.deal"]),
    ("imports.path a BLOB", ["UPDATE imports SET path = x'00'"], (), ["show"],
     ["imports.path of row 'import:abc'"]),
    ("imports.time a BLOB", ["UPDATE imports SET time = x'00'"], (), ["show"],
     ["imports.time"]),
    ("pairs.deal text", ["UPDATE pairs SET deal = 'x' WHERE deal = 3 AND matchup = 1"], (),
     ["run", "--pairs", 10, "--no-progress"], ["pairs.deal"]),
    ("pairs.score2 7", ["UPDATE pairs SET score2 = 7 WHERE deal = 3"], (),
     ["run", "--pairs", 10, "--no-progress"], ["pairs.score2"]),
    ("pairs.x2 huge", ["UPDATE pairs SET x2 = 1e30 WHERE deal = 3"], (),
     ["run", "--pairs", 10, "--no-progress"], ["pairs.x2"]),
    ("pairs row extra", ["INSERT INTO pairs VALUES (1, 999, 1, 2, 4)"], (),
     ["run", "--pairs", 10, "--no-progress"], ["table pairs has"]),
    ("pairs row missing", ["DELETE FROM pairs WHERE deal = 3"], (),
     ["run", "--pairs", 10, "--no-progress"], ["table pairs has"]),
    ("extra table", ["CREATE TABLE evil(x)"], (), ["show"], ["has a table 'evil'"]),
    ("extra column", ["ALTER TABLE players ADD COLUMN evil TEXT"], (), ["show"],
     ["table 'players' is not defined as a ladder's"]),
    ("trigger", ["CREATE TRIGGER t AFTER INSERT ON chunks BEGIN "
                 "UPDATE players SET plugin = 'evil.py'; END"], (),
     ["run", "--pairs", 10, "--no-progress"], ["has a trigger 't' on table 'chunks'"]),
    ("view", ["CREATE VIEW v AS SELECT 1"], (), ["show"], ["has a view 'v'"]),
    ("index", ["CREATE INDEX i ON pairs(x2)"], (), ["show"], ["has an index 'i'"]),
    ("the view replaced", ["DROP VIEW pair_results",
                           "CREATE VIEW pair_results AS SELECT 1 AS x"], (), ["show"],
     ["view 'pair_results' is not defined as a ladder's"]),
    ("application id", ["PRAGMA application_id = 1"], (), ["show"],
     ["not a shuangkou ladder"]),
    ("schema version", ["PRAGMA user_version = 99"], (), ["show"], ["schema version 99"]),
    ("schema version 0", ["PRAGMA user_version = 0"], (), ["show"], ["schema version 0"]),
]


@pytest.mark.parametrize("case,statements,params,args,parts", SQL_CASES,
                         ids=[c[0] for c in SQL_CASES])
def test_a_tampered_column_or_schema_is_one_line(base, tmp_path, case, statements, params,
                                                 args, parts):
    db = copy(base, tmp_path)
    tamper(db, *statements, params=params)
    before = digest(db)
    code, _, err = cli(tmp_path, db, *args)
    refused(code, err, repr(str(db)) if "schema version" not in case else "", *parts)
    assert digest(db) == before  # nothing written: the file stays as it was received


def _truncate(db):
    size = os.path.getsize(db)
    with open(db, "r+b") as f:
        f.truncate(size // 2)


def _empty(db):
    open(db, "wb").close()


def _fifo(db):
    os.remove(db)
    os.mkfifo(db)


def _garbage(db):
    with open(db, "wb") as f:
        f.write(os.urandom(5000))


def _header_only(db):
    with open(db, "r+b") as f:
        f.truncate(100)


def _folder(db):
    os.remove(db)
    os.mkdir(db)


def _page_zeroed(db):
    """A page in the middle overwritten with zeros (a torn write)."""
    size = os.path.getsize(db)
    with open(db, "r+b") as f:
        f.seek((size // 4096 // 2) * 4096)
        f.write(b"\0" * 4096)


FILE_CASES = [
    ("truncated, show", _truncate, ["show"], ["corrupt"]),
    ("truncated, run", _truncate, ["run", "--pairs", 10, "--no-progress"], ["corrupt"]),
    ("a page zeroed, run", _page_zeroed, ["run", "--pairs", 10, "--no-progress"], []),
    ("a page zeroed, show", _page_zeroed, ["show"], []),
    ("empty", _empty, ["show"], ["is empty"]),
    ("empty, run", _empty, ["run", "--pairs", 10, "--no-progress"], ["is empty"]),
    ("FIFO", _fifo, ["show"], ["not a regular file"]),
    ("FIFO, run", _fifo, ["run", "--pairs", 10, "--no-progress"], ["not a regular file"]),
    ("garbage", _garbage, ["show"], ["not an SQLite file"]),
    ("header only", _header_only, ["show"], []),
    ("a folder", _folder, ["show"], ["not a regular file"]),
]


@pytest.mark.parametrize("case,how,args,parts", FILE_CASES, ids=[c[0] for c in FILE_CASES])
def test_a_damaged_or_special_file_is_one_line(base, tmp_path, case, how, args, parts):
    db = copy(base, tmp_path)
    how(db)
    code, _, err = cli(tmp_path, db, *args, timeout=60)  # a FIFO must not make it wait
    refused(code, err, *parts)


# --- code named by a received database is never run ---------------------------------------

def _evil_files(tmp_path):
    marker = tmp_path / "IMPORTED"
    for rel in ("evil.py", "evilmod.py", os.path.join("sub", "evil2.py")):
        path = tmp_path / rel
        path.parent.mkdir(exist_ok=True)
        path.write_text(EVIL.format(marker=str(marker)))
    return marker


@pytest.mark.parametrize("plugin", ["evil.py", "./evil.py", "ABS", "sub/evil2.py"])
def test_a_plugin_file_the_database_names_is_never_imported(base, tmp_path, plugin):
    """A player whose plug-in file the database names: `run` refuses with the --plugin flag
    to add, and the file is never imported (it would write the marker)."""
    marker = _evil_files(tmp_path)
    plugin = str(tmp_path / "evil.py") if plugin == "ABS" else plugin
    db = copy(base, tmp_path)
    tamper(db, "INSERT INTO players(spec, plugin, added) VALUES ('evilbot', ?, "
           "'2026-12-03T00:00:00Z')", params=(plugin,))
    code, _, err = cli(tmp_path, db, "run", "--pairs", 10, "--no-progress")
    refused(code, err, "evilbot", "never loads", "--plugin")
    assert not marker.exists()


@pytest.mark.parametrize("spec", ["evilmod:Evil", "pimc(samples=2, rollout=evilmod:Evil)"])
def test_a_module_class_spec_in_the_database_is_refused_before_any_import(base, tmp_path,
                                                                          spec):
    """``module:Class`` (nested too) in players.spec: refused as a config's is, before any
    import, though the module sits in the working folder (first on ``python -m``'s path)."""
    marker = _evil_files(tmp_path)
    db = copy(base, tmp_path)
    tamper(db, "INSERT INTO players(spec, plugin, added) VALUES (?, NULL, "
           "'2026-12-03T00:00:00Z')", params=(spec,))
    for args in (["run", "--pairs", 10, "--no-progress"], ["show"]):
        code, _, err = cli(tmp_path, db, *args)
        if args[0] == "run":
            refused(code, err, "names module 'evilmod'", "--plugin evilmod")
        else:
            assert code == 0, err  # showing names runs nothing
    assert not marker.exists()


def test_a_planted_trigger_never_fires_and_no_module_is_imported(base, tmp_path):
    """A trigger that would rewrite players.plugin during the first run (so that the second
    imports the file): every run is refused, the trigger never fired, nothing imported."""
    marker = _evil_files(tmp_path)
    db = copy(base, tmp_path)
    tamper(db, "CREATE TRIGGER t AFTER INSERT ON chunks BEGIN UPDATE players SET "
           "plugin = 'evil.py', spec = 'evilbot' WHERE id = 1; END")
    for _ in range(2):
        code, _, err = cli(tmp_path, db, "run", "--pairs", 10, "--chunk", 10, "--no-progress")
        refused(code, err, "trigger 't'")
    con = sqlite3.connect(db)
    assert con.execute("SELECT spec, plugin FROM players WHERE id = 1").fetchone() == \
        ("greedy", None)
    con.close()
    assert not marker.exists()


def test_a_fifo_as_learned_weights_in_a_ladder_spec_does_not_hang(base, tmp_path):
    """``learned(weights=FIFO)`` stored as a player: `run` is one line within the timeout
    (the ladder opens no file a spec names; the weights loader refuses a FIFO)."""
    fifo = tmp_path / "w.npz"
    os.mkfifo(fifo)
    db = copy(base, tmp_path)
    tamper(db, "INSERT INTO players(spec, plugin, added) VALUES (?, NULL, "
           "'2026-12-03T00:00:00Z')", params=(f"learned(weights='{fifo}')",))
    code, _, err = cli(tmp_path, db, "run", "--pairs", 10, "--no-progress", timeout=60)
    refused(code, err, str(fifo))


# --- numeric options: refused up front, with the bound ---------------------------------------

BIG = "1" + "0" * 30


@pytest.mark.parametrize("args,bound", [
    (["run", "--pairs", BIG], "1,000,000,000"),
    (["run", "--pairs", 10, "--chunk", BIG], "1,000,000"),
    (["run", "--pairs", 10, "--jobs", BIG], "1,024"),
    (["run", "--pairs", 10, "--timeout", "1e30"], "86400"),
    (["history", "greedy", "--points", BIG], "1,000"),
    (["show", "--anchor", "random=1e30"], "10,000"),
    (["show", "--anchor", "random=nan"], "10,000"),
])
def test_numeric_options_past_their_bound_are_refused_up_front(base, tmp_path, args, bound):
    db = copy(base, tmp_path)
    before = digest(db)
    code, _, err = cli(tmp_path, db, *args, timeout=60)
    refused(code, err, bound)
    assert digest(db) == before
