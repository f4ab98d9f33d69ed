"""Resources and start-up: the kernel cache folder seen by workers, bounded waits on a dask
scheduler, the --jobs cap, workers that outlive a killed parent, lazy chunk plans, streamed
``play`` summaries and the first-compile notice."""

from __future__ import annotations

import glob
import os
import re
import subprocess
import sys
import textwrap

import pytest
from conftest import TEST_CACHE, TEST_CACHE_ENV, sigint_default

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _env(**kw):
    """The tests' environment for a child process; its kernel cache is the tests' own
    (``TEST_CACHE``, set by conftest) unless ``kw`` names a cache folder."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("SHUANGKOU_CACHE_DIR", "NUMBA_CACHE_DIR")}
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    if kw.get("SHUANGKOU_CACHE_DIR") is None and kw.get("NUMBA_CACHE_DIR") is None:
        env["SHUANGKOU_CACHE_DIR"] = TEST_CACHE
    env.update({k: v for k, v in kw.items() if v is not None})
    return env


# --- issue 32 (4.1): the tests never write into the user's kernel cache ---------------------
def test_a_test_run_leaves_the_users_kernel_cache_untouched(tmp_path):
    """A user with no cache settings (HOME a fresh folder, no SHUANGKOU_CACHE_DIR or
    NUMBA_CACHE_DIR) runs a test with this folder's conftest: the session's engine kernels and
    a kernel the test compiles from its own tmp_path with numba's cache on (such kernels filled
    ``~/.cache/shuangkou`` with ``test_edit_recompiles0_*``) go to the tests' own cache
    folder; nothing appears under ``$HOME/.cache``."""
    import time

    home = tmp_path / "home"
    home.mkdir()
    inner = tmp_path / "inner"
    inner.mkdir()
    (inner / "test_inner.py").write_text(
        "import sys\n\n\ndef test_own_kernel(tmp_path):\n"
        "    (tmp_path / 'own_kernel.py').write_text('import sim.core.jit  # noqa: F401\\n'\n"
        "        'import numba\\n@numba.njit(cache=True)\\ndef f(x):\\n    return x + 1\\n')\n"
        "    sys.path.insert(0, str(tmp_path))\n"
        "    import own_kernel\n\n    assert own_kernel.f(41) == 42\n")
    env = {k: v for k, v in os.environ.items()
           if k not in ("SHUANGKOU_CACHE_DIR", "NUMBA_CACHE_DIR", "XDG_CACHE_HOME")}
    env.update(HOME=str(home), PYTHONPATH=os.path.join(ROOT, "tests") + os.pathsep + ROOT)
    env[TEST_CACHE_ENV] = os.environ.get(TEST_CACHE_ENV) or TEST_CACHE
    start = time.time() - 1
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "-p", "conftest", "--rootdir", str(inner), str(inner / "test_inner.py"),
                        "--basetemp", str(tmp_path / "base")],
                       env=env, cwd=inner, capture_output=True, text=True, timeout=600,
                       check=False)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "1 passed" in r.stdout
    left = [os.path.join(d, f) for d, _, files in os.walk(home) for f in files]
    assert not os.path.exists(home / ".cache" / "shuangkou") and not left, left[:5]
    # numba made the test's own folder (named after its tmp_path) in the tests' cache instead
    made = [p for p in glob.glob(os.path.join(glob.escape(TEST_CACHE), "kernels-*", "*",
                                              "own_kernel.f-*.nbi"))
            if os.path.getmtime(p) >= start]
    assert made


def _py(code, env, timeout=60):
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, cwd=ROOT,
                       capture_output=True, text=True, timeout=timeout, check=False)
    assert r.returncode == 0, r.stderr
    return r.stdout


# --- item 14: one cache folder for the parent and its workers -------------------------------
def test_cache_folder_is_stable_under_inherited_numba_cache_dir(tmp_path):
    """configure() sets NUMBA_CACHE_DIR; a process that inherits it (a loky worker) must get
    the same folder, not kernels-H/kernels-H (which compiled everything again)."""
    code = "import sim.core._cache as c; print(c.CACHE_DIR); print(c.configure())"
    first = _py(code, _env(NUMBA_CACHE_DIR=str(tmp_path))).split()
    assert first[0] == first[1]  # configure() again in the same process: same folder
    assert os.path.dirname(first[0]) == str(tmp_path)
    inherited = _py(code, _env(NUMBA_CACHE_DIR=first[0])).split()
    assert inherited == first
    # an explicit SHUANGKOU_CACHE_DIR still wins over an inherited NUMBA_CACHE_DIR
    own = _py(code, _env(NUMBA_CACHE_DIR=first[0], SHUANGKOU_CACHE_DIR=str(tmp_path / "x")))
    assert os.path.dirname(own.split()[0]) == str(tmp_path / "x")


def test_loky_workers_use_the_parents_cache_folder(tmp_path):
    code = """
        import sim.core._cache as c
        from joblib import Parallel, delayed

        def where(_):
            import sim.core._cache
            return sim.core._cache.CACHE_DIR

        print(c.CACHE_DIR)
        print(*set(Parallel(n_jobs=2, backend="loky")(delayed(where)(i) for i in range(4))))
        """
    parent, *workers = _py(code, _env(NUMBA_CACHE_DIR=str(tmp_path))).split()
    assert workers == [parent]


# --- item 8: the chunk plan is lazy ---------------------------------------------------------
def _cfg(tmp_path, **kw):
    from sim.tournament.config import from_dict

    raw = {"name": "r", "players": ["random", "random(show_prob=0.9)"], "deals": 600,
           "seed": 3, "run": {"chunk_size": 200, "progress": False},
           "output": {"dir": str(tmp_path / "r"), "plots": False}}
    for k, v in kw.items():
        t, _, leaf = k.partition(".")
        if leaf:
            raw.setdefault(t, {})[leaf] = v
        else:
            raw[k] = v
    return from_dict(raw, source="test")


def test_chunk_plan_does_not_grow_with_deals(tmp_path):
    import tracemalloc

    from sim.tournament.chunks import Chunk, plan_chunks

    cfg = _cfg(tmp_path, format="round-robin",
               players=["random", "greedy", "random(show_prob=0.9)"],
               deals=100_000, **{"run.chunk_size": 1})
    tracemalloc.start()
    try:
        plan = plan_chunks(cfg)  # 300,000 chunks: tens of MB if built up front
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 100_000
    assert len(plan) == 300_000
    assert plan[4] == Chunk(4, 1, 1, 1) and plan[-1] == Chunk(299_999, 2, 99_999, 1)
    huge = plan_chunks(_cfg(tmp_path, deals=10**12, first_deal=5, **{"run.chunk_size": 7}))
    assert len(huge) == -(-10**12 // 7)  # by arithmetic, at once
    assert huge[-1] == Chunk(len(huge) - 1, 0, 5 + (len(huge) - 1) * 7, 10**12 % 7)
    assert [c.index for c in huge[2:5]] == [2, 3, 4]
    it = iter(huge)
    assert [next(it).first for _ in range(3)] == [5, 12, 19]


def test_huge_run_starts_without_building_its_plan(tmp_path):
    from sim.tournament.results import load_state
    from sim.tournament.run import run_tournament

    cfg = _cfg(tmp_path, deals=10**12, **{"run.chunk_size": 50})
    assert run_tournament(cfg, stop_after=2) is None  # returns at once: nothing was built
    state = load_state(cfg.out)
    assert state["chunks_merged"] == 2 and state["chunks_total"] == 2 * 10**10
    assert not state["complete"]


# --- item 8: `play` keeps sums, not a row per deal ------------------------------------------
def test_play_summary_memory_does_not_grow_with_deals(capsys, monkeypatch):
    import tracemalloc

    from sim import cli
    from sim.cli import play

    def peak(*args):
        tracemalloc.start()
        try:
            assert cli.main(["play", "--seats", "random", *args]) == 0
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    assert cli.main(["play", "--deals", "1"]) == 0  # load the kernels outside the measurement
    one_block = peak("--deals", str(play._PLAY_BLOCK))
    many = peak("--deals", "150000")  # 150,000 rows of 152 bytes would be 22.8 MB more
    assert many < one_block + 1_000_000
    capsys.readouterr()
    args = ["play", "--deals", "5000", "--seats", "random", "--seed", "5", "--first-deal", "7"]
    assert cli.main(args) == 0
    whole = capsys.readouterr().out
    monkeypatch.setattr(play, "_PLAY_BLOCK", 777)  # blocks of any size: the same figures
    assert cli.main(args) == 0
    assert capsys.readouterr().out == whole
    assert "deals: 5000 (seed 5, first deal 7), void: " in whole


# --- item 8: a dask address that is not a scheduler, a malformed address ---------------------
def _toml(tmp_path, extra=""):
    path = tmp_path / "t.toml"
    path.write_text(textwrap.dedent(f"""
        name = "t"
        players = ["random", "random(show_prob=0.9)"]
        deals = 20
        [run]
        chunk_size = 10
        progress = false
        {extra}
        [output]
        dir = "{tmp_path / 'out'}"
        plots = false
        """))
    return str(path)


def test_silent_server_is_not_waited_for_forever(tmp_path):
    import socket
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held = []

    def accept():  # accept and never speak, like a web server waiting for a request
        while True:
            try:
                held.append(server.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    addr = f"tcp://127.0.0.1:{server.getsockname()[1]}"
    code = f"""
        import sys
        from sim import cli
        from sim.tournament import run as tournament
        tournament.SCHEDULER_TIMEOUT = 1.0
        sys.exit(cli.main(["tournament", {_toml(tmp_path)!r}, "--scheduler", {addr!r}]))
        """
    try:
        r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT,
                           env=_env(SHUANGKOU_CACHE_DIR=os.environ.get("SHUANGKOU_CACHE_DIR")),
                           capture_output=True, text=True, timeout=60, check=False)
    finally:
        server.close()
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("shuangkou tournament: error: dask scheduler")
    assert addr in lines[0] and "within 1 s" in lines[0] and "tcp://HOST:PORT" in lines[0]
    assert held  # it did connect: the wait was on the answer


@pytest.mark.parametrize("addr", ["10.0.0.5", "tcp://10.0.0.5", "http://10.0.0.5:8786",
                                  "tcp://:8786", "tcp://10.0.0.5:99999", "tcp://a b:1"])
def test_malformed_scheduler_address_is_one_line(tmp_path, capsys, addr):
    from sim import cli
    from sim.errors import ConfigError
    from sim.tournament.config import load_config

    with pytest.raises(ConfigError, match="tcp://HOST:PORT"):  # refused when read, at once
        load_config(_toml(tmp_path), {"run.scheduler": addr, "run.backend": "dask"})
    assert cli.main(["tournament", _toml(tmp_path), "--scheduler", addr]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and repr(addr) in err[0] and "tcp://HOST:PORT" in err[0], err


@pytest.mark.parametrize("addr", ["tcp://10.0.0.5:8786", "tls://sched.example:8786",
                                  "localhost:8786", "tcp://[::1]:8786"])
def test_wellformed_scheduler_addresses_are_accepted(tmp_path, addr):
    from sim.tournament.config import load_config

    assert load_config(_toml(tmp_path), {"run.scheduler": addr,
                                         "run.backend": "dask"}).scheduler == addr


# --- item 8: --jobs is capped at the CPU count unless forced --------------------------------
def test_jobs_capped_at_cpu_count_with_a_message(tmp_path, capsys):
    import json

    from sim import cli
    from sim.tournament.run import cpu_count

    cpus = cpu_count()
    toml = _toml(tmp_path, 'backend = "threading"')
    assert cli.main(["tournament", toml, "--jobs", str(cpus + 1), "--out",
                     str(tmp_path / "capped")]) == 0
    err = capsys.readouterr().err
    assert f"jobs {cpus + 1} is more than the {cpus} CPUs" in err and "--force-jobs" in err
    with open(tmp_path / "capped" / "run.json") as f:
        assert json.load(f)["jobs"] == cpus
    assert cli.main(["tournament", toml, "--jobs", str(cpus + 1), "--force-jobs", "--out",
                     str(tmp_path / "forced")]) == 0
    assert "CPUs" not in capsys.readouterr().err
    with open(tmp_path / "forced" / "run.json") as f:
        assert json.load(f)["jobs"] == cpus + 1
    assert cli.main(["tournament", toml, "--jobs", str(cpus), "--out",
                     str(tmp_path / "fits")]) == 0
    assert "CPUs" not in capsys.readouterr().err


# --- item 8: workers end when the run's process is killed -----------------------------------
def _long_run(tmp_path, backend, **popen):
    """A 10-million-deal CLI run on two workers, once it has saved 4 chunks; and its workers."""
    import time

    psutil = pytest.importorskip("psutil")
    cmd = [sys.executable, "-m", "sim.cli", "tournament", _toml(tmp_path), "--deals",
           "10000000", "--chunk-size", "2000", "--jobs", "2", "--force-jobs", "--backend",
           backend, "--no-progress"]
    p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         env=_env(SHUANGKOU_CACHE_DIR=os.environ.get("SHUANGKOU_CACHE_DIR")),
                         preexec_fn=sigint_default, **popen)
    chunks = tmp_path / "out" / "chunks"
    try:
        deadline = time.monotonic() + 60
        while not (chunks.is_dir() and len(list(chunks.glob("c*.npz"))) >= 4):
            assert p.poll() is None, p.stderr.read().decode()
            assert time.monotonic() < deadline, "the run wrote no chunks"
            time.sleep(0.2)
        workers = [c for c in psutil.Process(p.pid).children(recursive=True)
                   if backend != "loky" or "loky" in " ".join(c.cmdline())]
        assert len(workers) >= 2
    except BaseException:
        p.kill()
        p.wait()
        p.stderr.close()
        raise
    return p, workers


def _outlived(workers):
    """The workers still running 20 s from now (killed, so that none is left behind)."""
    import psutil

    _, alive = psutil.wait_procs(workers, timeout=20)
    for w in alive:
        w.kill()
    return alive


@pytest.mark.parametrize("backend", ["loky", "fork"])
def test_workers_exit_after_kill_9_of_the_run(tmp_path, backend):
    p, workers = _long_run(tmp_path, backend)
    p.kill()
    p.wait()
    p.stderr.close()
    alive = _outlived(workers)
    assert not alive, f"workers still running 20 s after the run was killed: {alive}"


@pytest.mark.parametrize("backend", ["loky", "fork", "dask"])
def test_ctrl_c_stops_the_run_and_its_workers(tmp_path, backend):
    """Ctrl-C in a terminal signals the whole process group, workers included: the run says
    what is saved and exits 130 within seconds, no worker prints a traceback or lives on."""
    import signal

    p, workers = _long_run(tmp_path, backend, start_new_session=True)
    try:
        os.killpg(p.pid, signal.SIGINT)
        code = p.wait(timeout=30)
        err = p.stderr.read().decode()
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        p.stderr.close()
    alive = _outlived(workers)
    assert code == 130, err
    assert re.search(r"interrupted: \d+ of 5000 chunks are saved in .*--resume", err), err
    assert "Traceback" not in err, err
    assert not alive, f"workers still running 20 s after Ctrl-C: {alive}"


# --- item 15: the first compile is announced ------------------------------------------------
def test_cold_cache_detection(tmp_path):
    from sim.core._cache import CACHE_DIR, kernels_cached

    assert not kernels_cached(path=str(tmp_path))
    src = tmp_path / "sim_0123abcd"
    src.mkdir()
    (src / "loop.play_deals_fixed-120.py311.nbi").write_bytes(b"")
    assert not kernels_cached(path=str(tmp_path))  # another kernel
    assert kernels_cached("loop.play_deals_fixed", path=str(tmp_path))
    (src / "loop.run_deals-98.py311.nbi").write_bytes(b"")
    assert kernels_cached(path=str(tmp_path))
    assert not kernels_cached(path=CACHE_DIR + "-nothing-here")


def _fresh_kernel():
    """A numba function never compiled before: calling it compiles (as on a cold cache)."""
    from numba import njit

    @njit
    def f(x):
        return x + 1

    return f


@pytest.fixture
def notice_unsaid(monkeypatch, tmp_path):
    """The process has not printed its compile notice yet; measured times go to tmp_path."""
    from sim.core import _cache

    monkeypatch.setenv(_cache.NOTICE_ENV, "1")
    monkeypatch.setattr(_cache.compile_watch(), "noticed", False)
    monkeypatch.setattr(_cache, "CACHE_DIR", str(tmp_path / "kernels-0123456789abcdef"))
    return _cache


def test_compile_notice_names_each_kernel_with_the_measured_time(tmp_path, notice_unsaid):
    import io

    _cache = notice_unsaid
    key = f"{__name__}._fresh_kernel.<locals>.f"
    out = io.StringIO()
    with _cache.compiling("play --seats x", stream=out) as c:
        _fresh_kernel()(1)
        _fresh_kernel()(2)  # a second kernel: a line of its own, with the time just measured
    text = out.getvalue().splitlines()
    assert len(text) == 3, text
    assert text[0] == f"compiling {key} for play --seats x (not measured on this machine yet)…"
    assert text[1].startswith(f"compiling {key} for play --seats x (measured ")
    assert text[2].startswith("compiled in ") and _cache.CACHE_DIR in text[2]
    measured = _cache.measured_seconds("play --seats x")
    assert measured is not None and abs(measured - c.seconds) < 0.1
    assert _cache.measured_seconds(f"kernel {key}") is not None
    # another run (process): the line gives the time measured here
    _cache.record_seconds(f"kernel {key}", 48.2)
    out = io.StringIO()
    with _cache.compiling("play --seats x", stream=out):
        _fresh_kernel()(4)
    assert out.getvalue().splitlines()[0].endswith(
        "(measured 48 s last time on this machine)…")
    # outside any block (a library call): still a line, on stderr
    err = io.StringIO()
    import contextlib

    with contextlib.redirect_stderr(err):
        _fresh_kernel()(5)
    assert err.getvalue().startswith(f"compiling {key} (measured ")
    # nothing compiled (a warm cache): not a word, nothing recorded
    out = io.StringIO()
    with _cache.compiling("estimate", stream=out):
        pass
    assert out.getvalue() == "" and _cache.measured_seconds("estimate") is None
    # a garbled file of measured times is no error
    with open(_cache._times_path(), "w") as f:
        f.write("{not json")
    assert _cache.measured_seconds("play --seats x") is None


def test_compile_notice_names_the_player_and_counts_seconds_on_a_terminal(notice_unsaid):
    import io

    from sim.loops.plugins import _entry_module, plugin_digest
    from strategies.example_compiled import CautiousC
    from strategies.expert import expert_decide

    _cache = notice_unsaid
    what, key = _cache.kernel_of({"dispatcher": expert_decide})
    assert what == "the expert player's kernel strategies.expert.expert_decide"
    assert _cache.kernel_estimate(key) == ("about 10 s on 2 cores; not measured on this "
                                           "machine yet")
    entry = _entry_module(CautiousC, True, plugin_digest([CautiousC])).entry
    what, key = _cache.kernel_of({"dispatcher": entry})
    k = CautiousC.kernel.py_func
    assert what == f"the compiled plug-in {k.__module__}.{k.__qualname__}"
    assert _cache.kernel_of({})[0] == "kernels"

    class Tty(io.StringIO):
        def isatty(self):
            return True

    out = Tty()
    w = _cache.compile_watch()
    w.active.append(("play", out))
    try:
        w.on_start({"dispatcher": expert_decide})
        import time

        time.sleep(1.3)  # the ticker rewrites the line once a second
        w.on_end()
    finally:
        w.active.remove(("play", out))
    text = out.getvalue()
    assert text.startswith("compiling the expert player's kernel strategies.expert."
                           "expert_decide for play (about 10 s"), text
    assert "… 1 s" in text  # counted while it worked
    assert "\rcompiled the expert player's kernel" in text.replace("\x1b[K", "")


def test_compile_first_still_says_nothing_on_a_warm_cache(tmp_path):
    import io

    from sim.core._cache import compile_first

    src = tmp_path / "sim_0123abcd"
    src.mkdir()
    (src / "loop.run_deals-98.py311.nbi").write_bytes(b"")
    out, calls = io.StringIO(), []
    assert not compile_first(lambda: calls.append(2), path=str(tmp_path), stream=out)
    assert calls == [] and out.getvalue() == ""


def test_round_robin_announces_compiling_once_and_leaves_it_out_of_deals_per_second(
        tmp_path, capsys, monkeypatch, notice_unsaid):
    """Three players, three sets of kernels compiled in the warm-up: one notice, one line with
    the time, and the clock of deals/s starts after it."""
    import json
    import time

    from sim.loops import runner
    from sim.tournament import run as tournament

    cfg = _cfg(tmp_path, players=["random", "greedy", "random(show_prob=0.9)"], deals=40,
               format="round-robin", **{"run.chunk_size": 20})
    real = time.perf_counter
    offset = [0.0]
    monkeypatch.setattr(time, "perf_counter", lambda: real() + offset[0])
    summaries = runner.summaries

    def cold_summaries(*a, **kw):  # as if each set of kernels took 1000 s to compile
        from numba.core import event

        if a[2] == 1:  # the warm-up's one deal (the chunks have 20)
            with event.trigger_event("numba:compile", data={}):
                offset[0] += 1000.0
        return summaries(*a, **kw)

    monkeypatch.setattr(runner, "summaries", cold_summaries)
    monkeypatch.setattr(tournament, "loops_cached", lambda cfg: False)
    assert tournament.run_tournament(cfg) is not None
    err = capsys.readouterr().err
    assert err.count("compiling kernels for tournament random, greedy, "
                     "random(show_prob=0.9) (") == 1, err  # one set of loops for every pair
    assert len(re.findall(r"compiled in (\d+) s", err)) == 1
    assert re.search(r"compiled in [123]\d\d\d s", err), err
    with open(os.path.join(cfg.out, "run.json")) as f:
        assert json.load(f)["wall_seconds"] < 1000  # the clock starts after compiling


def test_play_with_a_python_bot_announces_compiling(monkeypatch, capsys, notice_unsaid):
    from sim import cli
    from sim.loops import runner

    summaries = runner.summaries

    def cold_summaries(*a, **kw):
        _fresh_kernel()(1)
        return summaries(*a, **kw)

    monkeypatch.setattr(runner, "summaries", cold_summaries)
    assert cli.main(["play", "--deals", "3", "--seats", "strategies.example:Cautious"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2, err
    assert err[0].startswith(f"compiling {__name__}._fresh_kernel.<locals>.f for "
                             "play --seats strategies.example:Cautious (")
    assert err[1].startswith("compiled in ")


def test_play_says_nothing_on_a_warm_cache(capsys):
    from sim import cli

    assert cli.main(["play", "--deals", "3", "--seats", "random"]) == 0  # warms it if cold
    capsys.readouterr()
    assert cli.main(["play", "--deals", "3", "--seats", "random"]) == 0
    assert "compiling" not in capsys.readouterr().err


# --- issue 19: limits and system errors are one line, nothing computed is lost ---------------
def _config_file(tmp_path, text, name="c.toml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _one_line(err, *parts):
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "error:" in lines[0] and "Traceback" not in err, err
    for p in parts:
        assert p in lines[0], (p, lines[0])
    return lines[0]


def test_round_robin_of_1000_players_is_refused_in_one_line(tmp_path, capsys):
    from sim.cli import main

    players = ", ".join(f'"random(show_prob={i / 1000})"' for i in range(1000))
    path = _config_file(tmp_path, f'format = "round-robin"\nplayers = [{players}]\n')
    assert main(["tournament", str(path), "--no-progress"]) == 2
    _one_line(capsys.readouterr().err, "1000 players is 499500 matchups", "at most 500")
    assert not (tmp_path / "results").exists()
    # a received results folder of that size: report says the same, without a MemoryError
    out = tmp_path / "big"
    from sim.tournament.run import run_tournament

    run_tournament(_cfg(tmp_path, **{"output.dir": str(out)}), stop_after=1)
    import json

    stored = json.loads((out / "config.json").read_text())
    stored.update(format="round-robin", players=[f"random(show_prob={i / 1000})"
                                                 for i in range(1000)],
                  _oracle=[False] * 1000)  # one per player, as a run writes it
    (out / "config.json").write_text(json.dumps(stored))
    assert main(["report", str(out), "--no-plots"]) == 2
    _one_line(capsys.readouterr().err, "499500 matchups")
    # the largest allowed field is accepted
    ok = _cfg(tmp_path, format="gauntlet",
              players=[f"random(show_prob={i / 1000})" for i in range(501)])
    assert len(ok.matchups()) == 500


@pytest.mark.parametrize("depth", [400, 100_000])
def test_deeply_nested_toml_is_one_line(tmp_path, capsys, depth):
    from sim.cli import main

    path = _config_file(tmp_path, 'players = ["random", "greedy"]\nx = ' + "[" * depth + "]" * depth
                 + "\n")
    assert main(["tournament", str(path), "--no-progress"]) == 2
    _one_line(capsys.readouterr().err, "c.toml")


def test_output_dir_with_nul_is_one_line(tmp_path, capsys):
    from sim.cli import main

    path = _config_file(tmp_path, 'players = ["random", "greedy"]\n[output]\ndir = "a\\u0000b"\n')
    assert main(["tournament", str(path), "--no-progress"]) == 2
    _one_line(capsys.readouterr().err, "'output.dir'", "NUL")


def test_disk_full_names_the_file_and_keeps_the_chunks(tmp_path, capsys, monkeypatch):
    """"No space left on device" while writing chunk 2: one line naming the file and saying
    that the finished chunks are saved; --resume then finishes the run."""
    import errno

    import numpy as np

    from sim.cli import main

    path = _config_file(tmp_path, 'players = ["random", "random(show_prob=0.9)"]\ndeals = 600\n'
                 'seed = 3\n[run]\nchunk_size = 200\n[output]\nplots = false\n')
    out = tmp_path / "full"
    real, calls = np.savez, []

    def savez(f, **arrays):
        calls.append(1)
        if len(calls) == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(f, **arrays)

    monkeypatch.setattr(np, "savez", savez)
    args = ["tournament", str(path), "--out", str(out), "--no-progress", "--quiet"]
    assert main(args) == 2
    line = _one_line(capsys.readouterr().err, "No space left on device", "c000002.npz",
                     "2 of 3 chunks are saved", "--resume")
    assert "cannot write" in line
    assert sorted(os.listdir(out / "chunks")) == ["c000000.npz", "c000001.npz"]
    monkeypatch.setattr(np, "savez", real)
    assert main(args + ["--resume"]) == 0


def test_file_too_large_names_the_file_and_keeps_the_chunks(tmp_path):
    """Under ``ulimit -f`` the chunk holding many records is "File too large": one line."""
    import resource

    path = _config_file(tmp_path, 'players = ["random", "random(show_prob=0.9)"]\ndeals = 60\n'
                 'seed = 3\n[run]\nchunk_size = 20\n[output]\nplots = false\n'
                 'record_filter = "deal >= 40"\n')
    out = tmp_path / "big"
    args = [sys.executable, "-m", "sim.cli", "tournament", str(path), "--out", str(out),
            "--no-progress", "--quiet"]

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))  # chunk 2: 190 KB

    # the same run once without the limit: its kernels compiled and cached first (under the
    # limit a kernel cache file that cannot be written is a line of its own)
    warm = subprocess.run(args[:6] + [str(tmp_path / "warm")] + args[7:], env=_env(),
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert warm.returncode == 0, warm.stderr
    r = subprocess.run(args, env=_env(), cwd=tmp_path, capture_output=True, text=True,
                       timeout=300, preexec_fn=limit)
    assert r.returncode == 2, r.stderr
    _one_line(r.stderr, "File too large", "c000002.npz", "2 of 3 chunks are saved", "--resume")
    r = subprocess.run(args + ["--resume"], env=_env(), cwd=tmp_path, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr


def test_dask_cluster_without_workers_is_not_waited_for_forever(tmp_path, monkeypatch):
    """A scheduler whose workers are all gone: the chunks would wait for ever; the run ends
    with one line after ``DASK_NO_WORKERS_TIMEOUT`` (shortened here), nothing lost."""
    distributed = pytest.importorskip("distributed")
    from sim.errors import WorkerError
    from sim.tournament import run as tournament

    monkeypatch.setattr(tournament, "DASK_NO_WORKERS_TIMEOUT", 1.0)
    with distributed.LocalCluster(n_workers=0, dashboard_address=None,
                                  silence_logs=50) as cluster:
        cfg = _cfg(tmp_path, **{"run.backend": "dask",
                                "run.scheduler": cluster.scheduler_address})
        with pytest.raises(WorkerError) as e:
            tournament.run_tournament(cfg)
    msg = str(e.value)
    assert "no worker for 1 s" in msg and "0 of 3 chunks are saved" in msg and "\n" not in msg


def test_a_kernel_cache_that_cannot_be_written_does_not_stop_the_work(tmp_path):
    """A full disk or ``ulimit -f`` while numba saves a compiled kernel to the kernel cache:
    one line says the cache could not be saved, and the work goes on (it stopped the run
    with "cannot write: File too large; 0 of 4 chunks are saved", naming no file and blaming
    the results folder)."""
    import resource

    (tmp_path / "tinykernel.py").write_text(
        "import sim.core.jit  # noqa: F401\n"
        "import numba\n\n\n"
        "@numba.njit(cache=True)\n"
        "def f(x):\n    return x + 1\n")

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (200, 200))  # the saved kernel is larger

    r = subprocess.run([sys.executable, "-c", "import tinykernel; print(tinykernel.f(41))"],
                       env=_env(SHUANGKOU_CACHE_DIR=str(tmp_path / "cache"),
                                PYTHONPATH=ROOT + os.pathsep + str(tmp_path)),
                       cwd=tmp_path, capture_output=True, text=True, timeout=120,
                       preexec_fn=limit)
    assert r.returncode == 0 and r.stdout.strip() == "42", r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert "could not save a compiled kernel" in lines[0] and "File too large" in lines[0]
    assert str(tmp_path / "cache") in lines[0]
