"""Bots in other processes (docs/bots.md, docs/protocol.md): names and commands checked, the
messages of a seat (R9), the faults scored by their rule, tournaments with bots."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from sim.bots.process import BotFault
from sim.bots.seat import ALL_POINTS, bot_seed, close_all, deal_id, forfeit_result, register_bots
from sim.bots.spec import BotSpec, apply_settings, parse_bot, parse_bots
from sim.cli import main
from sim.core.tables import C_CALLER, C_SCORE, C_SETTLE0
from sim.errors import ConfigError, StrategyError
from sim.loops import runner
from sim.rules import DEFAULT_RULES

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# a bot from the protocol page: answers hello, the first legal choice, keeps every message
FIRST = textwrap.dedent("""\
    import json, os, sys
    log = open(os.environ.get("BOTLOG", os.devnull), "a")
    for line in sys.stdin:
        m = json.loads(line)
        log.write(line)
        log.flush()
        if m["type"] == "hello":
            print(json.dumps({"type": "hello", "name": "first"}), flush=True)
        elif m["type"] == "decide":
            {behaviour}
        elif m["type"] == "quit":
            break
    """)
ANSWER = 'print(json.dumps({"type": "action", "id": m["id"], "choice": 0}), flush=True)'


def bot(tmp_path, name, behaviour=ANSWER, **settings) -> BotSpec:
    path = tmp_path / f"{name}.py"
    path.write_text(FIRST.replace("{behaviour}", behaviour))
    b = parse_bot(f"{name}={sys.executable} {path}", ["greedy"])
    b = b.replace(start_ms=20_000, **settings)
    register_bots([b])
    return b


@pytest.fixture(autouse=True)
def _close():
    yield
    close_all()


# --- names and commands ---------------------------------------------------------------------
@pytest.mark.parametrize("text, words", [
    ("mybot", "NAME=COMMAND"),
    ("x=", "the command is empty"),
    ("x=/no/such/program", "no such file"),
    ("x=no-such-program-here", "not found on PATH"),
    (f"x={ROOT}/README.md", "is not executable"),
    ("greedy=ls", "name of a built-in"),
    ("1x=ls", "must start with a letter"),
    ("x='unclosed", "cannot be split"),
])
def test_bad_bot_is_one_clear_error(text, words):
    with pytest.raises(ConfigError, match=words):
        parse_bot(text, ["greedy"])


def test_duplicate_bot_name_refused():
    with pytest.raises(ConfigError, match="given twice"):
        parse_bots(["x=ls", "x=cat"])


@pytest.mark.parametrize("argv", [
    ["play", "--bot", "x=", "--seats", "x"],
    ["play", "--bot", "greedy=ls"],
    ["play", "--bot", "x=/no/such", "--seats", "x"],
    ["play", "--bot", "x=ls", "--bot", "x=ls"],
    ["play", "--bot-clock", "x=10"],
])
def test_cli_bad_bot_exit_2(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("shuangkou play: error:")


def test_settings_checked():
    b = parse_bot("x=ls")
    assert apply_settings(b, {"decision_ms": 50}, "t").decision_ms == 50
    for bad in ({"decision_ms": 0}, {"on_fault": "ignore"}, {"command": "ls"},
                {"sandbox": "maybe"}):
        with pytest.raises(ConfigError):
            apply_settings(b, bad, "t")


def test_program_hash_follows_the_script(tmp_path):
    p = tmp_path / "b.py"
    p.write_text("print(1)\n")
    h1 = parse_bot(f"x={sys.executable} {p}").program
    p.write_text("print(2)\n")
    assert parse_bot(f"x={sys.executable} {p}").program != h1


# --- what a bot is told ----------------------------------------------------------------------
def test_deal_id_and_seed_hide_the_master_seed():
    ids = {deal_id(7, d, "t") for d in range(100)}
    assert len(ids) == 100 and all("7" != i for i in ids)
    assert deal_id(7, 1, "t") != deal_id(8, 1, "t")  # keyed by the seed
    assert deal_id(7, 1, "m0o0") != deal_id(7, 1, "m0o1")  # and by the table
    s = bot_seed(7, 1, "t", 0)
    assert 0 <= s < 2**63 and s == bot_seed(7, 1, "t", 0) != bot_seed(7, 1, "t", 2)


def test_messages_follow_the_protocol_and_r9(tmp_path, monkeypatch):
    log = tmp_path / "log.jsonl"
    monkeypatch.setenv("BOTLOG", str(log))
    b = bot(tmp_path, "bt_first", sandbox="off")
    seats = runner.make_seats([b.name, "greedy"])
    faults: list = []
    runner.summaries(3, 0, 6, seats, faults=faults)
    close_all()
    assert faults == []
    msgs = [json.loads(x) for x in log.read_text().splitlines()]
    types = [m["type"] for m in msgs]
    assert types[0] == "hello" and msgs[0]["protocol"] == "shuangkou-bot/1"
    matches = [m for m in msgs if m["type"] == "match"]
    assert sorted(m["seat"] for m in matches) == [0, 2]
    assert set(matches[0]["rules"]) == set(DEFAULT_RULES.to_dict())
    assert types.count("deal") == 2 * 6  # two processes (seats 0, 2) share the log
    assert types.count("deal_end") == 2 * 6 and types[-1] == "quit"
    for m in msgs:
        assert "seed" not in m and "deal" not in m  # never the seed nor the deal number
        if m["type"] == "decide":
            assert len(m["legal"]) >= 2  # single choices are made by the runner
            assert m["clock_ms"] == b.decision_ms + b.bank_ms
    # every trick of every deal played reached the bot: the 108 cards of each deal
    played = sum(1 for m in msgs if m["type"] == "deal_end" and not m["void"])
    cards = sum(len(p) for m in msgs if m["type"] == "trick" for p in m["plays"])
    assert played and cards == 108 * played


def test_giveback_cards_only_to_giver_and_receiver(tmp_path, monkeypatch):
    log = tmp_path / "log.jsonl"
    monkeypatch.setenv("BOTLOG", str(log))
    b = bot(tmp_path, "bt_first", sandbox="off")
    seats = runner.make_seats(["greedy", b.name])  # the bot in seats 1 and 3
    runner.summaries(5, 0, 40, seats)
    close_all()
    seat = None
    seen = hidden = 0
    for line in log.read_text().splitlines():
        m = json.loads(line)
        if m["type"] == "match":
            seat = m["seat"]
        elif m["type"] == "giveback":
            if seat in (m["from"], m["to"]):
                assert "?" not in m["cards"]
                seen += 1
            else:
                assert m["cards"] == ["?", "?"]
                hidden += 1
    assert hidden  # some give-back elsewhere at the table was hidden


def test_bot_answering_as_greedy_would_gives_greedys_rows(tmp_path):
    """A bot that always answers index 0 plays exactly as the in-process first-choice
    strategy: the same summary rows, bit for bit."""
    from strategies.base import Strategy
    from strategies.registry import register

    class FirstChoice(Strategy):
        name = "first_choice_twin"

        def choose(self, obs, legal):
            return legal[0]

    register(FirstChoice)
    b = bot(tmp_path, "bt_first")
    rows_bot = runner.summaries(11, 0, 8, runner.make_seats([b.name, "greedy"]))
    rows_twin = runner.summaries(11, 0, 8, runner.make_seats(["first_choice_twin", "greedy"]))
    assert np.array_equal(rows_bot, rows_twin)


# --- faults ----------------------------------------------------------------------------------
def test_forfeit_result_is_r24_with_every_point_to_the_other_side():
    # the faulting side attacks: attacker score 0, each defender + cap
    caller, score, st = forfeit_result(1, 3, DEFAULT_RULES)
    assert (caller, score) == (1, 0) and st == [10, -10, 10, -10]
    # the faulting side defends: the attackers took all 200 points
    caller, score, st = forfeit_result(1, 0, DEFAULT_RULES)
    assert score == ALL_POINTS and st == [-10, 10, -10, 10]
    # before calling ended, the faulting side attacks with the faulting seat as caller
    assert forfeit_result(-1, 2, DEFAULT_RULES)[:2] == (2, 0)


@pytest.mark.parametrize("behaviour, kind", [
    ('print(json.dumps({"type": "action", "id": m["id"], "choice": 999}), flush=True)',
     "illegal"),
    ('print(json.dumps({"type": "action", "id": -1, "choice": 0}), flush=True)', "protocol"),
    ('print("not json", flush=True)', "protocol"),
    ("sys.exit(3)", "crash"),
    ("import time; time.sleep(30)", "timeout"),
])
def test_fault_is_attributed_and_forfeited(tmp_path, behaviour, kind):
    b = bot(tmp_path, "bt_bad", behaviour, decision_ms=300, bank_ms=0, max_restarts=1)
    faults: list = []
    rows = runner.summaries(2, 0, 3, runner.make_seats(["greedy", b.name]), faults=faults)
    assert faults and faults[0]["kind"] == kind and faults[0]["bot"] == "bt_bad"
    assert faults[0]["seat"] in (1, 3) and faults[0]["scored"] == "forfeit"
    for f in faults:  # every faulted deal is the bot side's loss
        row = rows[f["deal"]]
        assert row[C_SETTLE0 + 1] < 0 and row[C_SETTLE0] > 0
        assert row[C_SCORE] in (0, ALL_POINTS) and row[C_CALLER] >= 0
    counted = [f for f in faults if not f["again"]]
    assert len(counted) <= 2 * (1 + 1)  # at most the starts allowed, per seat


def test_fallback_plays_on_and_stop_stops(tmp_path):
    b = bot(tmp_path, "bt_bad", "sys.exit(3)", on_fault="fallback", max_restarts=0)
    faults: list = []
    rows = runner.summaries(2, 0, 2, runner.make_seats([b.name, "greedy"]), faults=faults)
    assert {f["scored"] for f in faults} == {"fallback"}
    greedy = runner.summaries(2, 0, 2, runner.make_seats(["greedy", "greedy"]))
    assert rows.shape == greedy.shape  # every deal played to its end by the fallback
    close_all()
    b = bot(tmp_path, "bt_bad2", "sys.exit(3)", on_fault="stop")
    with pytest.raises(StrategyError, match="bt_bad2.*crash.*on_fault = stop"):
        runner.summaries(2, 0, 2, runner.make_seats([b.name, "greedy"]))


def test_start_fault_when_no_hello(tmp_path):
    p = tmp_path / "bt_mute.py"
    p.write_text("import time\ntime.sleep(60)\n")
    b = parse_bot(f"bt_mute={sys.executable} {p}").replace(start_ms=500, max_restarts=0)
    register_bots([b])
    faults: list = []
    runner.summaries(1, 0, 2, runner.make_seats([b.name, "greedy"]), faults=faults)
    assert faults[0]["kind"] == "start" and faults[1]["again"]


def test_bot_fault_type():
    f = BotFault("timeout", "no answer in time")
    assert f.kind == "timeout" and "no answer" in str(f)


# --- commands --------------------------------------------------------------------------------
def test_play_with_a_bot(tmp_path, capsys):
    path = tmp_path / "b.py"
    path.write_text(FIRST.replace("{behaviour}", ANSWER))
    assert main(["play", "--bot", f"bt_mine={sys.executable} {path}", "--seats",
                 "bt_mine,greedy",
                 "--deals", "4", "--sandbox", "off"]) == 0
    out = capsys.readouterr()
    assert "0=bt_mine, 1=greedy" in out.out
    assert "rlimits only (--sandbox off)" in out.err


def test_tournament_config_with_bots(tmp_path, capsys):
    path = tmp_path / "b.py"
    path.write_text(FIRST.replace("{behaviour}", ANSWER))
    cfg = tmp_path / "t.toml"
    cfg.write_text('players = ["bt_unseen", "greedy"]\ndeals = 4\n[run]\nprogress = false\n'
                   '[output]\nplots = false\n[bots]\ndecision_ms = 500\n'
                   '[bots.bt_unseen]\nbank_ms = 100\n')
    out = tmp_path / "out"
    # without --bot: the config names an unknown player, and the message says what to add
    assert main(["tournament", str(cfg), "--out", str(out)]) == 2
    assert "--bot bt_unseen=COMMAND" in capsys.readouterr().err
    assert main(["tournament", str(cfg), "--out", str(out), "--bot",
                 f"bt_unseen={sys.executable} {path}", "--sandbox", "off"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["run"]["bots"][0]["name"] == "bt_unseen"
    assert summary.get("faults") is None
    toml = (out / "config.toml").read_text()
    assert str(path) not in toml and "bank_ms = 100" in toml  # settings, never the command
    # a config holding a command is refused
    cfg.write_text('players = ["bt_unseen", "greedy"]\n[bots.bt_unseen]\ncommand = "rm -rf /"\n')
    assert main(["tournament", str(cfg), "--out", str(tmp_path / "o2"), "--bot",
                 f"bt_unseen={sys.executable} {path}"]) == 2
    assert "never holds a bot's command" in capsys.readouterr().err


def test_tournament_counts_faults(tmp_path, capsys):
    path = tmp_path / "b.py"
    path.write_text(FIRST.replace("{behaviour}", "sys.exit(3)"))
    cfg = tmp_path / "t.toml"
    cfg.write_text('players = ["bt_crashy", "greedy"]\ndeals = 3\n[run]\nprogress = false\n'
                   '[output]\nplots = false\n[bots]\nmax_restarts = 0\n')
    out = tmp_path / "out"
    assert main(["tournament", str(cfg), "--out", str(out), "--bot",
                 f"bt_crashy={sys.executable} {path}", "--sandbox", "off"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    f = summary["faults"]["bt_crashy"]
    # the first seat to decide crashes; then its side forfeits at once: one per table
    assert f["crash"] == 2
    assert f["forfeits"] == 6  # every game of the 3 duplicate deals
    assert "faults of bot bt_crashy" in capsys.readouterr().out
    lines = [json.loads(x) for x in (out / "faults.jsonl").read_text().splitlines()]
    assert len(lines) == 6 and {x["bot"] for x in lines} == {"bt_crashy"}
    assert sum(x["counted"] for x in lines) == 2 and {x["scored"] for x in lines} == {"forfeit"}
    assert sorted({(x["deal"], x["orientation"]) for x in lines}) == \
        [(d, o) for d in range(3) for o in (0, 1)]


def test_bot_check(tmp_path, capsys):
    good = tmp_path / "good.py"
    good.write_text(FIRST.replace("{behaviour}", ANSWER))
    assert main(["bot", "check", "--deals", "1", "--sandbox", "off", "--",
                 sys.executable, str(good)]) == 0
    out = capsys.readouterr().out
    assert out.count("ok   ") == 5 and "FAIL" not in out
    bad = tmp_path / "bad.py"
    bad.write_text(FIRST.replace("{behaviour}", 'print("hi", flush=True)'))
    assert main(["bot", "check", "--deals", "1", "--sandbox", "off", "--",
                 sys.executable, str(bad)]) == 1
    assert "FAIL plays 1 duplicate deal(s)" in capsys.readouterr().out


def test_no_bot_process_survives_the_runner_killed(tmp_path):
    """kill -9 of the runner: the guard ends the bot and what it left behind."""
    path = tmp_path / "b.py"
    marker = f"survivor-{os.getpid()}"
    path.write_text(textwrap.dedent(f"""\
        import json, os, subprocess, sys, time
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", "{marker}"],
                         start_new_session=True)
        for line in sys.stdin:
            m = json.loads(line)
            if m["type"] == "hello":
                print(json.dumps({{"type": "hello", "name": "x"}}), flush=True)
            elif m["type"] == "decide":
                time.sleep(300)
        """))
    code = textwrap.dedent(f"""\
        from sim.bots.spec import parse_bot
        from sim.bots.seat import register_bots
        from sim.loops import runner
        b = parse_bot("k={sys.executable} {path}").replace(decision_ms=600000)
        register_bots([b])
        runner.summaries(1, 0, 1, runner.make_seats(["k", "greedy"]))
        """)
    p = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT)
    try:
        deadline = time.time() + 120
        while time.time() < deadline and not _pids(marker):
            time.sleep(0.2)
        assert _pids(marker), "the bot did not start"
    finally:
        p.kill()  # (kill -9)
        p.wait()
    deadline = time.time() + 10
    while time.time() < deadline and (_pids(marker) or _pids(str(path))):
        time.sleep(0.1)
    assert not _pids(marker) and not _pids(str(path))


def _pids(text: str) -> list[int]:
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/cmdline", "rb") as f:
                    if text.encode() in f.read():
                        out.append(int(name))
            except OSError:
                pass
    return out


# --- the ladder ------------------------------------------------------------------------------
def test_ladder_remembers_a_bots_program_and_faults(tmp_path, capsys):
    path = tmp_path / "b.py"
    path.write_text(FIRST.replace("{behaviour}", ANSWER))
    db = str(tmp_path / "lad.db")
    bot_flag = ["--bot", f"bt_lbot={sys.executable} {path}", "--sandbox", "off"]
    assert main(["ladder", "--db", db, "add", "bt_lbot", "greedy", *bot_flag]) == 0
    assert main(["ladder", "--db", db, "run", "--pairs", "4", "--no-progress", "--quiet",
                 *bot_flag]) == 0
    # without --bot the ladder says what to add; the database never holds the command
    p = subprocess.run([sys.executable, "-m", "sim.cli", "ladder", "--db", db, "run",
                        "--pairs", "2", "--no-progress"], capture_output=True, text=True,
                       cwd=ROOT, timeout=300)
    assert p.returncode == 2 and "--bot bt_lbot=COMMAND" in p.stderr
    assert str(path).encode() not in open(db, "rb").read()
    # the same name with another program: a warning; a crashing program: its faults counted
    path.write_text(FIRST.replace("{behaviour}", "sys.exit(3)"))
    assert main(["ladder", "--db", db, "run", "--pairs", "2", "--no-progress", "--quiet",
                 *bot_flag, "--max-restarts", "0"]) == 0
    out = capsys.readouterr()
    assert "comes back with another program" in out.err
    assert "faults of bot bt_lbot: " in out.out
    assert main(["ladder", "--db", db, "show", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["bots"]["bt_lbot"]["faults"]["crash"] >= 1
    assert shown["bots"]["bt_lbot"]["faults"]["forfeits"] >= 2


def test_ladder_refuses_a_corrupt_bots_table(tmp_path, capsys):
    import sqlite3

    db = str(tmp_path / "lad.db")
    assert main(["ladder", "--db", db, "add", "greedy", "random"]) == 0
    con = sqlite3.connect(db)
    con.execute("INSERT OR REPLACE INTO meta(key, value) "
                "VALUES ('bots', '{\"x\": {\"program\": 1}}')")
    con.commit()
    con.close()
    capsys.readouterr()
    assert main(["ladder", "--db", db, "show"]) == 2
    assert "meta.bots is not a table of bots" in capsys.readouterr().err
