"""The ladder's database and command (issue 22, core): add/run/show, kill -9 at several
moments (the file stays whole, only whole chunks are in it, and continuing gives the same
pairs as an uninterrupted run), every bad input as one line with exit code 2, import (twice
changes nothing, other rules or seed refused, a corrupt folder one line), two runs at once,
export round trip. Players are greedy and random (fast), chunks small."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import sqlite3
import subprocess
import sys
import time

import numpy as np
import pytest

from sim.cli import main
from sim.errors import ConfigError, LadderError
from sim.tools import ladder
from sim.tools.ladder import Ladder
from sim.tournament.config import from_dict
from sim.tournament.run import run_tournament

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
G, R, R9 = "greedy", "random", "random(show_prob=0.9)"


def run_cli(capsys, *args):
    """``shuangkou ladder ARGS`` in this process: (exit code, stdout, stderr)."""
    code = main(["ladder", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err, *parts):
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "error:" in lines[0] and "Traceback" not in err
    for p in parts:
        assert p in lines[0], lines[0]


def sub(*args, env=None, wait=True):
    e = dict(os.environ, PYTHONPATH=ROOT, **(env or {}))
    cmd = [sys.executable, "-m", "sim.cli", "ladder", *map(str, args)]
    if not wait:
        return subprocess.Popen(cmd, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
    return subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=300)


def _rows(db, sql):
    con = sqlite3.connect(db)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def pairs_of(db):
    return _rows(db, "SELECT m.a, m.b, p.deal, p.x2 FROM pairs p JOIN matchups m "
                     "ON m.id = p.matchup ORDER BY m.a, m.b, p.deal")


def check_whole(db, chunk):
    """integrity_check ok, and every chunk whole: its blobs, its pairs rows, n = chunk."""
    con = sqlite3.connect(db)
    try:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        for cid, first, n, d, x in con.execute("SELECT id, first_deal, n, deals, x2 "
                                               "FROM chunks"):
            assert n == chunk
            deals, x2 = ladder.decode(first, n, d, x)  # the arrays are the rows
            assert con.execute("SELECT deal, x2 FROM pairs WHERE chunk = ? ORDER BY deal",
                               (cid,)).fetchall() == list(zip(deals.tolist(), x2.tolist()))
        total = con.execute("SELECT coalesce(sum(n), 0) FROM chunks").fetchone()[0]
        assert con.execute("SELECT count(*) FROM pairs").fetchone()[0] == total
        return total
    finally:
        con.close()


@pytest.fixture
def db(tmp_path, capsys):
    path = str(tmp_path / "l.sqlite")
    code, out, _ = run_cli(capsys, "--db", path, "add", G, R, R9)
    assert code == 0 and out.count("added") == 3
    return path


def test_add_run_show_stores_whole_chunks_and_shared_deals(db, capsys):
    code, out, err = run_cli(capsys, "--db", db, "run", "--pairs", 300, "--chunk", 50,
                             "--no-progress", "--quiet")
    assert code == 0, err
    assert "played 300 pairs in 6 chunks" in out
    assert check_whole(db, 50) == 300
    con = sqlite3.connect(db)
    # every matchup plays deals 0, 1, 2, … of the ladder's seed; next_deal is past them all
    for m, nxt in con.execute("SELECT id, next_deal FROM matchups"):
        deals = [d for (d,) in con.execute("SELECT deal FROM pairs WHERE matchup = ? "
                                           "ORDER BY deal", (m,))]
        assert deals == list(range(len(deals))) and nxt == len(deals)
    # the view names the players and halves x2
    row = con.execute("SELECT a, b, margin * 2 = x2, score2 FROM pair_results LIMIT 1").fetchone()
    assert row[0] in (G, R, R9) and row[2] == 1 and row[3] in (0, 1, 2)
    con.close()
    code, out, _ = run_cli(capsys, "--db", db, "show")
    assert code == 0 and G in out
    code, out, _ = run_cli(capsys, "--db", db, "show", "--json")
    assert code == 0 and json.loads(out)
    # the data the model gets: as arrays, consistent with the table
    with Ladder.open(db, write=False) as lad:
        d = lad.data()
    assert d.names == [G, R, R9] and d.a.size == 300 and (d.a < d.b).all()
    assert set(np.unique(d.score2)) <= {0, 1, 2}
    assert d.times is not None and d.times.size == 300 and all(d.last_time)


def _same_pairs(tmp_path, capsys, runs):
    got = []
    for jobs, backend in runs:
        path = str(tmp_path / f"j{jobs}{backend}.sqlite")
        assert run_cli(capsys, "--db", path, "add", G, R)[0] == 0
        code, _, err = run_cli(capsys, "--db", path, "run", "--pairs", 120, "--chunk", 20,
                               "--jobs", jobs, "--force-jobs", "--backend", backend,
                               "--no-progress", "--quiet")
        assert code == 0, err
        got.append(pairs_of(path))
    assert all(g == got[0] for g in got) and len(got[0]) == 120


def test_same_pairs_whatever_the_jobs(tmp_path, capsys):
    """A run's pairs depend on the ladder, not on --jobs or the backend."""
    _same_pairs(tmp_path, capsys, ((1, "auto"), (2, "fork"), (2, "threading")))


@pytest.mark.slow
def test_same_pairs_on_loky_and_dask(tmp_path, capsys):
    pytest.importorskip("distributed")
    _same_pairs(tmp_path, capsys, ((1, "auto"), (2, "loky"), (2, "dask")))


def _reference(tmp_path, capsys, name, pairs, chunk, matchup):
    path = str(tmp_path / name)
    assert run_cli(capsys, "--db", path, "add", G, R, R9)[0] == 0
    args = ["--matchup", matchup] if matchup else []
    code, _, err = run_cli(capsys, "--db", path, "run", "--pairs", pairs, "--chunk", chunk,
                           "--no-progress", "--quiet", *args)
    assert code == 0, err
    return pairs_of(path), chunks_of(path)


def chunks_of(db):
    """The chunks in commit order: (player a, player b, first deal, pairs)."""
    return _rows(db, "SELECT m.a, m.b, c.first_deal, c.n FROM chunks c JOIN matchups m "
                     "ON m.id = c.matchup ORDER BY c.id")


def _continue(db, pairs, chunk, matchup):
    done = check_whole(db, chunk)
    args = ["--matchup", matchup] if matchup else []
    if done < pairs:
        p = sub("--db", db, "run", "--pairs", pairs - done, "--chunk", chunk, "--no-progress",
                "--quiet", *args)
        assert p.returncode == 0, p.stderr
    check_whole(db, chunk)
    return pairs_of(db), chunks_of(db)


def _kill_when(db, proc, chunks_at_least, limit=120.0):
    """SIGKILL ``proc`` once the database holds ``chunks_at_least`` chunks (0: as soon as the
    run holds its lock, before any commit)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit and proc.poll() is None:
        try:
            if chunks_at_least == 0:
                with open(db + ladder.LOCK_SUFFIX) as f:
                    if f.read().strip():
                        break
            else:
                con = sqlite3.connect(db, timeout=5)
                n = con.execute("SELECT count(*) FROM chunks").fetchone()[0]
                con.close()
                if n >= chunks_at_least:
                    break
        except (OSError, sqlite3.Error):
            pass
        time.sleep(0.01)
    proc.kill()
    proc.communicate(timeout=60)
    return proc.returncode


@pytest.mark.parametrize("matchup", [f"{G},{R}", None], ids=["forced", "scheduled"])
def test_kill_9_at_several_moments_then_continue_gives_the_same_pairs(tmp_path, capsys,
                                                                      matchup):
    pairs, chunk = 400, 10
    ref = _reference(tmp_path, capsys, "ref.sqlite", pairs, chunk, matchup)
    assert len(ref[0]) == pairs
    db = str(tmp_path / "k.sqlite")
    assert run_cli(capsys, "--db", db, "add", G, R, R9)[0] == 0
    args = ["--matchup", matchup] if matchup else []
    run = ["--db", db, "run", "--pairs", pairs, "--chunk", chunk, "--no-progress", "--quiet",
           *args]
    # 1. before the first commit (the run holds its lock, nothing committed yet)
    assert _kill_when(db, sub(*run, wait=False), 0) == -9  # killed, not finished
    assert check_whole(db, chunk) < pairs
    # 2. inside a commit: rows written, COMMIT not reached
    p = sub(*run, env={ladder.KILL_IN_COMMIT: "3"})
    assert p.returncode == -9
    before = check_whole(db, chunk)
    # 3. mid-run, after some commits
    done = before // chunk
    run[4] = pairs - before
    assert _kill_when(db, sub(*run, wait=False), done + 5) == -9
    assert check_whole(db, chunk) < pairs
    assert _continue(db, pairs, chunk, matchup) == ref


def test_kill_in_commit_leaves_the_chunks_before_it(tmp_path):
    db = str(tmp_path / "c.sqlite")
    assert sub("--db", db, "add", G, R).returncode == 0
    p = sub("--db", db, "run", "--pairs", 100, "--chunk", 10, "--no-progress",
            env={ladder.KILL_IN_COMMIT: "4"})
    assert p.returncode == -9
    assert check_whole(db, 10) == 30  # three whole chunks, the fourth rolled back


# --- bad input ------------------------------------------------------------------------------
def _not_ours(path):
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE x(y)")
    con.commit()
    con.close()


def _newer(path):
    con = sqlite3.connect(path)
    con.execute(f"PRAGMA user_version = {ladder.SCHEMA + 1}")
    con.commit()
    con.close()


def _garbage(path):
    with open(path, "wb") as f:
        f.write(b"hello, not a database\n" * 10)


def _corrupt(path):
    size = os.path.getsize(path)
    with open(path, "r+b") as f:  # keep the header, overwrite the schema pages
        f.seek(100)
        f.write(os.urandom(min(size, 8192) - 100))


@pytest.mark.parametrize("damage,words", [
    (_not_ours, "not a shuangkou ladder"), (_newer, "newer than this shuangkou reads"),
    (_garbage, "not an SQLite file"), (_corrupt, "corrupt")])
@pytest.mark.parametrize("action", [["show"], ["add", "greedy"], ["run", "--pairs", "1"],
                                    ["export", "x.parquet"]])
def test_a_database_that_is_not_a_usable_ladder_is_one_line(tmp_path, capsys, damage, words,
                                                            action):
    path = str(tmp_path / "bad.sqlite")
    if damage is _not_ours:
        damage(path)
    else:
        with Ladder.open(path, create=True):
            pass
        con = sqlite3.connect(path)
        con.execute("PRAGMA journal_mode=DELETE")  # the whole database in the one file
        con.close()
        damage(path)
    if action[0] == "export":
        action = ["export", str(tmp_path / "x.parquet")]
    code, _, err = run_cli(capsys, "--db", path, *action)
    assert code == 2
    one_line(err, words)


def test_locked_database_is_one_line(db, capsys, monkeypatch):
    monkeypatch.setattr(ladder.database, "BUSY_TIMEOUT", 0.2)
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        code, _, err = run_cli(capsys, "--db", db, "add", "random(show_prob=0.5)")
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert code == 2
    one_line(err, "is locked by another process")


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="file permissions do not bind root")
def test_read_only_database_is_one_line_for_writes_and_readable(db, capsys):
    os.chmod(db, 0o444)
    try:
        code, _, err = run_cli(capsys, "--db", db, "add", "random(show_prob=0.5)")
        assert code == 2
        one_line(err, "read-only")
        assert run_cli(capsys, "--db", db, "show")[0] == 0
    finally:
        os.chmod(db, 0o644)


def test_a_file_this_user_cannot_write_is_one_line_and_still_shown(db, capsys, monkeypatch):
    """As the test above where permissions bind (root ignores them): the check itself."""
    real = os.access
    monkeypatch.setattr(ladder.database.os, "access",
                        lambda p, mode: False if p == db and mode == os.W_OK else real(p, mode))
    code, _, err = run_cli(capsys, "--db", db, "add", "random(show_prob=0.5)")
    assert code == 2
    one_line(err, "read-only")
    code, out, _ = run_cli(capsys, "--db", db, "show")
    assert code == 0 and G in out


def test_read_only_connection_refuses_writes_in_one_line(db):
    with Ladder.open(db, write=False) as lad, pytest.raises(LadderError, match="reading only"):
        lad.add([G])


@pytest.mark.parametrize("args,words", [
    (["add", "nosuchbot"], "unknown strategy"),
    (["add", "greedy(nope=1)"], "greedy(nope=1)"),
    (["remove", "pimc"], "is not in ladder"),
    (["history", "pimc"], "is not in ladder"),
    (["run", "--pairs", "5", "--matchup", "greedy"], "must be two players"),
    (["run", "--pairs", "5", "--matchup", "greedy,greedy"], "same player twice"),
    (["run", "--pairs", "5", "--matchup", "greedy,pimc"], "is not in ladder"),
    (["run", "--pairs", "5", "--timeout", "-1"], "timeout"),
    (["run", "--pairs", "5", "--timeout", "nan"], "timeout"),
    (["add", "random", "--seed", "5"], "fixed at its creation"),
    (["add", "random", "--rule", "kou_di_pair=6"], "fixed at its creation"),
    (["import", "/nonexistent/folder"], "not a tournament results folder"),
])
def test_bad_input_is_one_line(db, capsys, args, words):
    code, _, err = run_cli(capsys, "--db", db, *args)
    assert code == 2
    one_line(err, words)


def test_missing_database_for_show_is_one_line(tmp_path, capsys):
    code, _, err = run_cli(capsys, "--db", str(tmp_path / "none.sqlite"), "show")
    assert code == 2
    one_line(err, "does not exist")
    assert not os.path.exists(tmp_path / "none.sqlite")


def test_a_run_needs_two_players(tmp_path, capsys):
    path = str(tmp_path / "one.sqlite")
    assert run_cli(capsys, "--db", path, "add", G)[0] == 0
    code, _, err = run_cli(capsys, "--db", path, "run", "--pairs", 4)
    assert code == 2
    one_line(err, "add at least two")


def test_remove_leaves_pairs_and_add_brings_them_back(db, capsys):
    assert run_cli(capsys, "--db", db, "run", "--pairs", 60, "--chunk", 20, "--no-progress",
                   "--quiet")[0] == 0
    assert run_cli(capsys, "--db", db, "remove", R9)[0] == 0
    with Ladder.open(db, write=False) as lad:
        d = lad.data()
    assert d.names == [G, R] and d.a.size == sum(1 for a, b, _, _ in pairs_of(db)
                                                 if b != 3 and a != 3)
    code, out, _ = run_cli(capsys, "--db", db, "add", R9)
    assert code == 0 and "added again" in out
    with Ladder.open(db, write=False) as lad:
        assert lad.data().a.size == 60


# --- two runs at once -----------------------------------------------------------------------
def test_a_second_run_stops_at_once_naming_the_holder(db, capsys):
    with ladder.run_lock(db):
        t0 = time.monotonic()
        code, _, err = run_cli(capsys, "--db", db, "run", "--pairs", 10, "--no-progress")
        assert time.monotonic() - t0 < 8
    assert code == 2
    one_line(err, "being written by another process", f"pid {os.getpid()}", "since")
    assert run_cli(capsys, "--db", db, "run", "--pairs", 10, "--chunk", 10,
                   "--no-progress", "--quiet")[0] == 0  # released


def test_two_run_processes_either_both_progress_or_one_stops(db):
    a = sub("--db", db, "run", "--pairs", 400, "--chunk", 10, "--no-progress", "--quiet",
            wait=False)
    b = sub("--db", db, "run", "--pairs", 400, "--chunk", 10, "--no-progress", "--quiet",
            wait=False)
    outs = [(p.wait(timeout=300), p.communicate()[1]) for p in (a, b)]
    ok = [c for c, _ in outs if c == 0]
    assert ok, outs
    for code, err in outs:
        if code:
            assert code == 2 and "being written by another process" in err, err
    assert check_whole(db, 10) == 400 * len(ok)


# --- import ---------------------------------------------------------------------------------
def _tournament(tmp_path, name, players=(G, R), fmt="round-robin", **kw):
    raw = {"name": name, "format": fmt, "players": list(players), "deals": 40, "seed": 0,
           "run": {"chunk_size": 20, "progress": False},
           "output": {"dir": str(tmp_path / name), "plots": False}}
    for k, v in kw.items():
        t, _, leaf = k.rpartition(".")
        (raw.setdefault(t, {}) if t else raw)[leaf] = v
    run_tournament(from_dict(raw, source="test"), progress=False)
    return str(tmp_path / name)


def test_import_twice_changes_nothing_and_keeps_deals(tmp_path, capsys, db):
    rr = _tournament(tmp_path, "rr", players=(R, G, R9), first_deal=100)
    h2h = _tournament(tmp_path, "h2h", players=(G, R), fmt="head-to-head")
    code, out, err = run_cli(capsys, "--db", db, "import", rr, h2h)
    assert code == 0, err
    assert "120 pairs" in out and "40 pairs" in out
    first = pairs_of(db)
    code, out, _ = run_cli(capsys, "--db", db, "import", rr, h2h)
    assert code == 0 and out.count("0 pairs in 0 new chunks") == 2
    assert pairs_of(db) == first
    con = sqlite3.connect(db)
    # R vs G in the folder is G vs R in the ladder (lower id first): results negated
    nxt = dict(con.execute("SELECT a * 10 + b, next_deal FROM matchups"))
    assert nxt[12] == 140  # deals 0-39 (h2h) and 100-139 (rr)
    deals = [d for (d,) in con.execute("SELECT deal FROM pairs p JOIN matchups m ON "
                                       "m.id = p.matchup WHERE m.a = 1 AND m.b = 2")]
    assert sorted(deals) == [*range(40), *range(100, 140)]
    con.close()
    # a run goes on above every imported deal
    assert run_cli(capsys, "--db", db, "run", "--pairs", 10, "--chunk", 10, "--matchup",
                   f"{G},{R}", "--no-progress", "--quiet")[0] == 0
    assert [d for a, b, d, _ in pairs_of(db) if (a, b) == (1, 2)][-10:] == \
        list(range(140, 150))


def test_import_matches_the_tournament_results(tmp_path, capsys):
    from sim.tournament.results import load_deals

    folder = _tournament(tmp_path, "h", players=(R, G), fmt="head-to-head")
    db = str(tmp_path / "new.sqlite")  # a new ladder takes the folder's seed and rules
    assert run_cli(capsys, "--db", db, "import", folder)[0] == 0
    cols = load_deals(folder)
    a = np.where(cols["orientation"] == 0, cols["settle0"], cols["settle1"]).astype(np.int64)
    x2_folder = a[0::2] + a[1::2]  # side A of the folder: random (ladder id 1)
    got = pairs_of(db)
    assert [(a, b) for a, b, _, _ in got] == [(1, 2)] * 40
    assert [x for _, _, _, x in got] == x2_folder.tolist()


def test_import_refuses_other_rules_seed_or_single_deals(tmp_path, capsys, db):
    for name, kw, words in (("r", {"rules.kou_di_pair": 6}, "other rules"),
                            ("s", {"seed": 7}, "seed 7"),
                            ("n", {"duplicate": False}, "without duplicate")):
        folder = _tournament(tmp_path, name, fmt="head-to-head", **kw)
        code, _, err = run_cli(capsys, "--db", db, "import", folder)
        assert code == 2
        one_line(err, words)
    assert pairs_of(db) == []


def test_import_of_a_corrupt_folder_is_one_line(tmp_path, capsys, db):
    folder = _tournament(tmp_path, "c", fmt="head-to-head")
    chunk = os.path.join(folder, "chunks", "c000000.npz")
    with open(chunk, "wb") as f:
        f.write(b"PK\x03\x04 torn")
    code, _, err = run_cli(capsys, "--db", db, "import", folder)
    assert code == 2
    one_line(err, "c000000.npz")
    with open(os.path.join(folder, "config.json"), "w") as f:
        f.write("{not json")
    code, _, err = run_cli(capsys, "--db", db, "import", folder)
    assert code == 2
    one_line(err, "config.json")
    assert pairs_of(db) == []


def test_import_reads_no_code(tmp_path, capsys, db):
    """A folder naming a plug-in player is imported without importing the plug-in."""
    folder = _tournament(tmp_path, "p", fmt="head-to-head")
    cfg_path = os.path.join(folder, "config.json")
    with open(cfg_path) as f:
        cfg = json.load(f)
    cfg["plugins"] = ["evil_module_that_does_not_exist"]
    with open(cfg_path, "w") as f:
        json.dump(cfg, f)
    code, _, err = run_cli(capsys, "--db", db, "import", folder)
    # the config hash changed (plugins are hashed): its chunks now belong to another run
    assert code == 2 and "evil_module" not in sys.modules
    one_line(err, "belongs to another run")


# --- export ---------------------------------------------------------------------------------
def test_export_round_trip(db, capsys, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    assert run_cli(capsys, "--db", db, "run", "--pairs", 90, "--chunk", 30, "--no-progress",
                   "--quiet")[0] == 0
    out = str(tmp_path / "p.parquet")
    code, text, _ = run_cli(capsys, "--db", db, "export", out)
    assert code == 0 and "90 pairs" in text
    t = pq.read_table(out).to_pydict()
    con = sqlite3.connect(db)
    rows = con.execute("SELECT a, b, deal, score2, margin, x2, chunk FROM pair_results "
                       "ORDER BY chunk, deal").fetchall()
    con.close()
    got = list(zip(t["a"], t["b"], t["deal"], t["score2"], t["margin"], t["x2"], t["chunk"]))
    assert sorted(got, key=lambda r: (r[6], r[2])) == rows


def test_export_without_pyarrow_names_the_extra(db, capsys, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    code, _, err = run_cli(capsys, "--db", db, "export", str(tmp_path / "p.parquet"))
    assert code == 2
    one_line(err, "shuangkou[parquet]")


def test_history_and_html(db, capsys, tmp_path):
    assert run_cli(capsys, "--db", db, "run", "--pairs", 60, "--chunk", 20, "--no-progress",
                   "--quiet")[0] == 0
    code, out, _ = run_cli(capsys, "--db", db, "history", G)
    assert code == 0 and out.strip()
    page = tmp_path / "l.html"
    assert run_cli(capsys, "--db", db, "show", "--html", page)[0] == 0
    assert "<html" in page.read_text().lower()


@pytest.mark.parametrize("deals,x2", [
    (np.arange(5, 9), np.array([3, -4, 0, 800])),       # consecutive deals, small results
    (np.array([0, 2, 3]), np.array([1, 2**20, -1])),    # a gap (skipped pairs), wide results
    (np.zeros(0, np.int64), np.zeros(0, np.int64))])
def test_blob_round_trip(deals, x2):
    d, x = ladder.encode(deals, x2)
    got = ladder.decode(int(deals[0]) if deals.size else None, deals.size, d, x)
    assert got[0].tolist() == deals.tolist() and got[1].tolist() == x2.tolist()
    assert (d == b"") == (deals.size == 0 or (np.diff(deals) == 1).all())
    with pytest.raises(LadderError):
        ladder.decode(0, deals.size + 1, d or b"\0" * 8, x)


def test_library_errors_are_shuangkou_errors(tmp_path):
    with pytest.raises(LadderError, match="does not exist"):
        Ladder.open(str(tmp_path / "x.sqlite"))
    with pytest.raises(ConfigError, match="unknown strategy"), \
            Ladder.open(str(tmp_path / "y.sqlite"), create=True) as lad:
        lad.add(["nosuchbot"])


# --- a bot that fails -----------------------------------------------------------------------
BAD = '''
from strategies.base import param
from strategies.random import RandomStrategy


class LadderBad(RandomStrategy):
    """random through the Python tier that fails on deal ``at``."""
    name = "ladderbad"
    compiled_kind = None
    at = param(0, int, lo=0)

    def begin_deal(self, seat, seed, deal):
        super().begin_deal(seat, seed, deal)
        self.deal = deal

    def choose(self, obs, legal):
        if self.deal == self.at:
            raise RuntimeError("boom")
        return super().choose(obs, legal)
'''


def test_a_crashing_bot_is_an_incident_and_one_line(tmp_path, capsys):
    """The chunks before the crash stay; the crash is counted for the bot, not the other."""
    bot = tmp_path / "ladderbad_bot.py"
    bot.write_text(BAD)
    db = str(tmp_path / "b.sqlite")
    p = sub("--db", db, "add", G, "ladderbad(at=25)", "--plugin", bot)
    assert p.returncode == 0, p.stderr
    con = sqlite3.connect(db)  # the file is kept with the plug-in's player only
    assert con.execute("SELECT spec, plugin FROM players").fetchall() == [
        (G, None), ("ladderbad(at=25)", str(bot))]
    con.close()
    p = sub("--db", db, "run", "--pairs", 40, "--chunk", 10, "--no-progress", "--plugin", bot)
    assert p.returncode == 2
    one_line(p.stderr, "ladderbad(at=25)", "raised RuntimeError: boom", "deal 25",
             "shuangkou ladder remove 'ladderbad(at=25)'")  # the way out: it is scheduled first
    assert check_whole(db, 10) == 20  # deals 0-19 in two chunks; the third failed
    with Ladder.open(db, write=False) as lad:
        d = lad.data()
    assert d.incidents.tolist() == [[0, 0, 0], [1, 0, 0]]
    con = sqlite3.connect(db)
    assert con.execute("SELECT kind, deal FROM incidents").fetchall() == [("crash", 25)]
    con.close()


@pytest.mark.parametrize("text,kind", [
    ("strategy 'x' in seat 1 took 1.50 s in choose, over the 1 s limit (seed 0, deal 3)",
     "timeout"),
    ("strategy 'x' in seat 1 returned an illegal choice (seed 0, deal 3): no", "illegal"),
    ("strategy 'x' in seat 1 returned the illegal code 9999 (seed 0, deal 3)", "illegal"),
    ("strategy 'x' in seat 1 raised ValueError: illegal in choose (seed 0, deal 3)", "crash"),
])
def test_incident_kinds(text, kind):
    from sim.errors import StrategyError

    assert ladder.classify(StrategyError(text)) == kind
    assert ladder.culprit(StrategyError(text), ["y", "x"]) == 1


def test_chunks_sized_by_time_without_chunk():
    s = ladder.RunState(None, None)
    assert s.size(7) == ladder.CHUNK_FIRST  # not played yet
    s.timed(7, 500, 0.5)  # 1,000 pairs a second
    assert s.size(7) == int(1000 * ladder.CHUNK_SECONDS)
    s.fit_seconds = 0.5  # a slow fit: chunks long enough that refitting stays a small share
    assert s.size(7) == int(1000 * ladder.FIT_SHARE * 0.5)
    s.timed(7, 1, 100.0)  # a very slow matchup: at least CHUNK_MIN
    assert s.size(7) == ladder.CHUNK_MIN
    s.timed(7, 10**7, 0.01)
    assert s.size(7) == ladder.CHUNK_MAX
    s.fit_seconds = 0.0
    s.timed(7, 1237, 1.0)
    assert s.size(7) == 1200  # two significant digits


def test_default_run_sizes_chunks_and_stores_them_whole(db, capsys):
    code, out, err = run_cli(capsys, "--db", db, "run", "--pairs", 3000, "--matchup",
                             f"{G},{R}", "--no-progress", "--quiet")
    assert code == 0, err
    con = sqlite3.connect(db)
    sizes = [n for (n,) in con.execute("SELECT n FROM chunks ORDER BY id")]
    con.close()
    assert sizes[0] == ladder.CHUNK_FIRST and sum(sizes) == 3000
    assert [d for _, _, d, _ in pairs_of(db)] == list(range(3000))


def test_a_compiled_bot_crashing_in_the_warm_up_is_an_incident(tmp_path, capsys):
    """A compiled bot that fails on the first deal fails in the kernel warm-up (one deal of
    each matchup, before any chunk): still one line, exit 2, and an incident for the bot."""
    fixture = os.path.join(ROOT, "tests", "plugin_fixtures", "probe_bots.py")
    db = str(tmp_path / "w.sqlite")
    code, out, err = run_cli(capsys, "--db", db, "add", R, "probe(mode=2)", "--plugin", fixture)
    assert code == 0, err
    code, out, err = run_cli(capsys, "--db", db, "run", "--pairs", 20, "--chunk", 10,
                             "--matchup", f"{R},probe(mode=2)", "--no-progress")
    assert code == 2
    one_line(err.split("…")[-1], "probe(mode=2)", "raised")  # after the compile notice
    assert check_whole(db, 10) == 0
    with Ladder.open(db, write=False) as lad:
        d = lad.data()
    assert d.incidents.tolist() == [[0, 0, 0], [1, 0, 0]]
    con = sqlite3.connect(db)
    assert con.execute("SELECT kind, deal, matchup IS NOT NULL FROM incidents").fetchall() \
        == [("crash", 0, 1)]
    con.close()


def test_quiet_run_prints_only_the_last_line(db, capsys):
    """``run --quiet`` as ``tournament --quiet``: no progress bar and no ranking, only the
    final line (for cron jobs and scripts)."""
    code, out, err = run_cli(capsys, "--db", db, "run", "--pairs", 40, "--chunk", 20,
                             "--matchup", f"{G},{R}", "--quiet")
    assert code == 0, err
    assert err == "" and out.strip().splitlines() == [out.strip()]
    assert out.startswith("played 40 pairs in 2 chunks")


def test_the_docs_sql_examples_run_and_say_what_they_claim(tmp_path, capsys):
    """Every SQL example of docs/ladder.md runs on a real ladder, and 'the deals on which
    greedy lost to anyone' finds them whichever side (A: the lower player id) greedy is on."""
    text = open(os.path.join(ROOT, "docs", "ladder.md"), encoding="utf-8").read()
    block = text.split("sqlite3 results/ladder.sqlite", 1)[1].split("From Python", 1)[0]
    sql = "\n".join(line for line in block.splitlines() if not line.strip().startswith("--"))
    statements = [s.strip() for s in sql.split(";") if s.strip()]
    assert len(statements) == 4
    db = str(tmp_path / "q.sqlite")
    gs = "greedy(show_at=0.25)"
    assert run_cli(capsys, "--db", db, "add", gs, G)[0] == 0  # greedy is side B
    assert run_cli(capsys, "--db", db, "run", "--pairs", 200, "--chunk", 100, "--matchup",
                   f"{G},{gs}", "--no-progress", "--quiet")[0] == 0
    con = sqlite3.connect(db)
    results = [con.execute(s).fetchall() for s in statements]
    lost = sorted(d for _, _, d, x in pairs_of(db) if x > 0)  # side A (gs) won: greedy lost
    con.close()
    assert lost and sorted(r[0] for r in results[1]) == lost
    assert all(r[1] == gs and r[2] < 0 for r in results[1])  # the opponent; greedy's margin
    assert results[2][0][1] == 200


def test_the_cli_docs_ladder_example_runs_as_written(tmp_path, capsys, monkeypatch):
    """docs/cli.md's ladder block, in order, on a fresh results/ folder where results/quick is
    configs/quick.toml's tournament (fewer deals): every command exits 0, and the import
    takes the folder's pairs (the ladder's seed must be the folder's)."""
    import shlex

    from sim.tournament.config import load_config

    text = open(os.path.join(ROOT, "docs", "cli.md"), encoding="utf-8").read()
    block = text.split("## The ladder", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    cmds = [shlex.split(line.split("#", 1)[0]) for line in block.strip().splitlines()]
    assert all(c[:2] == ["shuangkou", "ladder"] for c in cmds)
    monkeypatch.chdir(tmp_path)
    cfg = load_config(os.path.join(ROOT, "configs", "quick.toml"))
    cfg = dataclasses.replace(cfg, deals=100, chunk_size=50, out_dir="results/quick",
                              plots=False, progress=False)
    run_tournament(cfg, progress=False)
    for c in cmds:
        if c[2] == "run":
            c += ["--chunk", "50", "--no-progress", "--quiet"]
        code, out, err = run_cli(capsys, *c[2:])
        assert code == 0, (c, err)
        if c[2] == "import":
            # its 100 deals: new, or (same seed, same deals) already played by the run
            m = re.search(r"(\d+) pairs in 2 new chunks imported(?:, (\d+) pairs already)?", out)
            assert m and int(m.group(1)) + int(m.group(2) or 0) == 100, out


@pytest.mark.parametrize("action", ["show", "export"])
def test_an_output_file_that_is_the_database_is_refused(db, capsys, tmp_path, action):
    """`show --html PATH` and `export PATH` with the database's own path (or a link to it)
    is one line, exit 2, and the database stays whole (it was overwritten)."""
    assert run_cli(capsys, "--db", db, "run", "--pairs", 20, "--chunk", 20, "--matchup",
                   f"{G},{R}", "--no-progress", "--quiet")[0] == 0
    link = str(tmp_path / "link.sqlite")
    os.symlink(db, link)
    for out in (db, link, db + "-wal"):
        args = ["show", "--html", out] if action == "show" else ["export", out]
        code, _, err = run_cli(capsys, "--db", db, *args)
        assert code == 2
        one_line(err, "it is the ladder database")
    assert check_whole(db, 20) == 20


def test_a_plugin_player_needs_plugin_on_run_the_database_only_names_it(tmp_path):
    """The database names a plug-in player's file; `run` never loads it from there: without
    --plugin it is one line naming the flag to add (the file `add` was given) and the way to
    take the player off; with --plugin (the file, wherever it is now) it plays."""
    bot = tmp_path / "ladderbad_bot.py"
    bot.write_text(BAD)
    db = str(tmp_path / "m.sqlite")
    p = sub("--db", db, "add", R, "ladderbad(at=999)", "--plugin", bot)
    assert p.returncode == 0, p.stderr
    p = sub("--db", db, "run", "--pairs", 10, "--no-progress")
    assert p.returncode == 2
    one_line(p.stderr, "ladderbad(at=999)", f"--plugin {bot}", "never loads",
             "ladder remove 'ladderbad(at=999)'")
    moved = tmp_path / "moved_bot.py"
    bot.rename(moved)
    p = sub("--db", db, "run", "--pairs", 10, "--chunk", 10, "--no-progress", "--quiet",
            "--plugin", moved)
    assert p.returncode == 0, p.stderr


def test_anchor_option_of_show_html_history_and_export(db, capsys, tmp_path):
    """`--anchor PLAYER=ELO`: that player shows ELO in `show`, `--json`, `--html`, `history`
    and the exported file's rating list, every difference unchanged; the default is random
    at 0 (it is on this ladder); `mean` the old zero; an unknown player or a bad Elo is one
    line, exit code 2."""
    import pyarrow.parquet as pq

    assert run_cli(capsys, "--db", db, "run", "--pairs", 300, "--chunk", 50, "--matchup",
                   f"{R},{R9}", "--no-progress", "--quiet")[0] == 0

    def listed(*extra):
        code, out, err = run_cli(capsys, "--db", db, "show", "--json", *extra)
        assert code == 0, err
        return json.loads(out)

    default, held, mean = listed(), listed("--anchor", f"{R9}=1500"), listed("--anchor", "mean")
    rating = {d: {p["player"]: p["rating"] for p in d_["players"]}
              for d, d_ in (("default", default), ("held", held), ("mean", mean))}
    assert default["anchor"] == R and rating["default"][R] == 0.0
    assert held["anchor"] == R9 and held["anchor_elo"] == 1500.0 and rating["held"][R9] == 1500
    assert mean["anchor"] is None and abs(rating["mean"][R] + rating["mean"][R9]) < 1e-9
    for r in rating.values():  # the difference is the same whatever the anchor
        assert math.isclose(r[R9] - r[R], rating["default"][R9] - rating["default"][R],
                            abs_tol=1e-6)
    code, out, _ = run_cli(capsys, "--db", db, "show", "--anchor", f"{R9}=1500")
    assert code == 0 and "+1500 (anchor)" in out and f"{R9} held at +1500" in out
    page = tmp_path / "p.html"
    assert run_cli(capsys, "--db", db, "show", "--html", page, "--anchor", f"{R9}=1500")[0] == 0
    assert "+1500 (anchor)" in page.read_text(encoding="utf-8")
    code, out, _ = run_cli(capsys, "--db", db, "history", R, "--points", 2, "--anchor",
                           f"{R9}=1500")
    assert code == 0 and f"{rating['held'][R]:+.1f}" in out
    pq_path = tmp_path / "x.parquet"
    assert run_cli(capsys, "--db", db, "export", pq_path, "--anchor", f"{R9}=1500")[0] == 0
    meta = json.loads(pq.read_schema(pq_path).metadata[b"shuangkou.ladder.ratings"])
    assert meta["anchor"] == R9 and meta["anchor_elo"] == 1500.0
    assert {p["player"]: p["rating"] for p in meta["players"]}[R] == \
        pytest.approx(rating["held"][R])
    for bad, part in (("nobody", "is not in ladder"), (f"{R}=abc", "is not a number"),
                      (f"{R}=1e9", "10,000")):
        code, _, err = run_cli(capsys, "--db", db, "show", "--anchor", bad)
        assert code == 2
        one_line(err, "--anchor", part)
