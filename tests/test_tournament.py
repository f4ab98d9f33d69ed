"""Tournaments (issue 4): duplicate deals, determinism across jobs/backends/chunks, resume,
SPRT, records, the per-deal table and strategy errors.

The players are variants of ``random`` (``show_prob`` changes how eagerly a seat calls), so
these tests do not depend on the stronger strategies.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from sim.analysis.stats import SPRT, Moments, sprt_llr
from sim.core.tables import DEAL_COLUMNS
from sim.errors import ConfigError, StrategyError
from sim.loops import runner
from sim.loops.loop import C_SETTLE0
from sim.reference import validator
from sim.tournament import standings
from sim.tournament.chunks import plan_chunks, tally_from_json, tally_games, tally_to_json
from sim.tournament.config import from_dict, load_config
from sim.tournament.results import NAMED_COLUMNS, WHO_COLUMNS, load_deals, load_state
from sim.tournament.run import run_tournament

EAGER, PLAIN = "random(show_prob=0.9)", "random"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def config(tmp_path, name="t", **kw):
    raw = {"name": name, "players": [EAGER, PLAIN], "deals": 600, "seed": 11,
           "run": {"chunk_size": 200, "progress": False},
           "output": {"dir": str(tmp_path / name), "plots": False}}
    for k, v in kw.items():
        if "." in k:
            t, _, leaf = k.partition(".")
            raw.setdefault(t, {})[leaf] = v
        else:
            raw[k] = v
    return from_dict(raw, source="test")


def stable(summary):
    """A summary without what may differ between equivalent runs (timing, jobs, folders)."""
    s = json.loads(json.dumps(summary))
    for k in ("run", "config_hash", "chunks_total", "chunks_merged"):  # chunk size shows here
        s.pop(k, None)
    for k in ("jobs", "backend", "scheduler", "chunk_size", "progress"):
        s["config"]["run"].pop(k)
    s["config"]["output"].pop("dir")
    s["config"].pop("name")
    return s


def sorted_table(run_dir):
    t = load_deals(run_dir)
    order = np.lexsort((t["orientation"], t["deal"], t["matchup"]))
    return {k: v[order] for k, v in t.items()}


def same_tables(a, b):
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


# --- duplicate deals ----------------------------------------------------------------------
def test_duplicate_pairs_match_the_runner(tmp_path):
    cfg = config(tmp_path, deals=300, **{"run.chunk_size": 120})
    summary = run_tournament(cfg)
    t = load_deals(cfg.out)
    assert list(t) == list(DEAL_COLUMNS)
    assert len(t["deal"]) == 600  # every deal twice
    assert np.array_equal(t["deal"], np.repeat(np.arange(300), 2))
    assert np.array_equal(t["orientation"], np.tile([0, 1], 300))
    # orientation 0: A (player 0) in seats 0 and 2; orientation 1: teams swapped
    assert (t["seat0"][0::2] == 0).all() and (t["seat1"][0::2] == 1).all()
    assert (t["seat0"][1::2] == 1).all() and (t["seat2"][1::2] == 1).all()
    assert (t["seed"] == 11).all()
    # an independent replay of the same deals through the runner
    r0 = runner.summaries(11, 0, 300, runner.make_seats([EAGER, PLAIN]))
    r1 = runner.summaries(11, 0, 300, runner.make_seats([PLAIN, EAGER]))
    assert np.array_equal(t["settle0"][0::2], r0[:, C_SETTLE0])
    assert np.array_equal(t["settle1"][1::2], r1[:, C_SETTLE0 + 1])
    x = (r0[:, C_SETTLE0] + r1[:, C_SETTLE0 + 1]) / 2  # A's mean per deal per player
    m = Moments().add(x)
    res = summary["matchups"][0]["result"]
    assert res["n"] == 300 and res["mean"] == pytest.approx(m.mean, abs=1e-12)
    assert (res["lo"], res["hi"]) == pytest.approx(m.ci(), abs=1e-12)
    assert res["win"] == pytest.approx(np.mean(x > 0))
    assert res["loss"] == pytest.approx(np.mean(x < 0))
    # B's view is the negation
    strat = summary["strategies"]
    assert strat[1]["result"]["mean"] == pytest.approx(-res["mean"])
    assert strat[1]["result"]["win"] == pytest.approx(res["loss"])


def test_stored_statistics_equal_the_per_deal_table(tmp_path):
    cfg = config(tmp_path)
    run_tournament(cfg)
    state = load_state(cfg.out)
    again = tally_to_json(tally_games(load_deals(cfg.out), duplicate=True))
    assert state["matchups"][0]["tally"] == again


def test_single_deals_alternate_orientation(tmp_path):
    cfg = config(tmp_path, duplicate=False, deals=250, **{"run.chunk_size": 100})
    summary = run_tournament(cfg)
    t = load_deals(cfg.out)
    assert np.array_equal(t["deal"], np.arange(250))
    assert np.array_equal(t["orientation"], np.arange(250) % 2)
    odd = runner.summaries(11, 7, 1, runner.make_seats([PLAIN, EAGER]))
    assert t["settle0"][7] == odd[0, C_SETTLE0]
    a = np.where(t["orientation"] == 0, t["settle0"], t["settle1"])
    assert summary["matchups"][0]["result"]["n"] == 250
    assert summary["matchups"][0]["result"]["mean"] == pytest.approx(a.mean())


def test_same_cards_in_every_matchup(tmp_path):
    cfg = config(tmp_path, format="round-robin",
                 players=[EAGER, PLAIN, "random(show_prob=0.5)"], deals=40,
                 **{"run.chunk_size": 40})
    summary = run_tournament(cfg)
    assert [(m["a"], m["b"]) for m in summary["matchups"]] == [(0, 1), (0, 2), (1, 2)]
    t = load_deals(cfg.out)
    for m in range(3):  # every matchup plays deals 0 … 39, each in both orientations
        sel = t["matchup"] == m
        assert np.array_equal(np.sort(t["deal"][sel]), np.repeat(np.arange(40), 2))
    assert summary["cross"][0][1]["mean"] == pytest.approx(-summary["cross"][1][0]["mean"])
    assert summary["ratings"] is not None and len(summary["ratings"]) == 3


def test_gauntlet(tmp_path):
    cfg = config(tmp_path, format="gauntlet", players=[EAGER, PLAIN, "random(show_prob=0.5)"],
                 deals=30, **{"run.chunk_size": 30})
    summary = run_tournament(cfg)
    assert [(m["a"], m["b"]) for m in summary["matchups"]] == [(0, 1), (0, 2)]
    assert summary["strategies"][0]["result"]["n"] == 60
    # Elo in every format (the Ratings plot shows one kind of quantity): Bradley-Terry on the
    # matchups played, centred on the field's mean
    elo = [r["elo"] for r in summary["ratings"]]
    assert len(elo) == 3 and sum(elo) == pytest.approx(0.0, abs=1e-6)


# --- determinism: jobs, backends, chunk sizes -----------------------------------------------
def test_identical_for_any_jobs_backend_and_chunk_size(tmp_path):
    base = config(tmp_path, "a", deals=500, **{"run.chunk_size": 500})
    ref = stable(run_tournament(base))
    table = sorted_table(base.out)
    for name, kw in (("b", {"run.jobs": 2, "run.chunk_size": 70}),
                     ("c", {"run.jobs": 2, "run.backend": "threading", "run.chunk_size": 33}),
                     ("e", {"run.jobs": 2, "run.backend": "fork", "run.chunk_size": 90}),
                     ("f", {"run.jobs": 2, "run.backend": "loky", "run.chunk_size": 110}),
                     ("d", {"run.chunk_size": 1000})):
        cfg = config(tmp_path, name, deals=500, **kw)
        assert stable(run_tournament(cfg)) == ref, name
        assert same_tables(sorted_table(cfg.out), table), name


def test_auto_backend_forks_only_a_process_without_other_threads(tmp_path):
    """``auto`` is ``fork`` on Linux while no other Python thread runs (a fork would copy a
    lock another thread holds, locked for ever), else ``loky``; one job plays in-process;
    run.json names what ran."""
    import threading

    from sim.tournament.run import resolve_backend

    two = config(tmp_path, "x", **{"run.jobs": 2})
    assert two.backend == "auto"
    assert resolve_backend(config(tmp_path, "x")) == "in-process"
    assert resolve_backend(config(tmp_path, "x", **{"run.jobs": 2, "run.backend": "loky"})) \
        == "loky"
    stop = threading.Event()
    t = threading.Thread(target=stop.wait, daemon=True)
    t.start()
    try:
        assert resolve_backend(two) == "loky"
    finally:
        stop.set()
        t.join(10)
    if sys.platform == "linux" and threading.active_count() == 1:
        assert resolve_backend(two) == "fork"
    # from the command line (one thread): forked workers on Linux, same tables as one job
    out = tmp_path / "cli"
    toml = tmp_path / "a.toml"
    toml.write_text(f'players = ["{EAGER}", "{PLAIN}"]\ndeals = 300\nseed = 11\n'
                    '[run]\nchunk_size = 50\nprogress = false\n[output]\nplots = false\n')
    subprocess.run([sys.executable, "-m", "sim.cli", "tournament", str(toml), "--jobs", "2",
                    "--force-jobs", "--out", str(out), "--quiet"], check=True, timeout=300,
                   cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT})
    ran = json.loads((out / "run.json").read_text())["backend"]
    assert ran == ("fork" if sys.platform == "linux" else "loky")
    ref = config(tmp_path, "ref", deals=300)
    assert json.loads((out / "summary.json").read_text())["tallies"] == \
        run_tournament(ref)["tallies"]
    assert same_tables(sorted_table(str(out)), sorted_table(ref.out))


def test_dask_local_cluster_equals_loky(tmp_path):
    distributed = pytest.importorskip("distributed")
    loky = config(tmp_path, "loky", deals=400, **{"run.jobs": 2, "run.chunk_size": 100})
    ref = stable(run_tournament(loky))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        cfg = config(tmp_path, "dask", deals=400,
                     **{"run.backend": "dask", "run.scheduler": cluster.scheduler_address,
                        "run.chunk_size": 100})
        assert stable(run_tournament(cfg)) == ref
    assert same_tables(sorted_table(cfg.out), sorted_table(loky.out))


# --- resume -------------------------------------------------------------------------------
def test_resume_after_stop_equals_uninterrupted_run(tmp_path):
    full = config(tmp_path, "full")
    ref = stable(run_tournament(full))
    part = config(tmp_path, "part")
    assert run_tournament(part, stop_after=2) is None  # as if killed after 2 chunks
    files = sorted(os.listdir(os.path.join(part.out, "chunks")))
    assert len(files) == 2 and not os.path.exists(os.path.join(part.out, "summary.json"))
    stamps = {f: os.stat(os.path.join(part.out, "chunks", f)).st_mtime_ns for f in files}
    st = load_state(part.out)  # a partial run can be reported on
    assert st["complete"] is False and st["chunks_merged"] == 2
    # a torn temporary file from a kill mid-write is ignored and cleaned up
    torn = os.path.join(part.out, "chunks", ".tmp-999-c000002.npz")
    with open(torn, "wb") as f:
        f.write(b"PK\x03\x04 torn")
    with pytest.raises(ConfigError, match="already holds a run.*--resume"):
        run_tournament(part)
    summary = run_tournament(part, resume=True)
    assert stable(summary) == ref
    assert not os.path.exists(torn)
    assert summary["run"]["chunks_before"] == 2 and summary["run"]["chunks_this_session"] == 1
    for f, ns in stamps.items():  # finished chunks were not played again
        assert os.stat(os.path.join(part.out, "chunks", f)).st_mtime_ns == ns
    assert same_tables(sorted_table(part.out), sorted_table(full.out))


def test_resume_refuses_a_different_config(tmp_path):
    cfg = config(tmp_path, "r")
    run_tournament(cfg, stop_after=1)
    other = config(tmp_path, "r", deals=800, seed=12)
    with pytest.raises(ConfigError) as e:
        run_tournament(other, resume=True)
    msg = str(e.value)
    assert "cannot resume" in msg and "deals: 600 -> 800" in msg and "seed: 11 -> 12" in msg
    # jobs and backend do not change results: resuming with others is fine
    same = config(tmp_path, "r", **{"run.jobs": 2, "run.backend": "threading"})
    assert run_tournament(same, resume=True)["complete"]


def test_killed_process_resumes(tmp_path):
    """Kill a real ``shuangkou tournament`` process mid-run, then ``--resume`` it."""
    toml = tmp_path / "kill.toml"
    toml.write_text(textwrap.dedent(f"""\
        players = ["{EAGER}", "{PLAIN}"]
        deals = 100000
        seed = 5
        [run]
        chunk_size = 2000
        progress = false
        [output]
        plots = false
        deal_table = false
        """))
    out = tmp_path / "killed"
    chunks = out / "chunks"
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-m", "sim.cli", "tournament", str(toml), "--out",
                             str(out)], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if chunks.is_dir() and len([f for f in os.listdir(chunks) if f.endswith(".npz")
                                    and f.startswith("c")]) >= 3:
            break
        time.sleep(0.005)
    assert proc.poll() is None, proc.stderr.read().decode()
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done = len([f for f in os.listdir(chunks) if f.startswith("c")])
    assert 3 <= done < 50
    cfg = load_config(toml, {"output.dir": str(out)})
    summary = run_tournament(cfg, resume=True)
    assert summary["run"]["chunks_before"] >= 3
    ref = run_tournament(load_config(toml, {"output.dir": str(tmp_path / "ref"),
                                            "run.jobs": 2, "run.backend": "threading",
                                            "run.chunk_size": 50000}))
    assert stable(summary) == stable(ref)
    assert summary["matchups"][0]["result"]["n"] == 100000  # nothing counted twice


# --- SPRT ---------------------------------------------------------------------------------
def sprt_config(tmp_path, name, **kw):
    return config(tmp_path, name, players=["random(show_prob=1.0)", "random(show_prob=0.05)"],
                  deals=20000, sprt={"mu0": 0.0, "mu1": 0.2},
                  **{"run.chunk_size": 50, **kw})


def test_sprt_stops_at_the_same_pair_for_any_chunk_size_and_jobs(tmp_path):
    # the SPRT looks after every pair in deal order, whatever the chunk size: a chunk of
    # 10,000 used to make it a fixed 10,000-pair test, a chunk of 50 stopped at a multiple of 50
    one = run_tournament(sprt_config(tmp_path, "s1"))
    two = run_tournament(sprt_config(tmp_path, "s2", **{"run.jobs": 2}))
    big = run_tournament(sprt_config(tmp_path, "s3", **{"run.chunk_size": 10000}))
    mid = run_tournament(sprt_config(tmp_path, "s4", **{"run.chunk_size": 500,
                                                           "run.jobs": 2}))
    assert one["stopped_by_sprt"] and one["sprt"]["state"] == "H1"
    assert stable(one) == stable(two) == stable(big) == stable(mid)
    n = one["sprt"]["decided_at"]
    assert n % 50 and n < 500  # inside a chunk, long before the deal limit
    assert one["sprt"]["llr"] >= one["sprt"]["bounds"][1]
    # nothing past the deciding pair counts: statistics, chunk files, per-deal table, report
    for name, size in (("s1", 50), ("s2", 50), ("s3", 10000), ("s4", 500)):
        assert len(os.listdir(os.path.join(tmp_path, name, "chunks"))) == -(-n // size)
        t = load_deals(os.path.join(tmp_path, name))
        assert t["deal"].size == 2 * n and t["deal"].max() == n - 1
        again = load_state(os.path.join(tmp_path, name))
        assert again["sprt"]["decided_at"] == n and again["complete"]
        assert again["matchups"][0]["tally"] == one["tallies"][0]
    a = np.where(t["orientation"] == 0, t["settle0"], t["settle1"]).astype(np.int64)
    x = (a[0::2] + a[1::2]) / 2
    assert one["matchups"][0]["result"]["n"] == n
    assert one["matchups"][0]["result"]["mean"] == pytest.approx(x.mean())
    # the LLR of exactly those pairs is past the bound, and that of one pair fewer is not
    lo, hi = one["sprt"]["bounds"]
    assert sprt_llr(n, x.sum(), (x * x).sum(), 0.0, 0.2) >= hi
    assert lo < sprt_llr(n - 1, x[:-1].sum(), (x[:-1] ** 2).sum(), 0.0, 0.2) < hi
    text = read(os.path.join(tmp_path, "s1", "summary.md"))
    assert "H1 accepted" in text and "LLR" in text


def test_sprt_keeps_no_records_past_the_deciding_pair(tmp_path):
    # records of the first 600 deals asked, the SPRT decides inside the one 10,000-deal chunk
    s = run_tournament(sprt_config(tmp_path, "rec", **{"run.chunk_size": 10000,
                                                         "output.records": 600}))
    n = s["sprt"]["decided_at"]
    recs = [json.loads(x) for x in read(os.path.join(tmp_path, "rec", "records.jsonl"))
            .splitlines()]
    assert n < 600 and sorted({r["deal"] for r in recs}) == list(range(n))
    assert len(recs) == 2 * n


def test_sprt_resume_and_any_order_of_chunks(tmp_path):
    # killed after the chunks that hold the decision were saved whole (as when chunks
    # finish out of order): --resume cuts the deciding chunk and gives the same result
    whole = run_tournament(sprt_config(tmp_path, "w", **{"run.chunk_size": 500}))
    n = whole["sprt"]["decided_at"]
    cfg = sprt_config(tmp_path, "k", **{"run.chunk_size": 50})
    assert run_tournament(cfg, stop_after=-(-n // 50)) is None  # killed before the cut
    assert len(os.listdir(os.path.join(cfg.out, "chunks"))) == -(-n // 50)
    assert load_deals(cfg.out)["deal"].max() == -(-n // 50) * 50 - 1  # saved whole
    assert load_state(cfg.out)["sprt"]["decided_at"] == n  # report: cut on reading
    resumed = run_tournament(cfg, resume=True)
    assert stable(resumed) == stable(whole)
    assert load_deals(cfg.out)["deal"].max() == n - 1
    # the aggregate gives the same in any order of arrival
    from sim.tournament.chunks import Aggregate
    from sim.tournament.run import _tasks, play_chunk

    chunks = plan_chunks(cfg)
    results = [play_chunk(t) for t in _tasks(cfg, chunks[:-(-n // 50) + 2])]
    states = []
    for order in (results, results[::-1], results[1::2] + results[0::2]):
        agg = Aggregate(cfg, chunks)
        for r in order:
            agg.add(r.chunk, tally_from_json(r.tally), r.tally_cols)
        states.append((agg.state(), agg.cut))
    assert states[0][1] == ((n - 1) // 50, n - (n - 1) // 50 * 50)
    assert all(json.dumps(s) == json.dumps(states[0]) for s in states)


def test_sprt_accepts_h0(tmp_path):
    cfg = config(tmp_path, "h0", players=["random(show_prob=0.05)", "random(show_prob=1.0)"],
                 deals=20000, sprt={"mu0": 0.0, "mu1": 0.2}, **{"run.chunk_size": 50})
    s = run_tournament(cfg)
    assert s["sprt"]["state"] == "H0" and s["sprt"]["llr"] <= s["sprt"]["bounds"][0]


def test_sprt_min_pairs_before_the_first_decision(tmp_path):
    # configs/sprt.toml at seed 45 with a look after every pair: the plug-in variance of the
    # first 3 pairs is tiny and the LLR crosses the H1 bound (min_pairs = 2 decided there;
    # the config now refuses fewer than 30); sprt.min_pairs (default 200) holds every
    # decision back until the variance is estimated
    def run(name, **sprt):
        return run_tournament(config(
            tmp_path, name, players=["random(show_prob=1.0)", "random"], deals=420, seed=45,
            sprt={"mu0": 0.0, "mu1": 0.1, **sprt}, **{"run.chunk_size": 420}))

    s = SPRT(0.0, 0.1, min_pairs=2)
    t = load_deals(run("mpdefault") and str(tmp_path / "mpdefault"))
    a = np.where(t["orientation"] == 0, t["settle0"], t["settle1"]).astype(np.int64)
    assert s.update_pairs((a[0::2] + a[1::2])[:210] / 2) == 3 and s.state == "H1"
    held = load_state(str(tmp_path / "mpdefault"))["sprt"]
    assert held["min_pairs"] == 200 and held["state"] == "continue"  # 420 pairs: undecided
    assert run("mp30", min_pairs=30)["sprt"]["state"] == "continue"
    with pytest.raises(ConfigError, match="min_pairs' = 2: must be an integer in 30"):
        run("mp2", min_pairs=2)


# --- records ------------------------------------------------------------------------------
def test_records_first_k_and_filter(tmp_path):
    cfg = config(tmp_path, deals=400, **{"output.records": 3,
                                        "output.record_filter": "multiplier == 4",
                                        "output.record_limit": 5})
    run_tournament(cfg)
    recs = [json.loads(x) for x in read(os.path.join(cfg.out, "records.jsonl")).splitlines()]
    first = [r for r in recs if r["deal"] < 3]
    assert sorted((r["deal"], r["tournament"]["orientation"]) for r in first) == \
        [(d, o) for d in range(3) for o in (0, 1)]
    assert first[1]["seats"] == [PLAIN, EAGER, PLAIN, EAGER]  # orientation 1: teams swapped
    filtered = [r for r in recs if r["deal"] >= 3]
    t = load_deals(cfg.out)
    hits = [(d, o) for d, o, m in zip(t["deal"], t["orientation"], t["multiplier"])
            if m == 4 and d >= 3]
    assert [(r["deal"], r["tournament"]["orientation"]) for r in filtered] == hits[:5]
    assert all(r["last_trick_multiplier"] == 4 for r in filtered)
    for r in recs[:4]:
        assert validator.validate_record(r) == []


# --- strategies: Python tier, plug-ins, errors ------------------------------------------------
PLUGIN = '''
from strategies.random import RandomStrategy


class PyRandom(RandomStrategy):
    """random through the Python step API (same draws as the compiled kernel)."""
    name = "pyrandom"
    compiled_kind = None


class Crashy(RandomStrategy):
    """raises on deal 7"""
    name = "crashy"
    compiled_kind = None

    def begin_deal(self, seat, seed, deal):
        super().begin_deal(seat, seed, deal)
        if deal == 7:
            raise RuntimeError("boom")
'''


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    (tmp_path / "tplug.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    return "tplug"


def test_python_tier_plugin_matches_compiled(tmp_path, plugin):
    cfg = config(tmp_path, "py", players=["pyrandom(show_prob=0.9)", PLAIN], deals=60,
                 plugins=[plugin], **{"run.chunk_size": 30, "run.jobs": 2})
    py = run_tournament(cfg)
    comp = run_tournament(config(tmp_path, "comp", deals=60, **{"run.chunk_size": 30}))
    assert py["tallies"] == comp["tallies"]


def test_strategy_error_keeps_finished_chunks(tmp_path, plugin):
    cfg = config(tmp_path, "crash", players=["crashy", PLAIN], deals=20, plugins=[plugin],
                 **{"run.chunk_size": 5})
    with pytest.raises(StrategyError, match=r"'crashy'.*seed 11, deal 7"):
        run_tournament(cfg)
    assert sorted(os.listdir(os.path.join(cfg.out, "chunks"))) == ["c000000.npz"]


# --- table access -------------------------------------------------------------------------
def test_load_deals_columns_and_pandas(tmp_path):
    cfg = config(tmp_path, deals=50, **{"run.chunk_size": 20})
    run_tournament(cfg)
    t = load_deals(cfg.out, ["deal", "attacker_score"])
    assert list(t) == ["deal", "attacker_score"] and t["deal"].dtype == np.int64
    with pytest.raises(ConfigError, match="column 'nope'"):
        load_deals(cfg.out, ["nope"])
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(load_deals(cfg.out))
    assert len(df) == 100 and set(df.columns) == set(DEAL_COLUMNS)


def test_deal_table_is_parquet_with_names(tmp_path):
    # one Parquet file per chunk in deals/, readable by pandas and pyarrow as a folder, with
    # the players' names and the matchup label as dictionary-encoded string columns
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    pd = pytest.importorskip("pandas")
    players = [EAGER, PLAIN, "random(show_prob=0.5)"]
    cfg = config(tmp_path, format="round-robin", players=players, deals=40,
                 **{"run.chunk_size": 20})
    run_tournament(cfg)
    deals = os.path.join(cfg.out, "deals")
    assert sorted(os.listdir(deals)) == [f"c{i:06d}.parquet" for i in range(6)]
    with np.load(os.path.join(cfg.out, "chunks", "c000000.npz")) as z:
        assert "deal" not in z.files and "_stats" in z.files  # the table is not stored twice
    table = pq.read_table(deals)
    assert table.num_rows == 3 * 80 and pa.types.is_dictionary(table.schema.field(
        "matchup_label").type)
    assert table.schema.field("seat0").type == pa.int16()
    t = load_deals(cfg.out, ["matchup", "seat0", "matchup_label", "player_a", "player_b"])
    labels = {0: f"{EAGER} vs {PLAIN}", 1: f"{EAGER} vs {players[2]}",
              2: f"{PLAIN} vs {players[2]}"}
    assert [labels[m] for m in t["matchup"]] == list(t["matchup_label"])
    assert [players[m] for m in (t["seat0"])] == [
        a if o == 0 else b for a, b, o in zip(t["player_a"], t["player_b"],
                                               load_deals(cfg.out, ["orientation"])["orientation"])]
    df = pd.read_parquet(deals)
    assert len(df) == 240 and set(df.columns) == {*DEAL_COLUMNS, *NAMED_COLUMNS}
    assert df.groupby("matchup_label", observed=True).size().to_dict() == {
        v: 80 for v in labels.values()}


def test_deal_table_names_who_played_and_who_called(tmp_path):
    # names per seat and team, the caller's name (null for a void deal) and its settlement:
    # "mean settlement by who called trump" is one groupby on the documented read_parquet
    import pyarrow.parquet as pq

    pd = pytest.importorskip("pandas")
    players = ["random(show_prob=0.0)", "random(show_prob=0.001)", EAGER]
    cfg = config(tmp_path, format="round-robin", players=players, deals=60,
                 **{"run.chunk_size": 30})
    run_tournament(cfg)
    df = pd.read_parquet(os.path.join(cfg.out, "deals"))
    for i in range(4):
        assert (df[f"seat{i}_player"].astype(str) == [players[k] for k in df[f"seat{i}"]]).all()
    assert (df["team0_player"] == df["seat2_player"]).all()
    assert (df["team1_player"] == df["seat3_player"]).all()
    assert (df["team0_player"].astype(str) == np.where(df["orientation"] == 0, df["player_a"],
                                                       df["player_b"])).all()
    void = df["void"] != 0
    assert 0 < void.sum() < len(df)  # players that (almost) never show: void deals (R11)
    assert df["caller_player"][void].isna().all()
    called = df[~void]
    seat_of = called["caller"].to_numpy()
    assert (called["caller_player"].astype(str) == [
        players[called[f"seat{c}"].iloc[k]] for k, c in enumerate(seat_of)]).all()
    settle = called[[f"settle{i}" for i in range(4)]].to_numpy()
    assert (called["caller_settle"] == settle[np.arange(len(called)), seat_of]).all()
    assert (df["caller_settle"][void] == 0).all()
    by_caller = df.groupby("caller_player", observed=True)["caller_settle"].mean()
    loop = {}  # the same by hand
    for row in df.itertuples():
        if row.void == 0:
            who = players[getattr(row, f"seat{row.caller}")]
            loop.setdefault(who, []).append(getattr(row, f"settle{row.caller}"))
    assert by_caller.to_dict() == pytest.approx({k: np.mean(v) for k, v in loop.items()})
    # load_deals gives them by name; a table written before they were stored gives them too
    t = load_deals(cfg.out, [*WHO_COLUMNS, "caller_settle"])
    assert list(t["caller_player"]) == [None if v is None or v != v else v
                                        for v in df["caller_player"].astype(object)]
    path = os.path.join(cfg.out, "deals", "c000000.parquet")
    old = pq.read_table(path)
    pq.write_table(old.drop_columns([*WHO_COLUMNS, "caller_settle"]), path)
    # such runs kept no table checksum, nor a run id (both came in the same version)
    for name in sorted(os.listdir(os.path.join(cfg.out, "chunks"))):
        chunk = os.path.join(cfg.out, "chunks", name)
        with np.load(chunk) as z:
            arrays = {k: z[k] for k in z.files}
        meta = json.loads(str(arrays["_meta"]))
        meta.pop("run_id")
        if name == "c000000.npz":
            meta.pop("deals_sha256")
        np.savez(chunk, **{**arrays, "_meta": np.array(json.dumps(meta))})
    conf = os.path.join(cfg.out, "config.json")
    with open(conf) as f:
        raw = json.load(f)
    raw.pop("_run_id")
    with open(conf, "w") as f:
        json.dump(raw, f)
    again = load_deals(cfg.out, [*WHO_COLUMNS, "caller_settle"])
    for k in t:
        assert list(again[k]) == list(t[k]), k


def test_pandas_comes_with_the_documented_install():
    # the docs read the per-deal table with pandas.read_parquet after `pip install -e .`:
    # pandas is a dependency, not only a test extra
    import re

    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "pyproject.toml"), "rb") as f:
        deps = tomllib.load(f)["project"]["dependencies"]
    names = {re.split(r"[<>=!~;\[ ]", d, maxsplit=1)[0].strip().lower() for d in deps}
    assert {"pandas", "pyarrow"} <= names
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    with open(os.path.join(root, "docs", "results.md"), encoding="utf-8") as f:
        results = f.read()
    assert "pip install -e . &&" in readme and 'pd.read_parquet("results/quick/deals")' in results


def test_runs_with_the_table_in_the_chunk_file_still_load(tmp_path):
    # results folders written before the Parquet table keep their columns in chunks/*.npz
    import shutil

    cfg = config(tmp_path, deals=40, **{"run.chunk_size": 20})
    run_tournament(cfg)
    new = load_deals(cfg.out)
    for i in range(2):
        path = os.path.join(cfg.out, "chunks", f"c{i:06d}.npz")
        with np.load(path) as z:
            arrays = {k: z[k] for k in z.files}
        meta = json.loads(str(arrays["_meta"]))  # those runs kept no table checksum or run id
        arrays["_meta"] = np.array(json.dumps({k: v for k, v in meta.items()
                                               if k not in ("deals_sha256", "run_id")}))
        rows = slice(40 * i, 40 * (i + 1))
        np.savez(path, **{k: v[rows] for k, v in new.items()}, **arrays)
    shutil.rmtree(os.path.join(cfg.out, "deals"))
    conf = os.path.join(cfg.out, "config.json")  # nor did their config.json hold a run id
    with open(conf) as f:
        raw = json.load(f)
    raw.pop("_run_id")
    with open(conf, "w") as f:
        json.dump(raw, f)
    assert same_tables(load_deals(cfg.out), new)


def test_sprt_drops_the_deal_files_of_discarded_chunks(tmp_path):
    s = run_tournament(sprt_config(tmp_path, "sd"))
    n = -(-s["sprt"]["decided_at"] // 50)
    assert sorted(os.listdir(tmp_path / "sd" / "deals")) == [
        f"c{i:06d}.parquet" for i in range(n)]


def test_no_deal_table(tmp_path):
    cfg = config(tmp_path, deals=50, **{"output.deal_table": False})
    s = run_tournament(cfg)
    assert s["matchups"][0]["result"]["n"] == 50
    with pytest.raises(ConfigError, match="deal_table = false"):
        load_deals(cfg.out)


def test_plan_chunks_order(tmp_path):
    cfg = config(tmp_path, format="round-robin", players=[EAGER, PLAIN, "random(show_prob=0.5)"],
                 deals=250, first_deal=1000, **{"run.chunk_size": 100})
    chunks = plan_chunks(cfg)
    assert [(c.matchup, c.first, c.n) for c in chunks[:4]] == [
        (0, 1000, 100), (1, 1000, 100), (2, 1000, 100), (0, 1100, 100)]
    assert [c.n for c in chunks[-3:]] == [50, 50, 50] and len(chunks) == 9


def test_tally_json_round_trip(tmp_path):
    cfg = config(tmp_path, deals=20, **{"run.chunk_size": 20})
    run_tournament(cfg)
    t = tally_games(load_deals(cfg.out), duplicate=True)
    assert tally_to_json(tally_from_json(json.loads(json.dumps(tally_to_json(t))))) == \
        tally_to_json(t)


def test_progress_bar_shows_rate(tmp_path, capsys):
    cfg = config(tmp_path, deals=50, **{"run.chunk_size": 10})
    run_tournament(cfg, progress=True)
    err = capsys.readouterr().err
    # deals (each played twice), not games; a plain line: stderr is not a terminal here
    assert "deals/s" in err and "50/50 deals (100%)" in err and "\r" not in err


def test_cli_tournament_and_report(tmp_path, capsys):
    from sim.cli import main

    toml = tmp_path / "c.toml"
    toml.write_text(f'players = ["{EAGER}", "{PLAIN}"]\ndeals = 40\nseed = 3\n'
                    f'[run]\nchunk_size = 20\n')
    out = tmp_path / "res"
    assert main(["tournament", str(toml), "--out", str(out), "--no-progress", "--no-plots",
                 "--deals", "30", "--seed", "4"]) == 0
    text = capsys.readouterr().out
    assert "## Matchups" in text and "## Players" in text and "results in" in text
    cfg = json.loads(read(out / "config.json"))
    assert cfg["deals"] == 30 and cfg["seed"] == 4
    # a different config into a folder holding a run: refused, naming the way out
    assert main(["tournament", str(toml), "--out", str(out), "--no-progress"]) == 2
    assert "different run" in (err := capsys.readouterr().err) and "--force" in err
    assert main(["tournament", str(toml), "--out", str(out), "--no-progress", "--resume",
                 "--deals", "30", "--seed", "4"]) == 0


def test_deal_clustering_is_identical_for_any_jobs_chunk_size_and_resume(tmp_path):
    """Issue 19 item 1.2: the cross-moments of the matchups over shared deals (what the
    players' intervals and the ratings clustered by deal need) are exact sums of the per-deal
    table, the same for any chunk size, jobs and after a resume."""
    from sim.analysis.stats import ClusterMoments

    players = [EAGER, PLAIN, "random(show_prob=0.5)"]
    base = config(tmp_path, "a", format="round-robin", players=players, deals=60,
                  **{"run.chunk_size": 60})
    ref = stable(run_tournament(base))
    st = load_state(base.out)
    cm = ClusterMoments.from_dict(st["deal_moments"])
    t = sorted_table(base.out)
    own = np.where(t["orientation"] == 0, t["settle0"], t["settle1"]).astype(np.int64)
    x2 = (own[0::2] + own[1::2]).reshape(3, 60).T  # (deal, matchup)
    assert cm == ClusterMoments(3).add(x2) and cm.deals == 60
    assert ref["clustered_deals"] == 60
    for name, kw in (("b", {"run.chunk_size": 25}),
                     ("c", {"run.jobs": 2, "run.backend": "fork", "run.chunk_size": 7})):
        cfg = config(tmp_path, name, format="round-robin", players=players, deals=60, **kw)
        assert stable(run_tournament(cfg)) == ref, name
        assert load_state(cfg.out)["deal_moments"] == st["deal_moments"], name
    part = config(tmp_path, "p", format="round-robin", players=players, deals=60,
                  **{"run.chunk_size": 25})
    assert run_tournament(part, stop_after=4) is None  # row 0 complete, row 1 started
    partial = load_state(part.out)
    assert ClusterMoments.from_dict(partial["deal_moments"]).deals == 25
    assert stable(run_tournament(part, resume=True)) == ref


# --- live standings -----------------------------------------------------------------------
class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_live_standings_on_a_terminal(tmp_path, monkeypatch):
    # the progress bar shows the matchup's running mean, its interval and W/D/L (it showed
    # only deals/s and an ETA)
    term = _Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    s = run_tournament(config(tmp_path, "tty", **{"run.progress": True}))
    r = s["matchups"][0]["result"]
    shown = term.getvalue()
    assert f"{EAGER} vs {PLAIN} {r['mean']:+.2f} [" in shown and "W/D/L " in shown, shown
    assert "600/600" in shown


def test_live_standings_as_plain_lines_elsewhere(tmp_path, monkeypatch, capsys):
    # not a terminal: plain lines at a bounded rate (one per PLAIN_EVERY seconds and one at
    # the end), with the leader and the last matchup, never the bar's carriage returns
    players = [EAGER, PLAIN, "random(show_prob=0.5)"]
    run_tournament(config(tmp_path, "log", format="round-robin", players=players,
                          **{"run.progress": True}))
    err = capsys.readouterr().err
    assert "\r" not in err
    lines = [x for x in err.splitlines() if x.startswith("log: ")]
    assert len(lines) == 1 and lines[0].startswith("log: 1,800/1,800 deals (100%)")
    assert " | 1. " in lines[0] and "W/D/L" in lines[0] and "(of 3) · last: " in lines[0]
    monkeypatch.setattr(standings, "PLAIN_EVERY", 0.0)
    s = run_tournament(config(tmp_path, "every", format="round-robin", players=players,
                              **{"run.progress": True}))
    lines = [x for x in capsys.readouterr().err.splitlines() if x.startswith("every: ")]
    assert len(lines) == 9  # a line per chunk at most
    best = max(s["strategies"], key=lambda x: x["result"]["mean"])
    assert f"| 1. {best['spec']} {best['result']['mean']:+.2f} [" in lines[-1]


def test_standings_text():
    from sim.analysis.stats import WDL

    live = standings.Standings(["a", "b", "c"], [(0, 1), (0, 2), (1, 2)])
    assert live.text() == ""
    live.add(0, {"pairs": Moments().add([1.0, 2.0, 0.0, 1.0]), "wdl": WDL(3, 1, 0)})
    live.add(2, {"pairs": Moments().add([-3.0, -1.0]), "wdl": WDL(0, 0, 2)})
    text = live.text()
    # c beat b by 2 a pair, a beat b by 1: c leads, then a, then b (-8 over 6 pairs)
    assert text.startswith("1. c +2.00 [") and " · 2. a +1.00 · 3. b -1.33 (of 3)" in text
    assert text.endswith("· last: b vs c -2.00 [-3.96, -0.04] W/D/L 0/0/100%")
    assert len(live.text(30)) == 30
