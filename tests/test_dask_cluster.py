"""A dask cluster started the way docs/tournaments.md "Several machines" says (``dask
scheduler`` and ``dask worker tcp://HOST:PORT`` as separate commands, here both on 127.0.0.1)
plays a tournament whose results equal the run's on this machine alone; a session stopped
part-way and finished with ``--resume`` on the cluster gives them too."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from sim.cli import main

pytest.importorskip("distributed")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DASK = [sys.executable, "-m", "dask", "scheduler"]  # `dask scheduler` of this environment
WORKER = [sys.executable, "-m", "dask", "worker"]  # `dask worker`
START_TIMEOUT = 60.0  # seconds for the scheduler to write its address, the worker to join


def _stop(proc: subprocess.Popen) -> None:
    """End a command this test started, and what it started (its own process group)."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def _config(tmp_path, name: str, run: str) -> str:
    cfg = tmp_path / f"{name}.toml"
    cfg.write_text(f'name = "{name}"\nformat = "round-robin"\n'
                   'players = ["random", "random(show_prob=0.9)", "greedy"]\n'
                   "deals = 300\nduplicate = true\nseed = 11\n"
                   f"[run]\nchunk_size = 100\nprogress = false\n{run}"
                   "[output]\nplots = false\n")
    return str(cfg)


def _results(out) -> list:
    summary = json.loads((out / "summary.json").read_text())
    return [(m["label"], m["result"]) for m in summary["matchups"]]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """``dask scheduler --host 127.0.0.1 --port 0`` and one ``dask worker ADDRESS``, each a
    process group of its own, always ended; yields the scheduler's address (one cluster for
    the tests of this file)."""
    from distributed import Client

    tmp_path = tmp_path_factory.mktemp("cluster")
    info = tmp_path / "scheduler.json"
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    logs = {name: open(tmp_path / f"{name}.log", "w") for name in ("scheduler", "worker")}
    procs: list[subprocess.Popen] = []
    try:
        procs.append(subprocess.Popen(
            DASK + ["--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                    "--scheduler-file", str(info)],
            cwd=ROOT, env=env, stdout=logs["scheduler"], stderr=subprocess.STDOUT,
            start_new_session=True))
        end = time.monotonic() + START_TIMEOUT
        while not (info.exists() and info.read_text().strip()):
            assert procs[0].poll() is None and time.monotonic() < end, \
                (tmp_path / "scheduler.log").read_text()[-2000:]
            time.sleep(0.2)
        address = json.loads(info.read_text())["address"]
        assert address.startswith("tcp://127.0.0.1:")
        procs.append(subprocess.Popen(
            WORKER + [address, "--host", "127.0.0.1", "--nworkers", "1", "--nthreads", "1",
                      "--no-dashboard", "--local-directory", str(tmp_path / "worker")],
            cwd=ROOT, env=env, stdout=logs["worker"], stderr=subprocess.STDOUT,
            start_new_session=True))
        with Client(address, timeout=START_TIMEOUT) as client:
            client.wait_for_workers(1, timeout=START_TIMEOUT)
        yield address
    finally:
        for p in reversed(procs):
            _stop(p)
        for f in logs.values():
            f.close()


def test_tournament_on_a_cluster_started_by_hand_equals_the_local_run(tmp_path, cluster):
    local = tmp_path / "local"
    assert main(["tournament", _config(tmp_path, "local", "jobs = 1\n"), "--out", str(local),
                 "--quiet"]) == 0
    ref = _results(local)
    assert len(ref) == 3 and all(r["n"] == 300 for _, r in ref)
    remote = tmp_path / "remote"
    assert main(["tournament", _config(tmp_path, "remote", ""), "--out", str(remote),
                 "--scheduler", cluster, "--quiet"]) == 0
    assert _results(remote) == ref
    assert json.loads((remote / "run.json").read_text())["backend"] == "dask"


def test_resume_on_a_cluster_of_a_run_stopped_part_way(tmp_path, cluster):
    """A session on this machine stopped after 2 of its 9 chunks (as if killed), finished with
    ``--resume --scheduler ADDRESS``: the cluster plays only the missing chunks, and the results
    equal one uninterrupted run's."""
    from sim.tournament.config import load_config
    from sim.tournament.run import run_tournament

    path = _config(tmp_path, "part", "jobs = 1\n")
    cfg = load_config(path, {"output.dir": str(tmp_path / "part")})
    assert run_tournament(cfg, stop_after=2) is None
    chunks = sorted(os.listdir(tmp_path / "part" / "chunks"))
    assert len(chunks) == 2
    stamps = {c: os.stat(tmp_path / "part" / "chunks" / c).st_mtime_ns for c in chunks}
    assert main(["tournament", path, "--out", str(tmp_path / "part"), "--resume",
                 "--scheduler", cluster, "--quiet"]) == 0
    assert len(os.listdir(tmp_path / "part" / "chunks")) == 9
    # the chunks of the first session were kept, not played again
    assert {c: os.stat(tmp_path / "part" / "chunks" / c).st_mtime_ns for c in chunks} == stamps
    whole = tmp_path / "whole"
    assert main(["tournament", _config(tmp_path, "whole", "jobs = 1\n"), "--out", str(whole),
                 "--quiet"]) == 0
    assert _results(tmp_path / "part") == _results(whole)
