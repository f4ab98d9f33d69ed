"""Fuzz the bot runner (issue 35, docs/bots.md "Fuzz"): misbehaving bots, no hangs, no survivors.

``python benchmarks/bot_fuzz.py --bots 120`` generates that many misbehaving bots (small Python
scripts, standard library only, written from docs/protocol.md: each behaviour is parameterised
by a seeded choice of the deal, seat and decision where it misbehaves), runs each through the
runner (``sim.loops.runner.summaries`` against greedy, ``on_fault = forfeit``) in a subprocess
under a hard wall-clock bound, and checks

* **hung**: the run did not end within its bound (it is killed and counted, not waited on);
* **survivors**: any process left whose command line names the bot's script or whose
  environment carries the run's marker (bots, their children, daemons, guards, bubblewrap),
  after ``close_all`` inside the run and again after the run's process has exited;
* **attributed**: the faults recorded are exactly the expected ``(seat, deal, kind, again)``
  list (the kind of docs/protocol.md and the seat that misbehaved; none for a bot whose
  misbehaviour is not a fault, e.g. one that ignores ``quit`` or forks and plays on).

A few runs are also killed with SIGKILL in the middle of a deal (``--kills``): afterwards no bot
process may survive. The table printed has one row per behaviour. ``tests/test_bot_fuzz.py``
runs a quick sample with the same generator.

Fork bombs are bounded (300 sleeping children): the runner runs as root here, where
RLIMIT_NPROC does not apply, and an unbounded bomb would take the machine down, not the bot.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARK = "SHUANGKOU_FUZZ_MARK"  # in the environment of a run and of everything it starts
# the interpreter the bots run with (the base one: a bot needs the standard library only)
BOT_PYTHON = os.path.realpath(getattr(sys, "_base_executable", sys.executable))

# the time control of every fuzzed bot (the brief of issue 35): tight, so faults come fast
CLOCK = {"decision_ms": 200, "bank_ms": 0, "start_ms": 2000, "max_restarts": 1,
         "memory_mb": 1024}

# --- the bot ----------------------------------------------------------------------------------
BOT = r'''
import json, os, random, signal, sys, threading, time

P = json.loads(__PARAMS__)
B = P["behaviour"]
rng = random.Random(P["seed"])


def send_raw(data):
    view = memoryview(data)
    while view:
        view = view[os.write(1, view):]


def send(obj):
    send_raw((json.dumps(obj) + "\n").encode())


def hang():
    while True:
        time.sleep(3600)


def fork_sleepers(n):
    """n children that sleep (bounded: never an unbounded bomb)."""
    for _ in range(n):
        try:
            pid = os.fork()
        except OSError:
            return
        if pid == 0:
            try:
                time.sleep(10 ** 6)
            finally:
                os._exit(0)


def daemon(keep_fds, exec_sleep):
    """Fork twice with setsid between: the grandchild is a daemon that sleeps."""
    pid = os.fork()
    if pid:
        os.waitpid(pid, 0)
        return
    os.setsid()
    if os.fork():
        os._exit(0)
    if not keep_fds:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    if exec_sleep:
        os.execv("/bin/sh", ["/bin/sh", "-c", "sleep 1000000; : " + sys.argv[0]])
    hang()


def memory_bomb(touch):
    """Take memory until RLIMIT_AS refuses (MemoryError): mapped only (fast) or written."""
    import mmap

    hold = []
    while True:
        hold.append(b"\1" * (16 << 20) if touch else mmap.mmap(-1, 64 << 20))


def misbehave(msg):
    """The misbehaviour at the chosen decision; returns True when the bot answers anyway."""
    if B == "silent":
        hang()
    if B == "late":
        time.sleep(P["late_s"])
        return True
    if B == "spin":
        while True:
            pass
    if B == "garbage":
        send_raw(rng.choice([b"hello there\n", b"{\"type\": \"action\", \n", b"\xff\xfe\x00\n",
                             b"[1, 2, 3]\n", b"42\n", b"null\n", b"\n"]))
        hang()
    if B == "not_action":
        send({"type": rng.choice(["hello", "decide", "move", "log"]), "id": msg["id"],
              "choice": 0})
        hang()
    if B in ("bigline", "bigline_json"):  # a 100 MB line
        chunk = b"x" * (1 << 20)
        if B == "bigline_json":
            send_raw(b'{"type": "action", "id": %d, "choice": 0, "pad": "' % msg["id"])
        for _ in range(100):
            send_raw(chunk)
        send_raw(b'"}\n' if B == "bigline_json" else b"\n")
        hang()
    if B == "partial":
        send_raw(b'{"type": "action", "id": %d, "choi' % msg["id"])
        hang()
    if B == "close_stdout":
        os.close(1)
        hang()
    if B == "exit":
        os._exit(rng.choice([0, 1, 2, 3, 42, 127, 255]))
    if B == "raise":
        raise RuntimeError("a bot with a bug")
    if B == "kill_self":
        os.kill(os.getpid(), rng.choice([signal.SIGKILL, signal.SIGSEGV, signal.SIGABRT]))
        hang()
    if B == "memory_bomb":
        memory_bomb(touch=False)
    if B == "memory_touch":  # writes its memory (slow), survives its MemoryError, hangs
        try:
            memory_bomb(touch=True)
        except MemoryError:
            pass
        hang()
    if B == "fork_hang":  # its 300 children hold its output open
        hang()
    if B == "fork_exit":
        os._exit(0)
    if B == "daemon_live":
        daemon(keep_fds=False, exec_sleep=rng.random() < 0.5)
        return True
    if B == "daemon_exit":  # the daemon keeps the bot's output open: no EOF from the bot
        daemon(keep_fds=True, exec_sleep=False)
        os._exit(0)
    if B == "illegal":
        n = len(msg["legal"])
        send({"type": "action", "id": msg["id"],
              "choice": rng.choice([n, n + 1, -1, 10 ** 6, -(10 ** 9)])})
        return False
    if B == "bad_choice":
        send({"type": "action", "id": msg["id"],
              "choice": rng.choice(["0", 0.0, True, None, [0], {"i": 0}])})
        hang()
    if B == "no_choice":
        send({"type": "action", "id": msg["id"]})
        hang()
    if B == "wrong_id":
        send({"type": "action", "id": rng.choice([msg["id"] + 1, msg["id"] - 1, str(msg["id"]),
                                                  None, 0]),
              "choice": 0})
        hang()
    if B == "stray":  # a stray line before the answer
        send(rng.choice([{"type": "log", "text": "thinking"}, {"type": "info", "depth": 3},
                         {"type": "hello", "name": "again"}]))
        return True
    if B == "stray_text":
        send_raw(b"debug: choosing a card\n")
        return True
    if B == "exit_idle":  # answers, then exits on its own a moment later (maybe between deals)
        threading.Timer(P["late_s"], os._exit, (0,)).start()
        return True
    if B == "stderr_flood":  # 8 MB of standard error: its log, not a fault
        for _ in range(8):
            os.write(2, b"e" * (1 << 20))
        return True
    return True


def answer(msg):
    send({"type": "action", "id": msg["id"], "choice": rng.randrange(len(msg["legal"]))})


HELLO = {"type": "hello", "name": "fuzz-" + B, "version": "1"}


def hello():
    if B == "hello_none":
        hang()
    if B == "hello_exit":
        os._exit(rng.choice([0, 1, 3]))
    if B == "hello_late":
        time.sleep(P["late_s"])
    if B == "hello_wrong":
        send(rng.choice([{"type": "helo", "name": "x"}, {"type": "hello"},
                         {"type": "hello", "name": 7}, {"type": "action", "id": 0, "choice": 0},
                         ["hello"]]))
        hang()
    if B == "hello_garbage":
        send_raw(rng.choice([b"HELLO\n", b"\x00\x01\x02\n", b"{\n"]))
        hang()
    if B == "hello_big":
        for _ in range(100):
            send_raw(b"h" * (1 << 20))
        hang()
    if B in ("fork_live", "fork_hang", "fork_exit"):  # 300 sleeping children first
        fork_sleepers(300)
    send(HELLO)


def on_term(signum, frame):
    pass


def main():
    if B in ("ignore_quit", "fork_live"):
        signal.signal(signal.SIGTERM, on_term)  # not that it matters: SIGKILL ends it
    seat = -1
    deal_id = None
    decides = 0
    done = False
    for raw in sys.stdin.buffer:
        msg = json.loads(raw)
        t = msg["type"]
        if t == "hello":
            hello()
        elif t == "match":
            seat = msg["seat"]
        elif t == "deal":
            deal_id = msg["id"]
            decides = 0
        elif t == "quit":
            if B == "ignore_quit":
                continue
            return
        target = not done and seat == P["seat"] and deal_id == P["deal_id"]
        if target and B == "exit_msg" and t == P["on"]:
            os._exit(rng.choice([0, 1, 9]))
        if t != "decide":
            continue
        if P["pace"]:  # a run slow enough to be killed in the middle of a deal
            time.sleep(P["pace"])
        if target and decides == P["k"] and B != "exit_msg":
            done = True
            if not misbehave(msg):
                decides += 1
                continue
        decides += 1
        answer(msg)
    if B == "ignore_quit":  # even after its input is gone
        hang()


main()
'''

# behaviour: expected fault kind, or None: no fault, or "start": the start sequence. fork_exit:
# its 300 children hold its output open until its guard has killed them all, so the runner sees
# the crash only then: a timeout when that takes longer than the time left to answer
BEHAVIOURS: dict[str, str | None] = {
    "silent": "timeout", "late": "timeout", "spin": "timeout", "partial": "timeout",
    "memory_touch": "timeout", "fork_hang": "timeout",
    "garbage": "protocol", "not_action": "protocol", "bigline": "protocol",
    "bigline_json": "protocol", "bad_choice": "protocol", "no_choice": "protocol",
    "wrong_id": "protocol", "stray": "protocol", "stray_text": "protocol",
    "close_stdout": "crash", "exit": "crash", "raise": "crash", "kill_self": "crash",
    "exit_msg": "crash", "memory_bomb": "crash", "fork_exit": "crash|timeout",
    "daemon_exit": "crash", "exit_idle": "crash",
    "illegal": "illegal",
    "hello_none": "start", "hello_exit": "start", "hello_late": "start", "hello_wrong": "start",
    "hello_garbage": "start", "hello_big": "start",
    "ignore_quit": None, "fork_live": None, "daemon_live": None, "stderr_flood": None,
    "good": None,
}
# what the sample in tests/test_bot_fuzz.py runs (one bot each)
SAMPLE = ("silent", "late", "garbage", "bigline", "close_stdout", "exit_msg", "ignore_quit",
          "memory_bomb", "fork_exit", "daemon_exit", "illegal", "wrong_id", "stray",
          "hello_none", "hello_wrong")
# behaviours whose runs are killed with SIGKILL in the middle of a deal (--kills)
KILLED = ("slow", "fork_live", "daemon_live", "ignore_quit")


@dataclass
class Case:
    """One fuzzed bot and the run it plays: its behaviour, where it misbehaves, what the
    runner must record."""

    behaviour: str
    index: int
    seed: int  # the deals' seed and the bot's own randomness
    team: int  # 0: seats 0 and 2, 1: seats 1 and 3
    seat: int  # the seat that misbehaves
    deal: int  # the deal where it misbehaves
    k: int  # at its k-th decision of that deal
    n_deals: int
    on: str = ""  # exit_msg: the message type it exits on
    late_s: float = 0.0
    pace: float = 0.0  # seconds it waits before each answer
    start_ms: int = CLOCK["start_ms"]
    kill_after: float = 0.0  # > 0: the run is killed with SIGKILL this long after a bot starts
    sandbox: str = "auto"  # the bot's sandbox setting (auto: bubblewrap where it works)
    path: str = ""
    expected: list[list[Any]] = field(default_factory=list)  # [seat, deal, kind, again]

    @property
    def name(self) -> str:
        return f"fz{self.index}"


def expected_faults(behaviour: str, seat: int, deal: int, team: int, n_deals: int,
                    max_restarts: int) -> list[list[Any]]:
    """The faults the runner must record, in order: ``[seat, deal, kind, again]``."""
    kind = BEHAVIOURS.get(behaviour)
    if kind is None:
        return []
    if kind == "start":  # no process of the first bot seat ever starts: its restarts, then
        first = team  # crash faults (the first counted, the others not: ``again``)
        out = []
        for d in range(n_deals):
            if d <= max_restarts:
                out.append([first, d, "start", False])
            else:
                out.append([first, d, "crash", True])
        return out
    if behaviour == "exit_idle":  # found wherever the runner next speaks to it: "deal >= D"
        return [[seat, f">={deal}", kind, False]]
    return [[seat, deal, kind, False]]


def matches(got: list[list[Any]], expected: list[list[Any]]) -> bool:
    """``got`` is ``expected`` in seat, deal and kind (``again`` is the runner's bookkeeping),
    where a deal written ``">=D"`` stands for any deal from D and a kind ``"a|b"`` for
    either."""
    if len(got) != len(expected):
        return False
    for g, e in zip(got, expected):
        deal_ok = g[1] >= int(e[1][2:]) if isinstance(e[1], str) else g[1] == e[1]
        if g[0] != e[0] or not deal_ok or g[2] not in e[2].split("|"):
            return False
    return True


def make_case(behaviour: str, index: int, seed: int, folder: str,
              kill_after: float = 0.0, sandbox: str = "auto") -> Case:
    """A seeded case of ``behaviour``; writes its bot script into ``folder``."""
    from sim.bots.seat import deal_id

    rng = random.Random(f"{seed} {index} {behaviour}")
    team = rng.randrange(2)
    seat = team + 2 * rng.randrange(2)
    deal = rng.randrange(3)
    k = rng.randrange(3)
    n_deals = deal + 2
    late_s = 0.0
    if behaviour == "late":
        late_s = rng.choice([0.4, 0.6, 1.0])
    elif behaviour == "exit_idle":  # deals enough that it exits during the run
        late_s = rng.choice([0.05, 0.1, 0.2, 0.4])
        n_deals = deal + 12
    elif behaviour == "hello_late":
        late_s = CLOCK["start_ms"] / 1000 + rng.choice([0.5, 1.0])
    if BEHAVIOURS.get(behaviour) == "start":
        deal, n_deals = 0, rng.choice([2, 3, 4])
    on = rng.choice(["deal", "dealt", "trump", "play", "trick"]) if behaviour == "exit_msg" \
        else ""
    pace = 0.0
    if kill_after:  # long enough that the kill lands in the middle of a deal
        n_deals, deal, k, pace = 40, 0, 0, 0.01
    # 300 forks before its hello: on a loaded machine that may take more than 2 s
    start_ms = 10_000 if behaviour.startswith("fork_") else CLOCK["start_ms"]
    case = Case(behaviour, index, seed + index, team, seat, deal, k, n_deals, on, late_s,
                pace, start_ms, kill_after, sandbox)
    params = {"behaviour": behaviour, "seed": case.seed, "seat": seat, "k": k, "on": on,
              "deal_id": deal_id(case.seed, deal, ""), "late_s": late_s, "pace": pace}
    case.path = os.path.join(folder, f"fuzzbot_{index:04d}_{behaviour}.py")
    with open(case.path, "w") as f:
        f.write(BOT.replace("__PARAMS__", repr(json.dumps(params))))
    case.expected = expected_faults(behaviour, seat, deal, team, n_deals,
                                    CLOCK["max_restarts"])
    return case


def cases(n: int, seed: int, folder: str, behaviours: Iterable[str] | None = None) -> list[Case]:
    """``n`` cases cycling through ``behaviours`` (default: every one)."""
    names = list(behaviours or BEHAVIOURS)
    out = []
    for i in range(n):
        b = names[i % len(names)]
        # closing its output: half of these run without bubblewrap, so that both layers
        # are seen to turn it into an EOF (a crash), not a timeout
        off = b == "close_stdout" and (i // len(names)) % 2 == 1
        out.append(make_case(b, i, seed, folder, sandbox="off" if off else "auto"))
    return out


# --- one run (in its own process) -------------------------------------------------------------
def child(case: dict[str, Any]) -> None:
    """Play the case's deals through the runner; print the faults and what survived
    ``close_all`` as one JSON line."""
    sys.path.insert(0, ROOT)
    from sim.bots.seat import close_all, register_bots
    from sim.bots.spec import parse_bot
    from sim.loops import runner

    name = f"fz{case['index']}"
    b = parse_bot(f"{name}={BOT_PYTHON} -I {case['path']}", ["greedy"]).replace(
        **dict(CLOCK, start_ms=case["start_ms"]), sandbox=case["sandbox"])
    register_bots([b])
    seats = [name, "greedy"] if case["team"] == 0 else ["greedy", name]
    faults: list[dict[str, Any]] = []
    print(json.dumps({"started": True}), flush=True)
    error = ""
    try:
        runner.summaries(case["seed"], 0, case["n_deals"], runner.make_seats(seats),
                         faults=faults)
    except Exception as e:  # reported, counted as a failed attribution
        error = f"{type(e).__name__}: {e}"
    from sim.bots.seat import _pool

    restarts = {k[3]: slot.restarts for k, slot in _pool().items()}
    t0 = time.monotonic()
    close_all()
    closed = time.monotonic() - t0
    left = survivors(case["path"], exclude={os.getpid()})
    print(json.dumps({"faults": faults, "error": error, "close_s": closed, "restarts": restarts,
                      "left_after_close": left}), flush=True)


def survivors(path: str, exclude: Iterable[int] = ()) -> list[str]:
    """Live processes (zombies excluded) whose command line names ``path`` or whose
    environment carries ``MARK=path``: ``"pid command"`` each."""
    mark = f"{MARK}={path}".encode()
    out = []
    skip = set(exclude)
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in skip:
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
            if stat[stat.rfind(b")") + 2:][:1] == b"Z":
                continue
            with open(f"/proc/{name}/cmdline", "rb") as f:
                cmd = f.read()
            try:
                with open(f"/proc/{name}/environ", "rb") as f:
                    env = f.read().split(b"\0")
            except OSError:
                env = []
        except OSError:
            continue
        if path.encode() in cmd or mark in env:
            text = cmd.replace(b"\0", b" ").decode(errors="replace")
            out.append(f"{name} {text[:100]}")
    return out


def wait_gone(path: str, grace: float) -> tuple[list[str], float]:
    """Survivors once ``grace`` seconds have passed (sooner when none is left), and the
    seconds it took for them to go."""
    t0 = time.monotonic()
    while True:
        left = survivors(path)
        if not left or time.monotonic() - t0 >= grace:
            return left, time.monotonic() - t0
        time.sleep(0.05)


def bound_s(case: Case) -> float:
    """The hard wall-clock bound of a run: its worst legitimate time, generously."""
    per_deal = 15.0  # a start fault (start_ms), a quit (2 s), a guard's clean-up
    return 60.0 + per_deal * case.n_deals


@dataclass
class Result:
    case: Case
    hung: bool = False
    survivors: list[str] = field(default_factory=list)  # after the run's process exited
    left_after_close: list[str] = field(default_factory=list)  # inside it, after close_all
    got: list[list[Any]] = field(default_factory=list)
    error: str = ""
    seconds: float = 0.0
    gone_s: float = 0.0  # how long the processes took to go after a kill -9
    details: list[str] = field(default_factory=list)  # the faults' details
    restarts: dict[int, int] = field(default_factory=dict)  # per bot seat, at the end
    killed: bool = False  # killed midway (SIGKILL before its end), as the case asked

    @property
    def attributed(self) -> bool:
        if self.hung or self.error:
            return False
        if matches(self.got, self.case.expected):
            return True
        # a bot that exited on its own after its last answer of the run: no fault, and
        # no restart either (a restart without a fault is a crash the runner missed)
        return (self.case.behaviour == "exit_idle" and not self.got
                and self.restarts.get(self.case.seat, 0) == 0)

    @property
    def ok(self) -> bool:
        killed = self.case.kill_after > 0
        return (not self.hung and not self.survivors and not self.left_after_close
                and (self.killed and not self.got if killed else self.attributed))


def run_case(case: Case, bound: float | None = None, grace: float = 5.0) -> Result:
    """Run ``case`` in its own process under a hard bound; kill -9 it midway when the case
    says so; then look for survivors."""
    env = dict(os.environ, **{MARK: case.path})
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    bound = bound or bound_s(case)
    res = Result(case)
    t0 = time.monotonic()
    out = tempfile.TemporaryFile()
    p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--child",
                          json.dumps(asdict(case))], stdout=out, stderr=subprocess.STDOUT,
                         env=env, start_new_session=True)
    try:
        if case.kill_after:
            kill_midway(p, case, t0 + bound)
        p.wait(max(0.1, bound - (time.monotonic() - t0)))
    except subprocess.TimeoutExpired:
        res.hung = True
        try:  # the run's own processes (not the bots': those must go by themselves)
            os.kill(p.pid, signal.SIGKILL)
        except OSError:
            pass
        p.wait()
    res.seconds = time.monotonic() - t0
    res.killed = p.returncode == -signal.SIGKILL and not res.hung
    res.survivors, res.gone_s = wait_gone(case.path, grace)
    for pid_cmd in res.survivors:  # clean up after a failure, so one does not hide the next
        try:
            os.kill(int(pid_cmd.split()[0]), signal.SIGKILL)
        except (OSError, ValueError):
            pass
    out.seek(0)
    text = out.read().decode(errors="replace")
    out.close()
    for line in text.splitlines():
        if line.startswith("{"):
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if "faults" in msg:
                res.got = [[f["seat"], f["deal"], f["kind"], f["again"]] for f in msg["faults"]]
                res.error = msg["error"]
                res.left_after_close = msg["left_after_close"]
                res.details = [f["detail"] for f in msg["faults"]]
                res.restarts = {int(k): v for k, v in msg["restarts"].items()}
    if not case.kill_after and not res.hung and p.returncode != 0:
        res.error = res.error or f"the run exited {p.returncode}: {text.strip()[-300:]}"
    return res


def kill_midway(p: subprocess.Popen[bytes], case: Case, deadline: float) -> None:
    """SIGKILL the run ``case.kill_after`` seconds after its first bot process appears."""
    while time.monotonic() < deadline and p.poll() is None:
        if survivors(case.path, exclude={p.pid}):  # a guard or a bot is up
            break
        time.sleep(0.02)
    time.sleep(case.kill_after)
    if p.poll() is None:
        os.kill(p.pid, signal.SIGKILL)


# --- the fuzz -----------------------------------------------------------------------------------
def warm(folder: str) -> None:
    """One good bot's run first: greedy's kernel loads (or compiles) before the timed runs."""
    r = run_case(make_case("good", 10 ** 6, 0, folder), bound=900)
    if not r.ok:
        raise SystemExit(f"the warm-up run failed: {r}")


def table(results: list[Result]) -> str:
    rows: dict[str, list[int]] = {}
    for r in results:
        label = r.case.behaviour + (" (kill -9)" if r.case.kill_after else "") \
            + (" (sandbox off)" if r.case.sandbox == "off" else "")
        row = rows.setdefault(label, [0, 0, 0, 0, 0])
        row[0] += 1
        row[1] += r.hung
        row[2] += bool(r.survivors or r.left_after_close)
        if not r.case.kill_after:
            row[3] += r.attributed
            row[4] += 1
    lines = ["| behaviour | expected fault | runs | hung | survivors | attributed right |",
             "|---|---|---|---|---|---|"]
    tot = [0, 0, 0, 0, 0]
    for label, row in rows.items():
        b = label.split()[0]
        kind = "none" if b in KILLED and "kill" in label else (BEHAVIOURS.get(b) or "none")
        right = f"{row[3]}/{row[4]}" if row[4] else "—"
        lines.append(f"| {label} | {kind} | {row[0]} | {row[1]} | {row[2]} | {right} |")
        tot = [a + c for a, c in zip(tot, row)]
    lines.append(f"| **all** | | {tot[0]} | {tot[1]} | {tot[2]} | {tot[3]}/{tot[4]} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bots", type=int, default=120, help="misbehaving bots (default 120)")
    ap.add_argument("--kills", type=int, default=8, help="runs killed with SIGKILL midway")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2, help="runs at once (default 2)")
    ap.add_argument("--only", default="", help="comma-separated behaviours")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        child(json.loads(a.child))
        return 0
    from concurrent.futures import ThreadPoolExecutor

    # /tmp: visible (read-only) inside bubblewrap, which mounts its own /var/tmp
    folder = tempfile.mkdtemp(prefix="shuangkou-fuzz-", dir="/tmp")
    os.chmod(folder, 0o755)
    warm(folder)
    only = [b for b in a.only.split(",") if b] or None
    todo = cases(a.bots, a.seed, folder, only)
    todo += [make_case(KILLED[i % len(KILLED)], a.bots + i, a.seed, folder,
                       kill_after=0.5 + 0.25 * (i % 4)) for i in range(a.kills)]
    t0 = time.monotonic()
    with ThreadPoolExecutor(a.jobs) as ex:
        results = list(ex.map(run_case, todo))
    wall = time.monotonic() - t0
    for r in results:
        if not r.ok:
            print(f"FAIL {r.case.behaviour} #{r.case.index} ({r.case.path}): hung={r.hung} "
                  f"expected={r.case.expected} got={r.got} error={r.error!r} "
                  f"survivors={r.survivors[:3]} left_after_close={r.left_after_close[:3]} "
                  f"details={r.details} restarts={r.restarts}")
    print(table(results))
    kills = [r for r in results if r.case.kill_after]
    if kills:
        print(f"kill -9 runs: every bot process gone within "
              f"{max(r.gone_s for r in kills):.2f} s of the runner's death")
    print(f"{len(results)} runs in {wall:.0f} s ({a.jobs} at once), seed {a.seed}, "
          f"clock {CLOCK}")
    return 0 if all(r.ok for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
