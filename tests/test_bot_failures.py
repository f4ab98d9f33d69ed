"""Misbehaving Python-tier bots and plug-ins: time limits enforced while a bot runs (in
``play``, in-process, on a helper thread, in tournaments with loky and threading workers),
``sys.exit`` and Ctrl-C in a bot, plug-ins that fail at import or take a built-in's name,
NaN strategy parameters."""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
import textwrap
import threading

import pytest

from sim.cli import main
from sim.errors import ConfigError, StrategyError
from sim.loops.runner import iter_records, make_seats, summaries
from sim.tournament.config import from_dict
from sim.tournament.run import run_tournament
from strategies.registry import load_plugin, make, resolve

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

HANG = '''
import sys
import time

from strategies.base import param
from strategies.random import RandomStrategy


class Hang(RandomStrategy):
    """random through the Python tier that misbehaves in choose on deal ``at``."""
    name = "hang"
    compiled_kind = None
    how = param("none", str, choices=("none", "spin", "sleep", "catch", "exit", "interrupt"))
    at = param(0, int, lo=0)

    def begin_deal(self, seat, seed, deal):
        super().begin_deal(seat, seed, deal)
        self.deal = deal

    def choose(self, obs, legal):
        if self.deal == self.at:
            if self.how == "spin":
                while True:
                    pass
            if self.how == "sleep":
                time.sleep(1e9)
            if self.how == "catch":  # swallows every Exception, not the time limit
                while True:
                    try:
                        time.sleep(1e9)
                    except Exception:
                        pass
            if self.how == "exit":
                sys.exit(3)
            if self.how == "interrupt":
                raise KeyboardInterrupt
        return super().choose(obs, legal)


class ExitAtStart(RandomStrategy):
    name = "exit_at_start"
    compiled_kind = None

    def begin_deal(self, seat, seed, deal):
        sys.exit()
'''


@pytest.fixture
def hang(tmp_path, monkeypatch):
    (tmp_path / "hangplug.py").write_text(HANG)
    monkeypatch.syspath_prepend(str(tmp_path))
    load_plugin("hangplug")
    return "hangplug"


def in_thread(fn, bound=60.0):
    """``fn()`` on a thread that is not the main thread: (result, exception); fails rather
    than hangs when ``fn`` does not return within ``bound`` seconds."""
    box = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - handed to the test
            box["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(bound)
    assert not t.is_alive(), f"still running after {bound} s"
    return box.get("value"), box.get("error")


def stopped(spec, seat, seed, deal, limit="0.2"):
    return (rf"strategy '{spec}' in seat {seat} took [0-9.]+ s in choose, over the {limit} s limit "
            rf"and was stopped \(seed {seed}, deal {deal}; replay with shuangkou play")


# --- time limit --------------------------------------------------------------------------
@pytest.mark.parametrize("how", ["spin", "sleep", "catch"])
def test_play_stops_a_bot_that_never_returns(tmp_path, hang, how):
    """In the main thread of ``shuangkou play`` (a process of its own: a hang cannot block
    the test run)."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    p = subprocess.run([sys.executable, "-m", "sim.cli", "play", "--plugin", hang, "--seats",
                        f"random,hang(how={how}, at=1)", "--timeout", "0.2", "--deals", "3"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
                       check=False)
    assert p.returncode == 2, p.stderr
    err = p.stderr.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith("shuangkou play: error: ")
    # seats random,hang: team B is seats 1 and 3; the first to choose in deal 1 is stopped
    assert re.search(stopped(rf"hang\(how={how}, at=1\)", "[13]", 0, 1), err[0]), err[0]


@pytest.mark.parametrize("how", ["spin", "sleep", "catch"])
def test_helper_thread_stops_a_bot_that_never_returns(hang, how):
    """Off the main thread (no SIGALRM there) the bot runs on a helper thread and is
    abandoned; deals finished before are already yielded."""
    recs = []

    def play():
        recs.extend(iter_records(4, 0, 3, make_seats(f"hang(how={how}, at=2),random"),
                                 timeout=0.2))

    _, err = in_thread(play)
    assert isinstance(err, StrategyError)
    assert re.search(stopped(rf"hang\(how={how}, at=2\)", "[02]", 4, 2), str(err))
    assert [r["deal"] for r in recs] == [0, 1]
    _, err = in_thread(lambda: summaries(4, 0, 3, make_seats(f"hang(how={how}, at=2)"),
                                         timeout=0.2))
    assert isinstance(err, StrategyError) and "deal 2;" in str(err)


def test_helper_thread_ends_a_busy_loop_it_abandons(hang):
    before = set(threading.enumerate())
    seats = make_seats("hang(how=spin)")
    _, err = in_thread(lambda: list(iter_records(4, 0, 1, seats, timeout=0.2)))
    assert isinstance(err, StrategyError)
    left = [t for t in threading.enumerate() if t not in before and t.name == "shuangkou-bot"]
    for t in left:
        t.join(30)  # the asynchronous exception ends the loop
    assert not any(t.is_alive() for t in left)


def tournament_config(tmp_path, name, players, timeout=0.2, **kw):
    raw = {"name": name, "players": players, "deals": 20, "seed": 11, "timeout": timeout,
           "plugins": ["hangplug"], "run": {"chunk_size": 5, "progress": False},
           "output": {"dir": str(tmp_path / name), "plots": False}}
    raw["run"].update(kw)
    return from_dict(raw, source="test")


@pytest.mark.parametrize("backend,how", [("loky", "spin"), ("loky", "sleep"),
                                         ("fork", "spin"), ("fork", "sleep"),
                                         ("threading", "spin"), ("threading", "sleep")])
def test_tournament_stops_a_bot_that_never_returns(tmp_path, hang, backend, how):
    """Two workers; the bot hangs on deal 17 only (chunk 3 of 4): the error names it, the
    chunks finished before stay on disk. The limit is 1 s, not 0.2: chunk 3 starts as soon as
    a worker has finished a chunk, and joblib raises a task's error before it yields results
    that arrived earlier but were not yet taken, so a limit shorter than the run's own latency
    in taking a result (a cold CI run saw no chunk saved at 0.2 s) tests that latency."""
    cfg = tournament_config(tmp_path, f"{backend}-{how}", [f"hang(how={how}, at=17)", "random"],
                            timeout=1.0, jobs=2, backend=backend)
    _, err = in_thread(lambda: run_tournament(cfg), bound=120)
    assert isinstance(err, StrategyError), err
    assert re.search(stopped(rf"hang\(how={how}, at=17\)", "[0-3]", 11, 17, "1"), str(err))
    files = sorted(os.listdir(os.path.join(cfg.out, "chunks")))
    # chunk 3 can start only once a worker finished one of chunks 0-2: that one is saved
    assert files and set(files) <= {"c000000.npz", "c000001.npz", "c000002.npz"}


def test_timeout_zero_is_no_limit_and_bad_values_are_refused(hang, capsys):
    seats = "hang(how=none),random"
    assert main(["play", "--plugin", hang, "--seats", seats, "--deals", "2",
                 "--timeout", "0"]) == 0  # before: every decision was over a 0 s limit
    capsys.readouterr()
    for bad in ("-1", "nan", "inf"):  # refused by the option's type, as argparse exits
        with pytest.raises(SystemExit) as stop:
            main(["play", "--seats", seats, "--timeout", bad])
        assert stop.value.code == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "is not 0 … 86,400, the range of seconds per decision" \
            in err[0]
    for bad in (-0.5, float("nan"), float("inf"), "1"):
        with pytest.raises(ConfigError, match="timeout .* must be a number of seconds >= 0"):
            summaries(1, 0, 1, make_seats("random"), timeout=bad)
    assert summaries(1, 0, 1, make_seats(seats), timeout=0).shape[0] == 1
    with pytest.raises(ConfigError, match="timeout -1"):
        iter_records(1, 0, 1, make_seats("random"), timeout=-1)  # at the call: before a file
    for bad in (-1, float("nan"), float("inf")):  # configs refuse the same values
        with pytest.raises(ConfigError, match="'timeout' = .* must be a number >= 0"):
            from_dict({"players": ["random", "greedy"], "timeout": bad}, source="test")


# --- sys.exit and Ctrl-C in a bot ---------------------------------------------------------
@pytest.mark.parametrize("timeout", [None, 0.2])
def test_sys_exit_in_a_bot_is_reported_like_a_raise(hang, timeout):
    with pytest.raises(StrategyError, match=r"'hang\(how=exit, at=1\)' in seat [13] raised "
                                            r"SystemExit: 3 in choose \(seed 5, deal 1;"):
        list(iter_records(5, 0, 2, make_seats("random,hang(how=exit, at=1)"), timeout=timeout))
    with pytest.raises(StrategyError, match=r"'exit_at_start' in seat 0 raised SystemExit in "
                                            r"begin_deal \(seed 5, deal 0;"):
        summaries(5, 0, 2, make_seats("exit_at_start,random"), timeout=timeout)
    _, err = in_thread(lambda: summaries(5, 0, 2, make_seats("random,hang(how=exit, at=1)"),
                                         timeout=timeout))
    assert isinstance(err, StrategyError) and "raised SystemExit: 3 in choose" in str(err)


def test_sys_exit_in_a_bot_exits_play_with_2(hang, capsys):
    assert main(["play", "--plugin", hang, "--seats", "hang(how=exit)", "--deals", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "raised SystemExit: 3 in choose (seed 0, deal 0;" in err[0]


@pytest.mark.parametrize("timeout", [None, 0.2])
def test_ctrl_c_in_a_bot_is_not_swallowed(hang, timeout, capsys):
    seats = make_seats("hang(how=interrupt)")
    with pytest.raises(KeyboardInterrupt):
        summaries(5, 0, 1, seats, timeout=timeout)
    _, err = in_thread(lambda: summaries(5, 0, 1, seats, timeout=timeout))
    assert isinstance(err, KeyboardInterrupt)
    args = ["play", "--plugin", hang, "--seats", "hang(how=interrupt)", "--deals", "1"]
    assert main(args + (["--timeout", str(timeout)] if timeout else [])) == 130


# --- plug-ins -------------------------------------------------------------------------------
@pytest.mark.parametrize("source,error", [
    ("raise ValueError('no config for\\n this bot')", "ValueError: no config for this bot"),
    ("def broken(:\n    pass\n", "SyntaxError: "),
    ("import sys\nsys.exit('bye')\n", "SystemExit: bye"),
])
def test_plugin_failing_at_import_is_one_line(tmp_path, monkeypatch, capsys, source, error):
    name = f"badplug_{abs(hash(source)) % 10**6}"
    (tmp_path / f"{name}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ConfigError, match=rf"plugin module '{name}' cannot be imported: it "
                                          rf"raised {error}"):
        load_plugin(name)
    with pytest.raises(ConfigError, match=rf"module '{name}' cannot be imported \(it raised "
                                          rf"{error}"):
        make(f"{name}:Bot")
    assert main(["play", "--plugin", name]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"plugin module '{name}' cannot be imported" in err[0]
    if error.startswith("SyntaxError"):
        assert f"{name}.py, line 1)" in err[0]


def test_plugin_named_like_a_builtin_is_refused(tmp_path, monkeypatch):
    (tmp_path / "clashplug.py").write_text(textwrap.dedent('''
        from strategies.random import RandomStrategy

        class MyGreedy(RandomStrategy):
            name = "greedy"
        '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ConfigError, match=r"plug-in strategy clashplug:MyGreedy is named "
                                          r"'greedy' like the built-in strategy "
                                          r"strategies.greedy:GreedyStrategy"):
        load_plugin("clashplug")
    assert type(make("greedy")).__name__ == "GreedyStrategy"
    # by module:Class it is still usable, under its own spec
    assert make("clashplug:MyGreedy").spec() == "clashplug:MyGreedy"


def test_registering_the_same_class_twice_is_harmless(hang):
    cls = resolve("hang")
    assert load_plugin(hang) == ["hang", "exit_at_start"]  # loaded again: no error
    assert resolve("hang") is cls
    mod = importlib.reload(sys.modules[hang])  # a module loaded twice: a new class object
    assert load_plugin(hang) == ["hang", "exit_at_start"]
    assert resolve("hang") is mod.Hang


# --- NaN parameters -----------------------------------------------------------------------
@pytest.mark.parametrize("spec,message", [
    ("random(show_prob=nan)", r"show_prob=nan of strategy 'random' must be float in \[0.0, 1"),
    ("greedy(show_at=NaN)", r"show_at=nan of strategy 'greedy' must be float in \[0.0, 1.0\]"),
    ("ismcts(c=inf)", r"c=inf of strategy 'ismcts' must be float in \[0.0, 100.0\]"),
    ("random(show_prob=-inf)", r"show_prob=-inf of strategy 'random' must be float in"),
])
def test_nan_and_inf_parameters_are_refused(spec, message):
    with pytest.raises(ConfigError, match=message):
        make(spec)


def test_unbounded_float_parameter_refuses_nan_and_allows_declared_infinity():
    import math

    from strategies.base import Strategy, param

    class Free(Strategy):
        name = "free"
        x = param(1.0, float)
        cap = param(1.0, float, lo=0.0, hi=math.inf)

    for bad in (float("nan"), float("inf"), "nan"):
        with pytest.raises(ConfigError, match="x=.* of strategy 'free' must be a finite float"):
            Free(x=bad)
    with pytest.raises(ConfigError, match="cap=nan of strategy 'free' must be float"):
        Free(cap=float("nan"))
    assert Free(cap=math.inf).cap == math.inf and Free(x=-2.5).x == -2.5


# --- compiled plug-in kernels that crash or never return --------------------------------
FIXTURES = os.path.join(ROOT, "tests", "plugin_fixtures")


def _cli(args, timeout=600, stop=None):
    """``shuangkou ARGS`` in a child process (in the fixtures folder, so ``--plugin
    alloc_bots`` finds them); ``stop``: (signal, seconds) sent once it has started."""
    from conftest import sigint_default

    env = {**os.environ, "PYTHONPATH": ROOT}
    p = subprocess.Popen([sys.executable, "-m", "sim.cli", *args], cwd=FIXTURES, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=sigint_default)
    try:
        if stop is not None:
            sig, after = stop
            try:
                p.wait(after)
            except subprocess.TimeoutExpired:
                p.send_signal(sig)
        out, err = p.communicate(timeout=timeout)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    return p.returncode, out, err


@pytest.fixture(scope="module")
def wild_compiled():
    """Compile the fixtures' kernels once (the child processes then load them)."""
    code, out, err = _cli(["play", "--plugin", "alloc_bots", "--seats", "wild,random",
                           "--deals", "2", "--quiet"])
    assert code == 0, err


def _one_line(err):
    lines = [ln for ln in err.strip().splitlines() if not ln.startswith(("compil"))]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_plugin_kernel_writing_out_of_bounds_is_one_line(wild_compiled, tmp_path):
    # inlined in the deal loops: a segfault, caught in the child that plays the first deal
    code, out, err = _cli(["play", "--plugin", "alloc_bots", "--seats", "wild(mode=1),random",
                           "--deals", "3"])
    line = _one_line(err)
    assert code == 2 and "strategy 'wild(mode=1)' crashed (SIGSEGV) in its compiled kernel " \
        "playing deal 0 (seed 0)" in line, err
    # the same in a tournament's warm-up
    cfg = tmp_path / "wild.toml"
    cfg.write_text('name = "wild"\nplayers = ["alloc_bots:Wild(mode=1)", "random"]\n'
                   "deals = 10\n[run]\nprogress = false\n[output]\nplots = false\n"
                   f'dir = "{tmp_path / "out"}"\n')
    code, out, err = _cli(["tournament", str(cfg), "--plugin", "alloc_bots"])
    assert code == 2 and "crashed (SIGSEGV) in its compiled kernel" in _one_line(err), err
    # a kernel of its own (it allocates): bounds-checked, an IndexError at any deal
    code, out, err = _cli(["play", "--plugin", "alloc_bots", "--seats", "alloc(mode=1),random",
                           "--deals", "3"])
    line = _one_line(err)
    assert code == 2 and re.search(r"strategy 'alloc\(mode=1\)' in seat [02] raised "
                                   r"IndexError: index is out of bounds in its kernel", line), err


def test_plugin_kernel_that_never_returns_meets_the_timeout(wild_compiled):
    # on the first deal (played by the check child)
    code, out, err = _cli(["play", "--plugin", "alloc_bots", "--seats", "wild(mode=2),random",
                           "--deals", "3", "--timeout", "2"], timeout=300)
    assert code == 2 and "within the 2 s limit in its compiled kernel and was stopped" \
        in _one_line(err), err
    # on a later deal: the watched run
    code, out, err = _cli(["play", "--plugin", "alloc_bots", "--seats", "wild(mode=3),random",
                           "--seed", "5", "--deals", "200", "--timeout", "2"], timeout=300)
    line = _one_line(err)
    assert code == 2 and re.search(r"strategy 'wild\(mode=3\)' in seat [02] took more than 2 s "
                                   r"in its compiled kernel and was abandoned \(seed 5, deal "
                                   r"[1-9]\d*;", line), err


@pytest.mark.parametrize("when", ["check", "run"])
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_plugin_kernel_that_never_returns_stops_on_ctrl_c_and_sigterm(wild_compiled, sig, when):
    import signal

    mode, seed = ("2", "0") if when == "check" else ("3", "5")
    code, out, err = _cli(["play", "--plugin", "alloc_bots", "--seats",
                           f"wild(mode={mode}),random", "--seed", seed, "--deals", "200"],
                          timeout=60, stop=(getattr(signal, sig), 8))
    assert code == 130 and _one_line(err) == "shuangkou play: interrupted", err


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's PR_SET_PDEATHSIG")
def test_the_check_child_dies_with_its_run(wild_compiled):
    """A run killed outright (SIGKILL, the OOM killer) while its forked check child plays a
    kernel that never returns: the child goes too (it spun on at 100% CPU, orphaned)."""
    import signal
    import time

    from conftest import sigint_default

    p = subprocess.Popen([sys.executable, "-m", "sim.cli", "play", "--plugin", "alloc_bots",
                          "--seats", "wild(mode=2),random", "--deals", "3"], cwd=FIXTURES,
                         env={**os.environ, "PYTHONPATH": ROOT}, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, preexec_fn=sigint_default)
    child = None
    try:
        t0 = time.monotonic()
        while child is None and time.monotonic() - t0 < 120 and p.poll() is None:
            try:
                with open(f"/proc/{p.pid}/task/{p.pid}/children") as f:
                    kids = f.read().split()
            except OSError:
                kids = []
            child = int(kids[0]) if kids else None
            time.sleep(0.2)
        assert child is not None, "no check child appeared"
        p.send_signal(signal.SIGKILL)
        p.wait(30)
        t0 = time.monotonic()
        while os.path.exists(f"/proc/{child}") and time.monotonic() - t0 < 10:
            with open(f"/proc/{child}/stat") as f:  # a zombie waiting for init is gone
                if f.read().split(")")[-1].split()[0] == "Z":
                    break
            time.sleep(0.2)
        alive = os.path.exists(f"/proc/{child}")
        if alive:
            with open(f"/proc/{child}/stat") as f:
                alive = f.read().split(")")[-1].split()[0] != "Z"
        assert not alive, "the check child outlived its run"
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        if child is not None:
            try:
                os.kill(child, signal.SIGKILL)
            except OSError:
                pass


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_tournament_stops_a_plugin_kernel_over_the_timeout(wild_compiled, tmp_path, jobs):
    """The config's timeout reaches compiled plug-in kernels in the workers too: one line,
    exit 2, and the run ends (no worker left spinning)."""
    cfg = tmp_path / "wild.toml"
    cfg.write_text('name = "wild"\nplayers = ["alloc_bots:Wild(mode=3)", "random"]\n'
                   "deals = 40\nseed = 5\ntimeout = 2\n[run]\nprogress = false\n"
                   "chunk_size = 4\n[output]\nplots = false\n"
                   f'dir = "{tmp_path / "out"}"\n')
    code, out, err = _cli(["tournament", str(cfg), "--plugin", "alloc_bots", "--jobs", jobs],
                          timeout=300)
    line = _one_line(err)
    assert code == 2 and re.search(r"strategy 'wild\(mode=3\)' in seat [0-3] took "
                                   r"more than 2 s in its compiled kernel and was abandoned "
                                   r"\(seed 5, deal \d+;", line), err
