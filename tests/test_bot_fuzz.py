"""A quick sample of the bot fuzz (benchmarks/bot_fuzz.py, issue 35): one misbehaving bot per
behaviour, each run in its own process under a hard bound; every fault attributed to the right
kind, seat and deal, no run hung, no process left; and a runner killed with SIGKILL in the
middle of a deal leaves no bot process behind."""

from __future__ import annotations

import importlib.util
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from sim.bots import sandbox

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the guard and the survivors' scan read /proc")


def _load():
    spec = importlib.util.spec_from_file_location(
        "bot_fuzz", os.path.join(ROOT, "benchmarks", "bot_fuzz.py"))
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["bot_fuzz"] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


fz = _load()


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    # under /tmp: visible (read-only) in bubblewrap, which mounts its own /var/tmp
    path = tmp_path_factory.mktemp("fuzzbots")
    os.chmod(path, 0o755)
    return str(path)


def _report(results) -> str:
    return "\n".join(
        f"{r.case.behaviour} ({r.case.path}): hung={r.hung} expected={r.case.expected} "
        f"got={r.got} details={r.details} error={r.error!r} survivors={r.survivors[:3]} "
        f"left_after_close={r.left_after_close[:3]}" for r in results if not r.ok)


def test_expected_faults_of_a_bot_that_never_starts():
    # max_restarts 1: two start faults, then crashes (no process to restart)
    assert fz.expected_faults("hello_none", 0, 0, 1, 5, 1) == [
        [1, 0, "start", False], [1, 1, "start", False], [1, 2, "crash", True],
        [1, 3, "crash", True], [1, 4, "crash", True]]
    assert fz.expected_faults("ignore_quit", 2, 1, 0, 3, 1) == []
    assert fz.expected_faults("wrong_id", 3, 2, 1, 4, 1) == [[3, 2, "protocol", False]]
    assert fz.matches([[2, 5, "crash", False]], [[2, ">=3", "crash", False]])
    assert not fz.matches([[2, 2, "crash", False]], [[2, ">=3", "crash", False]])
    assert not fz.matches([[0, 5, "crash", False]], [[2, ">=3", "crash", False]])
    assert fz.matches([[1, 0, "timeout", False]], [[1, 0, "crash|timeout", False]])
    assert not fz.matches([[1, 0, "protocol", False]], [[1, 0, "crash|timeout", False]])


def test_fuzz_sample(folder):
    """One bot per behaviour of SAMPLE (two runs at a time): right kind, seat and deal of
    every fault, no hang, no survivor (inside the run after close_all, and after it)."""
    todo = [fz.make_case(b, i, 11, folder) for i, b in enumerate(fz.SAMPLE)]
    with ThreadPoolExecutor(2) as ex:
        results = list(ex.map(fz.run_case, todo))
    assert all(r.ok for r in results), _report(results)
    # the sample covers every kind, and the runs that fault record exactly one fault kind
    kinds = {r.got[0][2] for r in results if r.got}
    assert kinds == {"start", "crash", "timeout", "illegal", "protocol"}


@pytest.mark.parametrize("mode", ["auto", "off"])
def test_close_stdout_is_a_crash(folder, mode):
    """A bot that closes its output and sleeps is a crash (EOF), with bubblewrap (whose own
    processes must hold no copy of the bot's pipes) as without it."""
    if mode == "auto" and sandbox.bwrap_works():
        pytest.skip("bubblewrap is not in use here")
    r = fz.run_case(fz.make_case("close_stdout", 100, 11, folder, sandbox=mode))
    assert not r.hung and not r.survivors and not r.left_after_close
    assert r.ok, _report([r])
    assert [f[2] for f in r.got] == ["crash"]


def _holders(inode: int) -> list[int]:
    """The processes (other than this one) with the pipe ``inode`` open."""
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != os.getpid():
            try:
                fds = os.listdir(f"/proc/{name}/fd")
                if any(os.readlink(f"/proc/{name}/fd/{fd}") == f"pipe:[{inode}]" for fd in fds):
                    out.append(int(name))
            except OSError:
                pass
    return out


@pytest.mark.skipif(sandbox.bwrap_works() != "", reason="bubblewrap is not in use here")
def test_only_the_bot_holds_its_pipes_under_bubblewrap(tmp_path):
    """Neither the guard nor bubblewrap's own processes keep a copy of the bot's input or
    output: the bot alone holds them (so its exit, or its closing one, is an EOF at once), on
    its 0 and 1, inside the sandbox."""
    from sim.bots.process import BotFault, BotProcess
    from sim.bots.spec import parse_bot

    path = tmp_path / "bot.py"
    path.write_text("import json, sys\n"
                    "for line in sys.stdin:\n"
                    "    if json.loads(line)['type'] == 'hello':\n"
                    "        print(json.dumps({'type': 'hello', 'name': 'b'}), flush=True)\n")
    os.chmod(tmp_path, 0o755)
    bot = parse_bot(f"b={sys.executable} -I {path}", ["greedy"]).replace(sandbox="require")
    p = BotProcess(bot, "t")
    p.start([])
    try:
        pipes = [os.fstat(fd).st_ino for fd in (p.fd_in, p.fd_out)]
        held = [_holders(i) for i in pipes]
        assert len(held[0]) == 1 and held[0] == held[1], held
        bot_pid = held[0][0]
        assert bot_pid != p.pid  # not the guard: the bot, below it
        with open(f"/proc/{bot_pid}/cmdline", "rb") as f:
            assert f.read().split(b"\0")[2] == str(path).encode()  # sh has exec'd the bot
        fds = {fd: os.readlink(f"/proc/{bot_pid}/fd/{fd}") for fd in os.listdir(
            f"/proc/{bot_pid}/fd")}
        assert fds["0"] == f"pipe:[{pipes[0]}]" and fds["1"] == f"pipe:[{pipes[1]}]"
        with pytest.raises(BotFault) as e:  # stdin at its end: the bot exits, EOF at once
            os.close(p.fd_in)
            p.read_line(time.monotonic() + 5)
        assert e.value.kind == "crash"
    finally:
        p.kill()


def test_runner_killed_midway_leaves_no_bot(folder):
    """SIGKILL of the runner in the middle of a deal, with a bot that forked 300 sleeping
    children and one that left a daemon: every process goes (parent-death signal, guard)."""
    todo = [fz.make_case(b, 200 + i, 11, folder, kill_after=0.5)
            for i, b in enumerate(("fork_live", "daemon_live"))]
    with ThreadPoolExecutor(2) as ex:
        results = list(ex.map(fz.run_case, todo))
    for r in results:
        assert r.killed, f"{r.case.behaviour}: the run was not killed midway ({r.seconds:.1f} s)"
        assert not r.survivors, f"{r.case.behaviour}: {r.survivors[:5]}"
