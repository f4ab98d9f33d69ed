"""The example bots of examples/bots/ speak `shuangkou-bot/1` (docs/protocol.md).

Each bot runs as a subprocess and is driven by a scripted session written from the page
alone (hello, match, deal, dealt, shows, trump, plays, decide..., quit): it must answer hello,
answer every decide with its id and a valid index, write nothing else, and exit on quit (and
at the end of its input) within 2 s. The Python and C bots play the same heuristic: their
answers are checked by hand on crafted decisions, against each other and against the Python
bot's in-process twin on random ones. The LLM bot runs against the local stub server.
No runner is involved (tests of the runner live elsewhere); no network beyond 127.0.0.1.
"""

from __future__ import annotations

import importlib.util
import json
import os
import queue
import random
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parent.parent
BOTS = ROOT / "examples" / "bots"
PYBOT = [sys.executable, str(BOTS / "python" / "bot.py")]
HELLO = {"type": "hello", "protocol": "shuangkou-bot/1"}
MATCH = {"type": "match", "seat": 0, "partner": 2,
         "rules": {"max_redeals": 3, "kou_di_single": 2, "kou_di_pair": 4, "settle_step": 20,
                   "settle_unit": 2, "defender_cap": 10, "start_skill": 1600},
         "clock": {"decision_ms": 1000, "bank_ms": 10000}}


class Session:
    """A bot process with a line reader that never blocks the test without a bound."""

    def __init__(self, cmd: list[str], env: dict | None = None) -> None:
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
        self.lines: queue.Queue = queue.Queue()
        self.err: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=lambda: self.err.extend(self.proc.stderr), daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, *msgs: dict) -> None:
        for msg in msgs:
            self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()

    def recv(self, timeout: float = 5.0) -> dict:
        line = self.lines.get(timeout=timeout)
        assert line is not None, "the bot closed its output: " + "".join(self.err)[-500:]
        return json.loads(line)

    def decide(self, msg: dict, timeout: float = 5.0) -> int:
        self.send(msg)
        ans = self.recv(timeout)
        assert ans["type"] == "action" and ans["id"] == msg["id"], ans
        assert isinstance(ans["choice"], int) and 0 <= ans["choice"] < len(msg["legal"]), ans
        return ans["choice"]

    def start(self, seat: int = 0) -> dict:
        self.send(HELLO)
        hello = self.recv()
        assert hello["type"] == "hello" and isinstance(hello["name"], str), hello
        self.send(dict(MATCH, seat=seat, partner=(seat + 2) % 4))
        return hello

    def quit(self) -> None:
        """quit: the bot exits within 2 s, having written nothing more."""
        self.send({"type": "quit"})
        assert self.proc.wait(timeout=2) == 0, "".join(self.err)[-500:]
        assert self.lines.get(timeout=2) is None, "a line after quit"

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def decide(i: int, kind: str, hand: list, legal: list, trick: list | None = None) -> dict:
    return {"type": "decide", "id": i, "kind": kind, "hand": hand, "legal": legal,
            "trick": trick or [], "clock_ms": 1000}


# crafted decisions for seat 0 (trump hearts from the trump message on) and the heuristic's
# answers: (message, expected index)
SHOWS = [
    # a long spade suit (6 of 9 cards): show it
    (decide(1, "show", ["4s", "6s", "7s", "9s", "Ks", "Ks", "3d", "8c", "Jd"],
            [[], ["Ks", "Ks"]]), 1),
    # balanced: pass
    (decide(2, "show", ["4h", "6h", "7d", "9c", "Ks", "Ks", "3d", "8c", "Jd", "Qh"],
            [[], ["Ks", "Ks"]]), 0),
    # the two weakest cards back (R13, no trump yet)
    (decide(3, "giveback", ["Ah", "BJ", "4c", "6d", "Ks", "Ks"],
            [["Ah", "BJ"], ["4c", "6d"], ["Ks", "4c"]]), 1),
]
PLAYS = [
    # leading: the weakest choice
    (decide(4, "play", ["4c", "Ah", "Ks", "Ks"], [["4c"], ["Ah"], ["Ks", "Ks"]]), 0),
    # the partner (seat 2) is winning: the weakest
    (decide(5, "play", ["Ks", "4s"], [["Ks"], ["4s"]],
            [[1, ["9s"]], [2, ["As"]], [3, ["Ts"]]]), 1),
    # an opponent leads 9d: the weakest card that wins, Td
    (decide(6, "play", ["4d", "Ad", "Qd", "Td"], [["4d"], ["Ad"], ["Qd"], ["Td"]],
            [[3, ["9d"]]]), 3),
    # BJ cannot be beaten by a heart: the weakest
    (decide(7, "play", ["Ah", "7h"], [["Ah"], ["7h"]], [[3, ["BJ"]]]), 1),
    # a club pair led; a trump pair wins it (R21)
    (decide(8, "play", ["4h", "4h", "6d", "7s"], [["4h", "4h"], ["6d", "7s"]],
            [[3, ["Kc", "Kc"]]]), 0),
    # void in clubs, an opponent winning with Ac: the weakest trump that wins, 4h
    (decide(9, "play", ["SJ", "4h", "6s"], [["SJ"], ["4h"], ["6s"]],
            [[1, ["Ac"]], [2, ["4c"]], [3, ["Qc"]]]), 1),
    # 5c only ties the 5d led (the earlier wins, R20): BJ
    (decide(10, "play", ["5c", "BJ"], [["5c"], ["BJ"]], [[3, ["5d"]]]), 1),
]


def run_session(cmd: list[str], expect: bool = True) -> list[int]:
    """The scripted deal; returns the choices (checked against SHOWS/PLAYS when `expect`)."""
    s = Session(cmd)
    try:
        s.start(seat=0)
        s.send({"type": "deal", "id": "deal-a1", "bot_seed": 987654321},
                {"type": "dealt", "cards": ["4s", "6s", "7s", "9s", "Ks", "Ks", "3d", "8c"]})
        got = []
        for msg, _ in SHOWS[:2]:
            got.append(s.decide(msg))
        s.send({"type": "show", "seat": 1, "pair": "Qs", "round": 9, "took_from": None},
               {"type": "show", "seat": 0, "pair": "Ks", "round": 9, "took_from": 1})
        got.append(s.decide(SHOWS[2][0]))
        s.send({"type": "giveback", "from": 0, "to": 1, "cards": ["4c", "6d"]},
               {"type": "show", "seat": 3, "pair": "Ah", "round": 27, "took_from": 0},
               {"type": "giveback", "from": 3, "to": 0, "cards": ["?", "?"]},
               {"type": "trump", "trump": "h", "caller": 3, "attackers": [1, 3]})
        for msg, _ in PLAYS:
            got.append(s.decide(msg))
            s.send({"type": "play", "seat": 0, "cards": msg["legal"][got[-1]]})
        s.send({"type": "trick", "leader": 1, "plays": [["Ac"], ["4c"], ["Qc"], ["4h"]],
                "winner": 0, "points": 0},
               {"type": "deal_end", "settlement": [2, -2, 2, -2], "attacker_score": 60,
                "void": False})
        # a second deal in the same process, a field the page does not name, a long line
        s.send({"type": "deal", "id": "deal-b7", "bot_seed": 0},
               {"type": "redeal"},
               {"type": "dealt", "cards": ["Ks", "Ks"], "future": {"a": ["]", "}"], "b": None}})
        long = decide(11, "show", ["4s", "Ks", "Ks"], [[], ["Ks", "Ks"]])
        long["padding"] = "x" * 1_000_000
        got.append(s.decide(long))
        s.quit()
    finally:
        s.close()
    if expect:
        want = [e for _, e in SHOWS + PLAYS] + [0]
        assert got == want
    return got


def test_python_bot_plays_the_scripted_deal() -> None:
    run_session(PYBOT)


def test_python_bot_exits_at_the_end_of_its_input() -> None:
    s = Session(PYBOT)
    try:
        s.start()
        s.proc.stdin.close()
        assert s.proc.wait(timeout=2) == 0
        assert s.lines.get(timeout=2) is None
    finally:
        s.close()


# ---- random decisions: bot.py, bot.c and the twin agree ----------------------------------
CARDS = [r + s for r in "A23456789TJQK" for s in "shdc"] + ["BJ", "SJ"]


def random_stream(n: int, seat: int = 1, seed: int = 5) -> list[dict]:
    """`n` deals of one random decision each (the messages a seat would get), as dicts."""
    rng = random.Random(seed)
    out: list[dict] = []
    for i in range(n):
        out.append({"type": "deal", "id": f"r{i}", "bot_seed": i})
        kind = rng.choice(["show", "giveback", "play", "play", "play"])
        hand = [rng.choice(CARDS) for _ in range(rng.randint(1, 27))]
        trick: list = []
        if kind == "show":
            suited = [c for c in CARDS if c[1] in "shdc"]
            legal = [[]] + [[c, c] for c in rng.sample(suited, rng.randint(1, 4))]
        elif kind == "giveback":
            legal = [rng.sample(CARDS, 2) for _ in range(rng.randint(1, 40))]
        else:
            trump = rng.choice("shdc")
            out.append({"type": "trump", "trump": trump, "caller": 0, "attackers": [0, 2]})
            size = rng.choice([1, 2])
            n_trick = rng.randint(0, 3)
            leader = (seat - n_trick) % 4

            def play() -> list[str]:
                c = rng.choice(CARDS)
                if size == 1:
                    return [c]
                return [c, c] if rng.random() < 0.5 else [c, rng.choice(CARDS)]

            trick = [[(leader + k) % 4, play()] for k in range(n_trick)]
            legal = [play() for _ in range(rng.randint(1, 12))]
        out.append(decide(i, kind, hand, legal, trick))
    return out


def answers(cmd: list[str], stream: list[dict], seat: int = 1) -> list[int]:
    s = Session(cmd)
    try:
        s.start(seat=seat)
        s.send(*stream)  # the bot answers decides as they come; read them all afterwards
        got = []
        for msg in stream:
            if msg["type"] == "decide":
                ans = s.recv()
                assert ans["type"] == "action" and ans["id"] == msg["id"], ans
                assert 0 <= ans["choice"] < len(msg["legal"])
                got.append(ans["choice"])
        s.quit()
        return got
    finally:
        s.close()


@pytest.fixture(scope="module")
def stream() -> list[dict]:
    return random_stream(400)


@pytest.fixture(scope="module")
def py_answers(stream: list[dict]) -> list[int]:
    return answers(PYBOT, stream)


def load_twin() -> type:
    spec = importlib.util.spec_from_file_location("example_pytwin", BOTS / "python" / "twin.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.Twin


def twin_legal(kind: str, legal: list) -> list:
    """The protocol's choices as a Strategy gets them (docs/strategies.md)."""
    if kind == "show":
        return [c[0] if c else None for c in legal]
    return [tuple(c) for c in legal]


def test_twin_chooses_as_the_protocol_bot(stream: list[dict], py_answers: list[int]) -> None:
    twin = load_twin()()
    twin.begin_deal(1, 0, 0)
    trump = None
    got = []
    for msg in stream:
        if msg["type"] == "deal":
            trump = None
        elif msg["type"] == "trump":
            trump = msg["trump"]
        elif msg["type"] == "decide":
            trick = msg["trick"]
            obs = SimpleNamespace(kind=msg["kind"], hand=list(msg["hand"]), trump=trump,
                                  trick=[list(c) for _, c in trick],
                                  leader=trick[0][0] if trick else None)
            legal = twin_legal(msg["kind"], msg["legal"])
            got.append(legal.index(twin.choose(obs, legal)))
    assert got == py_answers
    assert len(set(got)) > 3  # the stream exercises more than one answer


def test_python_bot_answers_decisions_in_a_batch(py_answers: list[int]) -> None:
    assert len(py_answers) == 400


# ---- C -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def cbot(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler (gcc or cc) on PATH: the C example bot is not built")
    exe = tmp_path_factory.mktemp("cbot") / "bot"
    subprocess.run([cc, "-O2", "-Wall", "-Wextra", "-Werror", "-o", str(exe),
                    str(BOTS / "c" / "bot.c")], check=True, timeout=60)
    return [str(exe)]


def test_c_bot_plays_the_scripted_deal(cbot: list[str]) -> None:
    run_session(cbot)


def test_c_bot_chooses_as_the_python_bot(cbot: list[str], stream: list[dict],
                                         py_answers: list[int]) -> None:
    assert answers(cbot, stream) == py_answers


def test_c_bot_exits_at_the_end_of_its_input(cbot: list[str]) -> None:
    s = Session(cbot)
    try:
        s.start()
        s.proc.stdin.close()
        assert s.proc.wait(timeout=2) == 0
    finally:
        s.close()


# ---- node ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def jsbot() -> list[str]:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not on PATH: the JavaScript example bot is not run")
    return [node, str(BOTS / "js" / "bot.js")]


def test_js_bot_plays_the_scripted_deal(jsbot: list[str]) -> None:
    run_session(jsbot, expect=False)


def test_js_bot_replays_with_the_same_bot_seed(jsbot: list[str]) -> None:
    stream = random_stream(60, seed=9)
    first = answers(jsbot, stream)
    assert answers(jsbot, stream) == first
    assert len(set(first)) > 1


# ---- LLM -----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def stub() -> str:
    """The stub chat-completions server on a free port of 127.0.0.1; yields its base URL."""
    proc = subprocess.Popen([sys.executable, str(BOTS / "llm" / "stub_server.py"), "--port", "0",
                             "--mode", "last", "--delay", "5"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("port "), line
        yield f"http://127.0.0.1:{int(line.split()[1])}/v1"
    finally:
        proc.kill()
        proc.wait()


def stub_requests(url: str) -> int:
    """How many chat requests the stub at `url` has answered."""
    import urllib.request

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url.rsplit("/", 1)[0] + "/stats", timeout=5) as resp:
        return int(json.loads(resp.read())["requests"])


def llm_env(url: str | None, model: str) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k.lower() not in ("http_proxy", "https_proxy", "all_proxy")}
    env.update(NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost",
               SHUANGKOU_LLM_MODEL=model)
    env.pop("SHUANGKOU_LLM_URL", None)
    if url:
        env["SHUANGKOU_LLM_URL"] = url
    return env


LLM_BOT = [sys.executable, str(BOTS / "llm" / "bot.py")]
# (a show: the fallback passes, index 0), (a play: the fallback is index 0)
LLM_DECISIONS = [SHOWS[0][0], PLAYS[2][0]]


def llm_answers(url: str | None, model: str, clock_ms: int = 2000) -> tuple[list[int], float]:
    s = Session(LLM_BOT, env=llm_env(url, model))
    try:
        s.start()
        s.send({"type": "deal", "id": "x", "bot_seed": 1},
               {"type": "trump", "trump": "h", "caller": 3, "attackers": [1, 3]})
        got, slowest = [], 0.0
        for msg in LLM_DECISIONS:
            t = time.monotonic()
            got.append(s.decide(dict(msg, clock_ms=clock_ms), timeout=clock_ms / 1000 + 3))
            slowest = max(slowest, time.monotonic() - t)
        s.quit()
        return got, slowest
    finally:
        s.close()


def test_llm_bot_plays_the_model_choice(stub: str) -> None:
    asked = stub_requests(stub)
    got, _ = llm_answers(stub, "stub-last")
    assert stub_requests(stub) == asked + 2
    assert got == [len(m["legal"]) - 1 for m in LLM_DECISIONS] == [1, 3]


@pytest.mark.parametrize("model", ["stub-garbage", "stub-error"])
def test_llm_bot_falls_back_on_a_useless_answer(stub: str, model: str) -> None:
    assert llm_answers(stub, model)[0] == [0, 0]


def test_llm_bot_falls_back_in_time_on_a_slow_endpoint(stub: str) -> None:
    got, slowest = llm_answers(stub, "stub-slow", clock_ms=1000)  # the stub sleeps 5 s
    assert got == [0, 0]
    # the bot gives up at 0.75 s (the clock less its margin); 0.5 s of slack for a busy machine
    assert slowest < 1.5, slowest


def test_llm_bot_without_an_endpoint_plays_the_fallback() -> None:
    assert llm_answers(None, "any")[0] == [0, 0]


# ---- through the runner: the protocol bots play exactly as their in-process twin -------------
def runner_rows(specs: list[str], seed: int = 11, n: int = 20) -> tuple:
    from sim.loops import runner

    faults: list = []
    rows = runner.summaries(seed, 0, n, runner.make_seats(specs), faults=faults)
    return rows, faults


@pytest.fixture(scope="module")
def twin_rows() -> object:
    from strategies.registry import load_plugin

    load_plugin(str(BOTS / "python" / "twin.py"))
    rows, faults = runner_rows(["pytwin", "greedy"])
    assert faults == []
    return rows


@pytest.fixture
def entered() -> object:
    """Registers protocol bots for one test (`--bot NAME=COMMAND`), closes them after."""
    from sim.bots.seat import close_all, register_bots
    from sim.bots.spec import apply_settings, parse_bot

    def enter(name: str, argv: list[str], **settings: str) -> None:
        bot = parse_bot(f"{name}={subprocess.list2cmdline(argv)}", ["greedy"])
        register_bots([apply_settings(bot, settings, "test") if settings else bot])

    yield enter
    close_all()


@pytest.mark.parametrize("which", ["python", "c"])
def test_runner_plays_the_bot_as_its_twin(which: str, twin_rows: object, entered: object,
                                          request: pytest.FixtureRequest) -> None:
    import numpy as np

    argv = PYBOT if which == "python" else request.getfixturevalue("cbot")
    entered(f"{which}bot", argv)
    rows, faults = runner_rows([f"{which}bot", "greedy"])
    assert faults == []
    assert np.array_equal(rows, twin_rows)


def test_runner_plays_the_js_and_llm_bots(jsbot: list[str], stub: str, entered: object,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in llm_env(stub, "stub-last").items():
        monkeypatch.setenv(key, value)
    entered("jsbot", jsbot)
    entered("llmbot", LLM_BOT, sandbox="off")  # a sandboxed bot has no network, not even 127.0.0.1
    asked = stub_requests(stub)
    rows, faults = runner_rows(["jsbot", "llmbot"], n=3)
    assert faults == []
    assert len(rows) == 3
    assert stub_requests(stub) > asked + 10  # the LLM seat asked its model
