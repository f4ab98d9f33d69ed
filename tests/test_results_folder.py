"""A results folder is data that one process writes (issue items 5, 6, 9, 11, 12c).

- one identity per chunk file: the index inside it must be the one its name says;
- ``report`` and ``--resume`` import nothing that a results folder names or holds;
- one writer per folder (a lock file with the writer's pid), and only stale temp files go;
- ``--plugin`` modules reach loky workers; a dying worker or a corrupt file is one line.

Commands that must not import something run in a fresh interpreter (``sys.modules`` of the
test process already holds the plug-ins that made the runs).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap

import pytest

from sim.cli import main
from sim.errors import ConfigError, WorkerError
from sim.tournament.config import from_dict
from sim.tournament.results import load_deals, load_state
from sim.tournament.run import run_tournament

EAGER, PLAIN = "random(show_prob=0.9)", "random"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def config(tmp_path, name="t", **kw):
    raw = {"name": name, "players": [EAGER, PLAIN], "deals": 60, "seed": 3,
           "run": {"chunk_size": 20, "progress": False},
           "output": {"dir": str(tmp_path / name), "plots": False}}
    for k, v in kw.items():
        t, _, leaf = k.rpartition(".")
        (raw.setdefault(t, {}) if t else raw)[leaf] = v
    return from_dict(raw, source="test")


def chunk_names(out):
    return sorted(f for f in os.listdir(os.path.join(out, "chunks")) if f.startswith("c"))


def cli(*args, cwd, path=()):
    """``shuangkou ARGS`` in a fresh interpreter, as the console script runs it (``-P``: the
    working directory is not put on ``sys.path``): (exit code, stderr)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, *map(str, path)]))
    p = subprocess.run([sys.executable, "-P", "-m", "sim.cli", *map(str, args)], cwd=cwd,
                       env=env, capture_output=True, text=True, timeout=300)
    return p.returncode, p.stderr


def one_line_error(err, *parts):
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "error:" in lines[0] and "Traceback" not in err
    for p in parts:
        assert p in lines[0], (p, lines[0])
    return lines[0]


def stable(summary):
    return summary["tallies"]


# --- item 5: one chunk identity -----------------------------------------------------------------
def test_stray_copy_of_a_chunk_is_named(tmp_path):
    cfg = config(tmp_path)
    ref = run_tournament(cfg)
    chunks = os.path.join(cfg.out, "chunks")
    shutil.copy(os.path.join(chunks, "c000000.npz"), os.path.join(chunks, "c000001 copy.npz"))
    for call in (load_state, load_deals):
        with pytest.raises(ConfigError, match=r"c000001 copy\.npz.*holds chunk 0.*delete"):
            call(cfg.out)
    os.remove(os.path.join(chunks, "c000001 copy.npz"))
    assert [m["tally"] for m in load_state(cfg.out)["matchups"]] == ref["tallies"]
    assert len(load_deals(cfg.out)["deal"]) == 120


def test_renamed_chunk_is_refused_then_resume_fixes_the_run(tmp_path):
    ref = run_tournament(config(tmp_path, "ref"))
    cfg = config(tmp_path)
    run_tournament(cfg, stop_after=2)
    chunks = os.path.join(cfg.out, "chunks")
    os.replace(os.path.join(chunks, "c000001.npz"), os.path.join(chunks, "c000002.npz"))
    with pytest.raises(ConfigError) as e:
        run_tournament(cfg, resume=True)
    assert "c000002.npz" in str(e.value) and "holds chunk 1" in str(e.value)
    assert chunk_names(cfg.out) == ["c000000.npz", "c000002.npz"]  # nothing was played
    os.remove(os.path.join(chunks, "c000002.npz"))  # as the message says
    summary = run_tournament(cfg, resume=True)
    assert summary["complete"] and stable(summary) == stable(ref)
    assert len(load_deals(cfg.out)["deal"]) == 120


# --- item 11: corrupt files are one line ----------------------------------------------------
def test_corrupt_chunk_file_is_one_line(tmp_path, capsys):
    cfg = config(tmp_path)
    run_tournament(cfg, stop_after=2)
    bad = os.path.join(cfg.out, "chunks", "c000001.npz")
    with open(bad, "wb") as f:
        f.write(b"PK\x03\x04 not a zip")
    assert main(["report", cfg.out, "--no-plots"]) == 2
    one_line_error(capsys.readouterr().err, "c000001.npz", "corrupt", "delete")
    toml = tmp_path / "t.toml"
    toml.write_text(f'players = ["{EAGER}", "{PLAIN}"]\ndeals = 60\nseed = 3\n'
                    f'[run]\nchunk_size = 20\n[output]\nplots = false\n')
    assert main(["tournament", str(toml), "--out", cfg.out, "--resume", "--no-progress"]) == 2
    one_line_error(capsys.readouterr().err, "c000001.npz", "corrupt")
    assert chunk_names(cfg.out) == ["c000000.npz", "c000001.npz"]  # nothing removed


def test_damaged_or_stray_deal_table_is_named(tmp_path):
    cfg = config(tmp_path)
    run_tournament(cfg)
    deals = os.path.join(cfg.out, "deals")
    path = os.path.join(deals, "c000002.parquet")
    with open(path, "r+b") as f:
        f.seek(100)
        f.write(b"garbage" * 20)
    # the chunk file holds its table's checksum: report, --resume and load_deals refuse it
    for call in (load_state, load_deals):
        with pytest.raises(ConfigError, match=r"c000002\.parquet' is not the table of chunk "
                                              r"file .*c000002\.npz'.*SHA-256"):
            call(cfg.out)
    shutil.copy(os.path.join(deals, "c000001.parquet"), path)  # another chunk's table
    with pytest.raises(ConfigError, match=r"c000002\.parquet' is not the table"):
        load_deals(cfg.out)
    os.remove(path)
    for call in (load_state, load_deals):
        with pytest.raises(ConfigError, match=r"c000002\.parquet' of chunk file .* is missing"):
            call(cfg.out)


@pytest.mark.parametrize("content", [b"\xff\xfe garbage", b"[1, 2]", b'{"players": '])
def test_corrupt_config_json_is_one_line(tmp_path, capsys, content):
    cfg = config(tmp_path)
    run_tournament(cfg, stop_after=1)
    with open(os.path.join(cfg.out, "config.json"), "wb") as f:
        f.write(content)
    assert main(["report", cfg.out, "--no-plots"]) == 2
    one_line_error(capsys.readouterr().err, "config.json")
    toml = tmp_path / "t.toml"
    toml.write_text(f'players = ["{EAGER}", "{PLAIN}"]\ndeals = 60\nseed = 3\n'
                    f'[run]\nchunk_size = 20\n[output]\nplots = false\n')
    assert main(["tournament", str(toml), "--out", cfg.out, "--resume", "--no-progress"]) == 2
    one_line_error(capsys.readouterr().err, "config.json")


# --- item 6: a results folder is data ---------------------------------------------------------
PLUGIN = '''
import os
from strategies.random import RandomStrategy


class PyRandom(RandomStrategy):
    """random through the Python step API"""
    name = "{name}"
    compiled_kind = None
'''
PLANTED = '''
import os
open(os.path.join({mark!r}, __name__ + ".imported"), "w").close()
raise SystemExit("planted module {{}} was imported".format(__name__))
'''


def plant(folder, mark, *modules):
    for m in modules:
        (folder / f"{m}.py").write_text(PLANTED.format(mark=str(mark)))


@pytest.fixture
def plugged(tmp_path, monkeypatch):
    """A plug-in module ``trplug`` in its own folder, importable in this process."""
    pdir = tmp_path / "plug"
    pdir.mkdir()
    (pdir / "trplug.py").write_text(PLUGIN.format(name="trpy"))
    monkeypatch.syspath_prepend(str(pdir))
    mark = tmp_path / "marks"
    mark.mkdir()
    return pdir, mark


def test_report_imports_nothing_from_the_folder(tmp_path, plugged):
    pdir, mark = plugged
    cfg = config(tmp_path, "r", players=["trpy(show_prob=0.9)", PLAIN], plugins=["trplug"],
                 **{"output.plots": False})
    run_tournament(cfg)
    out = tmp_path / "r"
    stored = json.loads((out / "config.json").read_text())
    stored["_base_dir"] = str(out)  # older versions put this first on sys.path
    (out / "config.json").write_text(json.dumps(stored))
    plant(out, mark, "matplotlib", "trplug")
    # report renders everything, plots too, with no plug-in anywhere on its path
    code, err = cli("report", out, cwd=tmp_path)
    assert code == 0, err
    assert os.listdir(mark) == []
    assert (out / "report.html").stat().st_size > 0 and (out / "plots").is_dir()
    assert "trpy" in (out / "summary.md").read_text()


def test_report_with_plugin_inside_the_folder_imports_no_planted_module(tmp_path, plugged):
    pdir, mark = plugged
    cfg = config(tmp_path, "r", players=["trpy(show_prob=0.9)", PLAIN], plugins=["trplug"])
    run_tournament(cfg)
    out = tmp_path / "r"
    plant(out, mark, "matplotlib")
    # run from inside the folder, naming the plug-in (found on the user's own path)
    code, err = cli("report", ".", "--plugin", "trplug", cwd=out, path=[pdir])
    assert code == 0, err
    assert os.listdir(mark) == []
    assert (out / "report.html").stat().st_size > 0


def test_report_never_imports_what_config_json_names(tmp_path, plugged):
    pdir, mark = plugged
    cfg = config(tmp_path, "r")
    run_tournament(cfg)
    out = tmp_path / "r"
    plant(out, mark, "evilplug", "evilmod")
    stored = json.loads((out / "config.json").read_text())
    stored.update(plugins=["evilplug"], players=["evilmod:Bot", PLAIN], _base_dir=str(out))
    (out / "config.json").write_text(json.dumps(stored))
    code, err = cli("report", out, "--no-plots", cwd=out)
    assert os.listdir(mark) == []
    assert code == 2
    one_line_error(err, "belongs to another run")  # the hash no longer matches its chunks


def test_resume_imports_nothing_from_the_folder_and_takes_plugin(tmp_path, plugged):
    pdir, mark = plugged
    cfg = config(tmp_path, "r", players=["trpy(show_prob=0.9)", PLAIN],
                 **{"output.plots": True})
    run_tournament(cfg, stop_after=1)
    out = tmp_path / "r"
    stored = json.loads((out / "config.json").read_text())
    stored["_base_dir"] = str(out)
    (out / "config.json").write_text(json.dumps(stored))
    plant(out, mark, "matplotlib")
    toml = tmp_path / "user.toml"
    toml.write_text('players = ["trpy(show_prob=0.9)", "random"]\ndeals = 60\nseed = 3\n'
                    '[run]\nchunk_size = 20\n')
    code, err = cli("tournament", toml, "--out", out, "--resume", "--no-progress",
                    "--plugin", "trplug", cwd=pdir)
    assert code == 0, err
    assert os.listdir(mark) == []
    assert chunk_names(out) == ["c000000.npz", "c000001.npz", "c000002.npz"]
    assert (out / "report.html").stat().st_size > 0


def test_resume_does_not_import_a_plugin_the_folder_names(tmp_path, plugged):
    pdir, mark = plugged
    cfg = config(tmp_path, "r")
    run_tournament(cfg, stop_after=1)
    out = tmp_path / "r"
    plant(out, mark, "evilplug")
    stored = json.loads((out / "config.json").read_text())
    stored.update(plugins=["evilplug"], _base_dir=str(out))
    (out / "config.json").write_text(json.dumps(stored))
    toml = tmp_path / "user.toml"
    toml.write_text(f'players = ["{EAGER}", "{PLAIN}"]\ndeals = 60\nseed = 3\n'
                    f'[run]\nchunk_size = 20\n')
    code, err = cli("tournament", toml, "--out", out, "--resume", "--no-progress", cwd=out)
    assert os.listdir(mark) == []
    assert code == 2
    one_line_error(err, "cannot resume", "plugins")


def test_results_config_toml_needs_plugin_named(tmp_path, plugged):
    pdir, mark = plugged
    cfg = config(tmp_path, "r", players=["trpy(show_prob=0.9)", PLAIN], plugins=["trplug"])
    run_tournament(cfg, stop_after=1)
    out = tmp_path / "r"
    plant(out, mark, "trplug")  # next to the folder's config.toml
    code, err = cli("tournament", out / "config.toml", "--resume", "--no-progress", cwd=tmp_path)
    assert os.listdir(mark) == []
    assert code == 2
    one_line_error(err, "config names plug-in 'trplug'", "--plugin trplug")
    code, err = cli("tournament", out / "config.toml", "--resume", "--no-progress",
                    "--plugin", "trplug", cwd=pdir)
    assert code == 0, err
    assert os.listdir(mark) == []


# --- item 9: one writer per folder --------------------------------------------------------------
HOLD = textwrap.dedent('''\
    import sys, time
    from sim.tournament.results import locked
    with locked(sys.argv[1]):
        print("locked", flush=True)
        time.sleep(120)
''')


def test_a_second_writer_is_refused_and_a_dead_ones_lock_is_taken(tmp_path, capsys):
    cfg = config(tmp_path)
    run_tournament(cfg, stop_after=1)
    assert not os.path.exists(os.path.join(cfg.out, ".lock"))  # released
    holder = subprocess.Popen([sys.executable, "-c", HOLD, cfg.out], stdout=subprocess.PIPE,
                              env=dict(os.environ, PYTHONPATH=ROOT), text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        chunks = os.path.join(cfg.out, "chunks")
        live = os.path.join(chunks, f".tmp-{holder.pid}-c000001.npz")  # its in-flight write
        with open(live, "wb") as f:
            f.write(b"PK")
        with pytest.raises(ConfigError) as e:
            run_tournament(cfg, resume=True)
        msg = str(e.value)
        assert repr(cfg.out) in msg and f"pid {holder.pid}" in msg and "\n" not in msg
        assert os.path.exists(live) and chunk_names(cfg.out) == ["c000000.npz"]
        toml = tmp_path / "t.toml"
        toml.write_text(f'players = ["{EAGER}", "{PLAIN}"]\ndeals = 60\nseed = 3\n'
                        f'[run]\nchunk_size = 20\n[output]\nplots = false\n')
        assert main(["tournament", str(toml), "--out", cfg.out, "--resume",
                     "--no-progress"]) == 2
        one_line_error(capsys.readouterr().err, cfg.out, f"pid {holder.pid}")
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    # the holder died: its lock file is stale and taken; its temp file is stale and removed,
    # a live process's temp file is left alone
    other = os.path.join(chunks, f".tmp-{os.getppid()}-c000002.npz")
    with open(other, "wb") as f:
        f.write(b"PK")
    assert run_tournament(cfg, resume=True)["complete"]
    assert not os.path.exists(live) and os.path.exists(other)
    assert not os.path.exists(os.path.join(cfg.out, ".lock"))


def test_report_leaves_temp_files_alone(tmp_path, capsys):
    cfg = config(tmp_path)
    run_tournament(cfg, stop_after=1)
    dead = os.path.join(cfg.out, "chunks", ".tmp-999999999-c000001.npz")
    with open(dead, "wb") as f:
        f.write(b"PK")
    assert main(["report", cfg.out, "--no-plots"]) == 0
    assert os.path.exists(dead)  # only a writer holding the lock cleans up


# --- item 12c / 11: plug-ins in loky workers; a worker that dies --------------------------------
DIER = '''
import os
from strategies.random import RandomStrategy


class Dier(RandomStrategy):
    """ends its worker process on deal 47"""
    name = "dier"
    compiled_kind = None

    def begin_deal(self, seat, seed, deal):
        super().begin_deal(seat, seed, deal)
        if deal == 47:
            os._exit(3)
'''


def test_cli_plugin_reaches_loky_workers(tmp_path, monkeypatch, capsys):
    (tmp_path / "trloky.py").write_text(PLUGIN.format(name="trloky"))
    toml = tmp_path / "l.toml"
    toml.write_text('players = ["trloky(show_prob=0.9)", "random"]\ndeals = 40\nseed = 3\n'
                    '[run]\nchunk_size = 10\n[output]\nplots = false\n')
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "l"
    assert main(["tournament", str(toml), "--out", str(out), "--plugin", "trloky",
                 "--jobs", "2", "--backend", "loky", "--no-progress"]) == 0, \
        capsys.readouterr().err
    ref = run_tournament(config(tmp_path, "ref", deals=40, seed=3, **{"run.chunk_size": 10}))
    assert json.loads((out / "summary.json").read_text())["tallies"] == ref["tallies"]


@pytest.mark.parametrize("backend", ["loky", "fork", "dask"])
def test_dead_worker_is_one_line_and_keeps_chunks(tmp_path, monkeypatch, capsys, backend):
    (tmp_path / "trdier.py").write_text(DIER)
    monkeypatch.syspath_prepend(str(tmp_path))
    cfg = config(tmp_path, "d", players=["dier", PLAIN], plugins=["trdier"])
    run_tournament(cfg, stop_after=2)  # deals 0-39 are safe
    kept = {f: os.stat(os.path.join(cfg.out, "chunks", f)).st_mtime_ns
            for f in chunk_names(cfg.out)}
    two = config(tmp_path, "d", players=["dier", PLAIN], plugins=["trdier"],
                 **{"run.jobs": 2, "run.backend": backend})
    with pytest.raises(WorkerError) as e:
        run_tournament(two, resume=True)
    msg = str(e.value)
    assert "worker process died" in msg and "--resume" in msg and "\n" not in msg
    assert "2 of 3 chunks are saved" in msg  # and names how it died: dask retries the chunk
    assert ("KilledWorker: the 4 dask workers that ran it died" if backend == "dask"
            else "EXIT(3)") in msg  # on 4 workers (it waited 240 s and more after the 4th)
    assert "chunks 2 (matchup 0, deals 40-59)" in msg  # and where
    assert {f: os.stat(os.path.join(cfg.out, "chunks", f)).st_mtime_ns
            for f in chunk_names(cfg.out)} == kept
    assert not os.path.exists(os.path.join(cfg.out, ".lock"))


# --- issue 19: received files are read bounded; each per-deal file is bound to its chunk -------
def cli_bounded(*args, cwd):
    """``shuangkou ARGS`` in a fresh interpreter that must end on its own (a FIFO or a device
    among the files it reads must not make it wait): (exit code, stderr)."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    try:
        p = subprocess.run([sys.executable, "-m", "sim.cli", *map(str, args)], cwd=cwd,
                           env=env, capture_output=True, text=True, timeout=120,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        pytest.fail(f"shuangkou {' '.join(map(str, args))} did not end: it waits on a file")
    return p.returncode, p.stderr


@pytest.mark.parametrize("name", ["chunks/c000001.npz", "config.json", "deals/c000000.parquet",
                                  "config.json -> /dev/urandom", ".lock"])
def test_fifo_or_device_in_a_received_folder_is_one_line(tmp_path, name):
    cfg = config(tmp_path)
    run_tournament(cfg, stop_after=1 if name.startswith("chunks") else 2)
    out = tmp_path / "t"
    target = out / name.split(" ->")[0]
    if target.exists():
        target.unlink()
    if " -> " in name:
        os.symlink(name.split(" -> ")[1], target)
    else:
        os.mkfifo(target)
    toml = tmp_path / "t.toml"
    toml.write_text(f'players = ["{EAGER}", "{PLAIN}"]\ndeals = 60\nseed = 3\n'
                    f'[run]\nchunk_size = 20\n[output]\nplots = false\n')
    commands = [("tournament", toml, "--out", out, "--resume", "--no-progress")]
    if name != ".lock":  # report takes no lock
        commands.append(("report", out, "--no-plots"))
    for args in commands:
        code, err = cli_bounded(*args, cwd=tmp_path)
        assert code == 2, err
        line = one_line_error(err, os.path.basename(target))
        assert "regular file" in line and ("FIFO" in line or "device" in line or
                                           name == ".lock"), line
    kept = sorted(f.name for f in (out / "chunks").iterdir() if f.is_file())
    assert kept == ["c000000.npz"] + ([] if name.startswith("chunks") else ["c000001.npz"])


def test_fifo_config_and_record_file_are_one_line(tmp_path):
    os.mkfifo(tmp_path / "c.toml")
    os.mkfifo(tmp_path / "r.jsonl")
    for args in (("tournament", tmp_path / "c.toml", "--no-progress"),
                 ("replay", tmp_path / "r.jsonl"), ("validate", tmp_path / "r.jsonl")):
        code, err = cli_bounded(*args, cwd=tmp_path)
        assert code == 2, err
        one_line_error(err, "FIFO")


def test_per_deal_file_of_another_seed_is_refused(tmp_path, capsys):
    cfg = config(tmp_path)
    run_tournament(cfg)
    other = config(tmp_path, "o", seed=4)  # the same deal range, another seed
    run_tournament(other)
    deals = os.path.join(cfg.out, "deals", "c000001.parquet")
    shutil.copy(os.path.join(other.out, "deals", "c000001.parquet"), deals)
    for call in (load_deals, load_state):
        with pytest.raises(ConfigError, match=r"c000001\.parquet' is not the table.*another "
                                              r"run, seed or chunk"):
            call(cfg.out)
    assert main(["report", cfg.out, "--no-plots"]) == 2
    one_line_error(capsys.readouterr().err, "c000001.parquet", "SHA-256", "--resume")


def test_per_deal_file_edited_by_hand_is_refused(tmp_path):
    import pyarrow.parquet as pq

    cfg = config(tmp_path)
    run_tournament(cfg, stop_after=2)
    path = os.path.join(cfg.out, "deals", "c000000.parquet")
    t = pq.read_table(path)
    i = t.schema.get_field_index("settle0")
    pq.write_table(t.set_column(i, "settle0", [t.column("settle0").to_numpy() + 1]), path)
    with pytest.raises(ConfigError, match=r"c000000\.parquet' is not the table"):
        load_deals(cfg.out)
    with pytest.raises(ConfigError, match=r"c000000\.parquet' is not the table"):
        run_tournament(cfg, resume=True)  # --resume says so too, and plays nothing
    assert chunk_names(cfg.out) == ["c000000.npz", "c000001.npz"]


def test_chunk_file_of_a_twin_run_is_refused(tmp_path):
    """The same config run into two folders: the chunk files carry their run's id."""
    cfg = config(tmp_path)
    run_tournament(cfg, stop_after=1)
    twin = config(tmp_path, "twin", **{"output.dir": str(tmp_path / "twin")})
    run_tournament(twin)
    for sub in ("chunks/c000001.npz", "deals/c000001.parquet"):
        shutil.copy(os.path.join(twin.out, sub), os.path.join(cfg.out, sub))
    with pytest.raises(ConfigError, match=r"c000001\.npz' was copied from another run"):
        load_state(cfg.out)
    os.remove(os.path.join(cfg.out, "chunks", "c000001.npz"))
    assert run_tournament(cfg, resume=True)["complete"]  # as the message says


# --- issue 32: summary.json on a full disk; --force leaves only this run's files ---------------
def test_report_on_a_full_disk_names_the_file_and_leaves_no_temp_file(tmp_path, capsys,
                                                                      monkeypatch):
    import errno
    import io

    from sim.analysis import report

    cfg = config(tmp_path)
    run_tournament(cfg)
    before = open(os.path.join(cfg.out, "summary.json"), "rb").read()

    class Full(io.FileIO):
        def write(self, b):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(report, "open", lambda path, mode="r": Full(path, "w"), raising=False)
    assert main(["report", cfg.out, "--no-plots"]) == 2
    path = os.path.join(cfg.out, "summary.json")
    one_line_error(capsys.readouterr().err, repr(path), os.strerror(errno.ENOSPC))
    assert not [f for f in os.listdir(cfg.out) if ".tmp-" in f]
    assert open(path, "rb").read() == before  # the file as it was stays


def test_force_removes_the_previous_runs_files_and_only_those(tmp_path, capsys):
    from sim.tournament.results import run_files

    toml = tmp_path / "t.toml"
    body = (f'players = ["{EAGER}", "{PLAIN}"]\ndeals = 20\nseed = 3\n[run]\nchunk_size = 10\n'
            f'[output]\nplots = false\nrecords = 1\n')
    toml.write_text(body)
    out = tmp_path / "o"
    assert main(["tournament", str(toml), "--out", str(out), "--no-progress", "--quiet"]) == 0
    first = sorted(os.path.relpath(p, out) for p in run_files(str(out)))
    # the list is complete: every file the run wrote is on it (the lock is gone)
    written = sorted(os.path.relpath(os.path.join(d, f), out)
                     for d, _, fs in os.walk(out) for f in fs)
    assert first == written, (first, written)
    assert "swings.jsonl" in first and "swings.html" in first and "records.jsonl" in first
    os.makedirs(out / "plots")
    for mine in ("notes.txt", "swings.jsonl.bak", "chunks/keep.npz", "plots/mine.png"):
        (out / mine).write_text("the user's")
    (out / "plots" / "scores_m7.png").write_bytes(b"an earlier run's plot")
    (out / "deals" / ".tmp-999999999-c000009.parquet").write_bytes(b"torn")
    # the same players without duplicate deals, no records: no swing deals, no records.jsonl
    toml.write_text(body.replace("records = 1", "records = 0") + "")
    toml.write_text(toml.read_text().replace("seed = 3\n", "seed = 3\nduplicate = false\n"))
    assert main(["tournament", str(toml), "--out", str(out), "--no-progress", "--quiet",
                 "--force"]) == 0
    capsys.readouterr()
    now = sorted(os.path.relpath(p, out) for p in run_files(str(out)))
    for gone in ("swings.jsonl", "swings.html", "records.jsonl", "plots/scores_m7.png",
                 "deals/.tmp-999999999-c000009.parquet"):
        assert gone not in now and not (out / gone).exists(), gone
    for mine in ("notes.txt", "swings.jsonl.bak", "chunks/keep.npz", "plots/mine.png"):
        assert (out / mine).read_text() == "the user's", mine
    state = json.load(open(out / "summary.json"))
    assert state["config"]["duplicate"] is False


def test_docs_list_every_file_a_run_writes():
    """docs/results.md's file table names each of RUN_FILES and the plots RUN_PATTERNS allows."""
    import re

    from sim.tournament.results import RUN_FILES, RUN_PATTERNS

    with open(os.path.join(ROOT, "docs", "results.md"), encoding="utf-8") as f:
        text = f.read()
    table = text[text.index("| file | what |"):]
    table = table[:table.index("\n\n")]
    for name in RUN_FILES:
        assert f"`{name}`" in table or f"`{name.rsplit('.', 1)[0]}." in table, name
    plots = dict(RUN_PATTERNS)["plots"]
    for name in re.findall(r"`plots/([\w.]+)`", table):
        assert re.fullmatch(plots, name.replace("mN", "m0")), name
